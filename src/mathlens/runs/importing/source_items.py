"""Questions built from the source itself, for an import without `--items`.

Inspect samples carry `input`, `target`, `choices` and `metadata`; lm-eval samples their `doc` and
`target`; most JSONL outputs the question and the gold answer. Each distinct question of the
source becomes a `Question`: its id is the row's id (Inspect's sample id, lm-eval's `doc.id` or
`doc_id`, a mapped `id`), or `q1`, `q2`... in order of first appearance for rows that have none
(told apart by their normalised text). One item set per task (`SourceRow.exam`: the tasks of a
multi-task lm-eval file), else one named after the source's task or file.

The gold answer is the source's target, read down to the answer where the target is a worked
solution: what follows the last `####` (GSM8K), else the content of the last `\\boxed{...}`.
Several targets are several accepted answers. A question's facts come from the first row that
gives them; rows that give one id two different question texts are refused, naming both rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import ValidationError

from mathlens.items.schema import Exam, Question
from mathlens.runs.importing.common import SourceError, SourceRow
from mathlens.runs.importing.matching import normalise

_MARK = "####"


def reference_answer(target: str) -> str:
    """A gold answer as the checker should see it.

    >>> reference_answer("3 + 4 = 7\\n#### 1,007")
    '1007'
    >>> reference_answer("so the area is $\\\\boxed{\\\\frac{1}{2}}$.")
    '\\\\frac{1}{2}'
    >>> reference_answer(" 42 ")
    '42'
    """
    text = target.strip()
    if _MARK in text:
        tail = text.rsplit(_MARK, 1)[1].strip()
        plain = tail.replace(",", "")
        return plain if plain.replace(".", "", 1).lstrip("-").isdigit() else tail
    boxed = last_boxed(text)
    return boxed.strip() if boxed is not None and boxed.strip() else text


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (or `\\fbox{...}`), braces balanced; None if none."""
    start = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if start < 0:
        return None
    i = text.index("{", start) + 1
    depth, begin = 1, i
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[begin:i]
        i += 1
    return None


@dataclass
class _Set:
    """The questions of one item set as they are found."""

    questions: dict[str, Question] = field(default_factory=dict)
    #: question id -> (normalised text, the row that first gave it)
    seen: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: normalised text -> id, for rows without an id
    by_text: dict[str, str] = field(default_factory=dict)


def items_from_rows(path: Path, rows: list[SourceRow], default_exam: str) -> tuple[list[Exam], list[SourceRow]]:
    """The item sets the rows describe, and the rows with their question's id and set filled in."""
    sets: dict[str, _Set] = {}
    out: list[SourceRow] = []
    for row in rows:
        exam = row.exam or default_exam
        found = sets.setdefault(exam, _Set())
        qid = _question_id(path, row, found)
        out.append(replace(row, id=qid, exam=exam))
    exams = [Exam(id=name, name=name, source=str(path), questions=list(s.questions.values()))
             for name, s in sets.items() if s.questions]
    return exams, out


def _question_id(path: Path, row: SourceRow, found: _Set) -> str:
    text = (row.question or "").strip()
    if not text:
        raise SourceError(path, row.where, "question", "has no question text, so the question cannot be built from "
                                                       "the source: give the questions with --items")
    key = normalise(text)
    qid = row.id if row.id is not None else found.by_text.get(key)
    if qid is None:
        n = len(found.by_text) + 1
        while f"q{n}" in found.seen:
            n += 1
        qid = f"q{n}"
    found.by_text.setdefault(key, qid)
    if qid in found.seen:
        first_text, first_where = found.seen[qid]
        if first_text != key:
            raise SourceError(path, row.where, "question", f"id {qid!r} was given to another question at "
                                                           f"{first_where}: the ids are not question ids; give the "
                                                           "questions with --items, or map another id with -F id=KEY")
        return qid
    found.seen[qid] = (key, row.where)
    found.questions[qid] = _question(path, row, qid, text)
    return qid


def _question(path: Path, row: SourceRow, qid: str, text: str) -> Question:
    facts = row.item
    answers = list(dict.fromkeys(a for a in (reference_answer(t) for t in facts.target) if a))
    try:
        return Question(id=qid, text=text, answers=answers, choices=dict(facts.choices) or None,
                        images=list(facts.images), level=facts.level, subject=facts.subject,
                        metadata=dict(facts.metadata))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SourceError(path, row.where, ".".join(str(p) for p in first["loc"]) or None,
                          f"cannot make a question of it ({first['msg']})") from None
