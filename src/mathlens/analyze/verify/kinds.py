"""How a verdict was reached, as one of `results.CLAIM_KINDS` (stored on every decided claim).

The kind comes from the check that decided the claim (its `method`) and from what the statement
holds (the cues of the piece: a derivative, an integral, a limit; whether its numbers are all
rational). It is what a reader filters flags by: an exact sum of whole numbers is a surer flag
than a difference that vanished at no sample point.
"""

from __future__ import annotations

from collections.abc import Collection

import sympy
from sympy.core.function import AppliedUndef

_BY_METHOD = {
    "integer quotient": "whole-number", "remainder": "whole-number", "quotient and remainder": "whole-number",
    "congruence": "whole-number", "gcd": "whole-number", "lcm": "whole-number", "GCD": "whole-number",
    "LCM": "whole-number", "rounded": "rounding", "approximate": "rounding", "antiderivative": "antiderivative",
    "change of variable": "antiderivative",
    "implicit differentiation": "derivative rule", "solves the equation": "equation",
    "solves the equation (in degrees)": "equation", "rewriting of the previous equation": "equation",
    "an equivalent form of the previous equation": "equation", "evaluation at sample points": "numeric sampling",
    "numeric sampling": "numeric sampling", "infinite": "limit",
}


def claim_kind(method: str, cues: Collection[str], rational: bool) -> str:
    """The kind of a decided claim checked by `method` in a piece with these `cues`.

    >>> claim_kind("exact", {"arithmetic"}, True), claim_kind("symbolic", {"derivative"}, False)
    ('arithmetic', 'derivative rule')
    """
    base = method.split(",")[0].strip()  # "exact, % and ° as units"
    if base in _BY_METHOD:
        kind = _BY_METHOD[base]
        if kind == "numeric sampling" and ("derivative" in cues or "partial" in cues):
            return "derivative rule"
        return kind
    if base.startswith(("gcd", "lcm", "the GCD", "the LCM")) or "remainder" in base:
        return "whole-number"
    if "derivative" in cues or "partial" in cues:
        return "derivative rule"
    if "integral" in cues or "limit" in cues or "sum" in cues:
        return "limit"
    if base in ("exact", "numeric") or (base in ("componentwise", "entrywise") and "arithmetic" in cues):
        return "arithmetic" if rational else "evaluation"
    return "symbolic identity"


# Nodes of plain arithmetic; a name stands for a value the context gives it.
_ARITHMETIC = (sympy.Add, sympy.Mul, sympy.Rational, sympy.Float, sympy.Integer, sympy.Tuple, sympy.Symbol)


def rational_only(sides: Collection[sympy.Basic]) -> bool:
    """True when every side is built from rational numbers with +, -, ×, ÷ and whole powers (no
    roots, constants or functions): plain arithmetic."""
    for side in sides:
        for node in sympy.preorder_traversal(side):
            if isinstance(node, sympy.Pow):
                if not node.exp.is_Integer:
                    return False
            elif isinstance(node, AppliedUndef):  # f(2): a defined function's value, a number
                if not all(a.is_number for a in node.args):
                    return False
            elif not isinstance(node, _ARITHMETIC):
                return False
    return True
