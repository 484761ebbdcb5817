"""Find the final answer of a response, and of each lettered part (a), (b)...

Only the response's own turn is read: text after a chat-template marker, a new speaker or the
next question of a few-shot prompt is not its answer (`turns`). The search (`locate`) tries, in
order, the places where a solution states its result, and keeps the first that yields something:
the last `\\boxed{...}` (with the boxes just before it that list more answers), an answer line
(`Final answer:`, `Answer:`, GSM8K's `A:` and `####`), "the answer is ...", a closing
"therefore / thus / hence / so" sentence, a response that is one line of math, an answer in words
closing the response, the last equation, the last "... is <answer>" statement, the math that
closes the last sentence, a last sentence "<words> <math>", a short one-line response, the last
number. Sentences and equations are reduced to their answer by `statements` (a relation or an
equation that is the answer stays whole; prose before and after it goes). The result says where
it was read (`FinalAnswer.span`) and why (`how`). Parts are read from their lettered segments, from
an answer line that names them (`(a) 2, (b) 5`), or, with no letters at all, from an answer line
or boxes that list one answer per part in order (`_ordered_parts`).

In a response the token cap cut (`cut_short`), only an answer it marks as such counts (a closed
box, an answer line or "the answer is" that the cut did not run into): the other readings come from
wherever the work happened to stop, an intermediate result rather than an answer.

The text found is cleaned (markdown emphasis, `$`/`\\(` delimiters, trailing punctuation, leading
"approximately") but not interpreted: deciding what it means is `equivalence`'s job.

    >>> extract_final_answer("So 3 + 4 = 7.\\nFinal answer: 7").text
    '7'
    >>> extract_final_answer("We get $\\\\boxed{\\\\frac{1}{2}}$.").how
    'boxed'
"""

from __future__ import annotations

import itertools
import re

from pydantic import BaseModel, ConfigDict

from mathlens.analyze.readers.inline import closing_segments, segments
from mathlens.analyze.readers.locate import (
    ANSWER_LINE,
    STATED,
    How,
    Located,
    answer_line,
    boxed_spans,
    final_boxes,
    locate,
    prose_words,
)
from mathlens.analyze.readers.statements import (
    LEADING_SPACE,
    MATHY,
    reduce_equation_named,
    split_equals,
    split_top_level,
)
from mathlens.analyze.readers.turns import own_turn_end, visible_text
from mathlens.items.schema import Question

__all__ = ["MARKED", "STATED", "AnswerSpan", "FinalAnswer", "How", "PartAnswer", "boxed_spans", "choice_label",
           "clean_answer", "cut_short", "extract_final_answer", "final_boxes", "last_boxed", "split_parts"]

#: a text ending in a mark that closes what it says: a full stop, a bracket, math delimiters, bold
_CLOSED = re.compile(r"(?:[.!)\]}>$]|\\[)\]])[*_`]*$|\*\*$|__$")
#: the readings that mark an answer as one: a box, an answer line, "the answer is"
MARKED: frozenset[str] = frozenset({"boxed", "answer_line", "answer_is"})

MAX_RESPONSE_CHARS = 200_000  # longer responses are cut: only their end can hold the answer
#: the longest answer text kept (a longer one is not an answer; it is refused as too long)
MAX_ANSWER_TEXT = 2_000
#: the longest span text stored (the offsets always cover the whole span)
MAX_SPAN_CHARS = 500
#: how much of the text before a next-question header is searched for an answer
_HEADER_LOOKBACK = 20_000

_LEADING_FILLER = re.compile(
    r"(?i)^(?:(?:is|are|was|equals|=|:|approximately|approx\.?|about|roughly|≈|~)\s*)+"
)
_LABEL_PREFIX = re.compile(r"^[A-Za-z][A-Za-z ]{2,30}:\s+(?=\S)")  # "Limit: 3", "Total cost: 12"
#: "(a)", "a)", "a.", "Part a:", "**(b)**", and in words "For part (a),", "For part b," (a bare "a," is not one)
_PART_MARKER = (r"(?:\*\*|__)?\s*(?:(?:for|in)\s+(?=part\b|\())?(?:part\s*)?"
                r"(?:\(\s*(?P<l1>{labels})\s*\)|(?P<l2>{labels})\s*[).:]|(?<=part )(?P<l3>{labels})\s*,)(?:\*\*|__)?")
_EMPHASIS = re.compile(r"\*\*|__|`")
_FACTORIAL_END = re.compile(r"[\d)}]!$")
_LETTER_IN_BRACKETS = re.compile(r"\(([A-Za-z])\)")
# "150 minutes (2.5 hours)", "96 (the width 8 was intermediate)": a remark after the answer
_REMARK = re.compile(r"(?<=\S)\s+\((?P<c>(?:or\s|i\.e\.|=)[^()]*|[^()]*(?:[A-Za-z]{3,}|≈|\\approx)[^()]*)\)\s*$")
_RESTATEMENT = re.compile(r"^(?:or\s|i\.e\.|=)")  # `3/8 (or 0.375)`: the same value again
_APPROX_REMARK = re.compile(r"^\s*(?:≈|\\approx|approx\.?|approximately|about|roughly|~)\s*")


class AnswerSpan(BaseModel):
    """Where the answer was read: offsets `start`/`end` into the response, the text there (its
    first `MAX_SPAN_CHARS` characters) and why it was read (`how`)."""

    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    text: str
    how: How

    def excerpt(self, response: str, around: int = 60) -> tuple[str, str, str]:
        """`(before, span, after)` of `response`: the span with up to `around` characters of
        context on each side, cut at line breaks (for showing where the answer was read)."""
        before = response[max(0, self.start - around):self.start].rsplit("\n", 1)[-1]
        after = response[self.end:self.end + around].split("\n", 1)[0]
        shown = response[self.start:self.end]
        if len(shown) > MAX_SPAN_CHARS:
            shown = shown[:MAX_SPAN_CHARS] + " …"
        return ("…" if self.start - len(before) > 0 else "") + before, shown, \
            after + ("…" if self.end + len(after) < len(response) else "")


class PartAnswer(BaseModel):
    """The answer found for one lettered part."""

    model_config = ConfigDict(frozen=True)

    label: str
    text: str | None
    how: How
    span: AnswerSpan | None = None


class FinalAnswer(BaseModel):
    """What a response gives as its answer.

    `text` is the answer of the whole response (None when nothing was found), `raw` the text it
    was cleaned from, `span` where in the response it was read and why, `subject` the left side
    the response gave it (`\\cos(x)` in `\\cos(x) = \\frac{42}{59}`) when only the value was kept,
    `parts` one entry per lettered part found, `choice` the option label the response names when
    the question is multiple choice.
    """

    model_config = ConfigDict(frozen=True)

    text: str | None
    how: How
    raw: str | None = None
    span: AnswerSpan | None = None
    subject: str | None = None
    parts: list[PartAnswer] = []
    choice: str | None = None

    def part(self, label: str) -> PartAnswer | None:
        """The answer of part `label`, if one was found."""
        return next((p for p in self.parts if p.label == label), None)


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (balanced braces), or None.

    >>> last_boxed(r"x = \\boxed{\\frac{a}{b}} and \\boxed{2}")
    '2'
    """
    spans = boxed_spans(text)
    return spans[-1][2] if spans else None


# -- cleaning ----------------------------------------------------------------------------------
def clean_answer(text: str) -> str:
    """Strip presentation from an answer: emphasis, math delimiters, end punctuation, fillers.

    >>> clean_answer("**$x = 3$.**")
    'x = 3'
    """
    s = text.strip()
    inner = final_boxes(s)
    if inner is not None:
        s = inner
    s = _EMPHASIS.sub("", s).strip()
    for _ in range(3):
        before = s
        s = s.strip().rstrip(".,;:").strip()
        if s.endswith("!") and not _FACTORIAL_END.search(s):
            s = s.rstrip("!").strip()  # an exclamation; `5!` and `(n+1)!` are factorials
        for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
            inner = s[len(left) : len(s) - len(right)]
            # only partners go: in `$a$ and $b$` the first `$` closes after `a`
            if (s.startswith(left) and s.endswith(right) and len(s) > len(left) + len(right) - 1
                    and left not in inner and right not in inner):
                s = inner
        if s.count("$") == 1 and s.startswith("$") is False and s.endswith("$"):
            s = s[:-1]
        s = _LEADING_FILLER.sub("", s)
        s = _LABEL_PREFIX.sub("", s)
        if s == before:
            break
    s = _without_remark(s.strip())
    letter = _LETTER_IN_BRACKETS.fullmatch(s)
    return letter.group(1) if letter else s


def _without_remark(s: str) -> str:
    """`150 minutes (2.5 hours)` -> `150 minutes`; `3/8 (or 0.375)` -> `3/8`; `1/3 (≈ 0.333)` ->
    `1/3 \\approx 0.333`: a parenthesised remark or restatement after an answer goes, an
    approximation in brackets is kept as one."""
    m = _REMARK.search(s)
    if m is None or not re.search(r"[\d\\]", s[: m.start()]):
        return s
    approx = _APPROX_REMARK.match(m.group("c"))
    if approx is None and prose_words(m.group("c")) == 0 and not _RESTATEMENT.match(m.group("c")):
        return s  # `(3, \infty)`, `(x + 1)`: math, not a remark
    head = s[: m.start()].rstrip()
    return f"{head} \\approx {m.group('c')[approx.end():].strip()}" if approx else head


# -- parts and choices -------------------------------------------------------------------------
def _part_regex(labels: list[str]) -> re.Pattern[str]:
    alt = "|".join(re.escape(lb) for lb in sorted(labels, key=len, reverse=True))
    return re.compile(r"(?im)^[ \t>#*-]*" + _PART_MARKER.format(labels=alt))


def split_parts(text: str, labels: list[str] | None = None) -> list[tuple[str, str]]:
    """Split a response at its part markers: `[(label, segment), ...]` in order of appearance.

    With `labels` (the question's parts) only those markers count; without, markers a, b, c...
    count when at least (a) and (b) appear. Text before the first marker is dropped.
    """
    return [(label, text[start:end]) for label, start, end in _part_spans(text, labels)]


def _part_spans(text: str, labels: list[str] | None = None) -> list[tuple[str, int, int]]:
    """The parts of `text` as `(label, start, end)`; see `split_parts`.

    With `labels` (the question's parts) only those markers count; without, markers a, b, c...
    count when at least (a) and (b) appear. Text before the first marker is dropped.
    """
    wanted = labels or list("abcdefgh")
    pattern = _part_regex(wanted)
    marks: list[tuple[int, int, str]] = []
    for m in pattern.finditer(text):
        label = (m.group("l1") or m.group("l2") or m.group("l3")).lower()
        if any(label == seen for _, _, seen in marks):
            continue  # a repeated marker (say, in a closing summary) is not a new part
        marks.append((m.start(), m.end(), label))
    marks = _inline_marks(text, marks, wanted)
    if labels is None and not {"a", "b"} <= {lb for _, _, lb in marks}:
        return []
    out = []
    for i, (_, end, label) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        out.append((label, end, stop))
    return out


def _inline_marks(text: str, marks: list[tuple[int, int, str]], wanted: list[str]) -> list[tuple[int, int, str]]:
    """`marks` with the later parts named inside a part's own line (`(a) 5, (b) 12`): a bracketed
    label that comes after the line's own in the order asked for and starts no line of its own (a
    part that points ahead, "(a) Using (b), ...", is answered on its own line)."""
    seen = {label for _, _, label in marks}
    order = {label: i for i, label in enumerate(wanted)}
    alt = "|".join(re.escape(lb) for lb in sorted(wanted, key=len, reverse=True))
    found = []
    for _, end, label in marks:
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        last = order.get(label, len(wanted))
        for m in re.finditer(r"(?i)\(\s*(" + alt + r")\s*\)", text[end:line_end]):
            inner = m.group(1).lower()
            if inner in seen or order.get(inner, -1) <= last:
                continue
            seen.add(inner)
            last = order[inner]
            found.append((end + m.start(), end + m.end(), inner))
    return sorted([*marks, *found]) if found else marks


_ENV_MARK = re.compile(r"\\(?:begin|end)\{[A-Za-z*]+\}")
_ROW_TEXT = re.compile(r"\\(?:text|textbf|mathrm)\{([^{}]*)\}")


def _rows(text: str) -> str:
    """The rows of an aligned block as lines, with their words unwrapped: `&\\text{(a) The
    radius is: } 2 \\\\` -> `(a) The radius is: 2`."""
    if "\\\\" not in text or not ("&" in text or "\\begin{" in text):
        return text
    return _ROW_TEXT.sub(r"\1", _ENV_MARK.sub("", text)).replace("\\\\", "\n").replace("&", "")


#: the word that joins one part to the next ("(a) 7 and (b) 9")
_JOINING_WORD = re.compile(r"(?i)[\s,]+(?:and|or)$")


def _inline_parts(line: str, labels: list[str] | None) -> list[tuple[str, str]]:
    """Parts named inside one answer line, or in the rows of one box: `(a) 3, (b) 5` ->
    `[("a", "3"), ("b", "5")]`; a part's words before its value go (`(b) The centre is: (0, 2)`)."""
    line = _rows(line)
    wanted = labels or list("abcdefgh")
    alt = "|".join(re.escape(lb) for lb in sorted(wanted, key=len, reverse=True))
    marks = list(re.finditer(r"(?i)\(\s*(" + alt + r")\s*\)", line))
    if len(marks) < 2:
        return []
    out = []
    for i, m in enumerate(marks):
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(line)
        said = _JOINING_WORD.sub("", line[m.end():stop].strip().rstrip(",;").strip())
        out.append((m.group(1).lower(), answer_line(said).text if said and prose_words(said) >= 2 else said))
    return out


_AND = re.compile(r"(?i)\s+and\s+|\\text\{\s*and\s*\}")
_THOUSANDS = re.compile(r"\d{3}(?:\.\d+)?")


def _listed(text: str, values: bool = False) -> list[tuple[int, int, str]]:
    """The answers an answer line lists, with their offsets: the math segments of the run that
    closes it (`$a$ and $b$`), or, in plain text, the pieces between top-level ";", "," and "and"
    when every piece is an equation (`f'(x) = 2x, f'(3) = 6`). With `values` (the content of one
    box) plain values count too (`\\boxed{4, 5, e^2}`), but not digits grouped by thousands."""
    run = closing_segments(text)
    if run:
        return run
    if segments(text):
        return []  # math segments that do not close the line: not a plain list
    out: list[tuple[int, int, str]] = []
    at = 0
    for piece in split_top_level(text, ",;"):
        for item in _AND.split(piece):
            stripped = LEADING_SPACE.sub("", item).rstrip().rstrip(".")
            found = text.find(stripped, at) if stripped else -1
            value = values and bool(MATHY.search(stripped)) and not (out and _THOUSANDS.fullmatch(stripped)
                                                                     and out[-1][2][-1:].isdigit())
            if found < 0 or (len(split_equals(stripped)) < 2 and not value):
                return []
            out.append((found, found + len(stripped), stripped))
            at = found + len(stripped)
    return out


def _listed_where(text: str, found: Located) -> list[tuple[int, int, str]]:
    """The answers listed where `found` was read (offsets into `text`): the boxes that close the
    response when there are several; what one box lists (`\\boxed{u = 4,\\ v = -1}`), else every
    box of the response, one a part ("The maximum is: \\boxed{2} ... the minimum is: \\boxed{-2}");
    what the answer line lists (without its "Final answer:")."""
    if found.how == "boxed":
        boxes = [(found.start + end - 1 - len(c), found.start + end - 1, c)
                 for _, end, c in boxed_spans(text[found.start:found.end])]
        if len(boxes) != 1:
            return [(start, end, c.strip()) for start, end, c in boxes]
        start, end = boxes[0][0], boxes[0][1]
        listed = [(start + a, start + b, item) for a, b, item in _listed(text[start:end], values=True)]
        return listed if len(listed) >= 2 else [(e - 1 - len(c), e - 1, c.strip()) for _, e, c in boxed_spans(text)]
    start = text.rfind("\n", 0, found.start) + 1
    end = text.find("\n", found.end)
    end = len(text) if end < 0 else end
    marker = ANSWER_LINE.match(text, start, end)
    start = marker.start("rest") if marker else start
    return [(start + a, start + b, item) for a, b, item in _listed(text[start:end])]


#: a heading that opens the closing answers ("### Final answer", "**Final answers:**")
_ANSWER_HEADING = re.compile(r"(?im)^[ \t#*_>-]*(?:final\s+answers?|answers?)[ \t*_:]*$")
#: the answer section's heading is looked for in the last this-many characters
SECTION_WINDOW = 20_000
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_LIST_ITEM = re.compile(r"(?m)^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+")


def _section_listed(text: str, count: int) -> list[tuple[int, int, str]]:
    """The answers of a closing answer section, one a part: after the last "Final answer" heading,
    `count` paragraphs, or `count` list items, each read as an answer of its own."""
    headings = list(_ANSWER_HEADING.finditer(text, max(0, len(text) - SECTION_WINDOW)))
    if not headings:
        return []
    at = headings[-1].end()
    section = text[at:]
    pieces = [(m.start(), m.end()) for m in _LIST_ITEM.finditer(section)]
    chunks = ([(a, pieces[i + 1][0] if i + 1 < len(pieces) else len(section)) for i, (a, _) in enumerate(pieces)]
              if len(pieces) == count else [])
    if not chunks:
        breaks = [0, *(m.end() for m in _PARAGRAPH_BREAK.finditer(section)), len(section)]
        chunks = [(a, b) for a, b in itertools.pairwise(breaks) if section[a:b].strip()]
    if len(chunks) != count:
        return []
    out = []
    for a, b in chunks:
        read = _one_answer(section[a:b])
        if read is None:
            return []
        out.append((at + a + read[0], at + a + read[1], read[2]))
    return out


_LAST_DISPLAY = re.compile(r"(?:\$\$|\\\[)\s*(?P<m>(?:(?!\$\$|\\\[).)+?)\s*(?:\$\$|\\\])\s*[.,;]?\s*$", re.S)


def _one_answer(text: str) -> tuple[int, int, str] | None:
    """The answer one item of an answer section states: the display math that closes it ("The
    critical numbers are:\\n\\[ x = 1, x = 3 \\]"), else its words read as an answer line
    ("- Local maximum at (1, 6)"); None when it holds no math."""
    display = _LAST_DISPLAY.search(text)
    if display is not None:
        return display.start("m"), display.end("m"), reduce_equation_named(display.group("m")).text
    bullet = _LIST_ITEM.match(text)
    start = bullet.end() if bullet else len(text) - len(text.lstrip())
    line = text[start:].strip()
    if "\n" in line or not MATHY.search(line):
        return None
    said = answer_line(_LABEL_PREFIX.sub("", line)).text
    return (start, start + len(line), said) if said else None


def _ordered_parts(listed: list[tuple[int, int, str]], labels: list[str]) -> list[tuple[str, int, int, str]]:
    """Answers listed in the order of the question's parts, with no part letters: "Final answer:
    $f'(x) = 2x$ and $f'(3) = 6$" for parts (a) and (b), as `(label, start, end, answer)`. Only a
    list of exactly as many answers as there are parts counts, and equations in it must name
    different things: `x = 1, x = -1` lists two solutions of one part."""
    if len(listed) != len(labels) or len(labels) < 2:
        return []
    sides = [split_equals(item) for _, _, item in listed]
    named = [eq[0].strip() for eq in sides if len(eq) >= 2]
    if len(set(named)) < len(named):
        return []
    return [(label, start, end, reduce_equation_named(item).text)
            for label, (start, end, item) in zip(labels, listed, strict=True)]


def choice_label(answer: str | None, choices: dict[str, str]) -> str | None:
    """The option label an answer names, if it names one: "D", "(D)", "D. 6kg", "option D".

    >>> choice_label("(B) 12 apples", {"A": "10", "B": "12"})
    'B'
    >>> choice_label("12 apples", {"A": "10", "B": "12"}) is None
    True
    """
    if not answer:
        return None
    labels = {k.strip().lower(): k for k in choices}
    s = answer.strip()
    m = re.match(r"(?i)^(?:(?:option|choice|answer)\s+)?\(?\s*([A-Za-z0-9]{1,3})\s*\)?(?=$|[\s.):,-])", s)
    if m and m.group(1).lower() in labels:
        label = m.group(1)
        rest = s[m.end():].strip(" .):,-")
        # A bare lowercase "a" opening a sentence ("a total of 6kg") is an article, not a label.
        if not rest or label.isupper() or m.group(0).startswith(("(", "option", "choice", "Option", "Choice")):
            return labels[label.lower()]
    m = re.search(r"(?i)\b(?:option|choice)\s*\(?([A-Za-z0-9]{1,3})\)?\b", s)
    if m and m.group(1).lower() in labels:
        return labels[m.group(1).lower()]
    return None


# -- the public function -----------------------------------------------------------------------
def _span(text: str, found: Located, offset: int, answer: str | None = None) -> AnswerSpan | None:
    """Where `found` was read, narrowed to the cleaned `answer` when it appears there as written
    (`\\frac{5}{2}` rather than `$\\frac{5}{2}$`); a box is shown whole."""
    if found.raw is None or found.end <= found.start:
        return None
    if answer and found.how != "boxed":
        at = text.rfind(answer, found.start, found.end)
        if at >= 0:
            found = Located(found.raw, found.how, at, at + len(answer), found.subject)
    return AnswerSpan(start=offset + found.start, end=offset + found.end,
                      text=text[found.start:min(found.end, found.start + MAX_SPAN_CHARS)], how=found.how)


def _stated(prefix: str) -> bool:
    """Does the text before a next-question header already state an answer?"""
    return locate(prefix[-_HEADER_LOOKBACK:], allow_whole=False).how in STATED


def extract_final_answer(text: str, question: Question | None = None) -> FinalAnswer:
    """Find the final answer of `text`, of each of its parts, and its option label if any.

    Only the response's own turn is read (`turns.own_turn_end`: not what follows a chat-template
    marker, a new speaker or the next question), with invisible characters blanked. Spans are
    offsets into `text` as given.
    """
    text = text or ""
    own = visible_text(text)
    own = own[: own_turn_end(own, _stated)]
    offset = max(0, len(own) - MAX_RESPONSE_CHARS)  # only the end of a long turn can hold its answer
    own = own[offset:]
    found = locate(own)
    raw, how = found.raw, found.how
    answer = clean_answer(raw) if raw is not None else None
    if answer is not None and len(answer) > MAX_ANSWER_TEXT:
        answer = answer[:MAX_ANSWER_TEXT] + "…"  # kept short; the comparison refuses it as too long
    labels = [p.label.lower() for p in question.parts] if question and question.parts else None
    parts: list[PartAnswer] = []
    if labels is not None or question is None:
        inline = _inline_parts(raw, labels) if raw and how in ("answer_line", "boxed", "answer_is") else []
        if not inline and raw and labels and how in ("therefore", "whole", "last_statement") \
                and not _part_spans(own, labels):
            # the question's parts named in the closing sentence or line ("So (a) 5 and (b) 12."), when
            # no line of the response starts a part; each must say something
            inline = [(lb, t) for lb, t in _inline_parts(raw, labels) if t]
            inline = inline if len(inline) >= 2 else []
        if inline:
            span = _span(own, found, offset)
            parts = [PartAnswer(label=lb, text=clean_answer(t) or None, how=how, span=span) for lb, t in inline]
        else:
            spans = _part_spans(own, labels)
            listed = _listed_where(own, found) if not spans and labels and how in ("answer_line", "boxed") else []
            listed_how: How = how
            if not spans and labels and len(listed) != len(labels):
                # an answer section under a "Final answer" heading marks its answers as an answer line does
                listed, listed_how = _section_listed(own, len(labels)), "answer_line"
            for label, start, end, item in _ordered_parts(listed, labels or []):
                span = AnswerSpan(start=offset + start, end=offset + end, text=own[start:end][:MAX_SPAN_CHARS],
                                  how=listed_how)
                parts.append(PartAnswer(label=label, text=clean_answer(item) or None, how=listed_how, span=span))
            for label, start, end in spans:
                segment = own[start:end]
                joined = _JOINING_WORD.search(segment.rstrip())
                segment = segment[:joined.start()] if joined else segment  # "(a) 5 and (b) 12"
                lead = len(segment) - len(segment.lstrip(" :.-*\t\n"))
                seg = locate(segment.strip(" :.-*\t\n"))
                cleaned = clean_answer(seg.raw) if seg.raw else None
                parts.append(PartAnswer(label=label, text=cleaned or None, how=seg.how,
                                        span=_span(segment[lead:], seg, offset + start + lead, cleaned)))
    choice = None
    if question is not None and question.choices:
        choice = choice_label(answer, question.choices)
        if choice is None:
            said = re.findall(r"(?i)\b(?:answer|option|choice)\s+(?:is\s+)?\(?([A-Za-z])\)?(?=[\s.,)]|$)", own)
            known = {k.lower(): k for k in question.choices}
            picked = [known[s.lower()] for s in said if s.lower() in known]
            choice = picked[-1] if picked else None
    return FinalAnswer(text=answer or None, how=how if answer else "none", raw=raw,
                       span=_span(own, found, offset, answer) if answer else None,
                       subject=found.subject if answer else None, parts=parts, choice=choice)


def cut_short(found: FinalAnswer | PartAnswer, text: str) -> str | None:
    """Why `found`, read from `text`, a response the token cap cut, is not an answer the response
    states; None when it is one (a box, or an answer line or "the answer is" on a line the cut did
    not reach). `found` is the whole answer, or the answer of the part the cut ran into (the last
    part written).

    The other readings (a closing "therefore", the last equation, statement or number) are taken
    from wherever the text stops, and the cut chose that place: they are where the work stopped. An
    answer line with no line break after it is the line the cut ran into ("Final answer: 1" of 120)
    unless it ends in a closing mark (a full stop, a closing bracket or math delimiter).

    >>> cut_short(extract_final_answer("x = 4\\ny = x + 3 = 7"), "x = 4\\ny = x + 3 = 7")
    'the token cap cut the response before it stated a final answer; its last equation is where the work stopped'
    >>> cut_short(extract_final_answer("Final answer: 7\\nCheck: 3 + 4"), "Final answer: 7\\nCheck: 3 + 4") is None
    True
    """
    if found.text is None or found.span is None:
        return "the token cap cut the response before it stated a final answer"
    if found.how not in MARKED:
        what = {"therefore": 'closing "so ..." sentence', "whole": "one line"}.get(found.how,
                                                                                found.how.replace("_", " "))
        return f"the token cap cut the response before it stated a final answer; its {what} is where the work stopped"
    if found.how != "boxed" and "\n" not in text[found.span.end:] and not _CLOSED.search(text.rstrip()):
        return "the token cap cut the response in its answer line"
    return None
