"""String helpers shared by the plain and LaTeX readers: brackets, top-level splitting, delimiters."""

from __future__ import annotations

import re
from collections.abc import Callable

_PAIRS = {"(": ")", "[": "]", "{": "}"}
#: a union of sets: `\cup`, `∪`, or a capital U between spaces
UNION = re.compile(r"\s+U\s+|∪|\\cup")
#: a list of lists (`[[1, 2], [3, 4]]`): a matrix, not intervals
NESTED_LIST = re.compile(r"^\s*\[\s*\[.*\]\s*\]\s*$", re.S)
#: a LaTeX text command and the words in it (`\text{ hours}`, `\mathrm{cm}`)
TEXT_COMMAND = re.compile(r"\\(?:text|mathrm|textbf|mbox|operatorname)\{([^{}]*)\}")


def find_close(s: str, open_at: int) -> int | None:
    """Index of the bracket closing the one at `open_at` (any bracket kind counts), or None."""
    depth = 0
    for i in range(open_at, len(s)):
        ch = s[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


def replace_calls(s: str, pattern: re.Pattern[str], build: Callable[[re.Match[str], str], str]) -> str:
    """Replace every ``NAME(...)`` matched by `pattern` (which ends at the open bracket) by
    ``build(match, inner_text)``."""
    out: list[str] = []
    pos = 0
    while True:
        m = pattern.search(s, pos)
        if m is None:
            break
        close = find_close(s, m.end() - 1)
        if close is None:
            break
        out.append(s[pos:m.start()])
        out.append(build(m, s[m.end():close]))
        pos = close + 1
    out.append(s[pos:])
    return "".join(out)


# Relations, longest spelling first so that "<=" is not read as "<".
PLAIN_RELATIONS = ("<=", ">=", "!=", "≈", "=", "<", ">")
LATEX_RELATIONS = {r"\leq": "<=", r"\le": "<=", r"\geq": ">=", r"\ge": ">=", r"\neq": "!=",
                   r"\ne": "!=", r"\approx": "≈", r"\lt": "<", r"\gt": ">", "=": "=", "<": "<",
                   ">": ">"}


def split_relations(s: str, latex: bool = False) -> tuple[list[str], list[str]]:
    """Split `s` at relations outside brackets: ``"a = b < c"`` -> (["a", "b", "c"], ["=", "<"]).

    ``->`` (a limit arrow) is not a relation; in LaTeX only a relation followed by a non-letter
    counts (``\\le`` but not ``\\left``).
    """
    sides: list[str] = []
    ops: list[str] = []
    depth = 0
    start = 0
    i = 0
    spellings = sorted(LATEX_RELATIONS, key=len, reverse=True) if latex else list(PLAIN_RELATIONS)
    while i < len(s):
        ch = s[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            hit = _relation_at(s, i, spellings, latex)
            if hit is not None:
                sides.append(s[start:i])
                ops.append(LATEX_RELATIONS[hit] if latex else hit)
                i += len(hit)
                start = i
                continue
        i += 1
    sides.append(s[start:])
    return sides, ops


def _relation_at(s: str, i: int, spellings: list[str], latex: bool) -> str | None:
    if s.startswith("->", i) or (i > 0 and s[i] == ">" and s[i - 1] == "-"):
        return None
    for sp in spellings:
        if s.startswith(sp, i):
            if latex and sp.startswith("\\") and i + len(sp) < len(s) and s[i + len(sp)].isalpha():
                continue
            return sp
    return None


def split_top_level(s: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return parts


_DELIMS = ((r"$$", r"$$"), (r"\[", r"\]"), (r"\(", r"\)"), ("$", "$"))


def strip_delimiters(s: str) -> str:
    """Remove math delimiters, a boxed wrapper, and trailing sentence punctuation."""
    s = s.strip()
    for left, right in _DELIMS:
        if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
            s = s[len(left):len(s) - len(right)].strip()
            break
    s = s.rstrip(" .;,")
    return s


# "1202_7", "1202_{7}", "(1202)_{7}", "1A_{16}": a whole number written in a base from 2 to 36.
_BASED = re.compile(r"(?<![\w.])(\(?)([0-9][0-9A-Z]*)\)?_\{?(\d{1,2})\}?(?![\w}])")


def based_numbers(s: str) -> str:
    """Numbers written in a base (``1202_7``) replaced by their values (``443``); a number whose
    digits do not fit its base is left as written."""
    def value(m: re.Match[str]) -> str:
        digits, base = m.group(2), int(m.group(3))
        if m.group(1) and not m.group().startswith("(" + digits + ")"):
            return m.group()
        if not 2 <= base <= 36:
            return m.group()
        try:
            return str(int(digits, base))
        except ValueError:
            return m.group()
    return _BASED.sub(value, s)


_ATOM = re.compile(r"\s*-?\s*(?:\d+(?:\.\d+)?|[A-Za-z])\s*")


#: bounds after a bracket, ``[F]_0^3``: F evaluated between them (read by the LaTeX reader), not a group
_EVALUATION_BOUNDS = re.compile(r"\s*_\s*(?:\{[^{}]*\}|[^\s{}])\s*\^")


def square_groups(s: str) -> str:
    """Square brackets used as grouping (``[2009 + x][2x]``, ``15[f(2) + f(1)]``) written as
    round ones. Brackets with a comma inside (intervals, lists), around a lone number or letter
    (``[x]`` may be the integer part), before bounds (``[F]_0^3``) and the index of ``\\sqrt[3]``
    are left as written."""
    out = list(s)
    i = 0
    while i < len(s):
        if s[i] == "[" and not re.search(r"(?:\\sqrt|sqrt|\\left|\\right|\\big|\\Big)\s*$", s[:i]):
            close = find_close(s, i)
            if close is not None and s[close] == "]":
                inner = s[i + 1:close]
                if len(split_top_level(inner)) == 1 and not _ATOM.fullmatch(inner) \
                        and not _EVALUATION_BOUNDS.match(s, close + 1):
                    out[i], out[close] = "(", ")"
        i += 1
    return "".join(out)
