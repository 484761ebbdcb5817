"""Prompt ablation: typed prompt elements and the variants that remove or change them.

The planner calls `question_variants(question, options)` for every question of an ablation run.
"""

from mathlens.solve.ablation.elements import ELEMENT_TYPES, KEYWORD_SYNONYMS, Edit, Element, extract_elements
from mathlens.solve.ablation.variants import (
    TYPE_ALIASES,
    AblationOptions,
    apply_edits,
    question_variants,
    text_variants,
)

__all__ = [
    "ELEMENT_TYPES", "KEYWORD_SYNONYMS", "TYPE_ALIASES", "AblationOptions", "Edit", "Element", "apply_edits",
    "extract_elements", "question_variants", "text_variants",
]
