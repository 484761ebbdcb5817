"""Equations in a solution: stated roots, rewritten equations and implicit derivatives.

* `solves_pending`: ``x = 2`` after ``2x + 3 = 7`` (this step or the one before) is checked
  against it, each stated value and every equation of that step.
* `rewrite_check`: an equation in one unknown that follows another with nothing but "so",
  "factoring, we get" and the like between them rewrites it: it must have the same solutions.
  Equal degree and proportional sides are an equivalent rewriting (``x^2 - 2x = 7`` then
  ``x^2 - 2x - 7 = 0``); equal degree and not proportional is a slip (``(x - 7)(x + 5) = 0``).
  Squaring, taking roots and dividing by the unknown change the degree and are left alone. A
  function term both equations hold alike (``|A|``, ``sin t``) whose unknowns appear nowhere else
  is one unknown for this check (`_opaque_terms`).
* `implicit_derivative`: ``y' = -x/y`` after ``x^2 + y^2 = 25``.
"""

from __future__ import annotations

import re

import sympy

from mathlens.analyze.verify.claims import ClaimCheck
from mathlens.analyze.verify.context import Context, substitute
from mathlens.analyze.verify.numbers import decimals, fmt, num
from mathlens.analyze.verify.pieces import REWRITE_WORDS

# Words between two equations that make the second a different equation, not a rewriting.
_NOT_A_REWRITE = re.compile(r"\b(?:and|or|also|second|other|another|case|if|when|similarly|system|"
                            r"check|test|given|where|let|using|since|from|know|recall|first|third|former|"
                            r"latter|each)\b|both equations|equations?\s*\(|\bplug|\bsubstitut", re.I)
# In several unknowns the next equation is a rewriting only when the words say how it was
# obtained from the one before ("expanding", "subtracting 3 from both sides", "⇒").
_ALGEBRA = re.compile(r"simplif|expand|rearrang|both sides|collect|combin|like terms|mov(?:e|ing)|subtract|"
                      r"complet\w* the square|"
                      r"\badd(?:ing)?\b|divid|multipl|equivalent|⇒|\\implies|\\Rightarrow", re.I)
# Words that announce a rewriting of the previous equation.
_REWRITE = re.compile(r"simplif|expand|factor|rearrang|both sides|collect|combin|mov(?:e|ing)|subtract|"
                      r"complet\w* the square|"
                      r"add(?:ing)?\b|divid|multipl|becomes|reduces|gives|giving|we get|yields|implies|"
                      r"\\implies|\\Rightarrow|⟹|⇒|=>|→|equivalent|\bso\b|\bthus\b|\bhence\b|"
                      r"therefore|we have|which is", re.I)


def solves_pending(name: str, before: Context, stated: sympy.Basic, text: str) -> ClaimCheck | None:
    """When ``name = value`` follows an equation in that name alone (``2x + 3 = 7`` ... ``x = 2``),
    whether the value satisfies it. Only an equation stated in this step or the one before counts
    (an older one usually belongs to another part of the problem); ``x = 0, ±4`` checks each
    value."""
    if before.equation_age > 1:
        return None
    value, _ = substitute(stated, before)
    values = list(value) if isinstance(value, sympy.FiniteSet | sympy.Tuple) else [value]
    if not values or len(values) > 8 or not all(getattr(v, "is_number", False) for v in values):
        return None
    pending = [eq for eq in before.equations if {getattr(s, "name", "") for s in eq.free_symbols} == {name}]
    if not pending:
        return None
    checks = []
    for eq in pending:
        sym = next(iter(eq.free_symbols))
        verdicts = [_satisfies(eq, sym, v) for v in values]
        if any(v is None for v in verdicts):
            return None
        if all(verdicts):
            return ClaimCheck(text, "valid", method="solves the equation")
        if eq.has(*_TRIG) and all(_satisfies(eq, sym, v * sympy.pi / 180) for v in values):
            # "tan x = ..." with x in degrees ("tan x°" in the question): x = 46 means 46°.
            return ClaimCheck(text, "valid", method="solves the equation (in degrees)")
        checks.append((eq, sym))
    eq, sym = checks[-1]
    try:
        roots = sympy.solve(eq, sym)
    except (NotImplementedError, TypeError, ValueError):
        roots = []
    expected = ", ".join(fmt(r) for r in roots[:4])
    return ClaimCheck(text, "invalid", expected, "solves the equation", f"does not satisfy {fmt(eq)} = 0")


_TRIG = (sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc)


def _satisfies(eq: sympy.Basic, sym: sympy.Symbol, value: sympy.Basic) -> bool | None:
    residual = num(eq.xreplace({sym: value}))
    if residual is None:
        return None
    scale = max(1.0, abs(num(value) or 1.0))
    places = decimals(value)
    return abs(residual) <= 1e-9 * scale or bool(places and abs(residual) <= 10.0 ** -places * 10 * scale)


def _numerator(diff: sympy.Basic) -> sympy.Basic | None:
    try:
        return sympy.numer(sympy.together(sympy.expand(diff)))
    except (TypeError, ValueError, sympy.PolynomialError):
        return None


def continues_derivation(lead: str) -> bool:
    """Whether displays that follow one another with no words between go on with the derivation
    that `lead` announced ("Rearranging:"), rather than list several equations ("the system:",
    "Simplifying both equations:")."""
    if _SEVERAL.search(lead):
        return False
    return bool(REWRITE_WORDS.search(lead)) or (bool(_ALGEBRA.search(lead)) and not _NOT_A_REWRITE.search(lead))


#: words that say the displays that follow are several equations
_SEVERAL = re.compile(r"\b(?:equations|relations|identities|conditions|constraints|both|system|each|these|"
                      r"those|them|they)\b", re.I)


def rewrite_check(previous: sympy.Basic, lhs: sympy.Basic, rhs: sympy.Basic, lead: str, text: str,
                  several: bool = True, restating: bool = False) -> ClaimCheck | None:
    """The verdict on the equation ``lhs = rhs`` as a rewriting of `previous` (``lhs - rhs`` of
    the equation before it), or None when it is not clearly one. `several`: whether an equation
    in several unknowns may be one (typeset math; in running text a word such as "sun" can be
    read as a product of letters). `restating`: the caller has found words that say the equation
    is the previous one in another form ("i.e.", "solving for y"), which announce it as algebra does."""
    announced = restating or bool(REWRITE_WORDS.search(lead))  # "Expanding and simplifying, we have"
    if not announced and (_NOT_A_REWRITE.search(lead) or (lead.strip(" ,.:") and not _REWRITE.search(lead))):
        return None
    symbols = previous.free_symbols
    # In several unknowns the next equation as often brings in another relation ("x^2 + y^2 = 65"
    # and xy = 20 give "(x + y)^2 = 105") or is the next equation of a system: only an algebra
    # step the words announce is a rewriting.
    if not symbols or (lhs.free_symbols | rhs.free_symbols) != symbols:
        return None
    previous, stated, back = _opaque_terms(previous, lhs - rhs)
    symbols = previous.free_symbols
    if len(symbols) > 1 and not (several and (restating or _ALGEBRA.search(lead))):
        return None
    old, new = _numerator(previous), _numerator(stated)
    if old is None or new is None or new == 0:
        return None
    gens = sorted(symbols, key=lambda x: x.name)
    try:
        p, q = sympy.Poly(old, *gens), sympy.Poly(new, *gens)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, TypeError, ValueError):
        return None
    if p.total_degree() < 1 or p.total_degree() != q.total_degree():
        return None
    same = _proportional(p, q)
    if same is None:
        return None
    if same:
        return ClaimCheck(text, "valid", method="an equivalent form of the previous equation")
    shown = fmt(old.xreplace(back))
    return ClaimCheck(text, "invalid", f"{shown} = 0", "rewriting of the previous equation",
                      f"not equivalent to {shown} = 0")


def _proportional(p: sympy.Poly, q: sympy.Poly) -> bool | None:
    """Whether `p` is a nonzero constant times `q` (None: a coefficient could not be evaluated).
    Coefficients are compared as numbers, so that radicals written two ways agree
    (``(1 + √7)t - 1 + √7`` and ``t + (4 - √7)/3``)."""
    try:
        pc = {m: complex(sympy.N(c, 30)) for m, c in p.terms()}
        qc = {m: complex(sympy.N(c, 30)) for m, c in q.terms()}
    except (TypeError, ValueError):
        return None
    pc = {m: c for m, c in pc.items() if abs(c) > 1e-20}  # a coefficient that is zero written another way
    qc = {m: c for m, c in qc.items() if abs(c) > 1e-20}
    if not pc or set(pc) != set(qc):
        return False
    top = max(qc, key=lambda m: abs(qc[m]))
    k = pc[top] / qc[top]
    return all(abs(pc[m] - k * qc[m]) <= 1e-12 * max(abs(pc[m]), abs(k * qc[m])) for m in pc)


def _opaque_terms(old: sympy.Basic, new: sympy.Basic
                  ) -> tuple[sympy.Basic, sympy.Basic, dict[sympy.Basic, sympy.Basic]]:
    """`old` and `new` with each function term both hold alike (``|P|``, ``sin(t)``) put as an
    unknown of its own, when the unknowns inside it appear nowhere else in either and in no other
    such term: ``180 + |P| + |C| - 180 = 15`` then ``|P| + |C| = 15`` is then a linear rewriting
    in two unknowns. A term that shares an unknown with the rest (``sin x`` and ``cos x``,
    ``|x - 3|`` and ``x``) is left as it is: a relation between them could make the rewriting.
    The third value maps each new unknown back to its term."""
    terms = {t for t in old.atoms(sympy.Function) if t.free_symbols}  # not ln 2, a number
    if not terms or terms != {t for t in new.atoms(sympy.Function) if t.free_symbols}:
        return old, new, {}
    inside = [t.free_symbols for t in terms]
    if sum(len(s) for s in inside) != len(set().union(*inside)):
        return old, new, {}
    names = {t: sympy.Dummy(f"u{k}") for k, t in enumerate(sorted(terms, key=sympy.default_sort_key))}
    old_u, new_u = old.xreplace(names), new.xreplace(names)
    if (old_u.free_symbols | new_u.free_symbols) & set().union(*inside):
        return old, new, {}
    return old_u, new_u, {u: t for t, u in names.items()}


def equivalent_form(previous: sympy.Basic, lhs: sympy.Basic, rhs: sympy.Basic) -> bool:
    """True when ``lhs = rhs`` is the equation `previous` (``lhs - rhs`` of the one before it)
    written another way: the numerators of the two differences are proportional by a nonzero
    constant (``1/(z+w) = (z+w)/(zw)`` after ``1/(z+w) = 1/z + 1/w``). An equation that holds
    for no value (its difference is a nonzero number, ``4a = 4(a - 3)``) may be written as a
    false relation between numbers (``0 = -12``)."""
    unknowns = lhs.free_symbols | rhs.free_symbols
    if previous.is_number:
        return bool(previous != 0 and not unknowns and sympy.simplify(lhs - rhs) != 0)
    if unknowns != previous.free_symbols:
        return False
    old, new = _numerator(previous), _numerator(lhs - rhs)
    if old is None or new is None or new == 0 or old == 0:
        return False
    try:
        ratio = sympy.cancel(old / new)
    except (TypeError, ValueError, sympy.PolynomialError):
        return False
    return not ratio.free_symbols and ratio != 0


def implicit_derivative(derivative: sympy.Basic, other: sympy.Basic, ctx: Context, text: str) -> ClaimCheck | None:
    """``y' = -x/y`` after the equation ``x^2 + y^2 = 25`` in x and y (``dy/dx`` by implicit
    differentiation), or None when there is no such equation."""
    if not (isinstance(derivative, sympy.Derivative) and isinstance(derivative.expr, sympy.Function)
            and len(derivative.variables) == 1 and derivative.expr.args == derivative.variables):
        return None
    x = derivative.variables[0]
    y = sympy.Symbol(derivative.expr.func.__name__)
    if ctx.equation_age > 1 or y.name in ctx.functions:
        return None
    for eq in reversed(ctx.equations):
        if eq.free_symbols != {x, y}:
            continue
        fy = sympy.diff(eq, y)
        if fy == 0:
            continue
        expected = sympy.cancel(-sympy.diff(eq, x) / fy)
        stated, _ = substitute(other.xreplace({derivative.expr: y}), ctx)
        if stated.has(sympy.Derivative) or not stated.free_symbols <= {x, y}:
            return None
        same = _same_on_curve(stated - expected, eq, y)
        if same is None:
            return None
        return ClaimCheck(text, "valid" if same else "invalid", "" if same else fmt(expected),
                          "implicit differentiation")
    return None


def _same_on_curve(diff: sympy.Basic, eq: sympy.Basic, y: sympy.Symbol) -> bool | None:
    """Whether `diff` vanishes on the curve ``eq = 0`` (its numerator is a multiple of `eq` in
    `y`); None when it is not a rational function."""
    try:
        n = sympy.numer(sympy.together(sympy.cancel(diff)))
        if n == 0:
            return True
        symbols = sorted(n.free_symbols | eq.free_symbols, key=lambda s: s.name)
        sympy.Poly(n, *symbols)
        return bool(sympy.rem(n, eq, y) == 0)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, TypeError, ValueError):
        return None
