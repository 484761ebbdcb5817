"""Pair imported rows with the questions of the run's items: by id, else by question text.

The rules, in order (`match="auto"`; `"id"` and `"text"` use only one of them):

1. **id**: a row whose id is the id of exactly one question (within its item set when the row
   names one) matches it, unless the row also carries a question text that matches a *different*
   question exactly: then the ids were not question ids (Inspect numbers samples 1, 2, 3 when the
   dataset has no ids) and the text wins.
2. **exact text**: the row's question, normalised (Unicode NFKC, case folded, runs of white space
   made one space), equals the normalised text of exactly one question (its stem, or the whole
   prompt with its parts and choices).
3. **contained text**: the row's text contains the normalised text of questions (a prompt template
   wrapped around the question, as lm-eval and Inspect templates do); the longest such question
   wins when no other question of that length is contained. Lookups go through an index of each
   question's first words, so a row costs time linear in its own length, not in the item count.

A row that matches nothing, or more than one question equally well, is unmatched, with the reason.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from mathlens.items.schema import Exam, Question
from mathlens.runs.importing.common import SourceRow

MatchBy = Literal["auto", "id", "text"]
_SPACE = re.compile(r"\s+")
#: words of a question used as its key in the containment index
_KEY_WORDS = 6


def normalise(text: str) -> str:
    """The form question texts are compared in.

    >>> normalise("  What is\\n2 + 3 ? ")
    'what is 2 + 3 ?'
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass(frozen=True)
class Match:
    """A row's question (`exam_id`, `question`) and how it was found; `question` None: unmatched."""

    exam_id: str | None
    question: Question | None
    by: Literal["id", "text", "none"]
    reason: str = ""


Target = tuple[str, Question]


class Matcher:
    """An index of the questions of some item sets, answering `match(row)`."""

    def __init__(self, exams: list[Exam], by: MatchBy = "auto") -> None:
        self.by = by
        self.by_id: dict[str, list[Target]] = {}
        self.by_text: dict[str, list[Target]] = {}
        self.by_key: dict[tuple[str, ...], list[tuple[str, Target]]] = {}
        self.key_lengths: set[int] = set()
        for exam in exams:
            for q in exam.questions:
                target = (exam.id, q)
                self.by_id.setdefault(q.id, []).append(target)
                texts = {normalise(q.text), normalise(q.prompt_text())}
                for t in texts:
                    if not t:
                        continue
                    self.by_text.setdefault(t, []).append(target)
                    words = tuple(t.split(" ")[:_KEY_WORDS])
                    self.key_lengths.add(len(words))
                    self.by_key.setdefault(words, []).append((t, target))

    def match(self, row: SourceRow) -> Match:
        text_hit = self._text(row) if self.by != "id" and row.question else None
        if self.by != "text" and row.id is not None:
            found = [t for t in self.by_id.get(row.id, []) if row.exam is None or t[0] == row.exam]
            if len(found) == 1:
                if text_hit is not None and text_hit.question is not None and \
                        (text_hit.exam_id, text_hit.question.id) != (found[0][0], found[0][1].id):
                    return text_hit
                return Match(found[0][0], found[0][1], "id")
            if len(found) > 1:
                if text_hit is not None and text_hit.question is not None:
                    return text_hit
                return Match(None, None, "none", f"id {row.id!r} is a question of several item sets "
                                                 f"({', '.join(t[0] for t in found[:4])}): map the item set "
                                                 "with -F exam=KEY")
            if self.by == "id" or row.question is None:
                return Match(None, None, "none", f"no question has the id {row.id!r}")
        if self.by == "id":
            return Match(None, None, "none", "the row has no id")
        if row.question is None:
            return Match(None, None, "none", "the row has neither an id nor a question text")
        if text_hit is not None:
            return text_hit
        return Match(None, None, "none", "its question text matches no question"
                     + (f" (and no question has the id {row.id!r})" if row.id is not None else ""))

    def _text(self, row: SourceRow) -> Match | None:
        assert row.question is not None
        text = normalise(row.question)
        exact = self._in_exam(self.by_text.get(text, []), row.exam)
        if exact:
            return self._one(exact, "several questions have this text")
        words = text.split(" ")
        best: dict[int, list[Target]] = {}
        for i in range(len(words)):
            for k in self.key_lengths:
                for qtext, target in self.by_key.get(tuple(words[i:i + k]), ()):
                    if len(qtext) <= len(text) and (row.exam is None or target[0] == row.exam) and qtext in text:
                        best.setdefault(len(qtext), []).append(target)
        if not best:
            return None
        return self._one(best[max(best)], "its text contains several questions equally well")

    @staticmethod
    def _in_exam(targets: list[Target], exam: str | None) -> list[Target]:
        return [t for t in targets if exam is None or t[0] == exam]

    @staticmethod
    def _one(targets: list[Target], ambiguous: str) -> Match:
        distinct = {(t[0], t[1].id): t for t in targets}
        if len(distinct) == 1:
            exam_id, q = next(iter(distinct.values()))
            return Match(exam_id, q, "text")
        names = ", ".join(f"{e}/{q}" for e, q in list(distinct)[:4])
        return Match(None, None, "none", f"{ambiguous} ({names})")
