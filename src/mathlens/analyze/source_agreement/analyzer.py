"""The `source-agreement` analyzer: the verdicts of an imported run's own harness beside mathlens's.

An imported record keeps the source's verdicts (`RunRecord.source_scores`: Inspect's scorers,
lm-eval's metrics per filter, a `score`/`true_false` field). This analysis puts each one beside
the `answers` analysis's verdict on the same record and writes `analysis/source-agreement.jsonl`
(`SOURCE_AGREEMENT`): one entry per record and scorer, with both verdicts, both extracted answers
and the reference; and per model, configuration and scorer the 2x2 table, percent agreement and
Cohen's kappa with bootstrap intervals (`stats.binary`), and the records left out, by reason.
Calls no model.

mathlens's verdict is right for `correct`, wrong for `incorrect`, `unparseable`, `no_answer` and `no_response`
(the checker found no right answer), and none for `unverifiable` (the check ran out of time) and
`no_reference` (no gold answer). The source's is `SourceScore.correct` (Inspect's `C` right, `I`
and `N` wrong, `P` none; 1 and 0; true and false). A record is compared when both have one.

It reads the `answers` document and refuses to run on one that is missing or was computed from
other records than the run now holds (the message names the command that brings it up to date).
A run without any source verdict (a run made by `mathlens run`) writes no document.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from mathlens.analyze.grading.answer_records import ANSWERS, WRONG, AnswerRecord
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.analyze.source_agreement.models import (
    SOURCE_AGREEMENT,
    LeftOut,
    ScorerAgreement,
    SourceAgreementEntry,
    SourceAgreementSummary,
)
from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import RunRecord
from mathlens.stats.binary import TwoByTwo, binary_agreement

#: answers statuses read as mathlens saying the answer is right or wrong (others: no verdict)
RIGHT = frozenset({"correct"})


class SourceAgreementOptions(AnalyzerOptions):
    """`scorer`: compare only this source scorer (default: every one); bootstrap settings."""

    scorer: str | None = None
    seed: int = 0
    n_resamples: int = Field(2000, ge=0, le=100_000)


@dataclass(frozen=True)
class Verdict:
    """What the answers analysis said of one record."""

    status: str
    predicted: str | None
    reference: str | None

    @property
    def correct(self) -> bool | None:
        return True if self.status in RIGHT else False if self.status in WRONG else None


@dataclass
class _Cell:
    """Counts of one (model, configuration, scorer)."""

    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # both, source only, mathlens only, neither
    left_out: dict[str, int] = field(default_factory=dict)

    def add(self, entry: SourceAgreementEntry) -> None:
        if entry.left_out is not None:
            self.left_out[entry.left_out] = self.left_out.get(entry.left_out, 0) + 1
            return
        s, m = entry.source_correct, entry.mathlens_correct
        self.counts[0 if s and m else 1 if s else 2 if m else 3] += 1


def verdicts(job: AnalysisJob[Any]) -> dict[str, Verdict]:
    """Record key -> the answers analysis's verdict, from an up-to-date `answers` document."""
    root = job.store.root
    doc = ANSWERS.read(root)
    fix = f"run `mathlens analyze {root} --only answers,source-agreement`"
    if doc is None:
        raise UserError(f"source-agreement compares with the answers analysis, which has not run on {root}: {fix}")
    if doc.envelope.records_sha256 != job.records_sha256:
        raise UserError(f"the answers analysis of {root} was computed from other records than the run now holds: "
                        f"{fix}")
    return {e.record.key: _verdict(e) for e in ANSWERS.entries(root)}


def _verdict(entry: AnswerRecord) -> Verdict:
    v = entry.verdict
    return Verdict(status=entry.status, predicted=v.predicted if v else None, reference=v.reference if v else None)


def compare(record: RunRecord, verdict: Verdict | None, question: Question | None,
            only: str | None = None) -> Iterator[SourceAgreementEntry]:
    """The entries of one record: one per source scorer (or only `only`)."""
    mine = verdict or Verdict(status="no_reference", predicted=None, reference=None)
    reference = mine.reference
    if reference is None and question is not None and question.answers:
        reference = " | ".join(question.answers)
    for score in record.source_scores or ():
        if only is not None and score.scorer != only:
            continue
        left: LeftOut | None = None
        if score.correct is None or mine.correct is None:
            left = "both_undecided" if score.correct is None and mine.correct is None else \
                "source_undecided" if score.correct is None else "mathlens_undecided"
        yield SourceAgreementEntry(
            record=RecordRef.of(record), scorer=score.scorer, source_value=score.value,
            source_correct=score.correct, source_answer=score.answer, mathlens_status=mine.status,
            mathlens_correct=mine.correct, mathlens_answer=mine.predicted, reference=reference,
            agree=None if left else score.correct == mine.correct, left_out=left)


def run(job: AnalysisJob[SourceAgreementOptions]) -> Outcome[SourceAgreementSummary]:
    """Compare every source verdict with mathlens's; write the document; its summary."""
    store = job.store
    opts = job.options
    scorers = {s.scorer for r in store.records() for s in r.source_scores or ()}
    if not scorers:
        return Outcome.skipped("the run holds no verdicts of another tool's scorer (only runs made by "
                               "`mathlens import` from a scored source do)")
    if opts.scorer is not None and opts.scorer not in scorers:
        from mathlens.errors import UnknownNameError

        raise UnknownNameError("source scorer (-O source-agreement.scorer)", opts.scorer, scorers)
    mine = verdicts(job)
    questions = store.questions()
    cells: dict[tuple[str, str, str], _Cell] = {}
    without = [0]

    def entries() -> Iterator[SourceAgreementEntry]:
        for record in store.records():
            if not record.source_scores:
                without[0] += 1
            for entry in compare(record, mine.get(record.key), questions.get((record.exam_id, record.question_id)),
                                 opts.scorer):
                cells.setdefault((record.model, record.configuration, entry.scorer), _Cell()).add(entry)
                yield entry

    def summary() -> SourceAgreementSummary:
        rows = []
        for (model, conf, scorer), cell in cells.items():
            table = TwoByTwo(*cell.counts)
            agreement, kappa = binary_agreement(table, n_resamples=opts.n_resamples, seed=opts.seed)
            rows.append(ScorerAgreement(model=model, configuration=conf, scorer=scorer, compared=table.n,
                                        both_correct=table.both_yes, source_only=table.a_only,
                                        mathlens_only=table.b_only, both_incorrect=table.both_no,
                                        agreement=agreement, kappa=kappa, left_out=dict(cell.left_out)))
        return SourceAgreementSummary(rows=rows, records_without_source=without[0], seed=opts.seed,
                                      n_resamples=opts.n_resamples, disagreements=sum(r.disagreements for r in rows))

    path = job.write(SOURCE_AGREEMENT, entries(), summary)
    return Outcome.ok(summary(), path)


def describe(summary: SourceAgreementSummary) -> list[str]:
    """One line per model, configuration and source scorer."""
    return [f"{r.model} · {r.configuration} · {r.scorer}: {r.compared} compared, {r.disagreements} disagree, "
            f"agreement {r.agreement.format(3)}, kappa {r.kappa.format(3)}" for r in summary.rows]


ANALYZER = Analyzer(name="source-agreement", title="scorer audit: the imported source's own verdicts beside "
                    "mathlens's answer check (agreement, kappa, every disagreement)",
                    options=SourceAgreementOptions, summary=SourceAgreementSummary, run=run,
                    writes=(SOURCE_AGREEMENT,), reads=("answers",), describe=describe)
