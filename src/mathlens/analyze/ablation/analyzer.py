"""Sensitivity of a stored run: question metrics, the exam table, flags — no model calls.

`compute_sensitivity(store, config)` reads the run's records and questions and returns a
`SensitivityReport`; the `sensitivity` analyzer (`ANALYZER`, also behind `mathlens sensitivity`)
writes it as `analysis/sensitivity.jsonl` (the `SENSITIVITY` document: one `QuestionSensitivity`
per question, model, configuration; the rest in the summary) and `analysis/sensitivity_exams.csv`.
Degenerate responses are left out unless the option `include_degenerate` is true (see
`metrics`); `excluded_degenerate` counts them over the whole run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mathlens.analyze.ablation.divergence import TOKEN_PATTERN
from mathlens.analyze.ablation.flags import FlagConfig
from mathlens.analyze.ablation.metrics import QuestionSensitivity, SensitivityConfig, question_sensitivity
from mathlens.analyze.ablation.outcomes import answer_source, stored_flows
from mathlens.analyze.ablation.tables import ExamRow, exam_rows, rows_csv
from mathlens.analyze.flow.models import DepthDefinition
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions
from mathlens.errors import UserError
from mathlens.items.schema import Exam, Question
from mathlens.runs.documents import DocumentSpec
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

VECTORISER_NOTE = (
    "TF-IDF (scikit-learn, l2 norm, smooth idf) fitted per question, model, configuration and repeat on the "
    f"original response plus the responses to that question's variants; tokens: {TOKEN_PATTERN!r}, lowercased"
)


class SensitivitySummary(BaseModel):
    """The summary of the sensitivity document (its entries are the `QuestionSensitivity`s)."""

    run_id: str
    status: str
    note: str = ""
    ablation: dict[str, Any] | None = None
    vectoriser: str = VECTORISER_NOTE
    thresholds: dict[str, Any] = Field(default_factory=dict)
    bootstrap: dict[str, Any] = Field(default_factory=dict)
    n_records: int = 0
    n_questions: int = 0
    include_degenerate: bool = False
    excluded_degenerate: int = 0
    excluded_questions: int = 0
    answer_source: str = ""
    flow_source: str | None = None
    exams: list[ExamRow] = Field(default_factory=list)


class SensitivityReport(SensitivitySummary):
    """Everything `mathlens sensitivity` computes for one run: the summary and every question."""

    questions: list[QuestionSensitivity] = Field(default_factory=list)


#: `analysis/sensitivity.jsonl`: one entry per question, model and configuration.
SENSITIVITY = DocumentSpec("sensitivity", 1, QuestionSensitivity, SensitivitySummary,
                           rerun="mathlens sensitivity RUN")


class SensitivityOptions(AnalyzerOptions):
    """What to compute (`SensitivityConfig`) and the flag thresholds (`FlagConfig`)."""

    flow: bool = Field(True, description="step counts and reasoning patterns (reuses the flow analysis)")
    answers: bool = Field(True, description="final-answer flips")
    n_resamples: int = Field(2000, ge=0, le=1_000_000)
    confidence: float = Field(0.95, gt=0, lt=1)
    seed: int = 0
    include_degenerate: bool = False
    complexity_max: float | None = FlagConfig.complexity_max
    phrase_sensitivity_max: float = FlagConfig.phrase_sensitivity_max
    flag_meaning_preserving_flips: bool = FlagConfig.flag_meaning_preserving_flips

    def config(self) -> SensitivityConfig:
        return SensitivityConfig(
            flow=self.flow, answers=self.answers, n_resamples=self.n_resamples, confidence=self.confidence,
            seed=self.seed, include_degenerate=self.include_degenerate,
            flags=FlagConfig(complexity_max=self.complexity_max, phrase_sensitivity_max=self.phrase_sensitivity_max,
                             flag_meaning_preserving_flips=self.flag_meaning_preserving_flips))


def _question_index(store: RunStore) -> tuple[dict[tuple[str, str], Question], dict[str, tuple[str, str | None]],
                                              str]:
    try:
        exams: list[Exam] = store.exams()
    except UserError as exc:
        # Metrics need only the records; the question is used for answer extraction and names.
        return {}, {}, f"questions not reloaded ({exc}); final answers read without them"
    questions = {(e.id, q.id): q for e in exams for q in e.questions}
    return questions, {e.id: (e.name, e.course) for e in exams}, ""


def compute_sensitivity(store: RunStore, config: SensitivityConfig | None = None) -> SensitivityReport:
    """Recompute every sensitivity metric of the run in `store` from its records."""
    config = config or SensitivityConfig()
    manifest = store.manifest()
    records: list[RunRecord] = list(store.records())
    questions, exams, note = _question_index(store)
    groups: dict[tuple[str, str, str, str], list[RunRecord]] = defaultdict(list)
    for r in records:
        groups[(r.model, r.configuration, r.exam_id, r.question_id)].append(r)
    flows = stored_flows(store.root) if config.flow else {}
    if flows and config.flags.complexity_max is None:
        # stored complexity scores are on the scale their flow analysis chose: flag on that scale
        stored = _stored_depth(store)
        if stored is not None and stored != config.flags.complexity_depth:
            config = replace(config, flags=replace(config.flags, complexity_depth=stored))
    results = [question_sensitivity(rs, questions.get((key[2], key[3])), config, flows)
               for key, rs in groups.items()]
    has_variants = any(r.variant.name != "original" for r in records)
    status = "ok" if has_variants else "no_variants"
    if not records:
        status, note = "empty", "the run has no records yet"
    elif not has_variants:
        note = note or "the run has no ablation variants (run it with --ablate); only consistency is reported"
    return SensitivityReport(
        run_id=manifest.run_id, status=status, note=note, ablation=manifest.ablation,
        thresholds={"complexity_max": config.flags.complexity_threshold,
                    "phrase_sensitivity_max": config.flags.phrase_sensitivity_max,
                    "flag_meaning_preserving_flips": config.flags.flag_meaning_preserving_flips},
        bootstrap={"n_resamples": config.n_resamples, "confidence": config.confidence, "seed": config.seed,
                   "resampled": "questions"},
        n_records=len(records), n_questions=len(results), include_degenerate=config.include_degenerate,
        excluded_degenerate=sum(q.excluded_degenerate for q in results),
        excluded_questions=sum(q.status == "degenerate" for q in results),
        answer_source=answer_source(),
        flow_source=next((q.flow_source for q in results if q.flow_source), None),
        exams=exam_rows(results, exams, config), questions=results,
    )


def _stored_depth(store: RunStore) -> DepthDefinition | None:
    """The complexity definition the run's flow document was computed with (None if unreadable)."""
    from mathlens.analyze.flow.models import FLOW
    from mathlens.runs.documents import DocumentError

    try:
        doc = FLOW.read(store.root)
    except DocumentError:
        return None
    return doc.summary.depth_definition if doc is not None else None


def write_report(job: AnalysisJob[SensitivityOptions], report: SensitivityReport) -> Path:
    """Write the `SENSITIVITY` document and the exam table `analysis/sensitivity_exams.csv`."""
    path = job.write(SENSITIVITY, iter(report.questions),
                     SensitivitySummary.model_validate(report.model_dump(exclude={"questions"})))
    csv_path = job.store.analysis_dir / "sensitivity_exams.csv"
    tmp = csv_path.with_suffix(".csv.tmp")
    tmp.write_text(rows_csv(report.exams), encoding="utf-8")
    tmp.replace(csv_path)
    return path


def read_report(root: Path) -> SensitivityReport | None:
    """The stored sensitivity document as one `SensitivityReport` (None when it has not run)."""
    doc = SENSITIVITY.read(root)
    if doc is None:
        return None
    return SensitivityReport(**doc.summary.model_dump(), questions=list(SENSITIVITY.entries(root)))


def run(job: AnalysisJob[SensitivityOptions]) -> dict[str, Any]:
    """Compute, write, and return a short summary."""
    report = compute_sensitivity(job.store, job.options.config())
    path = write_report(job, report)
    flagged = [f"{q.exam_id}/{q.question_id}" for q in report.questions if q.flags]
    return {"status": report.status, "path": str(path), "questions": report.n_questions,
            "exam_rows": len(report.exams), "flagged": flagged, "note": report.note,
            "excluded_degenerate": report.excluded_degenerate, "excluded_questions": report.excluded_questions,
            "include_degenerate": report.include_degenerate}


ANALYZER = Analyzer(name="sensitivity", title="ablation sensitivity: robustness, phrase sensitivity, impact, flags",
                    options=SensitivityOptions, run=run, writes=(SENSITIVITY,), reads=("flow",))
