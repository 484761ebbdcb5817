"""Tuples, vectors, matrices and sets in braces, compared part by part in the calling process.

The rules (documented in docs/grading.md):

* **tuples entry by entry**: two answers written in the same brackets with two or more entries,
  `(a, b)`, `[a, b]`, `(a, b]`, or a vector `<a, b>` / `\\langle a, b \\rangle` (the same brackets
  as `( )`), are equal when they have as many entries and each entry equals the entry in the same
  place (by the whole answer comparison, so `(0.5, 2)` equals `(\\frac{1}{2}, 2)`). An ordered
  pair, a point, a vector and an interval are all decided this way: equal entries mean the same
  object whatever it is read as, and an interval is only ever compared with the same brackets.
  Different brackets (`(2, 5)` against `(2, 5]`) are left to the interval and symbolic rules.
* **matrices entry by entry**: a nested list `[[1, 2], [3, 4]]` and a `pmatrix` or `bmatrix`
  are matrices; two matrices are equal when they have the same shape and equal entries.
* **sets in braces**: `\\{a\\}` and `{a}` are sets: any order, each member once.
* a tuple or a matrix is never equal to a single number or expression (`(11, 7)` is not `7`).

Entries are compared by the caller's comparison (`same`), which answers with a status; a tuple
is `different` as soon as one entry is, `equal` when all are, and otherwise takes the status of
the entry that could not be decided (a timeout, an unreadable entry).

    >>> split_brackets(r"\\langle 2, -3 \\rangle")
    ('(', ')', ['2', '-3'])
    >>> matrix_rows(r"\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}")
    [['1', '2'], ['3', '4']]
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mathlens.analyze.grading.statements import split_top_level

Status = str  # "equal", "different", "unparseable" or "timeout"
Same = Callable[[str, str], Status]
Verdict = tuple[Status, str]

MAX_ENTRIES = 64
_OPENERS = "(["
_MATRIX = re.compile(r"^\\begin\{([pb]matrix)\}(.*)\\end\{\1\}$", re.S)


def split_brackets(text: str) -> tuple[str, str, list[str]] | None:
    """`(open, close, entries)` for an answer that is one bracketed sequence of two or more
    entries; angle brackets count as round ones. None otherwise."""
    t = text.strip()
    if t.startswith("\\langle") and t.endswith("\\rangle"):
        inner, opener, closer = t[len("\\langle"):-len("\\rangle")], "(", ")"
        if "\\langle" in inner:
            return None
    elif t[:1] == "<" and t[-1:] == ">":
        inner, opener, closer = t[1:-1], "(", ")"
        if "<" in inner or ">" in inner:
            return None
    elif t[:1] in _OPENERS and t[-1:] in ")]" and _one_group(t):
        inner, opener, closer = t[1:-1], t[0], t[-1]
    else:
        return None
    entries = [e.strip() for e in split_top_level(inner, ",")]
    if len(entries) < 2 or len(entries) > MAX_ENTRIES or not all(entries):
        return None
    return opener, closer, entries


def _one_group(t: str) -> bool:
    """True when the text's first bracket is closed by its last character only (brackets of
    every kind counted together, so that `(2, 5]` is one group and `(1, 2) + (3, 4)` is not)."""
    depth = 0
    for i, ch in enumerate(t):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i != len(t) - 1:
                return False
    return depth == 0


def matrix_rows(text: str) -> list[list[str]] | None:
    """The rows of a nested list `[[1, 2], [3, 4]]` or of a `pmatrix` / `bmatrix` environment;
    None when the text is not one, or its rows have different lengths."""
    t = text.strip()
    env = _MATRIX.match(t)
    if env:
        lines = [r for r in re.split(r"\\\\", env.group(2)) if r.strip()]
        rows = [[e.strip() for e in r.split("&")] for r in lines]
    elif t.startswith("[[") and t.endswith("]]") and _one_group(t):
        pieces = [p.strip() for p in split_top_level(t[1:-1], ",")]
        if not all(p.startswith("[") and p.endswith("]") and _one_group(p) for p in pieces):
            return None
        rows = [[e.strip() for e in split_top_level(p[1:-1], ",")] for p in pieces]
    else:
        return None
    if not rows or len({len(r) for r in rows}) != 1 or sum(len(r) for r in rows) > MAX_ENTRIES \
            or not all(e for r in rows for e in r):
        return None
    return rows


def _braced(text: str) -> list[str] | None:
    t = text.strip()
    for left, right in (("\\{", "\\}"), ("{", "}")):
        if t.startswith(left) and t.endswith(right) and len(t) > len(left) + len(right):
            inner = t[len(left): len(t) - len(right)]
            if left == "{" and ("{" in inner or "}" in inner):
                return None
            entries = [e.strip() for e in split_top_level(inner, ",")]
            return entries if all(entries) and len(entries) <= MAX_ENTRIES else None
    return None


def _in_order(a: list[str], b: list[str], same: Same) -> Status:
    """`different` as soon as one pair differs, `equal` when all are equal, else the status of
    the first pair that could not be decided."""
    if len(a) != len(b):
        return "different"
    pending: Status | None = None
    for x, y in zip(a, b, strict=True):
        status = same(x, y)
        if status == "different":
            return "different"
        if status != "equal" and pending is None:
            pending = status
    return pending or "equal"


def _as_set(a: list[str], b: list[str], same: Same) -> Status:
    if len(a) != len(b):
        return "different"
    left = list(b)
    for x in a:
        hit = next((i for i, y in enumerate(left) if same(x, y) == "equal"), None)
        if hit is None:
            return "different"
        left.pop(hit)
    return "equal"


def compare_structures(pred: str, ref: str, same: Same, scalar: Callable[[str], bool]) -> Verdict | None:
    """Compare two answers when at least one is a tuple, a matrix or a set in braces; None when
    the rules above do not decide. `scalar(text)` says whether an answer is a single number or
    expression (not a tuple, a set, a relation)."""
    p_rows, r_rows = matrix_rows(pred), matrix_rows(ref)
    if p_rows is not None and r_rows is not None:
        if (len(p_rows), len(p_rows[0])) != (len(r_rows), len(r_rows[0])):
            return "different", "matrix"
        flat_p = [e for row in p_rows for e in row]
        flat_r = [e for row in r_rows for e in row]
        return _in_order(flat_p, flat_r, same), "matrix"
    p_tuple, r_tuple = split_brackets(pred), split_brackets(ref)
    if p_tuple is not None and r_tuple is not None:
        if p_tuple[:2] != r_tuple[:2]:
            return None
        return _in_order(p_tuple[2], r_tuple[2], same), "tuple"
    p_set, r_set = _braced(pred), _braced(ref)
    if p_set is not None and r_set is not None:
        return _as_set(p_set, r_set, same), "set"
    for rows, brackets, other in ((p_rows, p_tuple, ref), (r_rows, r_tuple, pred)):
        if (rows is not None or brackets is not None) and scalar(other):
            return "different", "matrix" if rows is not None else "tuple"
    return None
