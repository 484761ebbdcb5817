"""The `answers` analyzer: final-answer verdicts and format compliance for every record of a run.

Writes `analysis/answers.json`: one entry per record (verdict, predicted and reference answers,
parsed forms, format violations, output-quality flags) and a summary per model and configuration
(verdict counts, and counts of degenerate, truncated and answerless responses). The format rules
come from the run's system role (`compliance.rules_from_role`); a role that forbids neither
LaTeX nor markup still gets its violations counted, with `rules` left empty in the output.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from mathlens.analyze.grading.compliance import (
    ComplianceSummary,
    FormatReport,
    FormatRules,
    format_violations,
    rules_from_role,
    summarize_compliance,
)
from mathlens.analyze.grading.equivalence import AnswerVerdict, EquivalenceConfig, check_answer
from mathlens.analyze.quality import COUNTED_FLAGS, QualityFlags, flag_counts, record_quality
from mathlens.items.schema import Question
from mathlens.runs.store import RunStore

RecordStatus = Literal["correct", "incorrect", "unparseable", "unverifiable", "no_reference", "no_response"]


class AnswerRecord(BaseModel):
    """The answer check of one run record."""

    key: str
    model: str
    configuration: str
    exam_id: str
    question_id: str
    variant: str
    repeat: int
    status: RecordStatus
    truncated: bool = False
    verdict: AnswerVerdict | None = None
    format: FormatReport | None = None
    quality: QualityFlags | None = None


class AccuracySummary(BaseModel):
    """Verdict counts for one model and configuration; `accuracy` over the checkable records.

    `degenerate`, `truncated` and `no_final_answer` count the records (with a response) carrying
    that quality flag; `quality` counts every flag (see `mathlens.analyze.quality`). Accuracy keeps
    degenerate responses: a copy of the prompt is a wrong answer.
    """

    model: str
    configuration: str
    records: int
    counts: dict[str, int]
    accuracy: float | None
    degenerate: int = 0
    truncated: int = 0
    no_final_answer: int = 0
    quality: dict[str, int] = Field(default_factory=dict)


class AnswersAnalysis(BaseModel):
    """Everything `analysis/answers.json` holds."""

    rules: dict[str, bool] | None
    summary: list[AccuracySummary]
    compliance: list[ComplianceSummary]
    records: list[AnswerRecord]


def question_index(store: RunStore) -> dict[tuple[str, str], Question]:
    """(exam id, question id) -> question, for every item set of the run (its own copy)."""
    return store.questions()


def _summaries(records: list[AnswerRecord]) -> list[AccuracySummary]:
    groups: dict[tuple[str, str], list[AnswerRecord]] = defaultdict(list)
    for r in records:
        groups[(r.model, r.configuration)].append(r)
    out = []
    for (model, conf), rs in groups.items():
        counts: dict[str, int] = defaultdict(int)
        for r in rs:
            counts[r.status] += 1
        checkable = counts["correct"] + counts["incorrect"] + counts["unparseable"] + counts["no_response"]
        quality = flag_counts(r.quality for r in rs)
        out.append(AccuracySummary(model=model, configuration=conf, records=len(rs), counts=dict(counts),
                                   accuracy=counts["correct"] / checkable if checkable else None,
                                   degenerate=quality["degenerate"], truncated=quality["truncated"],
                                   no_final_answer=quality["no_final_answer"], quality=quality))
    return out


def check_run(store: RunStore, config: EquivalenceConfig | None = None) -> AnswersAnalysis:
    """Check every record of the run in `store` (no model calls)."""
    manifest = store.manifest()
    questions = question_index(store)
    role_rules = rules_from_role(manifest.system_role)
    rules = role_rules or FormatRules(latex=False, markup=False)
    results: list[AnswerRecord] = []
    for rec in store.records():
        q = questions.get((rec.exam_id, rec.question_id))
        base: dict[str, Any] = {"key": rec.key, "model": rec.model, "configuration": rec.configuration,
                                "exam_id": rec.exam_id, "question_id": rec.question_id,
                                "variant": rec.variant.name, "repeat": rec.repeat, "truncated": rec.truncated}
        # Error records have no response to judge, so no quality flags; an empty ok response has some.
        quality = record_quality(rec, q)
        base["quality"] = quality
        if rec.status != "ok" or not rec.response:
            results.append(AnswerRecord(status="no_response", **base))
            continue
        fmt = format_violations(rec.response, rules)
        if q is None:
            results.append(AnswerRecord(status="no_reference", format=fmt, **base))
            continue
        verdict = check_answer(rec.response, q, config or EquivalenceConfig())
        results.append(AnswerRecord(status=verdict.status, verdict=verdict, format=fmt, **base))
    compliance = summarize_compliance((r.model, r.format) for r in results if r.format is not None)
    return AnswersAnalysis(
        rules={"latex": role_rules.latex, "markup": role_rules.markup} if role_rules else None,
        summary=_summaries(results), compliance=compliance, records=results,
    )


def analyze_answers(store: RunStore, options: dict[str, Any]) -> dict[str, Any]:
    """Registry entry point: write `analysis/answers.json` and return the per-model summary.

    Options: `rel_tol`, `timeout_s`, `value_only_choice` (see `EquivalenceConfig`).
    """
    known = {"rel_tol", "abs_tol", "timeout_s", "value_only_choice"}
    config = EquivalenceConfig(**{k: v for k, v in options.items() if k in known})
    analysis = check_run(store, config)
    path = store.write_analysis("answers", analysis)
    return {
        "status": "ok",
        "path": str(path),
        "records": len(analysis.records),
        "summary": [s.model_dump() for s in analysis.summary],
        "compliance": [{"model": c.model, "rate": c.rate} for c in analysis.compliance],
        "quality": {"degenerate": sum(s.degenerate for s in analysis.summary),
                    **{k: sum(s.quality.get(k, 0) for s in analysis.summary) for k in COUNTED_FLAGS}},
    }
