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

import logging
import math
import random
import re
from typing import Any

import sympy

ComparePayload = tuple[str, str, str | None, str | None, str]  # status, method, pred form, ref form, error

_LATEX_HINT = re.compile(r"\\[A-Za-z]|\\[{}()\[\],;:! ]|[_^]\{|\$")


def looks_latex(text: str) -> bool:
    r"""True when `text` is written in LaTeX (`\frac`, `x^{2}`, `$...$`)."""
    return bool(_LATEX_HINT.search(text))


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
    found = parse(f"${body}$", parsing_timeout=None)
    for item in found:
        if isinstance(item, (sympy.Basic, sympy.MatrixBase)):
            return item, ""
    return _from_project_parser(text, "latex")


def _from_project_parser(text: str, notation: str) -> tuple[Any, str]:
    # Already inside a bounded worker: the unbounded variant keeps the size caps, not a second budget.
    from mathlens.analyze.verify.parse import parse_math_unbounded

    parsed = parse_math_unbounded(text, notation=notation)  # type: ignore[arg-type]
    if parsed.status != "ok" or parsed.value is None:
        return None, parsed.error or parsed.status
    return parsed.value, ""


def to_sympy(text: str, latex: bool) -> tuple[Any, str]:
    """Parse one answer into SymPy: `(value, "")`, or `(None, reason)`."""
    try:
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


def align(p: Any, r: Any) -> tuple[Any, Any]:
    """Drop a `name =` left-hand side from one side when the other side is a bare value."""
    p_eq, r_eq = isinstance(p, sympy.Eq), isinstance(r, sympy.Eq)
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


def compare_answers(pred: str, ref: str, rel_tol: float = 1e-6) -> ComparePayload:
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
    p, r = plain_symbols(p), plain_symbols(r)
    names_p = {s.name for s in getattr(p, "free_symbols", ())}
    names_r = {s.name for s in getattr(r, "free_symbols", ())}
    if names_p != names_r and {n.lower() for n in names_p} == {n.lower() for n in names_r}:
        p, r = plain_symbols(p, fold_case=True), plain_symbols(r, fold_case=True)
    p, r = align(p, r)
    if _mv_equal(p, r):
        return "equal", "math_verify", p_form, r_form, ""
    try:
        if _simplify_equal(p, r):
            return "equal", "symbolic", p_form, r_form, ""
        if _sample_equal(p, r, rel_tol):
            return "equal", "numeric_sampling", p_form, r_form, ""
    except Exception as exc:
        return "different", "symbolic", p_form, r_form, f"{type(exc).__name__}: {exc}"[:300]
    return "different", "symbolic", p_form, r_form, ""
