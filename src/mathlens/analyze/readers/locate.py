"""Where a response states its final answer: the search behind `answers.extract_final_answer`.

`locate(text)` tries, in order, the places where a solution states its result and keeps the first
that yields something (the table in docs/grading.md): the last `\\boxed{...}` (with the boxes just
before it that list more answers), an answer line, "the answer is ...", the closing display that
restates a "therefore" sentence's value in the notation asked for, a closing "therefore" sentence,
a response that is one line of math, an answer in words closing the response, the last equation,
the last "... is <answer>" statement, the math that closes the last sentence, a last sentence
"<words> <math>", a short one-line response, the last number.

Each step also says where it read: `Located.start`/`end` delimit the stretch of `text` the answer
was taken from (the boxes, the text after "Final answer:", the sentence...), narrowed to the
answer itself when it appears there as written. A "therefore" sentence or an equation is passed
over when a later sentence states a value ("Their product is $6$."), and asides in parentheses
are never that later sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from mathlens.analyze.readers.durations import DURATION
from mathlens.analyze.readers.inline import closing_run
from mathlens.analyze.readers.normalize import answer_word
from mathlens.analyze.readers.setwords import set_phrase
from mathlens.analyze.readers.statements import (
    LINK,
    MATHY,
    Reduced,
    answerish,
    cut_trailing_prose,
    drop_leading_clause,
    last_quantity,
    leading_quantity,
    lhs_kind,
    reduce_equation_named,
    reduce_statement_named,
    split_equals,
    strip_leading_prose,
)

How = Literal["boxed", "answer_line", "answer_is", "therefore", "last_equation", "last_statement",
              "last_number", "whole", "none"]
#: the ways of stating an answer (the others are guesses from the shape of the text)
STATED: frozenset[str] = frozenset({"boxed", "answer_line", "answer_is", "therefore", "last_equation",
                                    "last_statement"})

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
ANSWER_LINE = re.compile(
    r"(?im)^[ \t>*_#-]*(?:final\s+answers?|answers?|ans\.?|(?:final\s+)?result)[ \t*_]*"
    r"(?:[:：]|[ \t]+[-–—](?=[ \t]))[ \t*_]*(?P<rest>.*)$"
)
_GSM_LINE = re.compile(r"(?m)(?:^[ \t]*A:|####)[ \t]*(?P<rest>.+)$")
# what shows more work after a line: a digit, an equals sign, math delimiters
_MORE_WORK = re.compile(r"[\d=$\\]")
# the rest of the line is taken in a lookahead, so a later "the answer is" on the same line is
# found too ("The answer is 7. Wait, ... So the answer is 8."), and so is "Final answer:" after a
# sentence on its line ("The answer is 10. Final answer: 12"), which the answer line only finds at a
# line's start
ANSWER_IS = re.compile(
    r"(?i)\b(?:(?:the\s+)?(?:final\s+)?answer\s+(?:is|would\s+be|will\s+be)|the\s+(?:final\s+)?answers\s+are"
    r"|(?<=[.!?]\s)final\s+answers?(?=\s*:))"
    r"\s*:?\s*(?=(?P<rest>[^\n]+))"
)
_THEREFORE = re.compile(
    r"(?im)(?:^|(?<=[.!?,;\])$]\s)|(?<=\n))[ \t*]*(?:therefore|thus|hence|so|consequently|in\s+conclusion)\b"
    r"[ \t,:]*(?P<rest>[^\n]+)"
)
NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|-?\.\d+")
_MIXED_NUMBER = re.compile(r"(?<![\d.,/])(-?\d+) (\d+)/(\d+)(?![\d/.])")  # `2 1/2`: two and a half
# `\!` and `\;` are LaTeX spacing (`11,\! 111`), not punctuation
#: a title before a name ("Mr. Ruther") does not end a sentence
_TITLE_WORDS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Jr", "Sr", "Mt", "vs")
_TITLES = "".join(rf"(?<!\b{t})" for t in _TITLE_WORDS)
_SENTENCE_END = re.compile(rf"(?:(?<!\bi\.e)(?<!\be\.g){_TITLES}\.(?=\s|$)|(?<![\d)}}\\])!(?=\s|$)"
                           r"|(?<!\\)[?;](?=\s|$))")
_SHORT_WORDS = re.compile(r"\(?[A-Za-z]\)?|[A-Za-z]+(?:\s[A-Za-z]+)?")
_CLAUSE_BREAK = re.compile(r",\s+")
_TITLES_DOT = "".join(rf"(?<!\b{t}\.)" for t in _TITLE_WORDS)
_SENTENCE_BREAK = re.compile(rf"(?<=[.!?])(?<!\bi\.e\.)(?<!\be\.g\.)(?<!\\!){_TITLES_DOT}\s+")
_STATEMENT_BREAK = re.compile(rf"{_SENTENCE_BREAK.pattern}|\n")  # a sentence break or a line break
# in or after a closing "therefore" sentence, the same value restated in the notation asked for, as
# display math that ends the text: "... greater than or equal to -2. In interval notation, this is
# written as: \\[ [-2, \\infty) \\]". `_restated` finds the closing display first and reads only the
# `RESTATEMENT_LOOKBACK` characters before it for this introduction (naming a notation or a form, or
# "this/which is written as"), so its cost does not grow with the text.
_RESTATEMENT_INTRO = re.compile(
    r"(?is)(?:\bin\s+(?:[\w-]+\s+){0,2}(?:notation|form)\b"
    r"|\b(?:this|that|which|it)\s+(?:is\s+|can\s+be\s+|may\s+be\s+)?(?:written|expressed|given)\b"
    r"|\b(?:written|expressed)\s+as\s+an?\s+\w+)[^.!?:\n]{0,60}:\s*$")
RESTATEMENT_LOOKBACK = 200
_DISPLAY = re.compile(r"\s*(?:\$\$|\\\[)\s*(.+?)\s*(?:\$\$|\\\])", re.S)  # a display block after "Answer:"
# a closing check of the answer, on a line of its own: "Check: 40 - 13 = 27", "**Verification:** ..."
_CHECK = re.compile(r"(?im)^[ \t>*_#-]*(?:let(?:'s|\s+me|\s+us)\s+)?(?:double[- ]?)?"
                    r"(?:check(?:ing)?|verif(?:y|ication|ying)|sanity\s+check)\b[^\n]*:")
# a conclusion after a check ("Checking each case: ... So x = 2."): the check was part of the work
_CONCLUSION = re.compile(r"(?im)^[ \t>*_#-]*(?:so|thus|therefore|hence|the\s+(?:final\s+)?"
                         r"(?:answer|solution|result|value)s?)\b")
_INLINE_PARTS = re.compile(r"\(\s*[a-hA-H]\s*\)")
_ASIDE = re.compile(r"^\s*\(.*\)\s*[.!]?\s*$", re.S)
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z(])")
_MATH_NAME = re.compile(r"(?i)^(?:sin|cos|tan|sec|csc|cot|arc\w+|sinh|cosh|tanh|ln|log|exp|sqrt|lim|pi|inf|"
                        r"infinity|oo|and|or|det|max|min|abs|cup|cap)$")
_FOREIGN = re.compile(r"[^\x00-\x7f±×÷√π∞≤≥≠°·−∇⟨⟩\u0370-\u03ff]")  # other scripts: prose, not math
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\{[A-Za-z*]+\}")
MAX_BOXES = 20
#: the closing sentences are looked for in the last this-many characters
SENTENCE_WINDOW = 20_000
#: what is read of one line or sentence: a longer "answer" is refused as too long anyway
MAX_STATEMENT_CHARS = 4_000


@dataclass(frozen=True)
class Located:
    """An answer found in a text: what was read, how, where (`start`, `end`) and the left side it
    dropped as a mere name (`subject`)."""

    raw: str | None
    how: How
    start: int = 0
    end: int = 0
    subject: str | None = None


def prose_words(s: str) -> int:
    """The number of words of prose in `s` (function names such as `sin` and `and`/`or` excluded)."""
    return sum(1 for w in _PROSE_WORD.findall(s) if not _MATH_NAME.match(w))


# -- boxes ---------------------------------------------------------------------------------------
def _brace_partners(text: str) -> dict[int, int]:
    # One pass pairs every brace with its partner, so many (or nested) boxes stay linear in time.
    closing: dict[int, int] = {}
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            closing[stack.pop()] = i
    return closing


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """Every `\\boxed{...}` of `text`: `(start, end, content)`, in order (an unclosed box is none)."""
    if not _BOX.search(text):
        return []
    closing = _brace_partners(text)
    spans = []
    for m in _BOX.finditer(text):
        end = closing.get(m.end() - 1)
        if end is not None:
            spans.append((m.start(), end + 1, text[m.end() : end]))
    return spans


_BOX_GAP = re.compile(r"(?:\s|\$|,|;|\\[,;: ]|\\quad|\\qquad|\\text\{\s*(?:and|or|,)?\s*\}|\band\b|\bor\b|"
                      r"\\(?:text|mathrm)\{[^{}]*\}\s*=|[A-Za-z](?:_\{?\w+\}?)?\s*=)*")


def final_boxes_at(text: str) -> tuple[str, int, int] | None:
    """The last boxed answer with the boxes just before it that list more answers with it, and
    the span from the first of those boxes to the end of the last."""
    spans = boxed_spans(text)
    if not spans:
        return None
    kept = [spans[-1]]
    for prev in reversed(spans[:-1]):
        gap = text[prev[1] : kept[0][0]]
        if len(gap) > 200 or _BOX_GAP.fullmatch(gap) is None or len(kept) >= MAX_BOXES:
            break
        kept.insert(0, prev)
    contents: list[str] = []
    for _, _, c in kept:
        if c.strip() and c.strip() not in contents:
            contents.append(c.strip())
    return (", ".join(contents) if contents else spans[-1][2]), kept[0][0], kept[-1][1]


def final_boxes(text: str) -> str | None:
    """The last boxed answer, with the boxes just before it that list more answers with it.

    `\\boxed{(2,2)} and \\boxed{(6,2)}` gives `(2,2), (6,2)`; boxes separated by other words
    ("... was wrong; the value is \\boxed{5}") are earlier attempts and only the last counts.
    """
    found = final_boxes_at(text)
    return found[0] if found else None


# -- sentences -----------------------------------------------------------------------------------
def first_sentence(s: str) -> str:
    """`s` up to the end of its first sentence (a decimal point is not an end)."""
    m = _SENTENCE_END.search(s)
    return s[: m.start()] if m else s


def _sentences(text: str, breaks: re.Pattern[str] = _STATEMENT_BREAK) -> list[tuple[int, str]]:
    """The sentences (or lines) of `text` with their offsets, asides in parentheses left out."""
    out, pos = [], 0
    for m in breaks.finditer(text):
        out.append((pos, text[pos : m.start()]))
        pos = m.end()
    out.append((pos, text[pos:]))
    return [(p, s) for p, s in out if s.strip() and not _ASIDE.match(s)]


def _states_value(sentence: str) -> bool:
    """A sentence "<subject> is <math>" that gives a value ("Their product is $6$")."""
    if not LINK.search(sentence) or not MATHY.search(sentence):
        return False
    stated = reduce_statement_named(first_sentence(sentence)).text
    return answerish(stated) and prose_words(stated) <= 2 and bool(MATHY.search(stated))


def _later_statement(text: str, after: int) -> bool:
    """True when a sentence after offset `after` states a value (see `_states_value`)."""
    return any(_states_value(s) for _, s in _sentences(text[after:])[-3:])


def _single_math_line(text: str) -> str | None:
    """A response that is one line of math (no prose) is its own answer, however long."""
    stripped = text.strip()
    if not stripped or "\n" in stripped or len(stripped) > 2000 or _FOREIGN.search(stripped):
        return None
    if len(stripped) <= 40 and not MATHY.search(stripped):
        short = answer_word(stripped) or _SHORT_WORDS.fullmatch(stripped)
        return stripped if short else None
    bare = _ENVIRONMENT.sub(" ", stripped)
    if not (MATHY.search(bare) and prose_words(bare) <= 1):
        return None
    # "When x = 2, y = 7.", "At x = 3, it is 6.": the opening clause sets a condition
    return strip_leading_prose(drop_leading_clause(stripped))


def _closing_word(text: str) -> str | None:
    """An answer in words that ends the response: "..., the series diverges." -> `diverges`."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    sentences = [s for s in _SENTENCE_BREAK.split(lines[-1][-MAX_STATEMENT_CHARS:]) if s.strip()]
    clause = _CLAUSE_BREAK.split(sentences[-1])[-1] if sentences else ""
    if len(clause) > 300:
        return None  # an answer word closes a short clause
    word = answer_word(clause)
    if word is None:
        low = re.sub(r"(?i)^(?:so\s+|thus\s+|hence\s+)?(?:the\s+)?(?:function|series|sequence|integral|it)\s+"
                     r"(?:is\s+)?", "", clause.strip().rstrip(".!")).strip().lower()
        word = low if low in ("odd", "even", "neither", "neither even nor odd") else None
    return word


def _prose_then_math(text: str) -> str | None:
    """The last sentence "<words> <math>" ("We find x >= 5") gives its math."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    sentences = [s for s in _SENTENCE_BREAK.split(lines[-1][-MAX_STATEMENT_CHARS:]) if s.strip()]
    last = cut_trailing_prose(first_sentence(sentences[-1])) if sentences else ""
    tail = strip_leading_prose(last)
    if not tail or tail == last or not MATHY.search(tail) or prose_words(tail) > 1:
        return None
    return last_quantity(tail)  # "80 to 100, an increase of 25%" -> `25%`


def answer_line(rest: str) -> Reduced:
    """An answer line's content, without what follows its first sentence ("I hope it is
    correct."), a "the answer is" before it, prose after it or a "the area is" subject."""
    said = list(ANSWER_IS.finditer(rest))
    if said:
        rest = said[-1].group("rest")
    if len(_INLINE_PARTS.findall(rest)) < 2:  # `(a) 2. (b) 5.` names parts: keep every one
        rest = first_sentence(rest)
    cut = rest if answer_word(rest) else cut_trailing_prose(rest)  # "the limit ... as x -> oo does not exist"
    if answer_word(cut):
        return Reduced(cut.strip().rstrip("."))  # an answer in words, whatever math names its subject
    if LINK.search(cut):
        reduced = reduce_statement_named(cut)
        if reduced.text and answerish(reduced.text):
            return reduced
    sides = split_equals(cut)
    if len(sides) > 2 or (len(sides) == 2 and lhs_kind(sides[0]) == "value"):
        return reduce_equation_named(cut)  # `g(3) = 2(3)^2 - 5 = 13`: the value at the end
    run = closing_run(cut) if prose_words(cut) >= 2 else None
    if run is not None:
        return Reduced(run[2])
    # "Clyde will pay $12.00 for 5 apples and 5 oranges": the quantity, not the condition after it
    return Reduced(leading_quantity(strip_leading_prose(cut)) if prose_words(cut) >= 2 else cut)


# -- the search ----------------------------------------------------------------------------------
def _narrow(text: str, found: Located) -> Located:
    """Narrow the span to the answer as written, when it appears there."""
    raw = (found.raw or "").strip()
    if raw and found.how != "boxed":
        at = text.rfind(raw, found.start, found.end)
        if at >= 0:
            return Located(found.raw, found.how, at, at + len(raw), found.subject)
        run = closing_run(text[found.start:found.end])  # `$W(x) = 1$ or $W(x) = -1$`, joined when read
        if run is not None and raw in run[2]:
            return Located(found.raw, found.how, found.start + run[0], found.start + run[1], found.subject)
    return found


def locate(text: str, allow_whole: bool = True) -> Located:
    """Find the answer of `text` (see the module docstring)."""
    found = _locate(text, allow_whole)
    return _narrow(text, found) if found.raw is not None else found


def _locate(text: str, allow_whole: bool) -> Located:
    boxed = final_boxes_at(text)
    if boxed is not None and boxed[0].strip():
        return Located(boxed[0], "boxed", boxed[1], boxed[2])
    lines = [*ANSWER_LINE.finditer(text), *_gsm_lines(text)]
    if lines:
        m = max(lines, key=lambda x: x.start())
        rest, start, end = m.group("rest")[:MAX_STATEMENT_CHARS], m.start("rest"), m.end("rest")
        if not rest.strip("*_ "):  # "Final answer:" alone: the answer is on the next line, or display math
            nxt = _DISPLAY.match(text, m.end()) or re.compile(r"\s*(\S[^\n]*)").match(text, m.end())
            rest, start, end = (nxt.group(1), nxt.start(1), nxt.end(1)) if nxt else ("", 0, 0)
        if rest.strip("*_ "):
            reduced = answer_line(rest)
            return Located(reduced.text, "answer_line", start, end, reduced.subject)
    said = list(ANSWER_IS.finditer(text))
    if said:
        m = said[-1]
        reduced = reduce_statement_named(first_sentence(m.group("rest")[:MAX_STATEMENT_CHARS]))
        return Located(reduced.text, "answer_is", m.start("rest"), m.end("rest"), reduced.subject)
    closing = list(_THEREFORE.finditer(text))
    if closing:
        restated = _restated(text, closing[-1].start("rest"))
        if restated is not None:
            return restated
    if closing and not _later_statement(
            text, closing[-1].start("rest") + len(first_sentence(closing[-1].group("rest")))):
        m = closing[-1]
        shown = _introduced_display(text, m)
        if shown is not None:
            return shown
        reduced = reduce_statement_named(first_sentence(m.group("rest")[:MAX_STATEMENT_CHARS]))
        found = Located(reduced.text, "therefore", m.start("rest"), m.end("rest"), reduced.subject)
        if answerish(reduced.text):
            return found
        # words that point back at the answer ("So the sum is the matrix above."): the answer is
        # what the sentences before it state, when they state one
        before = _from_sentences(text[:m.start()], allow_whole)
        return before if before.raw is not None and answerish(before.raw) else found
    whole = _single_math_line(text) if allow_whole else None
    if whole is not None:
        at = text.find(whole)
        if len(split_equals(whole)) > 1:
            reduced = reduce_equation_named(whole)
            return Located(reduced.text, "last_equation", max(at, 0), len(text), reduced.subject)
        return Located(whole, "whole", max(at, 0), max(at, 0) + len(whole))
    return _from_sentences(text, allow_whole)


#: a function evaluated at numbers: `f(-1, 4)`, `g'(2)`
_AT_NUMBERS = re.compile(r"[A-Za-z'}]\s*\(\s*-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)*\s*\)")


def _introduced_display(text: str, m: re.Match[str]) -> Located | None:
    """"Thus, the radius of the circle is:" with the value in the display block right after it:
    that display, the value of its equation (`D_u f = 9/\\sqrt{2}` gives `9/\\sqrt{2}`)."""
    rest = m.group("rest")[:MAX_STATEMENT_CHARS]
    sentence = first_sentence(rest).strip()
    if sentence != rest.strip() or not sentence.rstrip(" *_").endswith(":"):
        return None  # the colon must end the closing sentence itself ("x = 5. To check:" does not)
    shown = _DISPLAY.match(text, m.end("rest"))
    if shown is None or not shown.group(1).strip() or len(shown.group(1)) > MAX_STATEMENT_CHARS:
        return None
    content = shown.group(1)
    sides = split_equals(content)
    if len(sides) > 1 and _AT_NUMBERS.search(sides[0]) and answerish(sides[-1]):
        # `D_u f(-1, 4) = 9/\sqrt{2}`: a function at numbers names the value the sentence announced
        return Located(sides[-1].strip(), "therefore", shown.start(1), shown.end(1), sides[0].strip())
    reduced = reduce_equation_named(content)
    return Located(reduced.text, "therefore", shown.start(1), shown.end(1), reduced.subject)


def _gsm_lines(text: str) -> list[re.Match[str]]:
    """GSM8K's answer lines (`#### 42`, `A: 42`). A `####` line that more work follows (a digit, an
    equals sign, math) is a markdown heading ("#### Case 2: y < 0"), not the answer line that
    closes a GSM8K solution."""
    return [m for m in _GSM_LINE.finditer(text)
            if not (m.group(0).lstrip().startswith("####") and _MORE_WORK.search(text, m.end()))]


def _restated(text: str, after: int) -> Located | None:
    """The display math that ends `text` when the words just before it, after offset `after`,
    introduce it as a restatement (see `_RESTATEMENT_INTRO`); None otherwise."""
    tail = text.rstrip()
    tail = tail[:-1].rstrip() if tail.endswith(".") else tail
    for opener, closer in (("$$", "$$"), ("\\[", "\\]")):
        if not tail.endswith(closer):
            continue
        start = tail.rfind(opener, after, len(tail) - len(closer))
        if start < 0:
            return None
        inner_start = start + len(opener)
        math = tail[inner_start:len(tail) - len(closer)]
        lead = len(math) - len(math.lstrip())
        math = math.strip()
        intro = text[max(after, start - RESTATEMENT_LOOKBACK):start]
        if not math or "$" in math or not answerish(math) or not _RESTATEMENT_INTRO.search(intro):
            return None
        return Located(math, "therefore", inner_start + lead, inner_start + lead + len(math))
    return None


def _from_sentences(full: str, allow_whole: bool) -> Located:
    """The steps that read the closing sentences, then the shape of the text, then the last number
    (in the last `SENTENCE_WINDOW` characters before a closing check of the answer; spans are
    offsets into `full`)."""
    full = _before_sign_off(_before_check(full))
    shift = max(0, len(full) - SENTENCE_WINDOW)
    found = _closing(full[shift:], allow_whole and shift == 0)
    return Located(found.raw, found.how, found.start + shift, found.end + shift, found.subject)


# a closing sentence addressed to the reader, holding no number: "I hope it is correct.", "Let me know
# if you have questions!", "Hope this helps :)"
_SIGN_OFF = re.compile(
    r"(?is)(?:^|(?<=[.!?:)$}])\s+|\n)[ \t*_]*(?:I\s+hope|hope\s+(?:this|that|it)|let\s+me\s+know|feel\s+free|"
    r"please\s+(?:let|feel|ask|check)|thanks?\b|thank\s+you|good\s+luck|happy\s+to\s+help|glad\s+to|"
    r"if\s+you\s+(?:have|need|want)|I\s+(?:am|'m)\s+(?:happy|glad|confident)|is\s+there\s+anything)[^\d$\\]*$")


def _before_sign_off(text: str) -> str:
    """The text before the sign-offs that close it (see `_SIGN_OFF`)."""
    m = _SIGN_OFF.search(text, max(0, len(text) - 400))
    return text[:m.start()] if m and m.start() > 0 else text


def _before_check(text: str) -> str:
    """The text before a closing check of the answer ("Check: 40 - 13 = 27 ✓" verifies the value
    stated before it, and its numbers are not the answer): cut at the last check heading when
    numbers come before it and no conclusion follows it."""
    checks = list(_CHECK.finditer(text, max(0, len(text) - SENTENCE_WINDOW)))
    if not checks:
        return text
    at = checks[-1].start()
    if at == 0 or not re.search(r"\d", text[:at]) or _CONCLUSION.search(text, checks[-1].end()):
        return text
    return text[:at]


def _closing(text: str, allow_whole: bool) -> Located:
    word = _closing_word(text)
    if word is not None:
        last_line = text.rstrip().rfind("\n") + 1
        return Located(word, "last_statement", last_line, len(text.rstrip()))
    sentences = _sentences(text)
    equations = [(p, s) for p, s in sentences if len(sides := split_equals(s)) > 1 and sides[-1].strip()]
    if equations and not _later_statement(text, equations[-1][0] + len(equations[-1][1])):
        pos, sentence = equations[-1]
        reduced = reduce_statement_named(first_sentence(sentence))
        return Located(reduced.text, "last_equation", pos, pos + len(sentence), reduced.subject)
    statements = [(p, s) for p, s in sentences if LINK.search(s) and not s.rstrip().endswith("?")]
    if statements:
        pos, sentence = statements[-1]
        stated = reduce_statement_named(first_sentence(sentence))
        if answerish(stated.text) and (prose_words(stated.text) <= 2 or set_phrase(stated.text)):
            return Located(stated.text, "last_statement", pos, pos + len(sentence), stated.subject)
    if sentences:
        pos, sentence = sentences[-1]
        run = closing_run(cut_trailing_prose(sentence))
        if run is not None:
            reduced = reduce_equation_named(run[2]) if len(split_equals(run[2])) > 1 else Reduced(run[2])
            return Located(reduced.text, "last_statement", pos + run[0], pos + run[1], reduced.subject)
    math_tail = _prose_then_math(text)
    if math_tail is not None:
        return Located(math_tail, "last_statement", text.rfind("\n") + 1, len(text))
    quantity = _stated_quantity(sentences)
    if quantity is not None:
        return quantity
    stripped = text.strip()
    if (allow_whole and stripped and "\n" not in stripped and len(stripped) <= 40
            and (MATHY.search(stripped) or answer_word(stripped)) and prose_words(stripped) <= 2):
        at = text.find(stripped)
        return Located(stripped, "whole", at, at + len(stripped))
    return _last_number(text)


def _stated_quantity(sentences: list[tuple[int, str]]) -> Located | None:
    """"In the end, Priya saves 45 dollars over 3 months.": the quantity the last sentence states
    (`statements.last_quantity`), as the number alone, the way the last-number step gives it."""
    if not sentences:
        return None
    pos, sentence = sentences[-1]
    closing = first_sentence(sentence.strip())
    quantity = last_quantity(closing) if prose_words(closing) >= 2 else closing
    number = NUMBER.match(quantity) if quantity != closing else None
    if number is None:
        return None
    if DURATION.fullmatch(quantity):  # "It takes 2 hours and 30 minutes.": the whole length of time
        at = sentence.find(quantity)
        return Located(quantity, "last_number", pos + max(at, 0), pos + max(at, 0) + len(quantity))
    whole = _MIXED_NUMBER.match(quantity)  # `2 1/2`
    return Located((whole or number).group(0), "last_number", pos, pos + len(sentence))


def _last_number(text: str) -> Located:
    """The last number of `text` (a mixed number whole), or nothing found."""
    numbers = list(NUMBER.finditer(text))
    if numbers:
        last = numbers[-1]
        mixed = [m for m in _MIXED_NUMBER.finditer(text) if int(m.group(2)) < int(m.group(3))]
        if mixed and mixed[-1].end() == last.end():  # `2 1/2 cups`: the whole mixed number
            return Located(mixed[-1].group(0), "last_number", mixed[-1].start(), mixed[-1].end())
        return Located(last.group(0), "last_number", last.start(), last.end())
    return Located(None, "none")
