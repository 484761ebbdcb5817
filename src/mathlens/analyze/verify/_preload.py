"""Modules a worker imports before it reports ready.

Importing them on the first call instead would charge that call's time budget with about half a
second of imports (SymPy, the LaTeX grammar, our readers and checkers).
"""

from __future__ import annotations

import latex2sympy2_extended  # noqa: F401
import sympy
import sympy.parsing.sympy_parser  # noqa: F401

import mathlens.analyze.verify.steps  # noqa: F401


def _warm() -> None:
    """Run each reader once: their first use fills caches (compiled grammars, regexes)."""
    from mathlens.analyze.grading.symbolic import warm_up
    from mathlens.analyze.verify.parse import parse_math_unbounded

    parse_math_unbounded("x^2 + 1 = 2")
    parse_math_unbounded(r"\frac{1}{2} + x", "latex")
    warm_up()  # answer comparisons: the LaTeX grammar's prediction cache, SymPy's first use


_warm()
