"""Prompt-ablation sensitivity: divergence of responses, robustness, phrase sensitivity, impact factors.

Entry points: `compute_sensitivity(store)` for a run, `question_sensitivity(records, question)` for
one question's records, and the metric functions in `divergence`.
"""

from mathlens.analyze.ablation.analyzer import (
    SENSITIVITY,
    SensitivityOptions,
    SensitivityReport,
    compute_sensitivity,
    read_report,
)
from mathlens.analyze.ablation.divergence import pairwise_cosines, tfidf_cosines, token_levenshtein, tokenize
from mathlens.analyze.ablation.flags import Flag, FlagConfig
from mathlens.analyze.ablation.metrics import QuestionSensitivity, SensitivityConfig, question_sensitivity

__all__ = [
    "SENSITIVITY", "Flag", "FlagConfig", "QuestionSensitivity", "SensitivityConfig", "SensitivityOptions",
    "SensitivityReport", "compute_sensitivity", "pairwise_cosines", "question_sensitivity", "read_report",
    "tfidf_cosines", "token_levenshtein", "tokenize",
]
