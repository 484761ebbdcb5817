"""Instructor flags (calculus seed 000, §7.3), with thresholds a user can change.

The seed's instructor scenario flags a question whose solution has a complexity score above 20 as
possibly too dense for students (20 on the seed's scale, which our ``chars`` depth reproduces; the
threshold follows the depth definition, `analyze.flow.models.DENSE_THRESHOLDS`), and one whose
phrase sensitivity is above 0.5 as likely to give
inconsistent guidance when students rephrase it. We add a third flag the seed could not measure:
a final answer that changes under a variant that keeps the question's meaning (a synonym, a
notation put into words, a paraphrase) marks the model's answer to that question as unreliable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from mathlens.analyze.flow.models import DEFAULT_DEPTH, DepthDefinition, dense_threshold

FlagName = Literal["too_dense", "unstable_under_rephrasing", "unreliable"]


@dataclass(frozen=True)
class FlagConfig:
    """Thresholds: a flag is raised when the value is strictly above its threshold."""

    #: None: the "too dense" threshold of `complexity_depth` (20 only on the study's character scale)
    complexity_max: float | None = None
    #: what d̄ of the complexity score was measured in (the flow analysis' default unless told)
    complexity_depth: DepthDefinition = DEFAULT_DEPTH
    phrase_sensitivity_max: float = 0.5
    flag_meaning_preserving_flips: bool = True

    @property
    def complexity_threshold(self) -> float:
        """The complexity above which "too dense" is raised."""
        return self.complexity_max if self.complexity_max is not None else dense_threshold(self.complexity_depth)


class Flag(BaseModel):
    """One raised flag, with the value and threshold that raised it."""

    name: FlagName
    reason: str
    value: float | None = None
    threshold: float | None = None


def question_flags(complexity: float | None, phrase_sensitivity: float | None, preserving_flips: int,
                   config: FlagConfig) -> list[Flag]:
    """The flags one question raises; a metric that is missing raises nothing."""
    flags = []
    limit = config.complexity_threshold
    if complexity is not None and complexity > limit:
        flags.append(Flag(name="too_dense", value=complexity, threshold=limit,
                          reason=f"complexity {complexity:.1f} > {limit:g} ({config.complexity_depth} depth)"))
    if phrase_sensitivity is not None and phrase_sensitivity > config.phrase_sensitivity_max:
        flags.append(Flag(name="unstable_under_rephrasing", value=phrase_sensitivity,
                          threshold=config.phrase_sensitivity_max,
                          reason=f"phrase sensitivity {phrase_sensitivity:.3f} > "
                                 f"{config.phrase_sensitivity_max:g}"))
    if config.flag_meaning_preserving_flips and preserving_flips > 0:
        flags.append(Flag(name="unreliable", value=float(preserving_flips),
                          reason=f"final answer changed under {preserving_flips} meaning-preserving "
                                 f"variant(s)"))
    return flags
