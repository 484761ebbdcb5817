"""Split a solution into reasoning steps with rules that know about math.

The rules, in order:

1. Math is protected first: display math (``$$...$$``, ``\\[...\\]``, ``\\begin{align}...``) and
   inline math are masked, so no rule splits inside an expression (``2.5``, ``f(x). ``).
2. A blank line ends a step.
3. A line that starts with a step marker starts a step: ``Step 2:``, ``2.`` / ``2)``, a part label
   ``(a)`` / ``a)`` / ``Part (b)``, a bullet (``-``, ``*``, ``•``), a Markdown heading.
4. Any other line break also starts a step, except when the new line continues the previous one:
   it is display math or follows display math, it starts with a relation or operator (``= 2x``,
   ``+ 3``), or it starts in lower case or with a digit after a line that does not end a
   sentence. (A bullet is ``-``, ``*`` or ``•`` followed by a word, so ``- 3x`` continues.)
5. A block still longer than ``max_chars`` is split into sentences with spaCy's blank English
   pipeline and its rule-based ``sentencizer`` (no model download), with the math still masked,
   and sentences are grouped back up to ``max_chars``.

Each `Step` keeps its character offsets into the original text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_STEP_CHARS = 600

_DISPLAY = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]|\\begin\{(\w+\*?)\}.+?\\end\{\1\}", re.S)
_INLINE = re.compile(r"(?<![\\$])\$[^$\n]+?\$|\\\(.+?\\\)", re.S)
_MARKER = re.compile(
    r"^\s*(?:#{1,6}\s+|\*\*\s*)?(?:"
    r"(?:step|part)\s*\(?\d+[a-z]?\)?\s*[:.)-]?"
    r"|\d{1,2}[.)](?=\s)"
    r"|\(?[a-hA-H]\)(?=\s)"
    r"|part\s*\(?[a-h]\)?"
    r"|[-*•]\s+"
    r"|#{1,6}\s+"
    r")",
    re.I,
)
_BULLET = re.compile(r"^\s*[-*•]\s+[A-Za-z]{2,}")
_CONTINUES = re.compile(r"^\s*(?:[=+\-*/^<>≤≥]|\\(?:cdot|times|leq?|geq?|quad|implies|Rightarrow)\b|&)")
_SENTENCE_END = re.compile(r"[.!?:]\s*$")


@dataclass(frozen=True)
class Step:
    """One reasoning step: ``source[start:end]`` (stripped) is `text`; `label` is its marker
    (``"Step 2"``, ``"(a)"``) when it had one."""

    index: int
    text: str
    start: int
    end: int
    label: str | None = None


@lru_cache(maxsize=1)
def _nlp() -> Any:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def _mask(text: str) -> str:
    """The text with every math region replaced by same-length filler (newlines kept)."""
    chars = list(text)
    for pattern, fill in ((_DISPLAY, "D"), (_INLINE, "M")):
        for m in pattern.finditer(text):
            for i in range(m.start(), m.end()):
                if chars[i] != "\n" or fill == "M":
                    chars[i] = fill
            # Display math keeps its line breaks so that rule 4 can see it as its own line.
    return "".join(chars)


def _lines(masked: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for line in masked.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _label(line: str) -> str | None:
    m = _MARKER.match(line)
    if not m:
        return None
    raw = m.group(0).strip().strip("*#").strip()
    if raw in ("-", "*", "•", ""):
        return None
    return raw.rstrip(":.-").strip() or None


def _blocks(text: str, masked: str) -> list[tuple[int, int, str | None]]:
    """Blocks of whole lines, by rules 2-4."""
    blocks: list[tuple[int, int, str | None]] = []
    cur_start: int | None = None
    cur_end = 0
    cur_label: str | None = None
    prev_line = ""
    for start, end in _lines(masked):
        line = masked[start:end]
        if not line.strip():
            if cur_start is not None:
                blocks.append((cur_start, cur_end, cur_label))
                cur_start = None
            prev_line = ""
            continue
        stripped = line.strip()
        is_display = set(stripped) <= {"D", " "}
        label = _label(line)
        marked = label is not None or _BULLET.match(line) is not None
        continues = cur_start is not None and not marked and (
            is_display or _CONTINUES.match(line) is not None
            or (prev_line and set(prev_line.strip()) <= {"D", " "})
            or ((stripped[:1].islower() or stripped[:1].isdigit()) and not _SENTENCE_END.search(prev_line)))
        if continues:
            cur_end = end
        else:
            if cur_start is not None:
                blocks.append((cur_start, cur_end, cur_label))
            cur_start, cur_end, cur_label = start, end, label
        prev_line = line
    if cur_start is not None:
        blocks.append((cur_start, cur_end, cur_label))
    return blocks


def _sentences(masked: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Rule 5: split one long block into groups of sentences of at most `max_chars`."""
    doc = _nlp()(masked[start:end])
    pieces = [(start + s.start_char, start + s.end_char) for s in doc.sents]
    groups: list[tuple[int, int]] = []
    for a, b in pieces:
        if groups and (b - groups[-1][0]) <= max_chars:
            groups[-1] = (groups[-1][0], b)
        else:
            groups.append((a, b))
    return groups


def segment_steps(text: str, max_chars: int = MAX_STEP_CHARS) -> list[Step]:
    """Split `text` into reasoning steps (see the module notes for the rules)."""
    if not text or not text.strip():
        return []
    masked = _mask(text)
    raw: list[tuple[int, int, str | None]] = []
    for start, end, label in _blocks(text, masked):
        if end - start > max_chars:
            for i, (a, b) in enumerate(_sentences(masked, start, end, max_chars)):
                raw.append((a, b, label if i == 0 else None))
        else:
            raw.append((start, end, label))
    steps: list[Step] = []
    for start, end, label in raw:
        chunk = text[start:end]
        lead = len(chunk) - len(chunk.lstrip())
        body = chunk.strip()
        if not body:
            continue
        steps.append(Step(len(steps), body, start + lead, start + lead + len(body), label))
    return steps
