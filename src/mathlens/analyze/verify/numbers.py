"""Comparing numbers as a solution writes them: exactly, to the digits shown, or approximately.

Decimals are parsed to exact rationals, so ``1/3 = 0.33`` is decided by the written precision:
a right side with decimals holds when it is the value rounded to its last digit (within half a unit
of it) or the value with its further digits cut off (less than a unit nearer zero): ``2/3 = 0.67``
and ``2/3 = 0.66`` hold, ``1/3 = 0.34`` and ``sqrt(2) = 1.5`` do not. Decimals on the left carry
their own error into the comparison (``(2.8284)^2 = 8`` holds). ``≈`` holds in the same way, and
always within 1 %: an approximation announces that it is one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import sympy

NumberStatus = Literal["valid", "invalid", "unverifiable"]
#: ``≈`` never fails within this relative gap.
APPROX_FLOOR = 0.01


@dataclass(frozen=True)
class NumberInfo:
    """What the comparison needs to know besides the two numbers."""

    op: str = "="
    integer_division: bool = False  # "2863 ÷ 1344 = 2 (quotient)"
    carried: float = 0.0  # relative error carried by decimals written on the left


def decimals(expr: sympy.Basic) -> int:
    """Digits after the point in the decimal numbers of `expr` (parsed to exact rationals)."""
    best = 0
    numbers: list[sympy.Rational] = []
    stack = [expr]
    while stack:  # exponents (the 1/2 of a square root) are not written decimals
        node = stack.pop()
        if isinstance(node, sympy.Rational):
            numbers.append(node)
        elif isinstance(node, sympy.Pow):
            stack.append(node.base)
        else:
            stack.extend(a for a in node.args if isinstance(a, sympy.Basic))
    for r in numbers:
        q = int(r.q)
        if q <= 1:
            continue
        twos = fives = 0
        while q % 2 == 0:
            q //= 2
            twos += 1
        while q % 5 == 0:
            q //= 5
            fives += 1
        if q == 1:
            best = max(best, twos, fives)
    return best


def num(expr: sympy.Basic, digits: int = 30) -> complex | None:
    try:
        value = complex(sympy.N(expr, digits))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError):
        # AttributeError: SymPy's evalf on a product holding a tuple or a set
        return None
    if math.isnan(value.real) or math.isnan(value.imag) or math.isinf(abs(value)):
        return None
    return value


def fmt(expr: sympy.Basic) -> str:
    return sympy.sstr(expr, full_prec=False)[:200]


def compare_numbers(lhs: sympy.Basic, rhs: sympy.Basic, info: NumberInfo) -> tuple[NumberStatus, str]:
    """The verdict on ``lhs op rhs`` for two numbers, and how it was reached."""
    if info.op in ("<", "<=", ">", ">=", "!="):
        a, b = num(lhs), num(rhs)
        if a is None or b is None or abs(a.imag) > 1e-12 or abs(b.imag) > 1e-12:
            return "unverifiable", "not real numbers"
        x, y = a.real, b.real
        ok = {"<": x < y, "<=": x <= y + 1e-12, ">": x > y, ">=": x >= y - 1e-12, "!=": abs(x - y) > 1e-12}[info.op]
        return ("valid" if ok else "invalid"), "numeric"
    infinite = _infinite(lhs), _infinite(rhs)
    if any(infinite):
        # "lim 1/(1 - z)^2 = 1" as z -> 1: the limit is infinite, not 1.
        if lhs == rhs:
            return "valid", "exact"
        if all(infinite) or lhs.has(sympy.zoo, sympy.nan) or rhs.has(sympy.zoo, sympy.nan):
            return "unverifiable", "an undirected or undefined infinity"
        finite = num(rhs if infinite[0] else lhs)
        if finite is None or abs(finite.imag) > 1e-12:
            return "unverifiable", "could not evaluate numerically"
        return "invalid", "infinite"
    diff = sympy.nsimplify(lhs - rhs) if info.op == "≈" else lhs - rhs
    if diff == 0:
        return "valid", "exact"
    a, b = num(lhs), num(rhs)
    if a is None or b is None:
        return "unverifiable", "could not evaluate numerically"
    gap = abs(a - b)
    scale = max(abs(a), abs(b), 1.0)
    # Decimals written on the left carry their own rounding ("(2.8284)^2 = 8").
    carried = info.carried * max(abs(a), 1.0)
    if info.op == "≈":
        floor = APPROX_FLOOR * max(abs(a), abs(b))
        near = gap <= floor or _to_digits(a, b, _last_digit_unit(rhs), carried, scale)
        return ("valid" if near else "invalid"), "approximate"
    places = decimals(rhs)
    if places:
        return ("valid" if _to_digits(a, b, 10.0**-places, carried, scale) else "invalid"), "rounded"
    if gap <= 1e-12 * scale or (carried and gap <= carried):
        return "valid", "numeric" if not carried else "rounded"
    if info.integer_division and rhs.is_Integer and lhs.is_Rational and sympy.floor(lhs) == rhs:
        return "valid", "integer quotient"
    return "invalid", "exact"


def _to_digits(a: complex, b: complex, unit: float, carried: float, scale: float) -> bool:
    """Whether `b`, written to digits of `unit`, is `a` rounded (within half a unit) or cut off
    (nearer zero, by less than a unit); `carried` is the error the left side's own decimals carry.
    Rounding away from zero by more than half a unit is neither: 1/3 is not 0.34."""
    gap = abs(a - b)
    slack = carried + 1e-12 * scale
    rounded = gap <= unit / 2 * (1 + 1e-9) + slack
    cut = abs(b) <= abs(a) + slack and gap < unit * (1 - 1e-6) + slack
    return rounded or cut


def _infinite(expr: sympy.Basic) -> bool:
    return bool(expr in (sympy.oo, -sympy.oo, sympy.zoo) or expr.has(sympy.nan))


def _decimal_literals(expr: sympy.Basic) -> list[tuple[sympy.Rational, int, int]]:
    """(value, decimal places, exponent applied to it) of the decimals written in `expr` (raw
    parses keep them as floats, evaluated ones as rationals)."""
    out: list[tuple[sympy.Rational, int, int]] = []
    stack: list[tuple[sympy.Basic, int]] = [(expr, 1)]
    while stack:
        node, power = stack.pop()
        if isinstance(node, sympy.Float):
            node = sympy.Rational(sympy.sstr(node, full_prec=False))
        if isinstance(node, sympy.Rational) and not node.is_Integer:
            places = decimals(node)
            if places:
                out.append((node, places, power))
        elif isinstance(node, sympy.Pow):
            exp = node.exp
            stack.append((node.base, power * (abs(int(exp)) if exp.is_Integer and abs(exp) < 100 else 1)))
        else:
            stack.extend((a, power) for a in node.args if isinstance(a, sympy.Basic))
    return out


def carried_error(expr: sympy.Basic) -> float:
    """Relative error the written decimals of `expr` can carry (one unit of the last digit of
    each, scaled by the power it is raised to)."""
    total = 0.0
    for value, places, power in _decimal_literals(expr):
        # A decimal of one significant digit (".3", "0.25" has two) is a value as written, such as a
        # rate or a share, not a rounded one: it carries no error ("100*.3 = 40" is false).
        if value != 0 and len(str(abs(int(value * 10**places))).strip("0")) >= 2:
            total += power * 10.0**-places / abs(float(value))
    return min(total, 0.5)


def _last_digit_unit(expr: sympy.Basic) -> float:
    """The value of one unit of the last digit shown in `expr`: 0.01 for 3.14, 10 for 1760."""
    places = decimals(expr)
    if places:
        return 10.0**-places
    if expr.is_Integer and expr != 0:
        n, unit = abs(int(expr)), 1.0
        while n % 10 == 0:
            n //= 10
            unit *= 10
        return unit
    return 1.0


def rounds_to(lhs: sympy.Basic, rhs: sympy.Basic, direction: Literal["up", "down", "nearest"]) -> bool:
    """Whether the number `rhs` is `lhs` rounded in `direction` to the last digit `rhs` shows
    (``150/20 = 8`` with "rounded up" in the words: 7.5 up to 8)."""
    if not (lhs.is_number and rhs.is_number):
        return False
    a, b = num(lhs), num(rhs)
    if a is None or b is None or abs(a.imag) > 1e-12 or abs(b.imag) > 1e-12:
        return False
    gap, unit = b.real - a.real, _last_digit_unit(rhs)
    slack = 1e-9 * max(abs(a.real), unit)
    if direction == "up":
        return -slack <= gap < unit - slack
    if direction == "down":
        return -unit + slack < gap <= slack
    return abs(gap) <= unit / 2 + slack
