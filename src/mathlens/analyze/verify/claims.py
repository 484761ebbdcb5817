"""Decide whether one stated relation ``A = B`` (or ``<``, ``≈``...) holds, with SymPy.

Verdicts: ``valid``, ``invalid`` (with what the left side actually is), ``unverifiable`` (with
why: it refers to something undefined, it is an equation to be solved rather than an identity,
SymPy could not decide). The order of tests:

1. Indefinite integrals are compared by differentiating the other side (constants of
   integration ``C``/``K`` are ignored).
2. Vectors compare element by element; sets and intervals structurally (with unknowns in them,
   only equality decides).
3. Without free symbols the two sides are numbers (`numbers.compare_numbers`: exactly, to the
   digits written, ``≈`` to the digits shown and within 1 %). A false relation between named
   values that is a condition (``G > B``) or restates a function differently is not a claim.
4. With free symbols: ``expand``/``cancel`` to zero; a rational function that does not cancel
   is not an identity; otherwise sampling in the usual domain, never decisive alone where the
   claim could hold on part of it. A relation that is not an identity is ``invalid`` only when
   it is clearly meant as one, between expressions in the same unknowns: a calculus operator or
   a claim about a defined function's derivative, a defined function at an expression, a stated
   factorisation, an announced rewriting of compound expressions, a later link of a chain of
   identities, a chain of forms of one expression (``f(x) = (x+1)^2 = x^2 + 1``). Otherwise it
   is an equation to solve (``2x + 3 = 7``, ``a_16 = a_1 + 15d = 13``) and ``unverifiable``,
   unless it holds for no value at all (``2x + 3 = 2x + 5``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import sympy

from mathlens.analyze.verify.context import Context, at_point, substitute, undefined_references
from mathlens.analyze.verify.numbers import NumberInfo, compare_numbers, fmt, num
from mathlens.analyze.verify.results import EQUATION_REASON, ClaimCheck, ClaimStatus
from mathlens.analyze.verify.signs import PlusMinus

__all__ = ["EQUATION_REASON", "ClaimCheck", "ClaimStatus", "PairInfo", "check_relation", "stated_factorisation"]

_CONSTANT_NAMES = {"C", "K", "c", "C_1", "C_0"}
# Sample points: positive (roots, logarithms) and, with the offsets below, inside (0, pi/2).
_SAMPLE_POINTS = (0.7133, 1.1719, 0.3461, 0.9127, 0.5219)


@dataclass(frozen=True)
class PairInfo:
    """What the caller knows about where the relation sits."""

    op: str = "="
    link: int = 0  # position in a chain: 0 for the first relation
    # The chain so far holds for every value (a definition or checked identities): a later link
    # is then a claim of identity too. False once a link was an equation to solve.
    chain_identity: bool = False
    # The step speaks of a quotient or remainder: "2863 ÷ 1344 = 2" is integer division.
    integer_division: bool = False
    # Relative error carried by decimals written on the left side ("(2.8284)^2 = 8").
    carried: float = 0.0
    # The words before it announce a rewriting ("expanding", "simplifying", "we can rewrite").
    rewrite: bool = False
    # It opens a chain of three or more expressions in the same unknowns ("A = B = C"): a
    # chain of forms of one expression, each link an identity.
    chain_of_forms: bool = False
    # It follows "if", "when", "try": a case being tested ("if b = 2, then 4a = 4(a - 3)").
    supposed: bool = False


def _is_identity(diff: sympy.Basic) -> tuple[bool | None, str]:
    """True/False when `diff` is/is not identically zero; None when undecided.

    A rational function that does not cancel to zero is not an identity (symbolic). Otherwise the
    difference is sampled at points of the usual domain (positive, as logarithms and roots need,
    and inside (0, pi/2) for angles). A difference that is zero at some points and not at others
    holds only on part of the domain: undecided. When it has a branch (roots, logarithms,
    absolute values, inverse functions), negative and large points are tried too, and a claim
    that holds at any of them is undecided rather than false.
    """
    try:
        if sympy.expand(diff) == 0 or sympy.cancel(diff) == 0:
            return True, "symbolic"
    except (sympy.PolynomialError, TypeError, ValueError):
        pass
    symbols = sorted(diff.free_symbols, key=lambda s: s.name)
    if _is_rational_function(diff, symbols):
        return False, "symbolic"
    zero, nonzero = _sample(diff, symbols, 1.0)
    if nonzero and zero:
        return None, "holds at some points of the domain only"
    if nonzero:
        # With a root, logarithm or absolute value, a claim may hold on another domain than the
        # sampled one (sqrt(x^2) = -x for negative x): look there before calling it false.
        if _has_branch(diff) and (any(_sample(diff, symbols, scale)[0] for scale in (-1.0, 7.0))
                                  or _holds_on_an_interval(diff, symbols)):
            return None, "holds on part of the domain only"
        return False, "evaluation at sample points"
    if zero >= 2:
        return True, "numeric sampling"
    return None, "could not evaluate at sample points"


def _sample(diff: sympy.Basic, symbols: list[sympy.Symbol], scale: float) -> tuple[int, int]:
    """How many sample points (scaled by `scale`) make `diff` zero and how many do not."""
    zero = nonzero = 0
    for k, base in enumerate(_SAMPLE_POINTS):
        point = {s: sympy.Float(scale * (base + 0.173 * i + 0.059 * k)) for i, s in enumerate(symbols)}
        try:
            value = num(diff.xreplace(point), 15)
        except ValueError:  # a number put where an integral's variable stands
            continue
        if value is None:
            continue
        if abs(value) < 1e-9:
            zero += 1
        else:
            nonzero += 1
    return zero, nonzero


#: where a claim in one unknown with a branch is looked at for a stretch on which it holds
_GRID = tuple(k / 4 for k in range(-40, 41))


def _holds_on_an_interval(diff: sympy.Basic, symbols: list[sympy.Symbol]) -> bool:
    """Whether `diff`, in one unknown and with an absolute value, is zero at two neighbouring points
    of a grid over [-10, 10]:
    a case of the solution's own (``|x^2 + 9x + 20| = -(x^2 + 9x + 20)`` for -5 < x < -4), not an
    identity that fails. A claim true at one point only (``|x - 3| = x + 3`` at 0) is not one."""
    if len(symbols) != 1 or not diff.has(sympy.Abs):  # cases are of absolute values; other branches are
        return False                                    # looked at by `_is_identity`'s scales
    zero_before = False
    for x in _GRID:
        try:
            value = num(diff.xreplace({symbols[0]: sympy.Rational(x)}), 15)
        except ValueError:
            value = None
        zero = value is not None and abs(value) < 1e-9
        if zero and zero_before:
            return True
        zero_before = zero
    return False


def _is_rational_function(expr: sympy.Basic, symbols: list[sympy.Symbol]) -> bool:
    """True when `expr` is a rational function of its symbols (no functions, no symbolic or
    fractional powers)."""
    if not symbols:
        return False
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Function | sympy.Derivative | sympy.Integral | sympy.Limit):
            return False
        if isinstance(node, sympy.Pow) and not (node.exp.is_Integer and not node.base.is_number) and \
                node.base.free_symbols:
            return False
    return True


_BRANCHED = (sympy.log, sympy.Abs, sympy.asin, sympy.acos, sympy.atan, sympy.acot, sympy.sign,
             sympy.floor, sympy.ceiling, sympy.Min, sympy.Max, sympy.Piecewise)


def _has_branch(expr: sympy.Basic) -> bool:
    """True when `expr` has a root, logarithm, absolute value or other branch."""
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, _BRANCHED):
            return True
        if isinstance(node, sympy.Pow) and not node.exp.is_Integer and node.base.free_symbols:
            return True
    return False


def _expands_to_zero(diff: sympy.Basic) -> bool:
    try:
        return bool(sympy.expand(diff) == 0)
    except (TypeError, ValueError, AttributeError):
        return False


def _strip_constants(expr: sympy.Basic) -> sympy.Basic:
    consts = {s: 0 for s in expr.free_symbols if getattr(s, "name", "") in _CONSTANT_NAMES}
    return expr.xreplace(consts) if consts else expr


def _check_substitution(integral: sympy.Integral, other: sympy.Integral, ctx: Context
                        ) -> tuple[ClaimStatus, str, str]:
    """``∫ f(x) dx = ∫ g(u) du``, a change of variable: it holds when g(u(x))·u'(x) = f(x), with u
    as the solution defined it (``Let u = x^2``). An integral in a variable the solution has not
    written in terms of x is left undecided."""
    var, new_var = integral.limits[0][0], other.limits[0][0]
    integrand, _ = substitute(integral.function, ctx)
    if new_var == var:
        other_integrand, _ = substitute(other.function, ctx)
        ok, method = _is_identity(other_integrand - integrand)
    else:
        # "Let u = x^2" keeps u a variable of its own and records it as the function u(x)
        fn = ctx.functions.get(getattr(new_var, "name", ""))
        inner = fn.body.xreplace({fn.params[0]: var}) if fn is not None and len(fn.params) == 1 else new_var
        if inner == new_var or var not in inner.free_symbols:
            return "unverifiable", f"a change of variable to {new_var}, not defined in terms of {var}", ""
        pulled_back, _ = substitute(other.function.xreplace({new_var: inner}), ctx)
        ok, method = _is_identity(pulled_back * sympy.diff(inner, var) - integrand)
    if ok is None:
        return "unverifiable", method, ""
    if ok:
        return "valid", "change of variable", ""
    return "invalid", "change of variable", fmt(sympy.integrate(integrand, var)) + " + C"


def _indefinite(value: sympy.Basic) -> sympy.Integral | None:
    """`value` as one indefinite integral: itself, or ``c·∫ g(u) du`` with a number c, as
    ``∫ c·g(u) du``; None for anything else."""
    if isinstance(value, sympy.Mul):
        integrals = [a for a in value.args if isinstance(a, sympy.Integral)]
        factor = sympy.Mul(*[a for a in value.args if not isinstance(a, sympy.Integral)])
        if len(integrals) == 1 and factor.is_number:
            value = sympy.Integral(factor * integrals[0].function, *integrals[0].limits)
    if isinstance(value, sympy.Integral) and all(len(lim) == 1 for lim in value.limits):
        return value
    return None


def _check_antiderivative(integral: sympy.Integral, other: sympy.Basic, ctx: Context) -> tuple[ClaimStatus, str, str]:
    other_integral = _indefinite(other)
    if other_integral is not None and len(other_integral.limits) == 1:
        return _check_substitution(integral, other_integral, ctx)
    var = integral.limits[0][0]
    integrand, _ = substitute(integral.function, ctx)
    candidate, _ = substitute(_strip_constants(other), ctx)
    fn = ctx.functions.get(getattr(var, "name", ""))
    if fn is not None and len(fn.params) == 1 and var not in candidate.free_symbols and \
            fn.params[0] in candidate.free_symbols:
        # "½ ∫ cos(u) du = ½ sin(x²) + C" after "Let u = x²": the result is written back in x
        x, inner = fn.params[0], fn.body
        ok, method = _is_identity(sympy.diff(candidate, x) - integrand.xreplace({var: inner}) * sympy.diff(inner, x))
        if ok is None:
            return "unverifiable", method, ""
        return ("valid", "change of variable", "") if ok else (
            "invalid", "change of variable", fmt(sympy.integrate(integrand, var).xreplace({var: inner})) + " + C")
    ok, method = _is_identity(sympy.diff(candidate, var) - integrand)
    if ok is None:
        return "unverifiable", method, ""
    if ok:
        return "valid", "antiderivative", ""
    expected = sympy.integrate(integrand, var)
    return "invalid", "antiderivative", fmt(expected) + " + C"


def _over_subscripts(expr: sympy.Basic) -> bool:
    """Whether a limit, sum or product runs over a variable that stands only in the subscripts of
    names (``lim |a_{n+1}/a_n|``, ``sum a_n``): each such name is read as a name of its own, so the
    operator would seem to act on a constant."""
    for op in expr.atoms(sympy.Limit, sympy.Sum, sympy.Product):
        var = op.args[1] if isinstance(op, sympy.Limit) else op.limits[0][0]
        body = op.args[0].free_symbols
        mention = re.compile(rf"_.*(?<![A-Za-z]){re.escape(str(var))}(?![A-Za-z])")
        if var not in body and any(mention.search(s.name) for s in body):
            return True
    return False


def check_relation(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic, ctx: Context, info: PairInfo,
                   text: str) -> ClaimCheck:
    """The verdict on ``lhs <op> rhs`` under the definitions in `ctx`."""
    for first, second in ((lhs_raw, rhs_raw), (rhs_raw, lhs_raw)):
        integral = _indefinite(first) if info.op == "=" else None
        if integral is not None:
            status, method, expected = _check_antiderivative(integral, second, ctx)
            return ClaimCheck(text, status, expected, method)
    if _over_subscripts(lhs_raw) or _over_subscripts(rhs_raw):
        return ClaimCheck(text, "unverifiable", reason="a limit or sum over terms named by their index (a_{n+1})")
    lhs, used_l = substitute(lhs_raw, ctx)
    rhs, used_r = substitute(rhs_raw, ctx)
    missing = undefined_references(lhs, ctx) + undefined_references(rhs, ctx)
    if missing:
        return ClaimCheck(text, "unverifiable", reason=f"refers to {', '.join(sorted(set(missing)))}")
    lhs, rhs, where = _evaluate_at_point(lhs, rhs, used_l, used_r, ctx)
    if where:
        text = f"{text} (at {where})"
    if _matrix(lhs) or _matrix(rhs):
        return _check_matrices(lhs, rhs, ctx, info, text)
    if isinstance(lhs, PlusMinus) != isinstance(rhs, PlusMinus):
        return ClaimCheck(text, "unverifiable", reason="a ± expression compared with a single value")
    if isinstance(lhs, sympy.Tuple) or isinstance(rhs, sympy.Tuple):
        return _check_vectors(lhs, rhs, ctx, info, text)
    if isinstance(lhs, sympy.Set) or isinstance(rhs, sympy.Set):
        if isinstance(lhs, sympy.Set) and isinstance(rhs, sympy.Set):
            same = lhs == rhs
            if not same and (lhs.free_symbols or rhs.free_symbols):
                # "[a + 3, (a + 3)^2]" is as often a gcd or a list as an interval in unknowns.
                return ClaimCheck(text, "unverifiable", reason="sets or intervals with unknowns")
            return ClaimCheck(text, "valid" if same else "invalid", "" if same else fmt(lhs), "structural")
        return ClaimCheck(text, "unverifiable", reason="a set compared with a non-set")
    if not isinstance(lhs, sympy.Expr) or not isinstance(rhs, sympy.Expr):
        return ClaimCheck(text, "unverifiable", reason="not an expression")
    if not (lhs.free_symbols | rhs.free_symbols):
        status, method = compare_numbers(lhs, rhs, NumberInfo(info.op, info.integer_division, info.carried))
        if status == "unverifiable":
            return ClaimCheck(text, status, reason=method)
        if status == "invalid":
            why = _condition_or_restatement(lhs_raw, rhs_raw, ctx, info)
            if why:
                return ClaimCheck(text, "unverifiable", reason=why)
        return ClaimCheck(text, status, "" if status == "valid" else fmt(sympy.nsimplify(lhs)), method)
    if info.op != "=" and info.op != "≈":
        return ClaimCheck(text, "unverifiable", reason="an inequality with unknowns")
    calculus = (used_l or used_r or lhs_raw.has(sympy.Derivative, sympy.Integral, sympy.Limit)
                or rhs_raw.has(sympy.Derivative, sympy.Integral, sympy.Limit))
    # A later link of a chain claims an identity only between expressions in the same unknowns:
    # "a_16 = a_1 + 15d = 13" and "b = 2c = 8" state equations.
    same_unknowns = lhs.free_symbols == rhs.free_symbols
    # "f'(x) = 0" and "d/dx(...) = 5" set a derivative to a value: an equation, not an identity.
    # A derivative stated as an expression ("f_x = 2x" for f = x^2 y) is meant as one, even when
    # the wrong result has lost one of the unknowns.
    stated_derivative = calculus and bool(lhs.free_symbols) and bool(rhs.free_symbols)
    meant_as_identity = stated_derivative or (same_unknowns and (
        (info.link > 0 and info.chain_identity) or calculus or stated_factorisation(lhs_raw, rhs_raw, lhs, rhs)
        or info.chain_of_forms
        or (info.rewrite and _compound(lhs_raw) and _compound(rhs_raw)
            and (_product_form(lhs_raw) or _product_form(rhs_raw) or _single_fractions(lhs_raw, rhs_raw)))
        or _evaluates_function(lhs_raw, rhs_raw, ctx)))
    if not meant_as_identity and _expands_to_zero(lhs - rhs):
        return ClaimCheck(text, "valid", method="symbolic")
    ok, method = _is_identity(lhs - rhs)
    if not meant_as_identity:
        if ok is False and not info.supposed and _never_holds(lhs - rhs):
            return ClaimCheck(text, "invalid", fmt(lhs), "symbolic", "holds for no value of the unknowns")
        # An equation in unknowns that is not an identity is usually a condition, not a claim.
        return ClaimCheck(text, "valid", method=method) if ok else \
            ClaimCheck(text, "unverifiable", reason=EQUATION_REASON)
    if ok:
        return ClaimCheck(text, "valid", method=method)
    if ok is None:
        return ClaimCheck(text, "unverifiable", reason=method)
    if not calculus and _substitutes_relation(lhs - rhs):
        return ClaimCheck(text, "unverifiable", reason="uses a relation between the unknowns (a + b = 7)")
    if not calculus and _replaces_part(lhs_raw, rhs_raw):
        return ClaimCheck(text, "unverifiable", reason="puts a value in place of a part with unknowns (ω^3 = 1)")
    return ClaimCheck(text, "invalid", fmt(lhs), method)


def _condition_or_restatement(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic, ctx: Context, info: PairInfo) -> str:
    """Why a false relation between values is not a claim: a condition tested on named values
    ("G > B" that fails), or ``f(x) = -1`` when ``f`` was defined otherwise (a candidate or a
    new definition). Empty when it is a claim."""
    named = {getattr(s, "name", "") for side in (lhs_raw, rhs_raw) for s in side.free_symbols}
    if info.op != "=" and info.op != "≈" and named & set(ctx.values):
        return "a condition on named values"
    for side in (lhs_raw, rhs_raw):
        if isinstance(side, sympy.Function) and side.func.__name__ in ctx.functions and \
                side.args and all(isinstance(a, sympy.Symbol) for a in side.args):
            return f"restates {side.func.__name__} differently (a candidate or a new definition)"
    return ""


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
                where = ", ".join(fmt(p) for p in ctx.point)
                return (second, moved, f"({where})") if swap else (moved, second, f"({where})")
    return lhs, rhs, ""


def _check_vectors(lhs: sympy.Basic, rhs: sympy.Basic, ctx: Context, info: PairInfo, text: str) -> ClaimCheck:
    if not (isinstance(lhs, sympy.Tuple) and isinstance(rhs, sympy.Tuple)):
        return ClaimCheck(text, "unverifiable", reason="a vector compared with a scalar")
    if len(lhs) != len(rhs):  # "(a, c) = (15, 216), (15, 224), ...": a list of candidates
        return ClaimCheck(text, "unverifiable", reason="tuples of different length")
    verdicts = [check_relation(a, b, ctx, info, text) for a, b in zip(lhs, rhs, strict=True)]
    if any(v.status == "invalid" for v in verdicts):
        return ClaimCheck(text, "invalid", fmt(lhs), "componentwise")
    if all(v.status == "valid" for v in verdicts):
        return ClaimCheck(text, "valid", method="componentwise")
    return ClaimCheck(text, "unverifiable", reason="some components could not be decided")


def _matrix(value: sympy.Basic) -> bool:
    return isinstance(value, sympy.MatrixBase | sympy.MatrixExpr)


def _check_matrices(lhs: sympy.Basic, rhs: sympy.Basic, ctx: Context, info: PairInfo, text: str) -> ClaimCheck:
    """Two matrices of one shape compare entry by entry (products and sums carried out)."""
    if _scaled_by_name(lhs) or _scaled_by_name(rhs):
        return ClaimCheck(text, "unverifiable", reason="a name times a matrix (the name may be a matrix)")
    try:
        left, right = (sympy.ImmutableMatrix(side.doit()) if _matrix(side) else side for side in (lhs, rhs))
    except (TypeError, ValueError, sympy.ShapeError, AttributeError):
        return ClaimCheck(text, "unverifiable", reason="a matrix expression that could not be worked out")
    if not (isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase)) or left.shape != right.shape:
        return ClaimCheck(text, "unverifiable", reason="a matrix compared with something of another shape")
    # A matrix worked out is meant entry by entry as an identity ("2a = a" in a product is a
    # slip); entries with different unknowns on the two sides stay equations (a system).
    entries = replace(info, chain_of_forms=True)
    verdicts = [check_relation(a, b, ctx, entries, text) for a, b in zip(left, right, strict=True)]
    if any(v.status == "invalid" for v in verdicts):
        return ClaimCheck(text, "invalid", fmt(left.tolist()), "entrywise")
    if all(v.status == "valid" for v in verdicts):
        return ClaimCheck(text, "valid", method="entrywise")
    return ClaimCheck(text, "unverifiable", reason="some entries could not be decided")


def _scaled_by_name(side: sympy.Basic) -> bool:
    """``M (1, -3)^T`` with M a matrix written in bold: a product of a name and a matrix."""
    for node in sympy.preorder_traversal(side):
        if isinstance(node, sympy.Mul | sympy.MatMul) and any(_matrix(a) for a in node.args) and \
                any(not _matrix(a) and a.free_symbols for a in node.args):
            return True
    return False


def _product_form(raw: sympy.Basic) -> bool:
    """A factored polynomial as written: a product of two or more factors with unknowns, or a
    power of a sum."""
    if isinstance(raw, sympy.Pow):
        return isinstance(raw.base, sympy.Add) and raw.exp.is_Integer and raw.exp > 1
    if isinstance(raw, sympy.Mul):  # factors above the fraction bar only: 3/((x-1)(x-2)) is a fraction
        above = [a for a in raw.args if a.free_symbols and not (isinstance(a, sympy.Pow) and a.exp.is_negative)]
        return len(above) >= 2 and any(isinstance(a, sympy.Add | sympy.Pow) for a in above)
    return False


def stated_factorisation(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic, lhs: sympy.Basic, rhs: sympy.Basic) -> bool:
    """True when ``A = B`` states a factorisation or expansion: one side factored, the other a
    sum, both polynomials of the same degree (at least 2) with the same leading and constant
    terms, as in
    ``n^3 - 7n^2 + 13n - 6 = (n-1)(n-2)(n-3)``. Such a line claims an identity."""
    if not (_product_form(lhs_raw) and isinstance(rhs_raw, sympy.Add)) and \
            not (_product_form(rhs_raw) and isinstance(lhs_raw, sympy.Add)):
        return False
    symbols = sorted(lhs.free_symbols | rhs.free_symbols, key=lambda x: x.name)
    try:
        p, q = sympy.Poly(lhs, *symbols), sympy.Poly(rhs, *symbols)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, TypeError, ValueError):
        return False
    if p.total_degree() < 2 or p.total_degree() != q.total_degree():
        return False
    # A factorisation keeps the leading and the constant term ("(x+3)^2 = x^2 + 9" is a slip);
    # "x^2 + 2 = (x + 2)^2" changes the constant: an equation set up to be solved.
    return bool(p.LT() == q.LT() and p.TC() == q.TC())


def _compound(raw: sympy.Basic) -> bool:
    """A side with a sum in it (not a lone name or monomial such as ``k`` or ``54/a``)."""
    return bool(raw.free_symbols) and any(isinstance(n, sympy.Add) for n in sympy.preorder_traversal(raw))


def _single_fractions(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic) -> bool:
    """Both sides one term and one a fraction with unknowns below ("rewrite the fraction as");
    a sum of fractions set equal to another is usually the equation to solve."""
    return not isinstance(lhs_raw, sympy.Add) and not isinstance(rhs_raw, sympy.Add) and _fraction(lhs_raw, rhs_raw)


def _fraction(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic) -> bool:
    """A side written as a fraction with unknowns in its denominator."""
    return any(any(isinstance(a, sympy.Pow) and a.exp.is_negative and a.base.free_symbols
                   for a in sympy.Mul.make_args(side)) for side in (lhs_raw, rhs_raw))


def _evaluates_function(lhs_raw: sympy.Basic, rhs_raw: sympy.Basic, ctx: Context) -> bool:
    """``f(-x) = ...`` or ``P(P(x)) = ...``: a defined function at an expression is evaluated,
    not solved for (``f(x) = x`` with its own parameters may be an equation)."""
    def calls(side: sympy.Basic) -> list[sympy.Basic]:
        return [c for c in side.atoms(sympy.Function) if type(c).__name__ in ctx.functions]

    left, right = calls(lhs_raw), calls(rhs_raw)
    if left and right:  # "f(g(x)) = g(f(x))": two evaluations set equal, an equation
        return False
    for call in left + right:
        fn = ctx.functions[type(call).__name__]
        if tuple(call.args) != fn.params and any(a.free_symbols for a in call.args):
            return True
    return False


def _replaces_part(left: sympy.Basic, right: sympy.Basic) -> bool:
    """True when the two sides are written alike except in one place, where one side has a part
    with unknowns and the other a number: ``ω^k/(ω^k + ω^1997) = ω^k/(ω^k + 1)`` uses a fact
    about ω (``ω^1997 = 1``) rather than claiming an identity."""
    for _ in range(50):
        if left == right:
            return False
        if type(left) is not type(right) or len(left.args) != len(right.args) or not left.args:
            break
        differ = [(a, b) for a, b in zip(left.args, right.args, strict=True) if a != b]
        if len(differ) != 1:
            return False
        left, right = differ[0]
    return bool((left.free_symbols and right.is_number) or (right.free_symbols and left.is_number))


def _never_holds(diff: sympy.Basic) -> bool:
    """True when ``diff = 0`` has no solution at all: a rational function whose numerator is a
    nonzero constant ("2x + 3 = 2x + 5")."""
    symbols = sorted(diff.free_symbols, key=lambda x: x.name)
    if not symbols:
        return bool(diff.is_number and diff != 0)
    if not _is_rational_function(diff, symbols):
        return False
    try:
        numerator = sympy.numer(sympy.together(sympy.cancel(diff)))
    except (sympy.PolynomialError, TypeError, ValueError):
        return False
    return bool(numerator.is_number and numerator != 0)


def _substitutes_relation(diff: sympy.Basic) -> bool:
    """``(a + b)^2 - 3ab = 7^2 - 3ab`` uses ``a + b = 7``: the difference of the sides has a
    factor in two or more unknowns with a constant term. A slip leaves a constant or a factor
    without one (``(x + 1)^2 = x^2 + 2x + 3`` differs by 2)."""
    if len(diff.free_symbols) < 2:
        return False
    symbols = sorted(diff.free_symbols, key=lambda x: x.name)
    if not _is_rational_function(diff, symbols):
        return False
    try:
        _, factors = sympy.factor_list(sympy.numer(sympy.together(sympy.expand(diff))))
        for factor, _ in factors:
            poly = sympy.Poly(factor, *symbols)
            if len(factor.free_symbols) >= 2 and poly.TC() != 0:
                return True
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, TypeError, ValueError):
        return False
    return False
