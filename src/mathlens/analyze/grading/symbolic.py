"""Symbolic comparison of two answers, run inside a bounded worker (see `verify.budget`).

`compare_answers` is the function shipped to the worker: it parses both sides, LaTeX with
Math-Verify and keyboard notation with the project's parser (`verify.parse`, whose size caps apply), and
decides equality in three steps, stopping at the first that says "equal":

1. Math-Verify's `verify` on the two SymPy objects (it handles sets, intervals vs tuples,
   relations and float rounding);
2. `simplify(p - r) == 0` for expressions, elementwise for tuples, up to sign for equations;
3. agreement at random points for expressions with at most three free symbols.

A leading `name =` (`y = 2x + 3`, `f'(x) = 2x`) is dropped when the other side is not an equation.
Only strings cross the process boundary, so the result is always picklable.
"""

from __future__ import annotations

import functools
import logging
import math
import random
import re
from typing import Any

import sympy

from mathlens.analyze.readers.numeric import DECIMAL_TEXT, near_printed
from mathlens.analyze.verify.latex_fast import LATEX_HINT, NOT_FAST, to_plain
from mathlens.analyze.verify.text import NESTED_LIST

ComparePayload = tuple[str, str, str | None, str | None, str]  # status, method, pred form, ref form, error


def looks_latex(text: str) -> bool:
    r"""True when `text` is written in LaTeX (`\frac`, `x^{2}`, `$...$`)."""
    return bool(LATEX_HINT.search(text))


def _quiet() -> None:
    # Math-Verify warns on every call that its own signal timeout is off; the worker is our timeout.
    for name in ("math_verify", "latex2sympy2_extended"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _from_latex(text: str) -> tuple[Any, str]:
    from math_verify import parse

    body = text.strip().strip("$").strip()
    # Math-Verify reads \langle a, b \rangle as its last entry; as a tuple it compares like a point.
    body = re.sub(r"\\langle\b", "(", body)
    body = re.sub(r"\\rangle\b", ")", body)
    fast = _fast_latex(body)
    if fast is not None:
        return fast, ""
    found = parse(f"${body}$", parsing_timeout=None)
    read = next((str(x) for x in found if isinstance(x, str)), None)
    if read is not None and lossy(body, read):
        return _from_project_parser(text, "latex")
    for item in found:
        if isinstance(item, (sympy.Basic, sympy.MatrixBase)):
            return item, ""
    return _from_project_parser(text, "latex")


_SQUASH = re.compile(r"\\s+|\\[,;:! ]|\\left|\\right|\\displaystyle|\\[dt]frac")


def lossy(body: str, read: str) -> bool:
    """Did Math-Verify read only a prefix of `body`? (`1 - \\frac{1}{\\mathrm{e}}` read as `1 - \\frac{1}{`.)

    Its second result is the text it actually parsed. A proper prefix of the input, or text with
    unbalanced braces, means the rest was dropped; a trailing `\\text{...}` (a unit) may go.
    """
    a, b = _SQUASH.sub("", body), _SQUASH.sub("", read)
    if b.count("{") != b.count("}"):
        return True
    if len(b) < len(a) and a.startswith(b):
        rest = a[len(b):]
        return not re.match(r"^(?:\\(?:text|mbox|mathrm)\{[A-Za-z .]*\}|\\%|%|\^\{?\\circ\}?|\\?\$|\.)*$", rest)
    return False


def _fast_latex(body: str) -> Any:
    """Everyday LaTeX (`\\frac`, `\\sqrt`, powers, functions) through the plain reader: about 1 ms
    instead of the 30+ ms of the ANTLR grammar behind Math-Verify; None when it does not apply."""
    if NOT_FAST.search(body):
        return None  # tuples, intervals, `\\sin x \\cos x`, mixed numbers: Math-Verify reads them right
    try:
        plain = to_plain(body)
    except Exception:
        return None
    if plain is None:
        return None
    value, _ = _from_project_parser(plain, "plain")
    return value


def _from_project_parser(text: str, notation: str) -> tuple[Any, str]:
    # Already inside a bounded worker: the unbounded variant keeps the size caps, not a second budget.
    from mathlens.analyze.verify.parse import parse_math_unbounded

    parsed = parse_math_unbounded(text, notation=notation)  # type: ignore[arg-type]
    if parsed.status != "ok" or parsed.value is None:
        return None, parsed.error or parsed.status
    return parsed.value, ""


def _nested_list(text: str) -> Any:
    """`[[1, 2], [3, 4]]` as a Matrix (not as two intervals)."""
    from mathlens.analyze.readers.statements import split_top_level

    rows = [r.strip() for r in split_top_level(text.strip()[1:-1], ",")]
    if not all(r.startswith("[") and r.endswith("]") for r in rows):
        return None
    table = []
    for r in rows:
        entries = []
        for e in split_top_level(r[1:-1], ","):
            v, _ = to_sympy(e.strip(), looks_latex(e))
            if not isinstance(v, sympy.Expr):
                return None
            entries.append(v)
        table.append(entries)
    if len({len(r) for r in table}) != 1:
        return None
    return sympy.Matrix(table)


def to_sympy(text: str, latex: bool) -> tuple[Any, str]:
    """Parse one answer into SymPy: `(value, "")`, or `(None, reason)`.

    Results are kept per worker for the last `PARSE_CACHE` texts: a reference is compared with
    every response to its question, and list items with every item of the other list.
    """
    value, error = _to_sympy_cached(text, latex)
    if isinstance(value, sympy.MatrixBase) and not isinstance(value, sympy.ImmutableMatrix):
        value = value.copy()  # the one mutable result: callers get their own
    return value, error


PARSE_CACHE = 512


@functools.lru_cache(maxsize=PARSE_CACHE)
def _to_sympy_cached(text: str, latex: bool) -> tuple[Any, str]:
    from mathlens.analyze.grading.forms import is_relation_list
    from mathlens.analyze.readers.statements import alternatives

    try:
        if NESTED_LIST.match(text):
            matrix = _nested_list(text)
            if matrix is not None:
                return matrix, ""
        if is_relation_list(text):
            parsed = [to_sympy(p, latex) for p in alternatives(text)]
            if all(isinstance(v, sympy.Basic) for v, _ in parsed):
                return sympy.Or(*[v for v, _ in parsed]), ""
        return _from_latex(text) if latex else _from_project_parser(text, "plain")
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]


def _is_name(lhs: Any) -> bool:
    return isinstance(lhs, (sympy.Symbol, sympy.Function, sympy.Derivative, sympy.Indexed,
                            sympy.core.function.AppliedUndef))

def plain_symbols(value: Any, fold_case: bool = False) -> Any:
    """Replace every symbol by a plain one of the same name (lower-cased with `fold_case`).

    The two parsers attach different assumptions to symbols (`x` real in one, bare in the
    other), and SymPy treats symbols with different assumptions as different variables.
    Math-Verify also lower-cases LaTeX symbols (`C` becomes `c`), hence the case folding.
    """
    if not isinstance(value, sympy.Basic):
        return value
    try:
        return value.xreplace({s: sympy.Symbol(s.name.lower() if fold_case else s.name)
                               for s in value.free_symbols if isinstance(s, sympy.Symbol)})
    except Exception:
        return value


def _dependent(lhs: Any) -> bool:
    """`y`, `f(x)`, `f'(x)`, `dy/dx`: a left side that names a function of a variable, not an
    unknown; not a known function (`cos(x)`) nor a function at a point (`f(2)`)."""
    if isinstance(lhs, sympy.core.function.AppliedUndef):
        return all(isinstance(arg, sympy.Symbol) for arg in lhs.args)
    return isinstance(lhs, sympy.Derivative) or (isinstance(lhs, sympy.Symbol) and lhs.name == "y")


def _assignment_first(v: Any) -> Any:
    """`2 = x` -> `x = 2`."""
    if isinstance(v, sympy.Eq) and _is_name(v.rhs) and not _is_name(v.lhs):
        return sympy.Eq(v.rhs, v.lhs, evaluate=False)
    return v


def align(p: Any, r: Any) -> tuple[Any, Any]:
    """Drop a `name =` left-hand side from one side when the other side is a bare value, and from
    both when both name a function (`f(x) = 2x + 3` against `y = 2x + 3`)."""
    p, r = _assignment_first(p), _assignment_first(r)
    p_eq, r_eq = isinstance(p, sympy.Eq), isinstance(r, sympy.Eq)
    if p_eq and r_eq and p.lhs != r.lhs and _dependent(p.lhs) and _dependent(r.lhs):
        return p.rhs, r.rhs
    if p_eq and not r_eq and _is_name(p.lhs):
        p = p.rhs
    elif r_eq and not p_eq and _is_name(r.lhs):
        r = r.rhs
    return p, r


def _mv_equal(p: Any, r: Any) -> bool:
    from math_verify import verify

    try:
        return bool(verify(r, p, float_rounding=6, timeout_seconds=None))
    except Exception:
        return False


def _zero(expr: Any) -> bool:
    try:
        return bool(sympy.simplify(expr) == 0)
    except Exception:
        return False


def _simplify_equal(p: Any, r: Any) -> bool:
    if isinstance(p, sympy.Eq) and isinstance(r, sympy.Eq):
        dp, dr = p.lhs - p.rhs, r.lhs - r.rhs
        return _zero(dp - dr) or _zero(dp + dr)
    if isinstance(p, sympy.Tuple) and isinstance(r, sympy.Tuple):
        return len(p) == len(r) and all(_simplify_equal(a, b) for a, b in zip(p, r, strict=True))
    if isinstance(p, sympy.Expr) and isinstance(r, sympy.Expr):
        return _zero(p - r)
    return False


def _sample_equal(p: Any, r: Any, rel_tol: float) -> bool:
    if not (isinstance(p, sympy.Expr) and isinstance(r, sympy.Expr)):
        return False
    symbols = sorted(p.free_symbols | r.free_symbols, key=str)
    if not symbols or len(symbols) > 3:
        return False
    rng = random.Random(7)
    agreed = 0
    for _ in range(12):
        point = {s: sympy.Float(rng.uniform(0.3, 2.7)) for s in symbols}
        try:
            a = complex(p.subs(point).evalf(15))
            b = complex(r.subs(point).evalf(15))
        except (TypeError, ValueError, ZeroDivisionError):
            continue
        if not all(math.isfinite(v) for v in (a.real, a.imag, b.real, b.imag)):
            continue
        if abs(a - b) > rel_tol * max(1.0, abs(a), abs(b)):
            return False
        agreed += 1
    return agreed >= 4


def compare_answers(pred: str, ref: str, rel_tol: float = 1e-6, min_digits: int = 6) -> ComparePayload:
    """Parse and compare two answers; see the module docstring. Never raises."""
    _quiet()
    p, p_err = to_sympy(pred, looks_latex(pred))
    r, r_err = to_sympy(ref, looks_latex(ref))
    p_form = None if p is None else str(p)[:500]
    r_form = None if r is None else str(r)[:500]
    if r is None:
        return "unparseable", "none", p_form, None, f"reference: {r_err}"
    if p is None:
        return "unparseable", "none", None, r_form, f"predicted: {p_err}"
    p, r = _membership(p), _membership(r)
    p, r = plain_symbols(p), plain_symbols(r)
    names_p = {s.name for s in getattr(p, "free_symbols", ())}
    names_r = {s.name for s in getattr(r, "free_symbols", ())}
    if names_p != names_r and {n.lower() for n in names_p} == {n.lower() for n in names_r}:
        p, r = plain_symbols(p, fold_case=True), plain_symbols(r, fold_case=True)
    p, r = align(p, r)
    printed = _printed_decimal(pred, ref, p, r, min_digits)
    if printed is not None:
        return ("equal" if printed else "different"), "printed_precision", p_form, r_form, ""
    p, r = as_sets(p, r)
    try:
        for method, same in _decisions(p, r, rel_tol):
            if same:
                return "equal", method, p_form, r_form, ""
        if _has_i(p) or _has_i(r):
            pi, ri = imaginary(p), imaginary(r)
            if _mv_equal(pi, ri) or _simplify_equal(pi, ri):
                return "equal", "imaginary_unit", p_form, r_form, ""
    except Exception as exc:
        return "different", "symbolic", p_form, r_form, f"{type(exc).__name__}: {exc}"[:300]
    return "different", "symbolic", p_form, r_form, ""


def _decisions(p: Any, r: Any, rel_tol: float) -> Any:
    """The comparisons, cheapest first, each evaluated only when the previous said no."""
    if isinstance(p, sympy.MatrixBase) or isinstance(r, sympy.MatrixBase):
        yield "matrix", _matrix_equal(p, r)
        return
    if _exact_numbers(p, r):
        yield "exact", p == r
        return
    if isinstance(p, sympy.Eq) != isinstance(r, sympy.Eq):
        yield "symbolic", False  # an equation (`2x + 3y - z = 4`) is not its right side
        return
    graphs = _same_graph(p, r)
    if graphs is not None:
        yield "equation", graphs
        return
    if _quick_differ(p, r) or _zero_sets_differ(p, r):
        return  # different values at a sample point: no simplification can make them equal
    yield "math_verify", _mv_equal(p, r)
    yield "symbolic", _simplify_equal(p, r)
    yield "numeric_sampling", _sample_equal(p, r, rel_tol)


def _zero_sets_differ(p: Any, r: Any) -> bool:
    """Two polynomial equations in one or two unknowns with a real point on one that is not on the
    other (found on a few lines `x = x0`): they have different solutions, so neither Math-Verify's
    comparison of their solutions nor simplification can find them equal. Cheap (a few roots of a
    low-degree polynomial), where Math-Verify's `solve` can take a second."""
    if not (isinstance(p, sympy.Eq) and isinstance(r, sympy.Eq)):
        return False
    dp, dr = p.lhs - p.rhs, r.lhs - r.rhs
    names = sorted(dp.free_symbols | dr.free_symbols, key=str)
    if not 1 <= len(names) <= 2 or not (dp.is_polynomial(*names) and dr.is_polynomial(*names)):
        return False
    last, rng = names[-1], random.Random(5)
    for _ in range(3):
        at = {n: sympy.Rational(rng.randint(-9, 9), rng.randint(1, 4)) for n in names[:-1]}
        for on, other in ((dp, dr), (dr, dp)):
            try:
                poly = sympy.Poly(on.subs(at), last)
                if not 1 <= poly.degree() <= 6:
                    continue
                scale = 1.0 + sum(abs(float(c)) for c in sympy.Poly(other.subs(at), last).all_coeffs())
                rest = other.subs(at)
                for root in poly.nroots(n=15):
                    if abs(sympy.im(root)) < 1e-9 and abs(complex(rest.subs(last, sympy.re(root)))) > 1e-6 * scale:
                        return True
            except (sympy.PolynomialError, TypeError, ValueError, sympy.polys.polyerrors.PolificationFailed):
                continue
    return False


_OPAQUE = (sympy.Derivative, sympy.Integral, sympy.Limit, sympy.Subs, sympy.core.function.AppliedUndef)


def _quick_differ(p: Any, r: Any) -> bool:
    """Two expressions that clearly disagree at one of three sample points (cheap rejection)."""
    if not (isinstance(p, sympy.Expr) and isinstance(r, sympy.Expr)):
        return False
    symbols = sorted(p.free_symbols | r.free_symbols, key=str)
    if len(symbols) > 3 or p.has(*_OPAQUE) or r.has(*_OPAQUE):
        return False
    rng = random.Random(11)
    for _ in range(3):
        point = {s: sympy.Float(rng.uniform(0.3, 2.7)) for s in symbols}
        try:
            a, b = complex(p.evalf(15, subs=point)), complex(r.evalf(15, subs=point))
        except (TypeError, ValueError, ZeroDivisionError, AttributeError):
            return False
        if not all(math.isfinite(v) for v in (a.real, a.imag, b.real, b.imag)):
            continue
        if abs(a - b) > 1e-6 * max(1.0, abs(a), abs(b)):
            return True
    return False


def _same_graph(p: Any, r: Any) -> bool | None:
    """Two polynomial equations with rational coefficients in which one unknown appears to the
    first power with a constant coefficient in both (`y = 2x + 3`, `2x + 4y - z = 6`).

    Each solves for that unknown, so each solution set is the graph of a function of the other
    unknowns, and two graphs are equal exactly when one equation is a constant multiple of the
    other: decided by expanding, without `solve` or `simplify`. None when the rule does not apply.
    """
    if not (isinstance(p, sympy.Eq) and isinstance(r, sympy.Eq)):
        return None
    dp, dr = p.lhs - p.rhs, r.lhs - r.rhs
    symbols = sorted(dp.free_symbols | dr.free_symbols, key=str)
    if not symbols or len(symbols) > 6 or any(s.name == "i" for s in symbols) \
            or dp.has(sympy.Float) or dr.has(sympy.Float):
        return None
    try:
        pp, pr = sympy.Poly(dp, *symbols), sympy.Poly(dr, *symbols)
    except sympy.PolynomialError:
        return None
    if not (pp.domain.is_QQ or pp.domain.is_ZZ) or not (pr.domain.is_QQ or pr.domain.is_ZZ) \
            or pp.total_degree() > 8 or pr.total_degree() > 8:
        return None
    for v in symbols:
        if pp.degree(v) == 1 and pr.degree(v) == 1:
            ap, ar = pp.diff(v), pr.diff(v)
            if ap.is_ground and ar.is_ground:
                scale = ar.as_expr() / ap.as_expr()
                return sympy.expand(dp * scale - dr) == 0
    return None


def _exact_numbers(p: Any, r: Any) -> bool:
    """Two rationals compare exactly: no tolerance makes `99999999999` equal `100000000000`."""
    return isinstance(p, sympy.Rational) and isinstance(r, sympy.Rational)


def _matrix_equal(p: Any, r: Any) -> bool:
    if not (isinstance(p, sympy.MatrixBase) and isinstance(r, sympy.MatrixBase)) or p.shape != r.shape:
        return False
    return all(_zero(a - b) for a, b in zip(p, r, strict=True))


def _printed_decimal(pred: str, ref: str, p: Any, r: Any, min_digits: int) -> bool | None:
    """A long decimal against an exact number: equal within one unit of its last printed place."""
    for text, other in ((pred, r), (ref, p)):
        if DECIMAL_TEXT.match(text) and isinstance(other, sympy.Expr) and not other.free_symbols:
            try:
                value = complex(other.evalf(30))
            except (TypeError, ValueError):
                continue
            verdict = near_printed(text, value, min_digits)
            if verdict is not None:
                return verdict
    return None


def _membership(v: Any) -> Any:
    if isinstance(v, sympy.Eq) and isinstance(v.rhs, sympy.Set):
        return v.rhs  # Math-Verify reads `x \\in [2, 5)` as Eq(x, Interval)
    return v


def _to_set(v: Any) -> Any:
    if isinstance(v, (sympy.Rel, sympy.And, sympy.Or)) and not isinstance(v, sympy.Eq) \
            and len(v.free_symbols) == 1:
        try:
            return v.as_set()
        except Exception:
            return v
    return v


def as_sets(p: Any, r: Any) -> tuple[Any, Any]:
    """Inequalities become the sets they describe when the other side is a set or inequality."""
    ps, rs = _to_set(p), _to_set(r)
    if isinstance(ps, sympy.Set) and isinstance(rs, sympy.Set):
        return ps, rs
    return p, r


def _has_i(v: Any) -> bool:
    return isinstance(v, sympy.Basic) and any(getattr(s, "name", "") == "i" for s in v.free_symbols)


def imaginary(v: Any) -> Any:
    """`i` read as the imaginary unit (when no `j` or `k` suggests unit vectors)."""
    if not isinstance(v, sympy.Basic):
        return v
    names = {getattr(s, "name", "") for s in v.free_symbols}
    if names & {"j", "k"}:
        return v
    return v.xreplace({s: sympy.I for s in v.free_symbols if getattr(s, "name", "") == "i"})


#: one answer pair per construct of the LaTeX grammar, none of them from the case tables
_WARM_PAIRS = (
    (r"\sin t \cos t", r"\frac{1}{2}\sin 2t"), (r"(1, \frac{\pi}{3})", r"(1, \frac{\pi}{4})"),
    (r"(-\infty, 5]\cup[7,\infty)", "t <= 5 or t >= 7"), (r"\begin{pmatrix}1&0\\0&2\end{pmatrix}", "[[1, 0], [0, 2]]"),
    (r"\ln|t| + C", r"\log|t| + C"), (r"2\frac{3}{4}", "2.75"), (r"\frac{5!}{2!\,3!}", "10"),
    (r"\sqrt[4]{y}", "y^(1/4)"), (r"\tan \theta - \sec \theta", "tan(theta)"), ("y = t^2 - 1", "y = 1 - t^2"),
)


def warm_up() -> None:
    """Compare a few answers once, so that a worker's first real comparisons do not pay for
    filling the LaTeX grammar's prediction cache and SymPy's first-use set-up (about 0.7 s)."""
    for pred, ref in _WARM_PAIRS:
        compare_answers(pred, ref)
    _to_sympy_cached.cache_clear()
