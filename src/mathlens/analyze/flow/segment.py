"""Split a solution into reasoning steps with rules that know about math.

The rules, in order:

1. Math is protected first: display math (``$$...$$``, ``\\[...\\]``, ``\\begin{align}...``) and
   inline math are masked, so no rule splits inside an expression (``2.5``, ``f(x). ``).
2. A blank line ends a step.
3. A line that starts with a step marker starts a step: ``Step 2:``, ``2.`` / ``2)``, a part label
   ``(a)`` / ``a)`` / ``Part (b)``, a bullet (``-``, ``*``, ``•``), a Markdown heading. A solution
   written in one paragraph ("Step 1: ... . Step 2: ...") is read as if each ``Step N:`` after the
   end of a sentence (or of math) began a line; ``see step 2`` inside a sentence does not.
4. Any other line break also starts a step, except when the new line continues the previous one:
   it is display math or follows display math, it starts with a relation or operator (``= 2x``,
   ``+ 3``), or it starts in lower case or with a digit after a line that does not end a
   sentence. (A bullet is ``-``, ``*`` or ``•`` followed by a word, so ``- 3x`` continues.)
5. A code fence alone on its line (```` ```python ````, ```` ``` ````) is not a step: an opening
   fence joins the chunk after it, a closing one the chunk before it (`_join_fences`).
6. A block still longer than ``max_chars`` is split into sentences by the rule of spaCy's
   rule-based ``sentencizer`` on its blank English pipeline (`sentences`, which does not import
   spaCy), with the math still masked, and sentences are grouped back up to ``max_chars``.

Each `Step` keeps its character offsets into the original text.

Bounds on hostile text (all linear in the length of the text): math delimiters are paired in one
pass (an unclosed ``\\[`` or ``$$`` costs nothing per later delimiter); the sentence splitter sees
prose only, with math masked and every run of more than `LONG_WORD` non-space characters replaced by
same-length filler (spaCy's tokenizer, whose splits it follows, is superlinear on such runs); a
sentence still longer than ``max_chars`` is cut at a space (or hard) into ``max_chars`` pieces,
and the pieces of one sentence past the first ``UNREAD_SENTENCE`` are marked `cut` (the flow
analysis does not read them as statements);
and at most ``max_steps`` steps are returned, the last one carrying a `note` that the rest of the
text was not analysed (the only case that sets a note; `solution.caps_hit` reads it as the cap).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mathlens.analyze.flow.sentences import sentence_spans

MAX_STEP_CHARS = 600
#: At most this many steps are analysed in one text.
MAX_STEPS = 300
#: Pieces of one over-long sentence read as statements; later pieces are not (`Step.cut`).
UNREAD_SENTENCE = 4
#: Runs of non-space characters longer than this are filler to the sentence splitter.
LONG_WORD = 64

_DISPLAY_OPEN = re.compile(r"\$\$|\\\[|\\begin\{(\w+\*?)\}")
_INLINE_DOLLAR = re.compile(r"(?<![\\$])\$[^$\n]+?\$")
_INLINE_OPEN = re.compile(r"\\\(")
_LONG_RUN = re.compile(rf"\S{{{LONG_WORD + 1},}}")
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
#: a "Step N:" marker inside a line, after a sentence or math ends (masked math is D or M filler)
_INLINE_STEP = re.compile(r"(?<=[.!?DM])[ \t]+(?=Step\s*\d{1,2}\s*[:.)])")
#: where a sentence may end inside a block: end punctuation, closing marks, then a space
_BOUNDARY = re.compile(r"[.!?][)\]\"'»”]*\s")


@dataclass(frozen=True)
class Step:
    """One reasoning step: ``source[start:end]`` (stripped) is `text`; `label` is its marker
    (``"Step 2"``, ``"(a)"``) when it had one."""

    index: int
    text: str
    start: int
    end: int
    label: str | None = None
    note: str | None = None
    #: a piece of one over-long sentence (or line) past its first `UNREAD_SENTENCE`: not a statement
    cut: bool = False


def _display_close(m: re.Match[str]) -> str:
    token = m.group(0)
    return "$$" if token == "$$" else "\\]" if token == "\\[" else f"\\end{{{m.group(1)}}}"


def paired_regions(text: str, opener: re.Pattern[str], closer: Callable[[re.Match[str]], str]) -> list[tuple[int, int]]:
    """Non-overlapping (start, end) regions from an opener to the nearest closer after at least
    one character, left to right: what ``open.+?close`` finds, in linear time (a closer that is
    not found once is not searched for again)."""
    regions: list[tuple[int, int]] = []
    cursor = 0
    missing: set[str] = set()
    for m in opener.finditer(text):
        if m.start() < cursor:
            continue
        close = closer(m)
        if close in missing:
            continue
        j = text.find(close, m.end() + 1)
        if j < 0:
            missing.add(close)
            continue
        cursor = j + len(close)
        regions.append((m.start(), cursor))
    return regions


def _mask(text: str) -> str:
    """The text with every math region replaced by same-length filler (newlines kept)."""
    chars = list(text)
    display = paired_regions(text, _DISPLAY_OPEN, _display_close)
    inline = [(m.start(), m.end()) for m in _INLINE_DOLLAR.finditer(text)]
    inline += paired_regions(text, _INLINE_OPEN, lambda m: "\\)")
    for regions, fill in ((display, "D"), (inline, "M")):
        for start, end in regions:
            for i in range(start, end):
                if chars[i] != "\n" or fill == "M":
                    chars[i] = fill
            # Display math keeps its line breaks so that rule 4 can see it as its own line.
    return "".join(chars)


def _lines(masked: str) -> list[tuple[int, int]]:
    """Spans of the lines, a line also ending before an inline step marker (rule 3)."""
    spans = []
    pos = 0
    for line in masked.split("\n"):
        start = pos
        for m in _INLINE_STEP.finditer(line):
            spans.append((start, pos + m.start()))
            start = pos + m.end()
        spans.append((start, pos + len(line)))
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


def _prose(block: str) -> str:
    """A block as the sentence splitter may see it: long runs become filler (end punctuation kept)."""
    def fill(m: re.Match[str]) -> str:
        run = m.group(0)
        tail = run[-1] if run[-1] in ".!?" else "w"
        return "w" * (len(run) - 1) + tail
    return _LONG_RUN.sub(fill, block)


def _cut(text: str, a: int, b: int, max_chars: int) -> list[tuple[int, int, bool]]:
    """Pieces of at most `max_chars`, cut at the last space before the limit when there is one;
    each says whether it was cut (False when the text fitted whole)."""
    out: list[tuple[int, int, bool]] = []
    # A long sentence of a real solution (a derivation in one paragraph) is read in pieces; past
    # `UNREAD_SENTENCE` pieces it is no prose or math anyone writes (20,000 nested brackets, a
    # million digits, one fraction repeated 3,000 times), and the rest is not read as statements.
    while b - a > max_chars:
        cut = text.rfind(" ", a + max_chars // 2, a + max_chars)
        cut = cut + 1 if cut > a else a + max_chars
        out.append((a, cut, len(out) >= UNREAD_SENTENCE))
        a = cut
    out.append((a, b, len(out) >= UNREAD_SENTENCE))
    return out


def _sentences(masked: str, start: int, end: int, max_chars: int) -> list[tuple[int, int, bool]]:
    """Rule 5: split one long block into groups of sentences of at most `max_chars` (a sentence
    longer than that is cut into pieces, each marked as cut)."""
    prose = _prose(masked[start:end])
    # a block in which no sentence can end is one piece
    pieces = [(start + a, start + b) for a, b in sentence_spans(prose)] if _BOUNDARY.search(prose) else [(start, end)]
    groups: list[tuple[int, int, bool]] = []
    for a, b in pieces:
        if groups and not groups[-1][2] and (b - groups[-1][0]) <= max_chars:
            groups[-1] = (groups[-1][0], b, False)
        else:
            groups.extend(_cut(masked, a, b, max_chars))
    return groups


_FENCE_LINE = re.compile(r"(?m)^[ \t]*(?:`{3,}|~{3,})")
_LONE_FENCE = re.compile(r"(?:`{3,}|~{3,})[\w+.-]*")


def _join_fences(text: str, raw: list[tuple[int, int, str | None, bool]]) -> list[tuple[int, int, str | None, bool]]:
    """`raw` with each chunk that is a code fence alone (```` ```python ````, ```` ``` ````) joined to
    the chunk it belongs with: an opening fence to the chunk after it, a closing one to the chunk
    before it. A fence line is layout, not a step of the reasoning."""
    out: list[tuple[int, int, str | None, bool]] = []
    inside = False
    carry: int | None = None  # the start of an opening fence waiting for its first chunk
    for start, end, label, cut in raw:
        body = text[start:end].strip()
        head = body.split("\n", 1)[0].strip()
        if inside and carry is None and out and head != body and _LONE_FENCE.fullmatch(head) and not head.strip("`~"):
            # a closing fence that a line of words continues ("```\nwhich gives 51."): the fence closes
            # the block's last chunk, and the words are a chunk of their own
            fence_end = text.index(head, start) + len(head)
            a, _, lb, c = out[-1]
            out[-1] = (a, fence_end, lb, c)
            inside = False
            start = fence_end + len(text[fence_end:end]) - len(text[fence_end:end].lstrip())
            body = text[start:end].strip()
        if _LONE_FENCE.fullmatch(body):
            if not inside and body.strip("`~"):  # ```python, ```output: opens a block
                inside, carry = True, start if carry is None else carry
                continue
            if inside and out and carry is None:  # closes the block: goes with the chunk before it
                inside = False
                a, _, lb, c = out[-1]
                out[-1] = (a, end, lb, c)
                continue
            inside = not inside
            if inside:  # a bare ``` opening a block
                carry = start if carry is None else carry
                continue
        else:
            inside ^= len(_FENCE_LINE.findall(text, start, end)) % 2 == 1
        if carry is not None:
            start, carry = carry, None
        out.append((start, end, label, cut))
    if carry is not None:  # an opening fence with nothing after it
        out.append((carry, len(text.rstrip()), None, False))
    return out


def segment_steps(text: str, max_chars: int = MAX_STEP_CHARS, max_steps: int = MAX_STEPS) -> list[Step]:
    """Split `text` into reasoning steps (see the module notes for the rules and bounds)."""
    if not text or not text.strip():
        return []
    masked = _mask(text)
    raw: list[tuple[int, int, str | None, bool]] = []
    for start, end, label in _blocks(text, masked):
        if end - start > max_chars:
            for i, (a, b, cut) in enumerate(_sentences(masked, start, end, max_chars)):
                raw.append((a, b, label if i == 0 else None, cut))
        else:
            raw.append((start, end, label, False))
    steps: list[Step] = []
    for start, end, label, cut in _join_fences(text, raw):
        chunk = text[start:end]
        lead = len(chunk) - len(chunk.lstrip())
        body = chunk.strip()
        if not body:
            continue
        if len(steps) == max_steps:
            last = steps[-1]
            steps[-1] = Step(last.index, last.text, last.start, last.end, last.label,
                             note=f"text after step {max_steps} was not analysed (at most {max_steps} steps are)")
            break
        steps.append(Step(len(steps), body, start + lead, start + lead + len(body), label, cut=cut))
    return steps
