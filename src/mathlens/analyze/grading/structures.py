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
* a matrix of one row or one column is the vector of its entries, against `(a, b)`, `<a, b>` or a
  list `[a, b]` (no interval is compared with a matrix);
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

from mathlens.analyze.readers.statements import split_equals, split_top_level

Status = str  # "equal", "different", "unparseable" or "timeout"
Same = Callable[[str, str], Status]
Verdict = tuple[Status, str]

MAX_ENTRIES = 64
_OPENERS = "(["
_MATRIX = re.compile(r"^\\begin\{([pbB]?matrix)\}(.*)\\end\{\1\}$", re.S)
# `\left[\begin{array}{cc} ... \end{array}\right]` (with `\left`/`\right` already gone)
_ARRAY = re.compile(r"^([\[(]?)\s*\\begin\{array\}\s*\{[lcr|\s]*\}(.*)\\end\{array\}\s*([\])]?)$", re.S)
_CALL = re.compile(r"^(?:Matrix|matrix|np\.array|array)\s*\((.*)\)$", re.S)


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
    call = _CALL.match(t)
    if call:
        t = call.group(1).strip()  # `Matrix([[1, 2], [3, 4]])`
    env = _MATRIX.match(t)
    array = _ARRAY.match(t)
    if array and (array.group(1), array.group(3)) not in (("[", "]"), ("(", ")")):
        array = None  # an array without brackets is a table, with mismatched ones not a matrix
    if env or array:
        body = env.group(2) if env else array.group(2)  # type: ignore[union-attr]
        lines = [r for r in re.split(r"\\\\", body) if r.strip() and not r.strip().startswith("\\hline")]
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


_UNIT = re.compile(r"\\(?:mathbf|boldsymbol|vec|hat|bf)\s*\{\s*\\?([ijk])(?:math)?\s*\}"
                   r"|\\(?:mathbf|hat|vec)\s+([ijk])\b|\\hat\s*\{?\s*\\([ij])math\s*\}?|(?<![A-Za-z\\_{])([ijk])(?![A-Za-z])")
_MARKUP = re.compile(r"\\(?:mathbf|boldsymbol|vec|hat|bf)|\\[ij]math")
_SIMPLE = re.compile(r"\d+(?:\.\d+)?|[A-Za-z]|\\[dt]?frac\{[^{}]*\}\{[^{}]*\}")
_TERM_TAIL = re.compile(r"(?:\s|\*|\\cdot|\\,|\\;|\\!)+$")


def _terms(text: str) -> list[str] | None:
    """The terms of a sum, each with its sign (`-8i + j` -> `['-8i', '+j']`); a sign after `^`,
    `e`/`E` in a number or inside brackets does not split."""
    terms: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif ch in "+-" and depth == 0 and i > start:
            before = text[:i].rstrip()
            if before.endswith(("^", "(", "*", "/", "\\cdot")):
                continue
            terms.append(text[start:i])
            start = i
    terms.append(text[start:])
    return [t.strip() for t in terms if t.strip()]


def unit_vector(text: str) -> list[str] | None:
    """The components of a vector written with unit vectors: `-8i + j` -> `['-8', '1']`,
    `3\\mathbf{i} - 2\\mathbf{j} + \\mathbf{k}` -> `['3', '-2', '1']`. Plain `i`, `j`, `k` count as unit
    vectors only when `j` or `k` appears or the vectors are marked (`\\mathbf{i}`, `\\hat{i}`,
    `\\vec{i}`), since `3 + 4i` is a complex number. None when the text is not such a sum."""
    t = text.strip()
    if len(t) > 300:
        return None
    found = list(_UNIT.finditer(t))
    letters = {next(g for g in m.groups() if g) for m in found}
    if not found or not (letters & {"j", "k"} or _MARKUP.search(t)):
        return None
    terms = _terms(t)
    if terms is None:
        return None
    coefficients: dict[str, str] = {}
    for term in terms:
        units = list(_UNIT.finditer(term))
        if len(units) != 1 or units[0].end() != len(term):
            return None
        letter = next(g for g in units[0].groups() if g)
        if letter in coefficients:
            return None
        coefficient = _TERM_TAIL.sub("", term[:units[0].start()]).strip()
        sign = ""
        if coefficient and coefficient[0] in "+-":
            sign, coefficient = ("-" if coefficient[0] == "-" else ""), coefficient[1:].strip()
        if not coefficient:
            coefficient = "1"
        elif sign and not _SIMPLE.fullmatch(coefficient):
            coefficient = f"({coefficient})"
        coefficients[letter] = sign + coefficient
    size = 3 if "k" in coefficients else 2
    return [coefficients.get(u, "0") for u in "ijk"[:size]]


def _vector_entries(text: str, square: bool = False) -> list[str] | None:
    """A vector's entries: `(a, b)`, `<a, b>`, `\\langle a, b \\rangle` or unit vectors, and with
    `square` a list `[a, b]` too (against a matrix of one row or column, it is no interval)."""
    brackets = split_brackets(text)
    if brackets is not None:
        return brackets[2] if brackets[:2] == ("(", ")") or (square and brackets[:2] == ("[", "]")) else None
    return unit_vector(text)


def _padded(a: list[str], b: list[str], a_units: bool, b_units: bool) -> tuple[list[str], list[str]]:
    """`i + 2j` against a vector of three entries is `(1, 2, 0)`."""
    if a_units and len(a) < len(b) <= 3:
        a = a + ["0"] * (len(b) - len(a))
    if b_units and len(b) < len(a) <= 3:
        b = b + ["0"] * (len(a) - len(b))
    return a, b


_NAME = re.compile(r"^\s*(?:\\(?:vec|mathbf|overrightarrow|boldsymbol)\s*\{?\s*[A-Za-z]\s*\}?|[A-Za-z])"
                   r"(?:_\{?\w+\}?|\^\{?-1\}?|\^\{?T\}?|'+)*(?:\s*\(\s*[A-Za-z0-9, ]*\))?\s*$")


def _named_value(text: str, other: str) -> str:
    """`v = -8i + j`, `A^{-1} = [[...]]`, `\\vec{r}(t) = <...>`: the value, when the other answer is
    not an equation and the left side only names it."""
    sides = split_equals(text)
    if len(sides) == 2 and len(split_equals(other)) == 1 and _NAME.match(sides[0]) and sides[1].strip():
        return sides[1].strip()
    return text


def compare_structures(pred: str, ref: str, same: Same, scalar: Callable[[str], bool]) -> Verdict | None:
    """Compare two answers when at least one is a tuple, a matrix or a set in braces; None when
    the rules above do not decide. `scalar(text)` says whether an answer is a single number or
    expression (not a tuple, a set, a relation)."""
    named_p, named_r = _named_value(pred, ref), _named_value(ref, pred)
    if (named_p, named_r) != (pred, ref):
        found = compare_structures(named_p, named_r, same, scalar)
        if found is not None:
            return found
    p_rows, r_rows = matrix_rows(pred), matrix_rows(ref)
    if p_rows is not None and r_rows is not None:
        if (len(p_rows), len(p_rows[0])) != (len(r_rows), len(r_rows[0])):
            return "different", "matrix"
        flat_p = [e for row in p_rows for e in row]
        flat_r = [e for row in r_rows for e in row]
        return _in_order(flat_p, flat_r, same), "matrix"
    p_units, r_units = unit_vector(pred), unit_vector(ref)
    if p_units is not None or r_units is not None:
        p_vec, r_vec = _vector_entries(pred), _vector_entries(ref)
        if p_vec is not None and r_vec is not None:
            p_vec, r_vec = _padded(p_vec, r_vec, p_units is not None, r_units is not None)
            return _in_order(p_vec, r_vec, same), "unit_vectors"
    for rows, other in ((p_rows, ref), (r_rows, pred)):
        vector = _vector_entries(other, square=True)
        if rows is not None and vector is not None and (len(rows) == 1 or len(rows[0]) == 1):
            flat = [e for row in rows for e in row]  # a column or a row matrix is a vector
            pair = (flat, vector) if rows is p_rows else (vector, flat)
            return _in_order(*pair, same), "vector"
    p_tuple, r_tuple = split_brackets(pred), split_brackets(ref)
    if (p_rows is not None and r_tuple is not None) or (r_rows is not None and p_tuple is not None):
        return "different", "matrix"  # `[[2, 0], [1, 3]]` against `[2, 0, 1, 3]`: not the same shape
    if p_tuple is not None and r_tuple is not None:
        if p_tuple[:2] != r_tuple[:2]:
            return None
        return _in_order(p_tuple[2], r_tuple[2], same), "tuple"
    p_set, r_set = _braced(pred), _braced(ref)
    if p_set is not None and r_set is not None:
        return _as_set(p_set, r_set, same), "set"
    for rows, brackets, other in ((p_rows, p_tuple, ref), (r_rows, r_tuple, pred)):
        # (a sum of unit vectors is not counted here: `3k` may be a multiple of a variable k)
        if (rows is not None or brackets is not None) and scalar(other) and unit_vector(other) is None:
            return "different", "matrix" if rows is not None else "tuple"
    return None
