"""The `answers` analyzer: final-answer verdicts and format compliance for every record of a run.

Writes `analysis/answers.jsonl` (the `ANSWERS` document): one `AnswerRecord` per record (verdict,
predicted and reference answers, parsed forms, format violations, output-quality flags), and a
summary per model, configuration and variant (verdict counts; counts of degenerate, truncated and
answerless responses) with format compliance per model. The format rules come from the run's
system role (`compliance.rules_from_role`); a role that forbids neither LaTeX nor markup still
gets its violations counted, with `rules` left empty in the output. Records are checked through
the job's executor (`AnswerTask`: one record and its question per item; one thread locally by
default, Ray tasks with ``--executor ray``) and the entries stream to disk in record order; the
summary is accumulated on the way as counts (nothing per record is kept).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from mathlens.analyze.grading.answer_records import (
    ANSWERS,
    CHECKABLE,
    AccuracySummary,
    AnswerRecord,
    AnswersSummary,
    correct_lines,
    stored_quality,
)
from mathlens.analyze.grading.compliance import (
    ComplianceSummary,
    FormatRules,
    format_violations,
    rules_from_role,
    summarize_compliance,
)
from mathlens.analyze.grading.equivalence import EquivalenceConfig, check_answer
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.analyze.quality import COUNTED_FLAGS, flag_counts, record_quality
from mathlens.items.schema import Question
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore


class AnswersOptions(AnalyzerOptions):
    """Tolerances, budget and documented rules of the equivalence check (see `EquivalenceConfig`)."""

    rel_tol: float = Field(EquivalenceConfig.rel_tol, gt=0)
    abs_tol: float = Field(EquivalenceConfig.abs_tol, ge=0)
    timeout_s: float = Field(EquivalenceConfig.timeout_s, gt=0, le=600)
    value_only_choice: Literal["incorrect", "correct"] = EquivalenceConfig.value_only_choice
    list_order: Literal["set", "ordered"] = EquivalenceConfig.list_order
    inequality_as_set: bool = EquivalenceConfig.inequality_as_set
    min_digits: int = Field(EquivalenceConfig.min_digits, ge=1, le=30)

    def config(self) -> EquivalenceConfig:
        return EquivalenceConfig(rel_tol=self.rel_tol, abs_tol=self.abs_tol, timeout_s=self.timeout_s,
                                 value_only_choice=self.value_only_choice, list_order=self.list_order,
                                 inequality_as_set=self.inequality_as_set, min_digits=self.min_digits)


def question_index(store: RunStore) -> dict[tuple[str, str], Question]:
    """(exam id, question id) -> question, for every item set of the run (its own copy)."""
    return store.questions()


#: records per executor task
BATCH_PER_TASK = 16


@dataclass
class _Group:
    """Counts of one (model, configuration, variant): statuses and quality flags."""

    records: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    quality: Counter[str] = field(default_factory=Counter)
    #: records with a reasoning trace, and those whose trace the token cap cut before an answer
    traces: Counter[str] = field(default_factory=Counter)

    def add(self, entry: AnswerRecord) -> None:
        self.records += 1
        self.traces.update(with_trace=entry.trace, trace_truncated=entry.trace_truncated)
        self.counts[entry.status] += 1
        if entry.quality is not None:
            self.quality.update(flag_counts([entry.quality]))


def _summaries(groups: dict[tuple[str, str, str], _Group]) -> list[AccuracySummary]:
    out = []
    for (model, conf, variant), g in groups.items():
        counts = dict(g.counts)
        for k in CHECKABLE:  # always listed, as before
            counts.setdefault(k, 0)
        checkable = sum(g.counts[k] for k in CHECKABLE)
        quality = {k: g.quality[k] for k in flag_counts(())}
        out.append(AccuracySummary(model=model, configuration=conf, variant=variant, records=g.records,
                                   counts=counts, accuracy=g.counts["correct"] / checkable if checkable else None,
                                   degenerate=quality["degenerate"], truncated=quality["truncated"],
                                   no_final_answer=quality["no_final_answer"], quality=quality,
                                   with_trace=g.traces["with_trace"], trace_truncated=g.traces["trace_truncated"]))
    return out


def _add_compliance(totals: dict[str, ComplianceSummary], model: str, one: ComplianceSummary) -> None:
    """Fold one response's compliance into its model's totals (sums; the rate is recomputed)."""
    seen = totals.get(model)
    if seen is None:
        totals[model] = one
        return
    responses, compliant = seen.responses + one.responses, seen.compliant + one.compliant
    totals[model] = seen.model_copy(update={
        "responses": responses, "compliant": compliant, "rate": compliant / responses if responses else None,
        "latex_violations": seen.latex_violations + one.latex_violations,
        "markup_violations": seen.markup_violations + one.markup_violations,
        "responses_with_latex": seen.responses_with_latex + one.responses_with_latex,
        "responses_with_markup": seen.responses_with_markup + one.responses_with_markup,
        "by_kind": {k: seen.by_kind.get(k, 0) + one.by_kind.get(k, 0) for k in {**seen.by_kind, **one.by_kind}}})


@dataclass(frozen=True)
class AnswerTask:
    """What an executor runs per item (module level, so it pickles to Ray workers)."""

    rules: FormatRules
    config: EquivalenceConfig

    def __call__(self, item: tuple[RunRecord, Question | None]) -> AnswerRecord:
        record, question = item
        return check_record(record, question, self.rules, self.config)


#: the reason given for a record whose trace the token cap cut before any visible answer
TRACE_CUT_REASON = ("the token cap cut the reasoning trace before a visible answer; "
                    "no answer is read from the trace")


def check_record(rec: RunRecord, question: Question | None, rules: FormatRules,
                 config: EquivalenceConfig) -> AnswerRecord:
    """The answer check of one record (no model calls).

    Only the visible answer (`rec.response`) is read; a reasoning trace never is, even when the
    visible answer is empty (see the notes of `answer_records`)."""
    base: dict[str, Any] = {"record": RecordRef.of(rec), "truncated": rec.truncated,
                            "trace": bool(rec.reasoning), "trace_truncated": rec.trace_truncated,
                            # error records have no response, so no flags; an empty ok response has some
                            "quality": record_quality(rec, question)}
    if rec.status != "ok":
        return AnswerRecord(status="no_response", reason="the request failed", **base)
    if rec.trace_truncated:
        return AnswerRecord(status="no_response", reason=TRACE_CUT_REASON, **base)
    if not rec.response or not rec.response.strip():
        reason = "the visible answer after the reasoning trace is empty" if rec.reasoning else "the response is empty"
        return AnswerRecord(status="no_response", reason=reason, **base)
    fmt = format_violations(rec.response, rules)
    if question is None:
        return AnswerRecord(status="no_reference", format=fmt, reason="the question is not in the run's items",
                            **base)
    verdict = check_answer(rec.response, question, config, cut=rec.truncated)
    return AnswerRecord(status=verdict.status, verdict=verdict, format=fmt, reason=verdict.note
                        if verdict.status == "no_answer" else "", **base)


def run(job: AnalysisJob[AnswersOptions]) -> Outcome[AnswersSummary]:
    """Check every record; write `analysis/answers.jsonl`; its summary (per group)."""
    store = job.store
    role_rules = rules_from_role(store.manifest().system_role)
    rules = role_rules or FormatRules(latex=False, markup=False)
    questions = question_index(store)
    task = AnswerTask(rules, job.options.config())
    groups: dict[tuple[str, str, str], _Group] = {}
    total = _Group()
    compliance: dict[str, ComplianceSummary] = {}

    def entries() -> Iterator[AnswerRecord]:
        items = ((rec, questions.get((rec.exam_id, rec.question_id))) for rec in store.records())
        with job.executor(default_workers=1) as executor:
            for entry in executor.map(task, items, batch=BATCH_PER_TASK):
                ref = entry.record
                groups.setdefault((ref.model, ref.configuration, ref.variant), _Group()).add(entry)
                total.add(entry)
                if entry.format is not None:
                    _add_compliance(compliance, ref.model, *summarize_compliance([(ref.model, entry.format)]))
                yield entry

    def summary() -> AnswersSummary:
        return AnswersSummary(rules={"latex": role_rules.latex, "markup": role_rules.markup} if role_rules else None,
                              summary=_summaries(groups), compliance=list(compliance.values()),
                              overall=_summaries({("all", "all", "all"): total})[0] if total.records else None)

    path = job.write(ANSWERS, entries(), summary)
    return Outcome.ok(summary(), path)


def describe(summary: AnswersSummary) -> list[str]:
    """The final answers the checker found correct, per model and configuration (original prompts);
    then the output-quality counts over every group."""
    totals = {"degenerate": sum(s.degenerate for s in summary.summary),
              **{k: sum(s.quality.get(k, 0) for s in summary.summary) for k in COUNTED_FLAGS}}
    counts = ", ".join(f"{k} {v}" for k, v in totals.items() if v)
    return [*correct_lines(summary.summary), f"output quality: {counts or 'no flags'}"]




__all__ = ["ANALYZER", "ANSWERS", "AccuracySummary", "AnswerRecord", "AnswersOptions", "AnswersSummary",
           "check_record", "stored_quality"]

ANALYZER = Analyzer(name="answers", title="final answers: equivalence verdicts, format compliance, quality flags",
                    options=AnswersOptions, summary=AnswersSummary, run=run, writes=(ANSWERS,),
                    describe=describe)
