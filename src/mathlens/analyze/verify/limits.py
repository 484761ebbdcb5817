"""Bounds on what the math parser accepts: text length, bracket nesting, tree size, number growth.

Every check here is cheap and runs before SymPy evaluates anything, so most adversarial input is
refused in microseconds; the worker's time budget is the second line of defence. The text checks
need no SymPy, which the tree checks import when first called (the answer checker reads these
limits in the calling process, where SymPy is loaded only when a comparison needs it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy


@dataclass(frozen=True)
class ParseLimits:
    """Caps applied to one expression.

    `max_digits` bounds the size of any integer an evaluated power or factorial would produce
    (``9^9^9`` would have about 3.7e8 digits); `max_tree_nodes` and `max_tree_depth` bound the
    unevaluated expression tree.
    """

    max_chars: int = 2000
    max_nesting: int = 60
    max_tree_nodes: int = 4000
    max_tree_depth: int = 80
    max_digits: int = 100_000
    max_factorial: int = 5000


DEFAULT_LIMITS = ParseLimits()

_OPENERS = "([{"
_CLOSERS = ")]}"


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting in `text` (round, square and curly brackets counted together)."""
    depth = best = 0
    for ch in text:
        if ch in _OPENERS:
            depth += 1
            if depth > best:
                best = depth
        elif ch in _CLOSERS and depth > 0:
            depth -= 1
    return best


def check_text(text: str, limits: ParseLimits = DEFAULT_LIMITS) -> str | None:
    """Why `text` is refused before parsing, or None when it is within bounds."""
    if len(text) > limits.max_chars:
        return f"expression longer than {limits.max_chars} characters"
    if nesting_depth(text) > limits.max_nesting:
        return f"brackets nested deeper than {limits.max_nesting}"
    return None


def _log10_magnitude(node: sympy.Basic, limit: float) -> float:
    """An upper bound on log10 of |value| for a numeric subtree (inf when beyond `limit` digits)."""
    import sympy

    if isinstance(node, sympy.Integer):
        p = abs(int(node.p))
        return math.log10(p) if p > 1 else 0.0
    if isinstance(node, sympy.Rational):
        return max(math.log10(abs(int(node.p)) + 1), math.log10(abs(int(node.q)) + 1))
    if isinstance(node, sympy.Float | sympy.NumberSymbol) or node is sympy.I:
        return 1.0
    if isinstance(node, sympy.Pow):
        base = _log10_magnitude(node.base, limit)
        exp = _log10_magnitude(node.exp, limit)
        if base == 0.0 or exp == 0.0:
            return max(base, 1.0)
        if exp > 15:  # an exponent above 1e15 with |base| > 1 is always too large
            return math.inf
        return base * (10.0**exp)
    if isinstance(node, sympy.Mul):
        return sum(_log10_magnitude(a, limit) for a in node.args)
    if isinstance(node, sympy.Add):
        return max((_log10_magnitude(a, limit) for a in node.args), default=0.0) + 1.0
    if isinstance(node, sympy.factorial):
        n = _log10_magnitude(node.args[0], limit)
        if n > 6:
            return math.inf
        value = 10.0**n
        return value * max(math.log10(value), 1.0)
    # A symbolic subtree: its own numbers are checked where they occur.
    return 1.0


def check_tree(expr: sympy.Basic, limits: ParseLimits = DEFAULT_LIMITS) -> str | None:
    """Why an unevaluated expression is refused before evaluation, or None when it is safe."""
    import sympy

    nodes = 0
    stack: list[tuple[sympy.Basic, int]] = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > limits.max_tree_nodes:
            return f"expression has more than {limits.max_tree_nodes} nodes"
        if depth > limits.max_tree_depth:
            return f"expression tree deeper than {limits.max_tree_depth}"
        if isinstance(node, sympy.Pow):
            if _log10_magnitude(node, limits.max_digits) > limits.max_digits:
                return f"a power would have more than {limits.max_digits} digits"
            exp = node.exp
            if exp.is_Integer and abs(int(exp)) > limits.max_digits and not node.base.is_number:
                return "a symbolic power with an enormous exponent"
        if isinstance(node, sympy.factorial):
            arg = node.args[0]
            if arg.is_Integer and int(arg) > limits.max_factorial:
                return f"factorial of a number above {limits.max_factorial}"
            if _log10_magnitude(node, limits.max_digits) > limits.max_digits:
                return f"a factorial would have more than {limits.max_digits} digits"
        if isinstance(node, sympy.binomial):
            n = node.args[0]
            if n.is_Integer and int(n) > limits.max_factorial:
                return f"binomial coefficient of a number above {limits.max_factorial}"
        stack.extend((a, depth + 1) for a in node.args if isinstance(a, sympy.Basic))
    return None


def tree_depth(expr: sympy.Basic) -> int:
    """Height of the expression tree: an atom has depth 1, `x + 1` depth 2, `sin(x + 1)` depth 3."""
    import sympy

    best = 0
    stack: list[tuple[sympy.Basic, int]] = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        stack.extend((a, depth + 1) for a in node.args if isinstance(a, sympy.Basic))
    return best
