"""Piecewise functions: a `cases` environment and the same function written in words.

Forms read (an optional `f(x) =` or `y =` before them):

* `\\begin{cases} x^2 & x < 0 \\\\ 2x & \\text{if } x \\ge 0 \\end{cases}` (a row is `value & condition`,
  the condition may be wrapped in `\\text{if ...}`, `\\text{for ...}`, or be `\\text{otherwise}`);
* `x^2 if x < 0, 2x if x >= 0`; `x^2 for x < 0; 2x for x >= 0`; `x^2 when x < 0 and 2x otherwise`;
  `x^2 (x < 0), 2x (x >= 0)`; the same inside braces `{...}`.

A condition is a set of real numbers in one variable, read by `intervals.read_set` (inequalities,
chains, memberships, unions), a single point `x = 2`, or "otherwise" (the rest of the line).

Two piecewise answers are compared as functions (`compare_piecewise`): at every endpoint of every
piece, on both sides, and at four points inside each stretch between endpoints (and beyond the
outermost ones), each side takes the value of the piece whose condition holds there; the answers
are equal when they are defined at the same points and agree at all of them (so that
`x^2` for `x < 0` / `2x` for `x >= 0` equals `x^2` for `x <= 0` / `2x` for `x > 0`, both 0 at 0). A
piecewise answer against a single expression is compared the same way (`|x|` equals `-x` for
`x < 0` / `x` for `x >= 0`). The values are computed in this process by `quick` (bounded, no
SymPy); when a piece cannot be evaluated there (another letter, a name it does not read), the
pieces are matched instead: equal conditions, and values equal by the caller's comparison.

    >>> [p.condition for p in read_piecewise("x^2 if x < 0, 2x otherwise").pieces]
    ['x < 0', None]
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from mathlens.analyze.readers.intervals import Interval, merge, read_set
from mathlens.analyze.readers.quick import evaluate_at, read

Same = Callable[[str, str], str]
MAX_PIECES = 8
MAX_CHARS = 1000

_PREFIX = re.compile(r"^\s*(?:[A-Za-z](?:\s*\(\s*[A-Za-z]\s*\))?\s*=\s*)")
_CASES = re.compile(r"^\\begin\{cases\}(.*)\\end\{cases\}$", re.S)
_TEXT = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{([^{}]*)\}")
_OTHERWISE = re.compile(r"(?i)^(?:otherwise|else|elsewhere|for all other (?:values of )?[a-z]|in all other cases)$")
_LEAD = re.compile(r"(?i)^(?:,\s*)?(?:if|for|when|where)\b\s*")
_PLAIN_PIECE = re.compile(r"(?i)^(?P<value>.+?)\s+(?:if|for|when)\s+(?P<cond>.+)$"
                          r"|^(?P<value2>.+?)\s*\((?P<cond2>[^()]*[<>=≤≥][^()]*)\)$"
                          r"|^(?P<value3>.+?)\s+(?P<other>otherwise|else|elsewhere)$")
_AND = re.compile(r"\s+and\s+(?=.*\b(?:if|for|when|otherwise|else)\b)", re.I)
_VARIABLE = re.compile(r"(?<![A-Za-z\\])([a-z])(?![A-Za-z])")
_POINT = re.compile(r"^\s*([a-z])\s*=\s*(-?\d+(?:/\d+)?)\s*$")


@dataclass(frozen=True)
class Piece:
    """One piece: its value, and its condition as written (None for "otherwise")."""

    value: str
    condition: str | None


@dataclass(frozen=True)
class Piecewise:
    """The pieces of a piecewise answer, with the set each one covers."""

    pieces: tuple[Piece, ...]
    sets: tuple[tuple[Interval, ...], ...]
    variable: str


def _condition(raw: str) -> str | None:
    t = _TEXT.sub(lambda m: m.group(1), raw).strip().rstrip(".,;").strip()
    t = _LEAD.sub("", t).strip()
    return None if _OTHERWISE.match(t) else t


def _split(text: str) -> list[str]:
    """Split at commas and semicolons outside brackets (`<` and `>` are relations here)."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in ",;" and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces


def _rows(text: str) -> list[Piece] | None:
    t = _PREFIX.sub("", text.strip(), count=1).strip()
    cases = _CASES.match(t)
    if cases:
        rows = [r for r in re.split(r"\\\\", cases.group(1)) if r.strip()]
        pieces = []
        for row in rows:
            cells = row.split("&")
            if len(cells) != 2 or not cells[0].strip():
                return None
            pieces.append(Piece(cells[0].strip().rstrip(","), _condition(cells[1])))
        return pieces
    if t.startswith("\\{") and t.endswith("\\}"):
        t = t[2:-2]
    elif t.startswith("{") and t.endswith("}"):
        t = t[1:-1]
    if not re.search(r"(?i)\b(?:if|for|when|otherwise)\b|\([^()]*[<>≤≥][^()]*\)", t):
        return None
    pieces = []
    chunks = [c for part in _split(t) for c in _AND.split(part)]
    for chunk in chunks:
        m = _PLAIN_PIECE.match(_PREFIX.sub("", chunk.strip(), count=1))  # `f(x) = ...` on each piece
        if m is None:
            return None
        value = m.group("value") or m.group("value2") or m.group("value3")
        cond = None if m.group("other") else _condition(m.group("cond") or m.group("cond2"))
        pieces.append(Piece(value.strip(), cond))
    return pieces


def _complement(covered: list[Interval]) -> tuple[Interval, ...]:
    """The real numbers outside the union of `covered`."""
    out: list[Interval] = []
    low: Fraction | None = None  # None: minus infinity
    low_closed = False
    for lo, lo_closed, hi, hi_closed in merge(covered):
        if lo is not None:
            out.append((low, low_closed, lo, not lo_closed))
        if hi is None:
            return tuple(iv for iv in out if not _empty(iv))
        low, low_closed = hi, not hi_closed
    out.append((low, low_closed, None, False))
    return tuple(iv for iv in out if not _empty(iv))


def _empty(iv: Interval) -> bool:
    lo, lo_closed, hi, hi_closed = iv
    if lo is None or hi is None:
        return False
    return lo > hi or (lo == hi and not (lo_closed and hi_closed))


@functools.lru_cache(maxsize=1024)
def read_piecewise(text: str) -> Piecewise | None:
    """The pieces of a piecewise answer, or None when `text` is not one (see the module
    docstring)."""
    if len(text) > MAX_CHARS:
        return None
    pieces = _rows(text)
    if pieces is None or not 2 <= len(pieces) <= MAX_PIECES or sum(p.condition is None for p in pieces) > 1:
        return None
    names = {v for p in pieces if p.condition for v in _VARIABLE.findall(p.condition)}
    if len(names) != 1:
        return None
    variable = names.pop()
    sets: list[tuple[Interval, ...] | None] = []
    for piece in pieces:
        if piece.condition is None:
            sets.append(None)
            continue
        point = _POINT.match(piece.condition)
        if point:
            value = Fraction(point.group(2))
            sets.append(((value, True, value, True),))
            continue
        found = read_set(piece.condition, pairs_as_intervals=True)
        if found is None:
            return None
        sets.append(found)
    known = [iv for s in sets if s is not None for iv in s]
    filled = tuple(s if s is not None else _complement(known) for s in sets)
    return Piecewise(tuple(pieces), filled, variable)


def _contains(pieces: tuple[Interval, ...], x: Fraction) -> bool:
    for lo, lo_closed, hi, hi_closed in pieces:
        above = lo is None or x > lo or (x == lo and lo_closed)
        below = hi is None or x < hi or (x == hi and hi_closed)
        if above and below:
            return True
    return False


def _test_points(ends: list[Fraction]) -> list[Fraction]:
    """Every endpoint and four points inside each stretch between them (and beyond them)."""
    ends = sorted(set(ends))
    inner = (Fraction(137, 1000), Fraction(389, 1000), Fraction(613, 1000), Fraction(871, 1000))
    if not ends:
        return [Fraction(-23, 10), Fraction(-7, 10), Fraction(6, 10), Fraction(19, 10), Fraction(33, 10)]
    points = list(ends)
    points += [ends[0] - 1 - f * 3 for f in inner] + [ends[-1] + 1 + f * 3 for f in inner]
    for a, b in itertools.pairwise(ends):
        points += [a + (b - a) * f for f in inner]
    return points


def _ends(pw: Piecewise) -> list[Fraction]:
    return [e for s in pw.sets for iv in s for e in (iv[0], iv[2]) if e is not None]


def _value(pw: Piecewise | str, variable: str, x: Fraction) -> float | str | None:
    """The value at `x` (None where the answer is not defined, "?" where it cannot be computed)."""
    if isinstance(pw, str):
        text = pw
    else:
        text = next((p.value for p, s in zip(pw.pieces, pw.sets, strict=True) if _contains(s, x)), "")
        if not text:
            return None
    reading = read(text)
    if reading is None or len(reading.sides) != 1 or not reading.names <= {variable}:
        return "?"
    value = evaluate_at(reading.sides[0], {variable: float(x)})
    return "?" if value is None else value


def _as_functions(p: Piecewise | str, r: Piecewise | str, variable: str) -> bool | None:
    ends = [e for side in (p, r) if isinstance(side, Piecewise) for e in _ends(side)]
    for x in _test_points(ends):
        a, b = _value(p, variable, x), _value(r, variable, x)
        if a == "?" or b == "?":
            return None
        if a is None or b is None:
            if (a is None) != (b is None):
                return False
            continue
        assert isinstance(a, float) and isinstance(b, float)
        if abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b)):
            return False
    return True


def _matched(p: Piecewise, r: Piecewise, same: Same) -> bool:
    if len(p.pieces) != len(r.pieces):
        return False
    left = list(zip(r.pieces, r.sets, strict=True))
    for piece, cover in zip(p.pieces, p.sets, strict=True):
        hit = next((i for i, (other, other_cover) in enumerate(left)
                    if other_cover == cover and same(piece.value, other.value) == "equal"), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def compare_piecewise(pred: str, ref: str, same: Same) -> tuple[str, str] | None:
    """`(status, "piecewise")` when at least one answer is piecewise and the comparison above
    decides; None when neither is piecewise (or a piecewise answer meets something it cannot
    be compared with here)."""
    p, r = read_piecewise(pred), read_piecewise(ref)
    if p is None and r is None:
        return None
    if p is not None and r is not None:
        if p.variable != r.variable:
            return "different", "piecewise"
        verdict = _as_functions(p, r, p.variable)
        if verdict is None:
            verdict = _matched(p, r, same)
        return ("equal" if verdict else "different"), "piecewise"
    pw = p if p is not None else r
    other = ref if p is not None else pred
    assert pw is not None
    verdict = _as_functions(pw, other, pw.variable) if p is not None else _as_functions(other, pw, pw.variable)
    if verdict is None:
        return None
    return ("equal" if verdict else "different"), "piecewise"
