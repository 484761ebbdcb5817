"""The MAPLE score (seed 001_c607caa65db8a290.txt, equations 1 and 2).

With f_l the number of steps of a solution that carry label l and w_l the label's penalty weight,

    e = Σ_l w_l · log(1 + f_l) / Σ_l w_l            (natural logarithm, sum over every label in the set)
    MAPLE = tanh(e · v / r)                           formula "printed" (the default)
    MAPLE = tanh(e · r / v)                           formula "prose"

where v is the solution's validity and r its redundancy, both in [0, 1]. The seed prints the first
formula, but its text says the score falls as validity rises and grows with redundancy, which is
what the second one does; both are offered and the formula used is stored with every score (it is called
the formula, not a variant, so as not to be confused with a prompt variant).

Whichever of v and r is the divisor is raised to at least `floor` (default 0.05) so the score is
defined for a solution with no redundant step (r = 0) or no valid step (v = 0); the value actually
used is stored beside the raw one.

Note that e is a weighted *mean* of log(1 + f_l): raising a label's weight raises e only when that
label's log-frequency is above the current mean (a label that never occurs dilutes e).

    >>> s = maple_score({"calc": 1}, {"calc": 1.0, "no_solution": 1.0}, v=1.0, r=1.0)
    >>> round(s.e, 4), round(s.maple, 4)
    (0.3466, 0.3333)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Formula = Literal["printed", "prose"]
FORMULAS: tuple[Formula, ...] = ("printed", "prose")

DEFAULT_FLOOR = 0.05


@dataclass(frozen=True)
class MapleParts:
    """A score and everything it was computed from."""

    maple: float
    e: float
    v: float
    r: float
    v_used: float
    r_used: float
    formula: Formula
    floor: float
    counts: dict[str, int] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)


def error_rate(counts: Mapping[str, int], weights: Mapping[str, float]) -> float:
    """e = Σ w_l·log(1+f_l) / Σ w_l over every label in `weights`; labels absent from `counts` have f_l = 0.

    Raises ValueError for a negative count or weight, a count for a label with no weight, or weights
    that sum to zero.
    """
    unknown = sorted(set(counts) - set(weights))
    if unknown:
        raise ValueError(f"counts name labels that have no weight: {unknown}")
    if any(w < 0 for w in weights.values()):
        raise ValueError("penalty weights must be non-negative")
    if any(c < 0 for c in counts.values()):
        raise ValueError("label counts must be non-negative")
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("penalty weights sum to zero")
    return sum(w * math.log1p(counts.get(label, 0)) for label, w in weights.items()) / total


def maple_score(
    counts: Mapping[str, int],
    weights: Mapping[str, float],
    v: float,
    r: float,
    formula: Formula = "printed",
    floor: float = DEFAULT_FLOOR,
) -> MapleParts:
    """The MAPLE score of one solution with its parts (see the module docstring for the formulas)."""
    if formula not in FORMULAS:
        raise ValueError(f"unknown MAPLE formula {formula!r}; known: {', '.join(FORMULAS)}")
    for name, value in (("v", v), ("r", r)):
        if not (0.0 <= value <= 1.0) or math.isnan(value):
            raise ValueError(f"{name} must lie in [0, 1], got {value}")
    if not 0.0 < floor <= 1.0:
        raise ValueError(f"floor must lie in (0, 1], got {floor}")
    e = error_rate(counts, weights)
    if formula == "printed":
        v_used, r_used = v, max(r, floor)
        ratio = v_used / r_used
    else:
        v_used, r_used = max(v, floor), r
        ratio = r_used / v_used
    return MapleParts(
        maple=math.tanh(e * ratio),
        e=e,
        v=v,
        r=r,
        v_used=v_used,
        r_used=r_used,
        formula=formula,
        floor=floor,
        counts={k: int(c) for k, c in counts.items() if c},
        weights=dict(weights),
    )
