"""Learner-model adaptivity of tutoring responses (seed 003).

Profiles x context conditions x items x models are planned as ordinary run tasks (conditions are
configurations, learners are variants of kind "profile": `mathlens.solve.tutoring`); a judge scores
each response on the 19-item rubric (the `tutor_scores` analyzer, on the judging core
`mathlens.analyze.judging`), or people do through worksheets;
dimension percentages, the seed's Tables 1 and 2 and two-way ANOVAs with Tukey HSD summarise the
scores.
See docs/adaptivity.md.
"""

from mathlens.analyze.adaptivity.analyzer import score_run
from mathlens.analyze.adaptivity.conditions import CONDITIONS, build_messages, parse_conditions
from mathlens.analyze.adaptivity.design import TutorDesign, cells_of
from mathlens.analyze.adaptivity.judge import TUTOR_SCORES, JudgeContext, ScoreSet, judge_item
from mathlens.analyze.adaptivity.profiles import LearnerProfile, generate_profiles, load_profiles
from mathlens.analyze.adaptivity.rubric import Rubric, RubricItem, load_rubric
from mathlens.analyze.adaptivity.study import (
    StudyOptions,
    compute_agreement,
    compute_stats,
    new_manifest,
    prepare,
    run_study,
)
from mathlens.analyze.adaptivity.tables import TUTOR_STATS, TutorStats, dimension_scores

__all__ = [
    "CONDITIONS",
    "TUTOR_SCORES",
    "TUTOR_STATS",
    "JudgeContext",
    "LearnerProfile",
    "Rubric",
    "RubricItem",
    "ScoreSet",
    "StudyOptions",
    "TutorDesign",
    "TutorStats",
    "build_messages",
    "cells_of",
    "compute_agreement",
    "compute_stats",
    "dimension_scores",
    "generate_profiles",
    "judge_item",
    "load_profiles",
    "load_rubric",
    "new_manifest",
    "parse_conditions",
    "prepare",
    "run_study",
    "score_run",
]
