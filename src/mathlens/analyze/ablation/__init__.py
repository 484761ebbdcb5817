"""Prompt-ablation sensitivity: divergence of responses, robustness, phrase sensitivity, impact factors.

Entry points: `compute_sensitivity(store)` for a run, `question_sensitivity(records, question)` for
one question's records, and the metric functions in `divergence`.
"""

from mathlens.analyze.ablation.analyzer import (
    SensitivityReport,
    compute_sensitivity,
    config_from_options,
    run_sensitivity,
    write_report,
)
from mathlens.analyze.ablation.divergence import pairwise_cosines, tfidf_cosines, token_levenshtein, tokenize
from mathlens.analyze.ablation.flags import Flag, FlagConfig
from mathlens.analyze.ablation.metrics import QuestionSensitivity, SensitivityConfig, question_sensitivity

__all__ = [
    "Flag", "FlagConfig", "QuestionSensitivity", "SensitivityConfig", "SensitivityReport", "compute_sensitivity",
    "config_from_options", "pairwise_cosines", "question_sensitivity", "run_sensitivity", "tfidf_cosines",
    "token_levenshtein", "tokenize", "write_report",
]
