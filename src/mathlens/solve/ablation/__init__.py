"""Prompt ablation: typed prompt elements (and, on request, single content words) and the variants
that remove or change them.

The planner calls `question_variants(question, options)` for every question of an ablation run.
"""

from mathlens.solve.ablation.elements import (
    ELEMENT_TYPES,
    KEYWORD_SYNONYMS,
    OPTIONAL_TYPES,
    Edit,
    Element,
    extract_elements,
)
from mathlens.solve.ablation.variants import (
    TYPE_ALIASES,
    AblationOptions,
    apply_edits,
    question_variants,
    text_variants,
)
from mathlens.solve.ablation.words import DEFAULT_MAX_WORDS, stop_words, word_elements

__all__ = [
    "DEFAULT_MAX_WORDS", "ELEMENT_TYPES", "KEYWORD_SYNONYMS", "OPTIONAL_TYPES", "TYPE_ALIASES", "AblationOptions",
    "Edit", "Element", "apply_edits", "extract_elements", "question_variants", "stop_words", "text_variants",
    "word_elements",
]
