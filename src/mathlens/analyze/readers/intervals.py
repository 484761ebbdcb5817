"""Intervals of real numbers with numeric endpoints, and unions of them, compared exactly without SymPy.

An interval (`[2, 5)`, `(-\\infty, 3]`, `[0, oo)`), an inequality in one variable (`x > 5`,
`-2 < x \\le 3`, `x ≥ 5`), a membership (`x \\in [2, 5)`), a union of intervals
(`(-\\infty, -1) \\cup (2, \\infty)`, `(-oo, -2) U (2, oo)`) or inequalities joined by "or"
(`x < -1 or x > 2`) whose endpoints are integers, fractions or infinity is read here, in the
calling process, as a set: a sorted list of disjoint intervals with `Fraction` endpoints (touching
or overlapping pieces are merged, as SymPy's `Union` does). Two such answers are equal when the
sets are: the verdict the symbolic path gives for them (SymPy's `as_set` and `Union`, then
Math-Verify's set comparison), without a round trip to the worker and about 30 ms of SymPy each.

Only forms that the symbolic path reads as that same set are read here, so that the verdict
never changes: not a decimal endpoint (it rounds them), not `oo` in LaTeX (two letters o) or a
lone `(2, oo)` in keyboard notation (a point; inside a union it is an interval), not a lone
`(a, b)` with two finite ends (a point), not an empty or one-point piece, not symbolic endpoints
(`\\pi`, `\\sqrt2`), not inequalities joined by "and" or commas. Those return None and go on to the
symbolic path.

Each step is a regular expression without nested repetition, and texts over `MAX_CHARS` are not
read: the cost is linear and bounded.

    >>> same_set("x \\\\ge 5", "[5, \\\\infty)")
    True
    >>> same_set("-2 < x <= 3", "[-2, 3]")
    False
    >>> same_set("x < -1 or x > 2", "(-oo, -1) U (2, oo)")
    True
    >>> same_set("(1, 2)", "1 < x < 2") is None
    True
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

MAX_CHARS = 200

#: an endpoint: None stands for -infinity on the left and +infinity on the right
Bound = Fraction | None
Interval = tuple[Bound, bool, Bound, bool]  # (low, low closed, high, high closed)

_INF = "∞"
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\\left|\\right|\\[,;:! ]|\\displaystyle|\$"), ""),
    (re.compile(r"\\infty|infinity|infty|\binf\b|\boo\b"), _INF),
    (re.compile(r"\\leq?(?![A-Za-z])|<=|⩽"), "≤"),
    (re.compile(r"\\geq?(?![A-Za-z])|>=|⩾"), "≥"),
    (re.compile(r"\\lt(?![A-Za-z])"), "<"),
    (re.compile(r"\\gt(?![A-Za-z])"), ">"),
    (re.compile(r"\\in(?![A-Za-z])"), "∈"),
    (re.compile(r"\\[dt]frac"), r"\\frac"),
    (re.compile(r"\s+"), ""),
)
_NUM = r"[-+]?(?:∞|\d+(?:/\d+)?|\\frac\{\d+\}\{\d+\})"
#: characters an interval or inequality may use (anything else: not read here)
_ALLOWED = re.compile(r"[-+\w\s\\{}()\[\],.<>=/$≤≥∞∈⩽⩾!;:∪]*")
_UNION = re.compile(r"\\cup(?![A-Za-z])|∪|\s+U\s+")
_OR = re.compile(r"\s+or\s+|\s*\\text\{\s*or\s*\}\s*|\s*\\lor(?![A-Za-z])\s*")
_KEYBOARD_INF = re.compile(r"(?<!\\)\b(?:oo|inf|infinity|infty)\b|∞")
_INTERVAL = re.compile(rf"([\[(])({_NUM}),({_NUM})([\])])")
_VAR = r"[a-df-hj-zA-Z]"  # one letter, not e or i
_CHAIN = re.compile(rf"(?:({_NUM})([<≤>≥]))?({_VAR})(?:([<≤>≥])({_NUM}))?")
_MEMBER = re.compile(rf"({_VAR})∈(.+)")
_FRAC = re.compile(r"([-+]?)\\frac\{(\d+)\}\{(\d+)\}")


def _number(text: str) -> Fraction | str | None:
    """An endpoint: a Fraction, "+∞" / "-∞", or None when it is not a number."""
    if text.lstrip("+-") == _INF:
        return "-∞" if text.startswith("-") else "+∞"
    frac = _FRAC.fullmatch(text)
    try:
        if frac:
            value = Fraction(int(frac.group(2)), int(frac.group(3)))
            return -value if frac.group(1) == "-" else value
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _interval(m: re.Match[str]) -> Interval | None:
    lo, hi = _number(m.group(2)), _number(m.group(3))
    if lo is None or hi is None or lo == "+∞" or hi == "-∞":
        return None
    lo_closed, hi_closed = m.group(1) == "[", m.group(4) == "]"
    if (lo == "-∞" and lo_closed) or (hi == "+∞" and hi_closed):
        return None  # `[-∞, 3]`: not a set of reals
    return (None if lo == "-∞" else lo, lo_closed, None if hi == "+∞" else hi, hi_closed)  # type: ignore[return-value]


def _relation(left: str | None, op: str, right: str | None) -> Interval | None:
    """`x op value` (left None) or `value op x` (right None) as an interval."""
    value = _number(right if left is None else left)  # type: ignore[arg-type]
    if not isinstance(value, Fraction):
        return None
    if left is not None:  # `value op x` is `x op' value`
        op = {"<": ">", "≤": "≥", ">": "<", "≥": "≤"}[op]
    if op in "<≤":
        return (None, False, value, op == "≤")
    return (value, op == "≥", None, False)


def _intersect(a: Interval, b: Interval) -> Interval:
    lo, lo_closed = a[0], a[1]
    if b[0] is not None and (lo is None or b[0] > lo or (b[0] == lo and not b[1])):
        lo, lo_closed = b[0], b[1]
    hi, hi_closed = a[2], a[3]
    if b[2] is not None and (hi is None or b[2] < hi or (b[2] == hi and not b[3])):
        hi, hi_closed = b[2], b[3]
    return lo, lo_closed, hi, hi_closed


def _piece(text: str, var: list[str]) -> Interval | None:
    """An interval, an inequality chain or `x ∈ interval`."""
    member = _MEMBER.fullmatch(text)
    if member:
        var.append(member.group(1))
        text = member.group(2)
    m = _INTERVAL.fullmatch(text)
    if m:
        if not member and m.group(1) == "(" and m.group(4) == ")" and _INF not in text:
            return None  # `(1, 2)` alone may be a point
        return _interval(m)
    chain = _CHAIN.fullmatch(text)
    if not chain or (chain.group(1) is None and chain.group(4) is None):
        return None
    var.append(chain.group(3))
    parts = []
    if chain.group(1) is not None:
        parts.append(_relation(chain.group(1), chain.group(2), None))
    if chain.group(4) is not None:
        parts.append(_relation(None, chain.group(4), chain.group(5)))
    if any(p is None for p in parts):
        return None
    if len(parts) == 2 and (chain.group(2) in "<≤") != (chain.group(4) in "<≤"):
        return None  # `1 < x > 2`: not an interval
    out = parts[0]
    for p in parts[1:]:
        out = _intersect(out, p)  # type: ignore[arg-type]
    return out


def _degenerate(iv: Interval) -> bool:
    """Empty or a single point: SymPy writes those as other sets."""
    lo, _, hi, _ = iv
    return lo is not None and hi is not None and lo >= hi


def _rewrite(text: str) -> str:
    t = text.strip()
    for pattern, repl in _REWRITES:
        t = pattern.sub(repl, t)
    return t


def merge(pieces: list[Interval]) -> tuple[Interval, ...]:
    """The union as sorted disjoint intervals (touching pieces joined, as SymPy's `Union`)."""
    def low_key(iv: Interval) -> tuple[int, Fraction, int]:
        return (0, Fraction(0), 0) if iv[0] is None else (1, iv[0], 0 if iv[1] else 1)

    out: list[Interval] = []
    for iv in sorted(pieces, key=low_key):
        if out:
            lo, lo_closed, hi, hi_closed = out[-1]
            joins = hi is None or iv[0] is None or iv[0] < hi or (iv[0] == hi and (hi_closed or iv[1]))
            if joins:
                if hi is None or iv[2] is None:
                    hi, hi_closed = None, False
                elif iv[2] > hi:
                    hi, hi_closed = iv[2], iv[3]
                elif iv[2] == hi:
                    hi_closed = hi_closed or iv[3]
                out[-1] = (lo, lo_closed, hi, hi_closed)
                continue
        out.append(iv)
    return tuple(out)


@functools.lru_cache(maxsize=2048)
def read_set(text: str, pairs_as_intervals: bool = False) -> tuple[Interval, ...] | None:
    """The set an answer describes, as sorted disjoint intervals; None when the answer is not
    such a set (see the module docstring). With `pairs_as_intervals`, a lone `(a, b)` is read as
    the open interval (the symbolic path may read it as a point)."""
    if len(text) > MAX_CHARS or not _ALLOWED.fullmatch(text):
        return None
    latex = "\\" in text
    if latex and _KEYBOARD_INF.search(text):
        return None  # `oo` in LaTeX is two letters o
    unions = _UNION.split(text)
    alternatives = _OR.split(text) if len(unions) == 1 else [text]
    names: list[str] = []
    pieces: list[Interval] = []
    for raw in unions if len(unions) > 1 else alternatives:
        t = _rewrite(raw)
        if len(unions) > 1:
            m = _INTERVAL.fullmatch(t)
            found = _interval(m) if m else None  # inside a union, `(a, b)` is an interval
        elif len(alternatives) > 1:
            if _INTERVAL.fullmatch(t) or "∈" in t:
                return None  # "or" between intervals lists answers; only inequalities are a union
            found = _piece(t, names)
        elif pairs_as_intervals and (m := _INTERVAL.fullmatch(t)):
            found = _interval(m)
        else:
            if not latex and t.startswith("(") and t.endswith(")"):
                return None  # the keyboard reader takes `(2, oo)` for a point
            found = _piece(t, names)
        if found is None or _degenerate(found):
            return None
        pieces.append(found)
    if len(set(names)) > 1:
        return None
    return merge(pieces)


def same_set(pred: str, ref: str) -> bool | None:
    """True / False when both answers are sets read here; None when either is not."""
    a, b = read_set(pred), read_set(ref)
    if a is None or b is None:
        return None
    return a == b


def differ_as_sets(pred: str, ref: str) -> bool:
    """True when the two answers are different sets even if a lone `(a, b)` is read as an
    interval. A pair read as a point is never equal to a set either, so the answers differ under
    both readings (`x <= 4` against `(-oo, 4)`; `(2, 5)` against `(2, 5]`)."""
    a, b = read_set(pred, pairs_as_intervals=True), read_set(ref, pairs_as_intervals=True)
    return a is not None and b is not None and a != b


def same_set_with_pair(pred: str, ref: str) -> bool | None:
    """A lone `(a, b)` against an inequality, a membership or a union: the pair is read as the open
    interval (a point is never such a set), so `-1 < x < 3` equals `(-1, 3)`. None otherwise."""
    for one, other in ((pred, ref), (ref, pred)):
        pair = read_set(one, pairs_as_intervals=True) if read_set(one) is None else None
        described = read_set(other)
        # (against another lone pair, both may be points: undecided here)
        if (pair is not None and described is not None and read_set(other, pairs_as_intervals=True) == described
                and _INTERVAL.fullmatch(_rewrite(other)) is None):
            return pair == described
    return None


_INEQUALITY = re.compile(r"<|>|≤|≥|\\[lg]eq?(?![A-Za-z])|\\[lg]t(?![A-Za-z])")


def is_inequality(text: str) -> bool:
    """True when a set is written as an inequality (`x \\ge 2`, `-1 < x < 3`), not as an interval."""
    return _INEQUALITY.search(text) is not None

