"""Find the final answer of a response, and of each lettered part (a), (b)...

The search tries, in order, the places where a solution states its result, and keeps the first
that yields something: the last `\\boxed{...}` (with the boxes just before it that list more
answers), an answer line (`Final answer:`, `Answer:`, GSM8K's `A:` and `####`), "the answer
is ...", a closing "therefore / thus / hence / so" sentence, a response that is one line of math,
an answer in words closing the response, the last equation, the last "... is <answer>"
statement, a last sentence "<words> <math>", a short one-line response, the last number.
Sentences and equations are reduced to their answer by `statements` (a relation or an equation
that is the answer stays whole; prose before and after it goes).

The text found is cleaned (markdown emphasis, `$`/`\\(` delimiters, trailing punctuation, leading
"approximately") but not interpreted: deciding what it means is `equivalence`'s job.

    >>> extract_final_answer("So 3 + 4 = 7.\\nFinal answer: 7").text
    '7'
    >>> extract_final_answer("We get $\\\\boxed{\\\\frac{1}{2}}$.").how
    'boxed'
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mathlens.analyze.grading.normalize import answer_word
from mathlens.analyze.grading.statements import (
    LINK,
    answerish,
    cut_trailing_prose,
    reduce_equation,
    reduce_statement,
    split_equals,
    strip_leading_prose,
)
from mathlens.items.schema import Question

How = Literal["boxed", "answer_line", "answer_is", "therefore", "last_equation", "last_statement",
              "last_number", "whole", "none"]

MAX_RESPONSE_CHARS = 200_000  # longer responses are cut: only their end can hold the answer

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_LINE = re.compile(
    r"(?im)^[ \t>*_#-]*(?:final\s+answers?|answers?|ans\.?)[ \t*_]*[:：][ \t*_]*(?P<rest>.*)$"
)
_GSM_LINE = re.compile(r"(?m)^[ \t]*(?:A:|####)[ \t]*(?P<rest>.+)$")
_ANSWER_IS = re.compile(
    r"(?i)\b(?:the\s+)?(?:final\s+)?answer\s+(?:is|would\s+be|will\s+be)\s*:?\s*(?P<rest>[^\n]+)"
)
_THEREFORE = re.compile(
    r"(?im)(?:^|(?<=[.!?,;]\s)|(?<=\n))[ \t*]*(?:therefore|thus|hence|so|consequently|in\s+conclusion)\b"
    r"[ \t,:]*(?P<rest>[^\n]+)"
)
_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|-?\.\d+")
_MIXED_NUMBER = re.compile(r"(?<![\d.,/])(-?\d+) (\d+)/(\d+)(?![\d/.])")  # `2 1/2`: two and a half
_SENTENCE_END = re.compile(r"(?:\.(?=\s|$)|(?<![\d)}])!(?=\s|$)|[?;](?=\s|$))")
_LEADING_FILLER = re.compile(
    r"(?i)^(?:(?:is|are|was|equals|=|:|approximately|approx\.?|about|roughly|≈|~)\s*)+"
)
_LABEL_PREFIX = re.compile(r"^[A-Za-z][A-Za-z ]{2,30}:\s+(?=\S)")  # "Limit: 3", "Total cost: 12"
_PART_MARKER = r"(?:\*\*|__)?\s*(?:part\s*)?(?:\(\s*(?P<l1>{labels})\s*\)|(?P<l2>{labels})\s*[).:])(?:\*\*|__)?"
_SHORT_WORDS = re.compile(r"\(?[A-Za-z]\)?|[A-Za-z]+(?:\s[A-Za-z]+)?")
_CLAUSE_BREAK = re.compile(r",\s+")
_EMPHASIS = re.compile(r"\*\*|__|`")
_FACTORIAL_END = re.compile(r"[\d)}]!$")
_LETTER_IN_BRACKETS = re.compile(r"\(([A-Za-z])\)")

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_STATEMENT_BREAK = re.compile(r"(?<=[.!?])\s+|\n")


class PartAnswer(BaseModel):
    """The answer found for one lettered part."""

    model_config = ConfigDict(frozen=True)

    label: str
    text: str | None
    how: How


class FinalAnswer(BaseModel):
    """What a response gives as its answer.

    `text` is the answer of the whole response (None when nothing was found), `raw` the text it
    was cleaned from, `parts` one entry per lettered part found, `choice` the option label the
    response names when the question is multiple choice.
    """

    model_config = ConfigDict(frozen=True)

    text: str | None
    how: How
    raw: str | None = None
    parts: list[PartAnswer] = []
    choice: str | None = None

    def part(self, label: str) -> PartAnswer | None:
        """The answer of part `label`, if one was found."""
        return next((p for p in self.parts if p.label == label), None)


# -- locating ----------------------------------------------------------------------------------
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
    """Every `\\boxed{...}` of `text`: `(start, end, content)`, in order."""
    closing = _brace_partners(text)
    spans = []
    for m in _BOX.finditer(text):
        end = closing.get(m.end() - 1)
        if end is not None:
            spans.append((m.start(), end + 1, text[m.end() : end]))
    return spans


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (balanced braces), or None.

    >>> last_boxed(r"x = \\boxed{\\frac{a}{b}} and \\boxed{2}")
    '2'
    """
    spans = boxed_spans(text)
    return spans[-1][2] if spans else None


_BOX_GAP = re.compile(r"(?:\s|\$|,|;|\\[,;: ]|\\quad|\\qquad|\\text\{\s*(?:and|or|,)?\s*\}|\band\b|\bor\b|"
                      r"\\(?:text|mathrm)\{[^{}]*\}\s*=|[A-Za-z](?:_\{?\w+\}?)?\s*=)*")


def final_boxes(text: str) -> str | None:
    """The last boxed answer, with the boxes just before it that list more answers with it.

    `\\boxed{(2,2)} and \\boxed{(6,2)}` gives `(2,2), (6,2)`; boxes separated by other words
    ("... was wrong; the value is \\boxed{5}") are earlier attempts and only the last counts.
    """
    spans = boxed_spans(text)
    if not spans:
        return None
    kept = [spans[-1]]
    for prev in reversed(spans[:-1]):
        gap = text[prev[1] : kept[0][0]]
        if _BOX_GAP.fullmatch(gap) is None or len(kept) >= 20:
            break
        kept.insert(0, prev)
    contents: list[str] = []
    for _, _, c in kept:
        if c.strip() and c.strip() not in contents:
            contents.append(c.strip())
    return ", ".join(contents) if contents else spans[-1][2]


def _first_sentence(s: str) -> str:
    m = _SENTENCE_END.search(s)
    return s[: m.start()] if m else s


_MATHY = re.compile(r"[\d=<>()\[\]{}^/*+\\√π∞≤≥≠-]")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z(])")
_MATH_NAME = re.compile(r"(?i)^(?:sin|cos|tan|sec|csc|cot|arc\w+|sinh|cosh|tanh|ln|log|exp|sqrt|lim|pi|inf|"
                        r"infinity|oo|and|or|det|max|min|abs|cup|cap)$")


_FOREIGN = re.compile(r"[^\x00-\x7f±×÷√π∞≤≥≠°·−∇⟨⟩\u0370-\u03ff]")  # other scripts: prose, not math
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\{[A-Za-z*]+\}")


def _prose_words(s: str) -> int:
    return sum(1 for w in _PROSE_WORD.findall(s) if not _MATH_NAME.match(w))


def _single_math_line(text: str) -> str | None:
    """A response that is one line of math (no prose) is its own answer, however long."""
    stripped = text.strip()
    if not stripped or "\n" in stripped or len(stripped) > 2000 or _FOREIGN.search(stripped):
        return None
    if len(stripped) <= 40 and not _MATHY.search(stripped):
        short = answer_word(stripped) or _SHORT_WORDS.fullmatch(stripped)
        return stripped if short else None
    bare = _ENVIRONMENT.sub(" ", stripped)
    return strip_leading_prose(stripped) if _MATHY.search(bare) and _prose_words(bare) <= 1 else None


def _closing_word(text: str) -> str | None:
    """An answer in words that ends the response: "..., the series diverges." -> `diverges`."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    sentences = [s for s in _SENTENCE_BREAK.split(lines[-1]) if s.strip()]
    clause = _CLAUSE_BREAK.split(sentences[-1])[-1] if sentences else ""
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
    sentences = [s for s in _SENTENCE_BREAK.split(lines[-1]) if s.strip()]
    last = cut_trailing_prose(_first_sentence(sentences[-1])) if sentences else ""
    tail = strip_leading_prose(last)
    return tail if tail and tail != last and _MATHY.search(tail) and _prose_words(tail) <= 1 else None


def _locate(text: str, allow_whole: bool = True) -> tuple[str | None, How]:
    boxed = final_boxes(text)
    if boxed is not None and boxed.strip():
        return boxed, "boxed"
    lines = list(_ANSWER_LINE.finditer(text)) + list(_GSM_LINE.finditer(text))
    if lines:
        m = max(lines, key=lambda x: x.start())
        rest = m.group("rest").strip()
        if not rest.strip("*_ "):  # "Final answer:" alone: the answer is on the next line
            tail = text[m.end():].strip().splitlines()
            rest = tail[0] if tail else ""
        if rest.strip("*_ "):
            return _answer_line(rest), "answer_line"
    said = list(_ANSWER_IS.finditer(text))
    if said:
        return reduce_statement(_first_sentence(said[-1].group("rest"))), "answer_is"
    closing = list(_THEREFORE.finditer(text))
    if closing:
        return reduce_statement(_first_sentence(closing[-1].group("rest"))), "therefore"
    whole = _single_math_line(text) if allow_whole else None
    if whole is not None:
        if len(split_equals(whole)) > 1:
            return reduce_equation(whole), "last_equation"
        return whole, "whole"
    word = _closing_word(text)
    if word is not None:
        return word, "last_statement"
    eq_lines = [ln for ln in text.splitlines() if len(parts := split_equals(ln)) > 1 and parts[-1].strip()]
    if eq_lines:
        return reduce_statement(_first_sentence(eq_lines[-1])), "last_equation"
    statements = [sn for sn in _STATEMENT_BREAK.split(text) if LINK.search(sn)]
    if statements:
        stated = reduce_statement(_first_sentence(statements[-1]))
        if answerish(stated) and _prose_words(stated) <= 2:
            return stated, "last_statement"
    math_tail = _prose_then_math(text)
    if math_tail is not None:
        return math_tail, "last_statement"
    stripped = text.strip()
    if (allow_whole and stripped and "\n" not in stripped and len(stripped) <= 40
            and (_MATHY.search(stripped) or answer_word(stripped)) and _prose_words(stripped) <= 2):
        return stripped, "whole"
    numbers = list(_NUMBER.finditer(text))
    if numbers:
        last = numbers[-1]
        mixed = [m for m in _MIXED_NUMBER.finditer(text) if int(m.group(2)) < int(m.group(3))]
        if mixed and mixed[-1].end() == last.end():  # `2 1/2 cups`: the whole mixed number
            return mixed[-1].group(0), "last_number"
        return last.group(0), "last_number"
    return None, "none"


def _answer_line(rest: str) -> str:
    """An answer line's content, without prose after it or a "the area is" subject before it."""
    cut = cut_trailing_prose(rest)
    if LINK.search(cut) and not answer_word(cut):
        reduced = reduce_statement(cut)
        if reduced and answerish(reduced):
            return reduced
    return strip_leading_prose(cut) if _prose_words(cut) >= 2 else cut


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
            if s.startswith(left) and s.endswith(right) and len(s) > len(left) + len(right) - 1:
                s = s[len(left) : len(s) - len(right)]
        if s.count("$") == 1 and s.startswith("$") is False and s.endswith("$"):
            s = s[:-1]
        s = _LEADING_FILLER.sub("", s)
        s = _LABEL_PREFIX.sub("", s)
        if s == before:
            break
    s = s.strip()
    letter = _LETTER_IN_BRACKETS.fullmatch(s)
    return letter.group(1) if letter else s


# -- parts and choices -------------------------------------------------------------------------
def _part_regex(labels: list[str]) -> re.Pattern[str]:
    alt = "|".join(re.escape(lb) for lb in sorted(labels, key=len, reverse=True))
    return re.compile(r"(?im)^[ \t>#*-]*" + _PART_MARKER.format(labels=alt))


def split_parts(text: str, labels: list[str] | None = None) -> list[tuple[str, str]]:
    """Split a response at its part markers: `[(label, segment), ...]` in order of appearance.

    With `labels` (the question's parts) only those markers count; without, markers a, b, c...
    count when at least (a) and (b) appear. Text before the first marker is dropped.
    """
    wanted = labels or list("abcdefgh")
    pattern = _part_regex(wanted)
    marks: list[tuple[int, int, str]] = []
    for m in pattern.finditer(text):
        label = (m.group("l1") or m.group("l2")).lower()
        if any(label == seen for _, _, seen in marks):
            continue  # a repeated marker (say, in a closing summary) is not a new part
        marks.append((m.start(), m.end(), label))
    if labels is None and not {"a", "b"} <= {lb for _, _, lb in marks}:
        return []
    out = []
    for i, (_, end, label) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        out.append((label, text[end:stop]))
    return out


def _inline_parts(line: str, labels: list[str] | None) -> list[tuple[str, str]]:
    """Parts named inside one answer line: `(a) 3, (b) 5` -> `[("a", "3"), ("b", "5")]`."""
    wanted = labels or list("abcdefgh")
    alt = "|".join(re.escape(lb) for lb in sorted(wanted, key=len, reverse=True))
    marks = list(re.finditer(r"(?i)\(\s*(" + alt + r")\s*\)", line))
    if len(marks) < 2:
        return []
    out = []
    for i, m in enumerate(marks):
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(line)
        out.append((m.group(1).lower(), line[m.end():stop].strip().rstrip(",;").strip()))
    return out


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
def extract_final_answer(text: str, question: Question | None = None) -> FinalAnswer:
    """Find the final answer of `text`, of each of its parts, and its option label if any."""
    text = (text or "")[-MAX_RESPONSE_CHARS:]
    raw, how = _locate(text)
    answer = clean_answer(raw) if raw is not None else None
    labels = [p.label.lower() for p in question.parts] if question and question.parts else None
    parts: list[PartAnswer] = []
    if labels is not None or question is None:
        inline = _inline_parts(raw, labels) if raw and how in ("answer_line", "boxed") else []
        if inline:
            parts = [PartAnswer(label=lb, text=clean_answer(t) or None, how=how) for lb, t in inline]
        else:
            for label, segment in split_parts(text, labels):
                seg_raw, seg_how = _locate(segment.strip(" :.-*\t\n"))
                parts.append(PartAnswer(label=label, text=clean_answer(seg_raw) if seg_raw else None,
                                        how=seg_how))
    choice = None
    if question is not None and question.choices:
        choice = choice_label(answer, question.choices)
        if choice is None:
            said = re.findall(r"(?i)\b(?:answer|option|choice)\s+(?:is\s+)?\(?([A-Za-z])\)?(?=[\s.,)]|$)", text)
            known = {k.lower(): k for k in question.choices}
            picked = [known[s.lower()] for s in said if s.lower() in known]
            choice = picked[-1] if picked else None
    return FinalAnswer(text=answer or None, how=how if answer else "none", raw=raw, parts=parts,
                       choice=choice)
