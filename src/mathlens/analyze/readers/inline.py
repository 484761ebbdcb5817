"""Inline math in a sentence: the `$...$` (or `\\(...\\)`) segments, and the run of them that
closes the sentence.

In "Since $W(x)^2 = 1$ for every $x$, we get $W(x) = 1$ or $W(x) = -1$." the answer is the last
run of math segments joined only by list words (`W(x) = 1 or W(x) = -1`); in "The diagonal is
$5\\sqrt{2}$ cm." it is the last segment, followed only by prose. A segment followed by more
math in plain text ("For $x = 2$ the value is 7") or by a verb that still awaits its value
("the derivative at $x = 2$ is:") is not the answer, and the run is not used.

A `$` before an amount is currency, not math: a segment whose closing `$` is followed by a digit
("costs $14 and $20") or that opens with a digit and ends in a space is not a math segment.

    >>> closing_math("we get $W(x) = 1$ or $W(x) = -1$.")
    'W(x) = 1 or W(x) = -1'
    >>> closing_math("For $x = 2$ the value is 7.") is None
    True
"""

from __future__ import annotations

import itertools
import re

# A `\\(` or `\\[` segment ends at its closer and never runs past the next opener of its kind: an
# unclosed opener then costs the stretch up to the next one, not the rest of the text (thousands of
# unclosed `\\[` would otherwise make the search quadratic).
_SEGMENT = re.compile(r"\$\$(?P<d>[^$]+?)\$\$|\$(?P<s>[^$\n]+?)\$|\\\((?P<p>(?:(?!\\\().)+?)\\\)"
                      r"|\\\[(?P<b>(?:(?!\\\[).)+?)\\\]", re.S)
_CONNECTOR = re.compile(r"\s*(?:,|;|,?\s*(?:and|or)\b|\\text\{\s*(?:and|or|,)\s*\})?\s*(?:(?:and|or)\s+)?", re.I)
_TAIL_MATH = re.compile(r"[\d=<>^/*+\\√π∞≤≥≠{}\[\]]")
_WORD = re.compile(r"[A-Za-z]+")
_LINK_ONLY = re.compile(r"(?i)(?:is|are|equals|becomes|gives|was)")
MAX_SEGMENTS = 200


def segments(text: str) -> list[tuple[int, int, str]]:
    """The inline math segments of `text`: `(start, end, content)`, in order (at most 200)."""
    out: list[tuple[int, int, str]] = []
    for m in _SEGMENT.finditer(text):
        content = next(g for g in m.groups() if g is not None)
        if m.group("s") is not None and (text[m.end():m.end() + 1].isdigit()
                                        or (content[:1].isdigit() and content[-1:].isspace())):
            continue  # "$14 and $20": amounts of money, not math
        if content.strip():
            out.append((m.start(), m.end(), content.strip()))
        if len(out) >= MAX_SEGMENTS:
            break
    return out


def closing_segments(text: str) -> list[tuple[int, int, str]]:
    """The math segments of the run that closes `text` (see the module docstring), in order; empty
    when the sentence does not close on math."""
    found = segments(text)
    if not found:
        return []
    last = found[-1]
    after = text[last[1]:].strip()
    tail = after.rstrip(".!?,;:").strip()
    if _TAIL_MATH.search(tail) or len(_WORD.findall(tail)) > 6:
        return []  # more math after it, in plain text: the segment is not the answer
    if after.endswith(":") or _LINK_ONLY.fullmatch(tail):
        return []  # "... of $w = -i + j$ is:": the value comes after, the segment only names it
    run = [last]
    for prev in reversed(found[:-1]):
        if _CONNECTOR.fullmatch(text[prev[1]:run[0][0]]) is None:
            break
        run.insert(0, prev)
    return run


def closing_run(text: str) -> tuple[int, int, str] | None:
    """The run of math segments that closes `text` (see the module docstring), with its span:
    `(start, end, joined content)`, or None when the sentence does not close on math."""
    run = closing_segments(text)
    if not run:
        return None
    joined = run[0][2]
    for a, b in itertools.pairwise(run):
        gap = re.sub(r"\s+", " ", text[a[1]:b[0]]).strip()
        joined += (gap + " " if gap.startswith((",", ";")) else f" {gap} " if gap else ", ") + b[2]
    return run[0][0], run[-1][1], joined


def closing_math(text: str) -> str | None:
    """The content of `closing_run`, or None."""
    run = closing_run(text)
    return run[2] if run else None
