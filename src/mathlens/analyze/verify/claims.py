"""Decide whether one stated relation ``A = B`` (or ``<``, ``≈``...) holds, with SymPy.

Verdicts: ``valid``, ``invalid`` (with what the left side actually is), ``unverifiable`` (with
why: it refers to something undefined, it is an equation to be solved rather than an identity,
SymPy could not decide). The order of tests:

1. Indefinite integrals are compared by differentiating the other side (constants of
   integration ``C``/``K`` are ignored).
2. Vectors compare element by element; sets and intervals structurally.
3. Without free symbols the two sides are numbers: compared exactly, or, when the right side is
   written with decimals, to the precision written (``1/3 = 0.33`` holds, ``1/3 = 0.3`` holds
   too: the written digits are a truncation or a rounding); ``≈`` allows a 1 % difference.
4. With free symbols: ``expand``/``cancel`` to zero, else numeric sampling at fixed points.
   A relation that is not an identity is ``invalid`` only when it is clearly meant as one: a
   claim about a defined function (``f_x = ...``, ``g(7) = ...``), a calculus operator, or a
   later link of a chain whose earlier links were a definition or checked identities
   (``f(x) = (x+1)^2 = x^2 + 1``). Otherwise it is an equation to solve (``2x + 3 = 7``,
   ``x^2 y^2 = 48`` in an algebra solution) and ``unverifiable``: most relations between
   unknowns in a solution are conditions, not identities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import sympy

from mathlens.analyze.verify.context import Context, at_point, substitute, undefined_references

ClaimStatus = Literal["valid", "invalid", "unverifiable", "definition"]

EQUATION_REASON = "an equation to solve, not an identity"
_CONSTANT_NAMES = {"C", "K", "c", "C_1", "C_0"}
_SAMPLE_POINTS = (0.7133, 1.3719, 2.2461, 0.4127)


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on one relation of a step."""

    text: str
    status: ClaimStatus
    expected: str = ""
    method: str = ""
    reason: str = ""


@dataclass(frozen=True)
class PairInfo:
    """What the caller knows about where the relation sits."""

    op: str = "="
    link: int = 0  # position in a chain: 0 for the first relation
    # The chain so far holds for every value (a definition or checked identities): a later link
    # is then a claim of identity too. False once a link was an equation to solve.
    chain_identity: bool = False


def _decimals(expr: sympy.Basic) -> int:
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


def _num(expr: sympy.Basic, digits: int = 30) -> complex | None:
    try:
        value = complex(sympy.N(expr, digits))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if math.isnan(value.real) or math.isnan(value.imag) or math.isinf(abs(value)):
        return None
    return value


def _fmt(expr: sympy.Basic) -> str:
    return sympy.sstr(expr)[:200]


def _compare_numbers(lhs: sympy.Basic, rhs: sympy.Basic, info: PairInfo) -> tuple[ClaimStatus, str]:
    if info.op in ("<", "<=", ">", ">=", "!="):
        a, b = _num(lhs), _num(rhs)
        if a is None or b is None or abs(a.imag) > 1e-12 or abs(b.imag) > 1e-12:
            return "unverifiable", "not real numbers"
        x, y = a.real, b.real
        ok = {"<": x < y, "<=": x <= y + 1e-12, ">": x > y, ">=": x >= y - 1e-12, "!=": abs(x - y) > 1e-12}[info.op]
        return ("valid" if ok else "invalid"), "numeric"
    diff = sympy.nsimplify(lhs - rhs) if info.op == "≈" else lhs - rhs
    if diff == 0:
        return "valid", "exact"
    a, b = _num(lhs), _num(rhs)
    if a is None or b is None:
        return "unverifiable", "could not evaluate numerically"
    gap = abs(a - b)
    scale = max(abs(a), abs(b), 1.0)
    if info.op == "≈":
        return ("valid" if gap <= 0.01 * scale else "invalid"), "approximate"
    places = _decimals(rhs)
    if places:
        return ("valid" if gap <= 10.0**-places + 1e-12 * scale else "invalid"), "rounded"
    if gap <= 1e-12 * scale:
        return "valid", "numeric"
    return "invalid", "exact"


def _is_identity(diff: sympy.Basic) -> tuple[bool | None, str]:
    """True/False when `diff` is/is not identically zero; None when undecided."""
    try:
        if sympy.expand(diff) == 0 or sympy.cancel(diff) == 0:
            return True, "symbolic"
    except (sympy.PolynomialError, TypeError, ValueError):
        pass
    symbols = sorted(diff.free_symbols, key=lambda s: s.name)
    zero = nonzero = 0
    for k, base in enumerate(_SAMPLE_POINTS):
        point = {s: sympy.Float(base + 0.37 * i + 0.11 * k) for i, s in enumerate(symbols)}
        value = _num(diff.xreplace(point), 15)
        if value is None:
            continue
        if abs(value) < 1e-9:
            zero += 1
        else:
            nonzero += 1
    if nonzero:
        return False, "numeric sampling"
    if zero >= 2:
        return True, "numeric sampling"
    return None, "could not evaluate at sample points"


def _expands_to_zero(diff: sympy.Basic) -> bool:
    try:
        return bool(sympy.expand(diff) == 0)
    except (TypeError, ValueError, AttributeError):
        return False


def _strip_constants(expr: sympy.Basic) -> sympy.Basic:
    consts = {s: 0 for s in expr.free_symbols if getattr(s, "name", "") in _CONSTANT_NAMES}
    return expr.xreplace(consts) if consts else expr


def _check_antiderivative(integral: sympy.Integral, other: sympy.Basic, ctx: Context) -> tuple[ClaimStatus, str, str]:
    var = integral.limits[0][0]
    integrand, _ = substitute(integral.function, ctx)
    candidate, _ = substitute(_strip_constants(other), ctx)
    ok, method = _is_identity(sympy.diff(candidate, var) - integrand)
    if ok is None:
        return "unverifiable", method, ""
    if ok:
        return "valid", "antiderivative", ""
    expected = sympy.integrate(integrand, var)
    return "invalid", "antiderivative", _fmt(expected) + " + C"


def check_relation(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic, ctx: Context, info: PairInfo,
                   text: str) -> ClaimCheck:
    """The verdict on ``lhs <op> rhs`` under the definitions in `ctx`."""
    for first, second in ((lhs_raw, rhs_raw), (rhs_raw, lhs_raw)):
        if isinstance(first, sympy.Integral) and all(len(lim) == 1 for lim in first.limits) and info.op == "=":
            status, method, expected = _check_antiderivative(first, second, ctx)
            return ClaimCheck(text, status, expected, method)
    lhs, used_l = substitute(lhs_raw, ctx)
    rhs, used_r = substitute(rhs_raw, ctx)
    missing = undefined_references(lhs, ctx) + undefined_references(rhs, ctx)
    if missing:
        return ClaimCheck(text, "unverifiable", reason=f"refers to {', '.join(sorted(set(missing)))}")
    lhs, rhs, where = _evaluate_at_point(lhs, rhs, used_l, used_r, ctx)
    if where:
        text = f"{text} (at {where})"
    if isinstance(lhs, sympy.Tuple) or isinstance(rhs, sympy.Tuple):
        return _check_vectors(lhs, rhs, ctx, info, text)
    if isinstance(lhs, sympy.Set) or isinstance(rhs, sympy.Set):
        if isinstance(lhs, sympy.Set) and isinstance(rhs, sympy.Set):
            same = lhs == rhs
            return ClaimCheck(text, "valid" if same else "invalid", "" if same else _fmt(lhs), "structural")
        return ClaimCheck(text, "unverifiable", reason="a set compared with a non-set")
    if not isinstance(lhs, sympy.Expr) or not isinstance(rhs, sympy.Expr):
        return ClaimCheck(text, "unverifiable", reason="not an expression")
    if not (lhs.free_symbols | rhs.free_symbols):
        status, method = _compare_numbers(lhs, rhs, info)
        if status == "unverifiable":
            return ClaimCheck(text, status, reason=method)
        return ClaimCheck(text, status, "" if status == "valid" else _fmt(sympy.nsimplify(lhs)), method)
    if info.op != "=" and info.op != "≈":
        return ClaimCheck(text, "unverifiable", reason="an inequality with unknowns")
    meant_as_identity = ((info.link > 0 and info.chain_identity) or used_l or used_r
                         or lhs_raw.has(sympy.Derivative, sympy.Integral, sympy.Limit)
                         or rhs_raw.has(sympy.Derivative, sympy.Integral, sympy.Limit))
    if not meant_as_identity and _expands_to_zero(lhs - rhs):
        return ClaimCheck(text, "valid", method="symbolic")
    ok, method = _is_identity(lhs - rhs)
    if not meant_as_identity:
        # An equation in unknowns that is not an identity is usually a condition, not a claim.
        return ClaimCheck(text, "valid", method=method) if ok else \
            ClaimCheck(text, "unverifiable", reason=EQUATION_REASON)
    if ok:
        return ClaimCheck(text, "valid", method=method)
    if ok is None:
        return ClaimCheck(text, "unverifiable", reason=method)
    return ClaimCheck(text, "invalid", _fmt(lhs), method)


def _is_numeric(expr: sympy.Basic) -> bool:
    if isinstance(expr, sympy.Tuple):
        return all(_is_numeric(e) for e in expr)
    return not expr.free_symbols


def _evaluate_at_point(lhs: sympy.Basic, rhs: sympy.Basic, used_l: bool, used_r: bool,
                       ctx: Context) -> tuple[sympy.Basic, sympy.Basic, str]:
    """``∇f = <-8, 1>`` after naming a point: a defined object against numbers is read at the
    current point (the claim's text then says which point)."""
    for first, second, used, swap in ((lhs, rhs, used_l, False), (rhs, lhs, used_r, True)):
        if used and not _is_numeric(first) and _is_numeric(second):
            moved = at_point(first, ctx)
            if moved is not None:
                where = ", ".join(_fmt(p) for p in ctx.point)
                return (second, moved, f"({where})") if swap else (moved, second, f"({where})")
    return lhs, rhs, ""


def _check_vectors(lhs: sympy.Basic, rhs: sympy.Basic, ctx: Context, info: PairInfo, text: str) -> ClaimCheck:
    if not (isinstance(lhs, sympy.Tuple) and isinstance(rhs, sympy.Tuple)):
        return ClaimCheck(text, "unverifiable", reason="a vector compared with a scalar")
    if len(lhs) != len(rhs):
        return ClaimCheck(text, "invalid", _fmt(lhs), "structural", "vectors of different length")
    verdicts = [check_relation(a, b, ctx, info, text) for a, b in zip(lhs, rhs, strict=True)]
    if any(v.status == "invalid" for v in verdicts):
        return ClaimCheck(text, "invalid", _fmt(lhs), "componentwise")
    if all(v.status == "valid" for v in verdicts):
        return ClaimCheck(text, "valid", method="componentwise")
    return ClaimCheck(text, "unverifiable", reason="some components could not be decided")


def solves_pending(name: str, before: Context, after: Context, text: str) -> ClaimCheck | None:
    """When ``name = value`` follows an equation in that name alone (``2x + 3 = 7`` ... ``x = 2``),
    whether the value satisfies it."""
    value = after.values.get(name)
    if value is None:
        return None
    for eq in reversed(before.equations):
        names = {getattr(s, "name", "") for s in eq.free_symbols}
        if names != {name}:
            continue
        sym = next(iter(eq.free_symbols))
        residual = _num(eq.xreplace({sym: value}))
        if residual is None:
            return None
        scale = max(1.0, abs(_num(value) or 1.0))
        if abs(residual) <= 1e-9 * scale or (_decimals(value) and abs(residual) <= 10.0 ** -_decimals(value) * 10):
            return ClaimCheck(text, "valid", method="solves the equation")
        try:
            roots = sympy.solve(eq, sym)
        except (NotImplementedError, TypeError, ValueError):
            roots = []
        expected = ", ".join(_fmt(r) for r in roots[:4])
        return ClaimCheck(text, "invalid", expected, "solves the equation", f"does not satisfy {_fmt(eq)} = 0")
    return None
