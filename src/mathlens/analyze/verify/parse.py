"""Parse a math snippet written in plain keyboard notation or LaTeX into SymPy, within bounds.

Two verbs:

* ``parse_math(text, notation="auto")`` -> ``Parsed``: one expression, equation (or chain of
  relations), vector/point, interval or set. The work runs in a killable worker under a time
  budget; input over the length, nesting, tree-size or number-growth caps is ``unverifiable``.
* ``extract_math(text)`` -> ``list[MathSpan]``: where the math is in a prose response.

    >>> parse_math("f_x = 2xy").kind
    'equation'
    >>> str(parse_math(r"\\frac{d}{dx} x^2").value)
    'Derivative(x**2, x)'

Callers that already run inside a worker (the step verifier batches a whole solution into one
bounded call) use ``parse_math_unbounded``, which applies the same caps but no time budget.
"""

from __future__ import annotations

import pickle
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import sympy
from sympy.utilities.exceptions import SymPyDeprecationWarning

from mathlens.analyze.verify import latex as latex_reader
from mathlens.analyze.verify import plain as plain_reader
from mathlens.analyze.verify.budget import run_bounded
from mathlens.analyze.verify.extract import MathSpan, extract_math
from mathlens.analyze.verify.latex_fast import to_plain
from mathlens.analyze.verify.limits import DEFAULT_LIMITS, ParseLimits, check_text, check_tree
from mathlens.analyze.verify.reading import DEFAULT_READING, Reading
from mathlens.analyze.verify.signs import SIGN, PlusMinus, latex_signs, readings
from mathlens.analyze.verify.text import (
    UNION,
    based_numbers,
    find_close,
    split_relations,
    split_top_level,
    square_groups,
    strip_delimiters,
)

__all__ = ["MathSpan", "Parsed", "detect_notation", "extract_math", "parse_math", "parse_math_unbounded"]

ParseStatus = Literal["ok", "unparseable", "unverifiable"]
Kind = Literal["expr", "equation", "vector", "interval", "set", "text"]
Notation = Literal["auto", "plain", "latex"]

PARSE_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Parsed:
    """The parse of one snippet.

    `value` is a SymPy object (evaluated: ``2*3`` is ``6``, but derivatives, integrals and limits
    stay unevaluated); for a relation it is ``Eq``/``Lt``/..., for a chain ``a = b = c`` an ``And``
    of the pairwise relations, with every side in `sides` and the operators in `relations`.
    `raw` is the same parse before evaluation (used for syntactic depth), `raw_sides` its sides.
    """

    status: ParseStatus
    value: Any = None
    kind: Kind = "text"
    error: str = ""
    notation: Literal["plain", "latex"] = "plain"
    sides: tuple[Any, ...] = field(default_factory=tuple)
    relations: tuple[str, ...] = field(default_factory=tuple)
    raw: Any = None
    raw_sides: tuple[Any, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when the snippet parsed."""
        return self.status == "ok"


_LATEX_HINT = re.compile(r"\\[a-zA-Z]+|[_^]\{|\\[{}%]")
# Raw plain input may not reach Python's eval with these: dunder names, our helper prefix,
# attribute access, string quotes (a prime is a single quote after a letter, handled first).
_UNSAFE = re.compile(r"__|zzq|[A-Za-z_)\]]\s*\.\s*[A-Za-z_]|\"|`|\blambda\b|\bimport\b|[;@#$\\]")
_BAD_QUOTE = re.compile(r"(?<![A-Za-z'])'")
_RELATION_OPS = {"=": sympy.Eq, "!=": sympy.Ne, "<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt,
                 ">=": sympy.Ge, "≈": sympy.Eq}
# "a \equiv b \pmod n", "mod", and numbers written in a base ("110_2", "101_{3}").
_NOT_EQUALITY = re.compile(r"\\equiv|\\pmod|\\bmod|\\mod\b|\bmod\b|≡|\d_\{?\d|\d_\{?[a-z]+\}?\b")
# "(1 + x/(x^2 + 1))'": the derivative of a bracket, which neither reader supports.
# "f^{-1}(9)": an inverse function, not f to the power -1.
_INVERSE_CALL = re.compile(r"\b[fghFGH]\s*\^\s*\{?\s*\(?-1\)?\s*\}?\s*(?:\\left)?\s*\(")
_BRACKET_PRIME = re.compile(r"[)\]}]\s*'")
_PLAIN_VECTOR = re.compile(r"(?:(?<=^)|(?<=[=(,\s]))<\s*([^<>=;]*,[^<>=;]*)>")


def detect_notation(text: str) -> Literal["plain", "latex"]:
    """``latex`` when the snippet has a backslash command or a braced sub/superscript."""
    return "latex" if _LATEX_HINT.search(text) else "plain"


def parse_math(text: str, notation: Notation = "auto", timeout_s: float = PARSE_TIMEOUT_S,
               limits: ParseLimits = DEFAULT_LIMITS) -> Parsed:
    """Parse one snippet under a time budget; never raises and never hangs.

    Over-budget or over-limit input gives ``status="unverifiable"``; text that is not math
    gives ``status="unparseable"``.
    """
    if not isinstance(text, str):
        return Parsed("unparseable", error=f"not text: {type(text).__name__}")
    quick = _precheck(text, limits)
    if quick is not None:
        return quick
    result = run_bounded(_parse_to_bytes, text, notation, limits, timeout_s=timeout_s)
    if result.status == "ok":
        parsed: Parsed = loads_unevaluated(result.value)
        return parsed
    reason = "over the time budget" if result.status == "timeout" else result.error
    return Parsed("unverifiable", kind="text", error=reason, notation=_resolve(text, notation))


def dumps(value: Any) -> bytes:
    """Pickle SymPy values for the trip out of a worker (see ``loads_unevaluated``)."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads_unevaluated(data: bytes) -> Any:
    """Unpickle with SymPy evaluation off.

    SymPy rebuilds an object on unpickling by calling its constructor, which would evaluate an
    unevaluated tree (``Eq(-8, -8)`` would come back as ``True``, ``2*(-1)*4`` as ``-8``).
    Already-evaluated objects come back unchanged, since their arguments are canonical.
    """
    try:
        with sympy.evaluate(False):
            return pickle.loads(data)
    except Exception:
        # A few constructors (Union of intervals) cannot run unevaluated; then only the raw
        # tree loses its unevaluated shape.
        return pickle.loads(data)


def _parse_to_bytes(text: str, notation: Notation, limits: ParseLimits) -> bytes:
    return dumps(parse_math_unbounded(text, notation, limits))


def _resolve(text: str, notation: Notation) -> Literal["plain", "latex"]:
    return detect_notation(text) if notation == "auto" else notation


def _precheck(text: str, limits: ParseLimits) -> Parsed | None:
    stripped = strip_delimiters(text)
    if not stripped:
        return Parsed("unparseable", error="empty")
    reason = check_text(stripped, limits)
    if reason is not None:
        return Parsed("unverifiable", error=reason, notation=detect_notation(stripped[:200]))
    return None


def parse_math_unbounded(text: str, notation: Notation = "auto",
                         limits: ParseLimits = DEFAULT_LIMITS, reading: Reading = DEFAULT_READING) -> Parsed:
    """Same as ``parse_math`` with the size caps but without a time budget (for use inside a
    worker process). `reading` carries the solution-wide choices (``e`` as a variable...)."""
    return _cached_parse(text, notation, limits, reading)


@lru_cache(maxsize=4096)
def _cached_parse(text: str, notation: Notation, limits: ParseLimits, reading: Reading) -> Parsed:
    # Solutions repeat their expressions from step to step; a Parsed is immutable.
    with warnings.catch_warnings():
        # SymPy warns about odd products such as a vector times a name; they fail cleanly later.
        warnings.simplefilter("ignore", SymPyDeprecationWarning)
        return _parse(text, notation, limits, reading)


def _parse(text: str, notation: Notation, limits: ParseLimits, reading: Reading = DEFAULT_READING) -> Parsed:
    quick = _precheck(text, limits)
    if quick is not None:
        return quick
    s = strip_delimiters(text)
    which = _resolve(s, notation)
    if _INVERSE_CALL.search(s):
        return Parsed("unparseable", error="an inverse function", notation=which)
    if _BRACKET_PRIME.search(s):
        return Parsed("unparseable", error="a prime on a bracket", notation=which)
    s = square_groups(based_numbers(s))
    if _NOT_EQUALITY.search(s):
        return Parsed("unparseable", error="congruence or base notation (not an equality of numbers)",
                      notation=which)
    try:
        if which == "plain":
            if _UNSAFE.search(s) or _BAD_QUOTE.search(s):
                return Parsed("unparseable", error="characters not allowed in plain notation", notation=which)
            norm = plain_reader.normalize(s, reading)
            if "'" in norm:
                return Parsed("unparseable", error="a quote that is not a derivative prime", notation=which)
            norm = _PLAIN_VECTOR.sub(lambda m: f"zzqvec({m.group(1)})", norm)
            reader = "plain"
        else:
            norm = latex_signs(latex_reader.normalize(s, reading))
            if "zzqop" in norm:
                return Parsed("unparseable", error="a named operation (gcd, lcm, max...)", notation=which)
            reader = "latex"
            fast = to_plain(norm)
            if fast is not None and not _UNSAFE.search(fast) and "'" not in fast:
                norm = _PLAIN_VECTOR.sub(lambda m: f"zzqvec({m.group(1)})", plain_reader.normalize(fast, reading))
                reader = "plain"
            elif "'" in norm or "\\prime" in norm:
                # latex2sympy2 drops a prime it does not know ("xy'" becomes x*y, "u'v" u*v): a
                # prime not read as a derivative or a name leaves the statement unread.
                return Parsed("unparseable", error="a prime that is not read as a derivative", notation=which)
        side_texts, ops = split_relations(norm, latex=reader == "latex")
        if any(not t.strip() for t in side_texts):
            return Parsed("unparseable", error="a relation with an empty side", notation=which)
        raw_sides = [_parse_side(t, reader, reading) for t in side_texts]
        if which == "latex":
            raw_sides = _latex_names(raw_sides, reader, reading)
    except RecursionError:
        return Parsed("unverifiable", error="expression nested too deeply", notation=which)
    except Exception as exc:
        return Parsed("unparseable", error=f"{type(exc).__name__}: {exc}"[:300], notation=which)
    for side in raw_sides:
        reason = check_tree(side, limits)
        if reason is not None:
            return Parsed("unverifiable", error=reason, notation=which)
    try:
        sides = tuple(evaluate(side) for side in raw_sides)
    except Exception as exc:
        return Parsed("unparseable", error=f"{type(exc).__name__}: {exc}"[:300], notation=which)
    value, kind = _assemble(sides, ops)
    raw_value, _ = _assemble(tuple(raw_sides), ops)
    return Parsed("ok", value=value, kind=kind, notation=which, sides=sides, relations=tuple(ops),
                  raw=raw_value, raw_sides=tuple(raw_sides))


def _latex_names(sides: list[sympy.Basic], reader: str, reading: Reading) -> list[sympy.Basic]:
    """LaTeX conventions the plain fast path does not know: a lone ``i`` is the imaginary unit
    (decided over all sides of the relation at once); ``e`` is a name when the solution says so."""
    if reader == "plain":
        names = {getattr(x, "name", "") for side in sides for x in side.free_symbols}
        if "i" in names and not any(n.endswith("_i") for n in names) and not any(x.has(sympy.Sum) for x in sides):
            sides = [x.xreplace({sympy.Symbol("i"): sympy.I}) for x in sides]
    elif reading.e_variable:
        e = sympy.Symbol("e")
        # "\\ln x" inside a derivative arrives as log(x, E), unevaluated: ln stays the natural
        # logarithm, whatever e names
        sides = [x.replace(lambda a: isinstance(a, sympy.log) and a.args[1:] == (sympy.E,),
                           lambda a: sympy.log(a.args[0], evaluate=False))
                 .replace(sympy.exp, lambda arg: sympy.Pow(e, arg, evaluate=False)).xreplace({sympy.E: e})
                 for x in sides]
    return sides


def _parse_side(text: str, which: str, reading: Reading = DEFAULT_READING) -> sympy.Basic:
    s = text.strip()
    if SIGN.search(s):  # "(4 ± √112)/16": both readings
        if len(SIGN.findall(s)) > 1:  # "±1/±2" lists every choice of signs
            raise ValueError("several ± signs")
        upper, lower = readings(s)
        return PlusMinus(_parse_side(upper, which, reading), _parse_side(lower, which, reading))
    container = _container(s, which, reading)
    if container is not None:
        return container
    if which == "plain":
        return plain_reader.parse_side(s, reading)
    return latex_reader.parse_side(s)


def _container(s: str, which: str, reading: Reading) -> sympy.Basic | None:
    """Points/vectors ``(a, b)``, ``\\langle a, b \\rangle``; intervals ``[a, b)``; unions."""
    if which == "latex" and s.startswith(r"\langle") and s.endswith(r"\rangle"):
        inner = s[len(r"\langle"):-len(r"\rangle")]
        return sympy.Tuple(*(_parse_side(p, which, reading) for p in split_top_level(inner)))
    parts = UNION.split(s)
    if len(parts) > 1:
        pieces = [_interval(p.strip(), which, reading, force=True) for p in parts]
        if all(p is not None for p in pieces):
            return sympy.Union(*pieces, evaluate=False)
        return None
    return _interval(s, which, reading, force=False)


def _interval(s: str, which: str, reading: Reading, force: bool) -> sympy.Basic | None:
    if len(s) < 5 or s[0] not in "([" or s[-1] not in ")]" or find_close(s, 0) != len(s) - 1:
        return None
    inner = split_top_level(s[1:-1])
    if len(inner) < 2:
        return None
    items = [_parse_side(p, which, reading) for p in inner]
    if s[0] == "(" and s[-1] == ")" and not force:
        return sympy.Tuple(*items)
    if len(items) != 2:
        return sympy.Tuple(*items) if s[0] == "[" and s[-1] == "]" else None
    return sympy.Interval(items[0], items[1], left_open=s[0] == "(", right_open=s[-1] == ")")


_HOLD = (sympy.Derivative, sympy.Integral, sympy.Limit, sympy.Sum, sympy.Product)


def evaluate(expr: sympy.Basic) -> sympy.Basic:
    """Rebuild an unevaluated tree bottom-up so that arithmetic is done (``2*3`` -> ``6``) while
    calculus operators stay unevaluated; decimals become exact rationals of their digits."""
    if isinstance(expr, sympy.Float):
        return sympy.Rational(sympy.sstr(expr, full_prec=False))
    if not isinstance(expr, sympy.Basic) or expr.is_Atom or not expr.args:
        return expr
    if isinstance(expr, sympy.Subs):
        return expr
    args = [evaluate(a) if isinstance(a, sympy.Basic) else a for a in expr.args]
    if isinstance(expr, sympy.core.relational.Relational):
        return expr.func(*args, evaluate=False)
    if isinstance(expr, _HOLD):
        return expr.func(*args)
    if isinstance(expr, sympy.FiniteSet):
        return sympy.FiniteSet(*args)  # also latex2sympy2's own FiniteSet subclass
    if isinstance(expr, sympy.Union | sympy.Interval | sympy.Tuple):
        return expr.func(*args)
    try:
        return expr.func(*args)
    except TypeError:
        return expr


def _assemble(sides: tuple[sympy.Basic, ...], ops: list[str]) -> tuple[Any, Kind]:
    if not ops:
        return sides[0], _kind_of(sides[0])
    pairs = [_RELATION_OPS[op](sides[i], sides[i + 1], evaluate=False) for i, op in enumerate(ops)]
    value = pairs[0] if len(pairs) == 1 else sympy.And(*pairs, evaluate=False)
    return value, "equation"


def _kind_of(value: sympy.Basic) -> Kind:
    if isinstance(value, sympy.Tuple) or (isinstance(value, sympy.MatrixBase) and 1 in value.shape):
        return "vector"
    if isinstance(value, sympy.Interval | sympy.Union):
        return "interval"
    if isinstance(value, sympy.FiniteSet):
        return "set"
    if isinstance(value, sympy.core.relational.Relational):
        return "equation"
    return "expr"
