"""Calculus topics and the keywords that mark them, for filtering source text by subject.

The calculus seed (000, §4.4.1) kept only the textbook segments that mention key topics such as
derivatives, integrals and optimisation before chunking. `TOPIC_KEYWORDS` is our list of such topics;
a segment matches a topic when it contains one of the topic's keywords as a whole word (or word
prefix for keywords ending in `*`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from mathlens.errors import UnknownNameError

#: topic -> keywords (lower case; a trailing `*` matches any word ending).
TOPIC_KEYWORDS: dict[str, tuple[str, ...]] = {
    "limits": ("limit*", "approaches", "tends to", "squeeze", "asymptote*", "indeterminate"),
    "continuity": ("continu*", "discontinu*", "intermediate value"),
    "derivatives": ("derivative*", "differentia*", "tangent line", "slope", "rate of change",
                    "chain rule", "product rule", "quotient rule", "implicit"),
    "applications-of-derivatives": ("critical point*", "extrem*", "maximum", "minimum", "optimi*",
                                    "concav*", "inflection", "mean value theorem", "l'hopital",
                                    "l'hôpital", "related rates", "newton's method", "linear approximation"),
    "integrals": ("integra*", "antiderivative*", "riemann", "fundamental theorem", "substitution",
                  "area under"),
    "integration-techniques": ("by parts", "partial fraction*", "trigonometric substitution",
                               "improper", "trapezoid*", "simpson"),
    "applications-of-integrals": ("area between", "volume*", "washer*", "shell*", "disk*", "arc length",
                                  "surface area", "work", "center of mass", "average value"),
    "differential-equations": ("differential equation*", "separable", "initial value", "logistic",
                               "integrating factor", "exponential growth", "decay"),
    "series": ("series", "sequence*", "converges", "convergent", "convergence", "diverges", "divergent",
               "ratio test", "comparison test",
               "alternating", "geometric", "harmonic"),
    "power-series": ("power series", "taylor", "maclaurin", "radius of convergence",
                     "interval of convergence", "binomial series", "remainder"),
    "parametric-polar": ("parametric*", "polar", "cardioid", "rose curve"),
    "vectors": ("vector*", "dot product", "cross product", "projection", "orthogonal", "plane*",
                "line in space", "lines in space"),
    "vector-functions": ("curvature", "velocity", "acceleration", "position vector", "space curve",
                         "unit tangent", "unit normal"),
    "partial-derivatives": ("partial derivative*", "partial*", "gradient", "directional derivative",
                            "tangent plane", "level curve*", "lagrange", "saddle point*", "clairaut"),
    "multiple-integrals": ("double integral*", "triple integral*", "iterated integral*", "fubini",
                           "jacobian", "cylindrical", "spherical", "change of variables"),
    "vector-calculus": ("vector field*", "line integral*", "surface integral*", "flux", "curl",
                        "divergence", "green's theorem", "stokes", "conservative", "potential function"),
}


@lru_cache(maxsize=64)
def _pattern(keyword: str) -> re.Pattern[str]:
    if keyword.endswith("*"):
        return re.compile(r"\b" + re.escape(keyword[:-1]) + r"\w*", re.I)
    return re.compile(r"\b" + re.escape(keyword) + r"\b", re.I)


def check_topics(topics: Iterable[str]) -> tuple[str, ...]:
    """Validate topic names (raising `UnknownNameError` with suggestions) and return them as a tuple."""
    out = tuple(topics)
    for t in out:
        if t not in TOPIC_KEYWORDS:
            raise UnknownNameError("topic", t, TOPIC_KEYWORDS)
    return out


def detect_topics(text: str) -> tuple[str, ...]:
    """Topics whose keywords occur in `text`, in `TOPIC_KEYWORDS` order.

    >>> detect_topics("Use the chain rule to find the derivative.")
    ('derivatives',)
    """
    return tuple(t for t, words in TOPIC_KEYWORDS.items() if any(_pattern(w).search(text) for w in words))


def matches_topics(text: str, topics: Iterable[str]) -> bool:
    """Whether `text` mentions at least one of `topics` (an empty selection matches everything)."""
    wanted = check_topics(topics)
    if not wanted:
        return True
    return any(_pattern(w).search(text) for t in wanted for w in TOPIC_KEYWORDS[t])
