"""The computations of the breakdown analysis, from plain per-record facts (no I/O).

`RecordFacts` is what the analyzer gathers for one run record from the documents it reads (its
cell, its question, the answer verdict, the rubric fraction, the verdicts and labels of its steps);
the functions here turn a list of them into the document's entries and tables.

Choices (documented in docs/breakdowns.md):

- A step is *checked* when its verdict is `valid` or `invalid`; `unverifiable` steps and steps
  with nothing to check count in neither. A step carrying several operations (or concepts) counts
  for each of them.
- Intervals are percentile bootstraps of a ratio of sums, resampling whole responses for step
  shares (steps of one response are not independent) and whole questions for topic and type
  accuracy (repeats of one question are not independent).
- A question's topics are its `topics`, else its `subject` (datasets such as MATH), else
  `(no topic)`; a question with several topics counts in each.
- A question's type is its `metadata.type` when the item file gives one, else derived:
  `multiple_choice` (it has options), `multi_part` (lettered parts), `single_answer` (a reference
  answer or solution), `open` (neither: a proof or an explanation).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import fmean

import numpy as np

from mathlens.analyze.breakdown.models import (
    ExamCohort,
    GroupScore,
    QuestionBreakdown,
    StepShare,
)
from mathlens.analyze.grading.answer_records import CHECKABLE
from mathlens.analyze.grading.tables import compare_with_cohort
from mathlens.items.schema import Exam, Question
from mathlens.runs.documents import RecordRef
from mathlens.stats.bootstrap import CI, bootstrap_ci

NO_TOPIC = "(no topic)"


@dataclass(frozen=True)
class StepFacts:
    """One step of a response: its labels and the verdict used (valid, invalid, unverifiable, none)."""

    operations: tuple[str, ...]
    concepts: tuple[str, ...]
    verdict: str

    @property
    def checked(self) -> bool:
        return self.verdict in ("valid", "invalid")

    @property
    def invalid(self) -> bool:
        return self.verdict == "invalid"


@dataclass(frozen=True)
class RecordFacts:
    """What the breakdown needs from one run record."""

    ref: RecordRef
    #: the answers analysis's status (None: no answers document)
    answer: str | None = None
    #: share of the question's points earned (rubric or final answer; None: not scored)
    fraction: float | None = None
    #: the response's steps (empty without a flow analysis)
    steps: tuple[StepFacts, ...] = ()


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are drawn."""

    resamples: int = 2000
    confidence: float = 0.95
    seed: int = 0

    def ratio(self, pairs: Sequence[tuple[float, float]]) -> CI:
        """sum(numerators) / sum(denominators), with a bootstrap interval over the pairs.

        The same interval as `bootstrap_ci(pairs, stat=ratio_of_sums, ...)` (same seed, same
        draws, same quantiles), computed with array sums: `bootstrap_ci` applies a custom
        statistic one resample at a time, which takes seconds for a label met in thousands of
        responses. Small and degenerate samples go through `bootstrap_ci` itself."""
        items = [(float(a), float(b)) for a, b in pairs]
        if len(items) < 2 or self.resamples == 0 or ratio_of_sums(items) is None:
            return bootstrap_ci(items, stat=ratio_of_sums, n_resamples=self.resamples,
                                confidence=self.confidence, seed=self.seed)
        arr = np.asarray(items, dtype=float)
        draws = np.random.default_rng(self.seed).integers(0, len(items), size=(self.resamples, len(items)))
        num, den = arr[:, 0][draws].sum(axis=1), arr[:, 1][draws].sum(axis=1)
        defined = den != 0
        stats = num[defined] / den[defined]
        estimate = ratio_of_sums(items)
        undefined = int(self.resamples - defined.sum())
        if stats.size == 0:
            return CI(estimate=estimate, low=estimate, high=estimate, n=len(items), confidence=self.confidence,
                      n_resamples=self.resamples, undefined=undefined, status="degenerate")
        alpha = (1 - self.confidence) / 2
        low, high = np.quantile(stats, [alpha, 1 - alpha])
        return CI(estimate=estimate, low=float(low), high=float(high), n=len(items), confidence=self.confidence,
                  n_resamples=self.resamples, undefined=undefined, status="ok")


def ratio_of_sums(pairs: Sequence[tuple[float, float]]) -> float | None:
    """sum of the first items over sum of the second (None when the second sum is 0)."""
    den = sum(b for _, b in pairs)
    return sum(a for a, _ in pairs) / den if den else None


# -- questions ----------------------------------------------------------------------------------
def question_type(q: Question) -> str:
    """The item's `metadata.type` if given, else multiple_choice / multi_part / single_answer / open."""
    given = q.metadata.get("type")
    if isinstance(given, str) and given.strip():
        return given.strip()
    if q.choices:
        return "multiple_choice"
    if q.parts:
        return "multi_part"
    if q.answers or q.solution:
        return "single_answer"
    return "open"


def question_topics(q: Question) -> list[str]:
    """The question's topics, else its subject, else `(no topic)`."""
    if q.topics:
        return list(dict.fromkeys(q.topics))
    if q.subject:
        return [q.subject]
    return [NO_TOPIC]


def question_points(q: Question) -> float:
    """The points a question is worth (1 when the item file gives none)."""
    return q.total_points if q.total_points is not None else 1.0


# -- step shares --------------------------------------------------------------------------------
Cell = tuple[str, str, str, str]  # model, configuration, variant, variant kind


def _cell(ref: RecordRef) -> Cell:
    return ref.model, ref.configuration, ref.variant, ref.variant_kind


def _share(cell: Cell, label: str, per_response: list[tuple[int, int]], boot: Bootstrap) -> StepShare:
    model, conf, variant, kind = cell
    return StepShare(model=model, configuration=conf, variant=variant, variant_kind=kind, label=label,
                     invalid=sum(i for i, _ in per_response), checked=sum(c for _, c in per_response),
                     responses=len(per_response), share=boot.ratio(per_response))


def step_shares(records: Iterable[RecordFacts], boot: Bootstrap
                ) -> tuple[list[StepShare], list[StepShare], list[StepShare]]:
    """(overall, by operation, by concept): invalid / checked steps per cell and label.

    Each response contributes one (invalid, checked) pair per label it has checked steps for; the
    rows are sorted per cell by invalid steps, then share, then label."""
    overall: dict[Cell, list[tuple[int, int]]] = defaultdict(list)
    by_op: dict[tuple[Cell, str], list[tuple[int, int]]] = defaultdict(list)
    by_concept: dict[tuple[Cell, str], list[tuple[int, int]]] = defaultdict(list)
    for rec in records:
        checked = [s for s in rec.steps if s.checked]
        if not checked:
            continue
        cell = _cell(rec.ref)
        overall[cell].append((sum(s.invalid for s in checked), len(checked)))
        for target, labels_of in ((by_op, _operations), (by_concept, _concepts)):
            counts: dict[str, list[int]] = {}
            for s in checked:
                for label in labels_of(s):
                    pair = counts.setdefault(label, [0, 0])
                    pair[0] += s.invalid
                    pair[1] += 1
            for label, (inv, chk) in counts.items():
                target[(cell, label)].append((inv, chk))
    return ([_share(cell, "all steps", pairs, boot) for cell, pairs in sorted(overall.items(),
                                                                              key=lambda kv: _cell_order(kv[0]))],
            _ranked([_share(cell, label, pairs, boot) for (cell, label), pairs in by_op.items()]),
            _ranked([_share(cell, label, pairs, boot) for (cell, label), pairs in by_concept.items()]))


def _operations(step: StepFacts) -> tuple[str, ...]:
    return tuple(dict.fromkeys(step.operations))


def _concepts(step: StepFacts) -> tuple[str, ...]:
    return tuple(dict.fromkeys(step.concepts))


def _ranked(rows: list[StepShare]) -> list[StepShare]:
    return sorted(rows, key=lambda r: (r.model, r.configuration, r.variant_kind != "original", r.variant,
                                       -r.invalid, -(r.share.estimate or 0.0), r.label))


# -- per question -------------------------------------------------------------------------------
@dataclass
class _QuestionCell:
    """The records of one question in one cell."""

    question: Question
    exam_id: str
    cell: Cell
    records: list[RecordFacts] = field(default_factory=list)

    def entry(self) -> QuestionBreakdown:
        q = self.question
        model, conf, variant, kind = self.cell
        answers = [r.answer for r in self.records if r.answer is not None]
        checkable = sum(a in CHECKABLE for a in answers)
        correct = sum(a == "correct" for a in answers)
        fractions = [r.fraction for r in self.records if r.fraction is not None]
        score = 100.0 * fmean(fractions) if fractions else None
        steps = [s for r in self.records for s in r.steps if s.checked]
        difference = z = None
        if score is not None and q.class_average is not None:
            difference = score - q.class_average
            z = difference / q.class_std if q.class_std else None
        return QuestionBreakdown(
            model=model, configuration=conf, variant=variant, variant_kind=kind, exam_id=self.exam_id,
            question_id=q.id, topics=question_topics(q), question_type=question_type(q),
            points=question_points(q), responses=len(self.records), correct=correct, checkable=checkable,
            accuracy=correct / checkable if checkable else None, score=score,
            invalid_steps=sum(s.invalid for s in steps), checked_steps=len(steps),
            class_average=q.class_average, class_std=q.class_std, difference=difference, z_score=z)


def question_entries(records: Iterable[RecordFacts], questions: dict[tuple[str, str], Question]
                     ) -> list[QuestionBreakdown]:
    """One entry per question and cell, ordered by cell (original prompts first), then in exam and
    question order (records whose question is not known are left out)."""
    position = {key: i for i, key in enumerate(questions)}
    cells: dict[tuple[str, str, Cell], _QuestionCell] = {}
    for rec in records:
        ref = rec.ref
        q = questions.get((ref.exam_id, ref.question_id))
        if q is None:
            continue
        key = (ref.exam_id, ref.question_id, _cell(ref))
        if key not in cells:
            cells[key] = _QuestionCell(question=q, exam_id=ref.exam_id, cell=_cell(ref))
        cells[key].records.append(rec)
    ordered = sorted(cells.items(), key=lambda kv: (*_cell_order(kv[0][2]), position[(kv[0][0], kv[0][1])]))
    return [c.entry() for _, c in ordered]


def _cell_order(cell: Cell) -> tuple[str, str, bool, str]:
    model, conf, variant, kind = cell
    return model, conf, kind != "original", variant


# -- groups of questions ------------------------------------------------------------------------
def group_scores(entries: Sequence[QuestionBreakdown], by: str, boot: Bootstrap) -> list[GroupScore]:
    """Accuracy and score per cell and topic (`by="topic"`) or question type (`by="type"`)."""
    if by not in ("topic", "type"):
        raise ValueError(f"group by 'topic' or 'type', not {by!r}")
    groups: dict[tuple[Cell, str], list[QuestionBreakdown]] = defaultdict(list)
    for e in entries:
        cell = (e.model, e.configuration, e.variant, e.variant_kind)
        for g in (e.topics if by == "topic" else [e.question_type]):
            groups[(cell, g)].append(e)
    out = []
    for ((model, conf, variant, kind), group), members in groups.items():
        pairs = [(float(e.correct), float(e.checkable)) for e in members if e.checkable]
        scored = [e for e in members if e.score is not None]
        earned = sum(e.points * (e.score or 0.0) / 100.0 for e in scored) if scored else None
        possible = sum(e.points for e in scored) if scored else None
        out.append(GroupScore(
            model=model, configuration=conf, variant=variant, variant_kind=kind, group=group,
            questions=len(members), responses=sum(e.responses for e in members),
            correct=sum(e.correct for e in members), checkable=sum(e.checkable for e in members),
            accuracy=boot.ratio(pairs) if pairs else None, earned=earned, possible=possible,
            score=100.0 * earned / possible if earned is not None and possible else None))
    out.sort(key=lambda r: (r.model, r.configuration, r.variant_kind != "original", r.variant, r.group))
    return out


def exam_cohorts(entries: Sequence[QuestionBreakdown], exams: Sequence[Exam]) -> list[ExamCohort]:
    """Each exam with a cohort, per cell: the score over the questions answered and scored, beside
    the students (difference; z-score from the class's mean and sd or from per-student scores)."""
    by_exam = {e.id: e for e in exams if e.cohort is not None}
    cells: dict[tuple[str, Cell], list[QuestionBreakdown]] = defaultdict(list)
    for e in entries:
        if e.exam_id in by_exam:
            cells[(e.exam_id, (e.model, e.configuration, e.variant, e.variant_kind))].append(e)
    out = []
    for (exam_id, (model, conf, variant, kind)), members in cells.items():
        exam = by_exam[exam_id]
        scored = [e for e in members if e.score is not None]
        possible = sum(e.points for e in scored)
        percent = 100.0 * sum(e.points * (e.score or 0.0) / 100.0 for e in scored) / possible if possible else None
        out.append(ExamCohort(model=model, configuration=conf, variant=variant, variant_kind=kind,
                              exam_id=exam_id, exam_name=exam.name, questions=len(members), score=percent,
                              cohort=compare_with_cohort(percent, exam.cohort)))
    out.sort(key=lambda r: (r.exam_id, r.model, r.configuration, r.variant_kind != "original", r.variant))
    return out
