"""The `answers` analyzer: final-answer verdicts and format compliance for every record of a run.

Writes `analysis/answers.jsonl` (the `ANSWERS` document): one `AnswerRecord` per record (verdict,
predicted and reference answers, parsed forms, format violations, output-quality flags), and a
summary per model, configuration and variant (verdict counts; counts of degenerate, truncated and
answerless responses) with format compliance per model. The format rules come from the run's
system role (`compliance.rules_from_role`); a role that forbids neither LaTeX nor markup still
gets its violations counted, with `rules` left empty in the output. Entries stream to disk as
they are checked; the summary is accumulated on the way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field

from mathlens.analyze.grading.answer_records import (
    ANSWERS,
    AccuracySummary,
    AnswerRecord,
    AnswersSummary,
    stored_quality,
)
from mathlens.analyze.grading.compliance import (
    FormatReport,
    FormatRules,
    format_violations,
    rules_from_role,
    summarize_compliance,
)
from mathlens.analyze.grading.equivalence import EquivalenceConfig, check_answer
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions
from mathlens.analyze.quality import COUNTED_FLAGS, QualityFlags, flag_counts, record_quality
from mathlens.items.schema import Question
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore


class AnswersOptions(AnalyzerOptions):
    """Tolerances of the equivalence check (see `EquivalenceConfig`)."""

    rel_tol: float = Field(EquivalenceConfig.rel_tol, gt=0)
    abs_tol: float = Field(EquivalenceConfig.abs_tol, ge=0)
    timeout_s: float = Field(EquivalenceConfig.timeout_s, gt=0, le=600)
    value_only_choice: Literal["incorrect", "correct"] = EquivalenceConfig.value_only_choice

    def config(self) -> EquivalenceConfig:
        return EquivalenceConfig(rel_tol=self.rel_tol, abs_tol=self.abs_tol, timeout_s=self.timeout_s,
                                 value_only_choice=self.value_only_choice)


def question_index(store: RunStore) -> dict[tuple[str, str], Question]:
    """(exam id, question id) -> question, for every item set of the run (its own copy)."""
    return store.questions()


def _summaries(groups: dict[tuple[str, str, str], list[tuple[str, QualityFlags | None]]]) -> list[AccuracySummary]:
    out = []
    for (model, conf, variant), rs in groups.items():
        counts: dict[str, int] = defaultdict(int)
        for status, _ in rs:
            counts[status] += 1
        checkable = counts["correct"] + counts["incorrect"] + counts["unparseable"] + counts["no_response"]
        quality = flag_counts(q for _, q in rs)
        out.append(AccuracySummary(model=model, configuration=conf, variant=variant, records=len(rs),
                                   counts=dict(counts), accuracy=counts["correct"] / checkable if checkable else None,
                                   degenerate=quality["degenerate"], truncated=quality["truncated"],
                                   no_final_answer=quality["no_final_answer"], quality=quality))
    return out


def check_record(rec: RunRecord, question: Question | None, rules: FormatRules,
                 config: EquivalenceConfig) -> AnswerRecord:
    """The answer check of one record (no model calls)."""
    base: dict[str, Any] = {"record": RecordRef.of(rec), "truncated": rec.truncated,
                            # error records have no response, so no flags; an empty ok response has some
                            "quality": record_quality(rec, question)}
    if rec.status != "ok" or not rec.response:
        return AnswerRecord(status="no_response", **base)
    fmt = format_violations(rec.response, rules)
    if question is None:
        return AnswerRecord(status="no_reference", format=fmt, **base)
    verdict = check_answer(rec.response, question, config)
    return AnswerRecord(status=verdict.status, verdict=verdict, format=fmt, **base)


def run(job: AnalysisJob[AnswersOptions]) -> dict[str, Any]:
    """Check every record; write `analysis/answers.jsonl`; return the per-group summary."""
    store = job.store
    role_rules = rules_from_role(store.manifest().system_role)
    rules = role_rules or FormatRules(latex=False, markup=False)
    questions = question_index(store)
    config = job.options.config()
    groups: dict[tuple[str, str, str], list[tuple[str, QualityFlags | None]]] = defaultdict(list)
    formats: list[tuple[str, FormatReport]] = []

    def entries() -> Iterator[AnswerRecord]:
        for rec in store.records():
            entry = check_record(rec, questions.get((rec.exam_id, rec.question_id)), rules, config)
            groups[(rec.model, rec.configuration, rec.variant.name)].append((entry.status, entry.quality))
            if entry.format is not None:
                formats.append((rec.model, entry.format))
            yield entry

    def summary() -> AnswersSummary:
        return AnswersSummary(rules={"latex": role_rules.latex, "markup": role_rules.markup} if role_rules else None,
                              summary=_summaries(groups), compliance=summarize_compliance(formats))

    path = job.write(ANSWERS, entries(), summary)
    done = summary()
    return {
        "status": "ok",
        "path": str(path),
        "records": sum(len(v) for v in groups.values()),
        "summary": [s.model_dump() for s in done.summary],
        "compliance": [{"model": c.model, "rate": c.rate} for c in done.compliance],
        "quality": {"degenerate": sum(s.degenerate for s in done.summary),
                    **{k: sum(s.quality.get(k, 0) for s in done.summary) for k in COUNTED_FLAGS}},
    }


__all__ = ["ANALYZER", "ANSWERS", "AccuracySummary", "AnswerRecord", "AnswersOptions", "AnswersSummary",
           "check_record", "stored_quality"]

ANALYZER = Analyzer(name="answers", title="final answers: equivalence verdicts, format compliance, quality flags",
                    options=AnswersOptions, run=run, writes=(ANSWERS,))
