"""Which version of a question was sent: the original prompt, or one of its variants.

Defined here, in the layer that makes variants, and stored by the run layer on every task and
record (`mathlens.runs.records` re-exports it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Variant(BaseModel):
    """Which version of the question was sent. `name == "original"` for the unmodified prompt;
    ablation variants name the element they removed or changed; `profile` variants (tutoring runs)
    name the learner the question was put to."""

    name: str = "original"
    kind: Literal["original", "ablation", "pair", "paraphrase", "profile"] = "original"
    element_type: str | None = None
    element_text: str | None = None
    question_text: str | None = None
    meaning_preserving: bool = False
