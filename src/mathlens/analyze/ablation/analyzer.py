"""Sensitivity of a stored run: question metrics, the exam table, flags — no model calls.

`compute_sensitivity(store, config)` reads the run's records and questions and returns a
`SensitivityReport`; the `sensitivity` analyzer (`ANALYZER`, also behind `mathlens sensitivity`)
writes it as `analysis/sensitivity.jsonl` (the `SENSITIVITY` document: one `QuestionSensitivity`
per question, model, configuration; the rest in the summary) and `analysis/sensitivity_exams.csv`.
Degenerate responses are left out unless the option `include_degenerate` is true (see
`metrics`); `excluded_degenerate` counts them over the whole run.

Memory does not grow with the run: records are appended in completion order, so a question's
records are scattered through `records.jsonl`. A first pass keeps only a byte offset per record,
grouped by (model, configuration, exam, question) in order of first appearance (`_group_offsets`);
a second pass reads one group at a time by offset and hands it, with its question and its stored
flow summaries (fetched by offset from the flow document), to the job's executor
(`SensitivityTask`; Ray tasks with ``--executor ray``). Entries stream to disk in group order; the
exam table keeps one slim copy (no pair details) per question, which it needs for its bootstrap.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mathlens.analyze.ablation.divergence import TOKEN_PATTERN
from mathlens.analyze.ablation.flags import FlagConfig
from mathlens.analyze.ablation.metrics import AnswerPairs, QuestionSensitivity, SensitivityConfig, question_sensitivity
from mathlens.analyze.ablation.outcomes import FlowSummary, answer_source, from_flow_result
from mathlens.analyze.ablation.tables import ExamRow, exam_rows, rows_csv
from mathlens.analyze.executor import Executor, LocalExecutor
from mathlens.analyze.flow.models import DepthDefinition
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.errors import UserError
from mathlens.items.schema import Exam, Question
from mathlens.runs.documents import DocumentSpec
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

GroupKey = tuple[str, str, str, str]
#: question groups per executor task
GROUPS_PER_TASK = 4

VECTORISER_NOTE = (
    "TF-IDF (scikit-learn, l2 norm, smooth idf) fitted per question, model, configuration and repeat on the "
    f"original response plus the responses to that question's variants; tokens: {TOKEN_PATTERN!r}, lowercased"
)


class AblationSettings(BaseModel):
    """The ablation the run was made with, as its manifest records it."""

    elements: list[str] = Field(default_factory=list)
    pairs: bool = False
    paraphrases: bool = False


class FlagThresholds(BaseModel):
    """What the flags were raised against: a flag is raised when its value is strictly above."""

    complexity_max: float | None = None
    phrase_sensitivity_max: float | None = None
    flag_meaning_preserving_flips: bool = True


class BootstrapSettings(BaseModel):
    """How the intervals of the exam rows were drawn."""

    n_resamples: int = 0
    confidence: float = 0.95
    seed: int = 0
    #: what one resample draws (whole questions)
    resampled: str = "questions"


class SensitivitySummary(BaseModel):
    """The summary of the sensitivity document (its entries are the `QuestionSensitivity`s)."""

    run_id: str
    status: str
    note: str = ""
    ablation: AblationSettings | None = None
    vectoriser: str = VECTORISER_NOTE
    thresholds: FlagThresholds = Field(default_factory=FlagThresholds)
    bootstrap: BootstrapSettings = Field(default_factory=BootstrapSettings)
    n_records: int = 0
    n_questions: int = 0
    include_degenerate: bool = False
    excluded_degenerate: int = 0
    excluded_questions: int = 0
    #: single-element pairs whose final answers were compared (the answer-flip rate's base), and the
    #: pairs left out because a response states no final answer / was cut by the token cap
    answer_pairs: AnswerPairs = Field(default_factory=AnswerPairs)
    answer_source: str = ""
    flow_source: str | None = None
    exams: list[ExamRow] = Field(default_factory=list)


class SensitivityReport(SensitivitySummary):
    """Everything `mathlens sensitivity` computes for one run: the summary and every question."""

    questions: list[QuestionSensitivity] = Field(default_factory=list)


#: `analysis/sensitivity.jsonl`: one entry per question, model and configuration.
SENSITIVITY = DocumentSpec("sensitivity", 2, QuestionSensitivity, SensitivitySummary,
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


@dataclass
class _Groups:
    """First pass over `records.jsonl`: byte offsets of each group's records, in order of first
    appearance, and what the summary needs about the records as a whole."""

    offsets: dict[GroupKey, array[int]] = field(default_factory=dict)
    n_records: int = 0
    has_variants: bool = False


def _group_offsets(store: RunStore) -> _Groups:
    """(model, configuration, exam, question) -> offsets of its records (as `store.records()` reads them)."""
    out = _Groups()
    for offset, rec in _scan_records(store):
        key = (rec.model, rec.configuration, rec.exam_id, rec.question_id)
        out.offsets.setdefault(key, array("q")).append(offset)
        out.n_records += 1
        out.has_variants |= rec.variant.name != "original"
    return out


def _scan_records(store: RunStore) -> Iterator[tuple[int, RunRecord]]:
    """(byte offset, record) for every complete record: the lines `RunStore.records` yields."""
    if not store.records_path.exists():
        return
    offsets = _line_offsets(store.records_path)
    for rec in store.records():
        yield next(offsets), rec


def _line_offsets(path: Path) -> Iterator[int]:
    with path.open("rb") as fh:
        offset = 0
        for line in fh:
            yield offset
            offset += len(line)


def _read_group(fh: Any, path: Path, offsets: array[int]) -> list[RunRecord]:
    out = []
    for offset in offsets:
        fh.seek(offset)
        line = fh.readline()
        try:
            out.append(RunRecord.model_validate_json(line))
        except ValueError as exc:  # the file changed under us since the first pass
            raise UserError(f"{path} at byte {offset}: not a valid record ({exc})") from None
    return out


class _StoredFlows:
    """Flow summaries of the run's flow document, fetched by record key through its offset index."""

    def __init__(self, root: Path) -> None:
        from mathlens.analyze.flow.models import FLOW
        from mathlens.runs.documents import DocumentError

        self.root, self.spec = root, FLOW
        try:
            self.index = FLOW.index(root)
        except DocumentError:
            self.index = {}  # an older layout: responses are analysed afresh (see `outcomes.stored_flows`)

    def __bool__(self) -> bool:
        return bool(self.index)

    def of(self, records: list[RunRecord]) -> dict[str, FlowSummary]:
        out = {}
        for rec in records:
            for offset in self.index.get(rec.key, ())[:1]:
                e = self.spec.entry_at(self.root, offset)
                if e.status == "ok" and e.result is not None:
                    out[rec.key] = from_flow_result(e.result, "flow (stored)")
        return out


@dataclass(frozen=True)
class SensitivityTask:
    """What an executor runs per group (module level, so it pickles to Ray workers)."""

    config: SensitivityConfig

    def __call__(self, item: tuple[list[RunRecord], Question | None, dict[str, FlowSummary]]) -> QuestionSensitivity:
        records, question, flows = item
        return question_sensitivity(records, question, self.config, flows)


@dataclass
class _Stream:
    """The question entries of a run as a stream, and the summary accumulated while they pass."""

    store: RunStore
    config: SensitivityConfig
    executor: Executor
    slim: list[QuestionSensitivity] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.questions, self.exams, self.note = _question_index(self.store)
        self.groups = _group_offsets(self.store)
        self.flows = _StoredFlows(self.store.root) if self.config.flow else None
        if self.flows and self.config.flags.complexity_max is None:
            # stored complexity scores are on the scale their flow analysis chose: flag on that scale
            stored = _stored_depth(self.store)
            if stored is not None and stored != self.config.flags.complexity_depth:
                self.config = replace(self.config, flags=replace(self.config.flags, complexity_depth=stored))

    def _items(self) -> Iterator[tuple[list[RunRecord], Question | None, dict[str, FlowSummary]]]:
        path = self.store.records_path
        if not self.groups.offsets:
            return
        with path.open("rb") as fh:
            for (_, _, exam_id, question_id), offsets in self.groups.offsets.items():
                records = _read_group(fh, path, offsets)
                flows = self.flows.of(records) if self.flows else {}
                yield records, self.questions.get((exam_id, question_id)), flows

    def entries(self) -> Iterator[QuestionSensitivity]:
        for q in self.executor.map(SensitivityTask(self.config), self._items(), batch=GROUPS_PER_TASK):
            self.slim.append(q.model_copy(update={"details": [], "impact": [], "pairs": None,
                                                  "paraphrases": None, "consistency": None}))
            yield q

    def summary(self) -> SensitivitySummary:
        manifest = self.store.manifest()
        config, note, results = self.config, self.note, self.slim
        status = "ok" if self.groups.has_variants else "no_variants"
        if not self.groups.n_records:
            status, note = "empty", "the run has no records yet"
        elif not self.groups.has_variants:
            note = note or "the run has no ablation variants (run it with --ablate); only consistency is reported"
        return SensitivitySummary(
            run_id=manifest.run_id, status=status, note=note,
            ablation=None if manifest.ablation is None else AblationSettings.model_validate(manifest.ablation),
            thresholds=FlagThresholds(complexity_max=config.flags.complexity_threshold,
                                      phrase_sensitivity_max=config.flags.phrase_sensitivity_max,
                                      flag_meaning_preserving_flips=config.flags.flag_meaning_preserving_flips),
            bootstrap=BootstrapSettings(n_resamples=config.n_resamples, confidence=config.confidence,
                                        seed=config.seed),
            n_records=self.groups.n_records, n_questions=len(results),
            include_degenerate=config.include_degenerate,
            excluded_degenerate=sum(q.excluded_degenerate for q in results),
            excluded_questions=sum(q.status == "degenerate" for q in results),
            answer_pairs=AnswerPairs.total(q.answer_pairs for q in results),
            answer_source=answer_source(),
            flow_source=next((q.flow_source for q in results if q.flow_source), None),
            exams=exam_rows(results, self.exams, config))


def compute_sensitivity(store: RunStore, config: SensitivityConfig | None = None) -> SensitivityReport:
    """Recompute every sensitivity metric of the run in `store` from its records (all in memory:
    the analyzer streams the same entries to its document instead)."""
    stream = _Stream(store, config or SensitivityConfig(), LocalExecutor(1))
    questions = list(stream.entries())
    return SensitivityReport(**stream.summary().model_dump(), questions=questions)


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
    summary = SensitivitySummary.model_validate(report.model_dump(exclude={"questions"}))
    return _write(job, iter(report.questions), lambda: summary)[0]


def _write(job: AnalysisJob[SensitivityOptions], entries: Iterator[QuestionSensitivity],
           summary: Callable[[], SensitivitySummary]) -> tuple[Path, SensitivitySummary]:
    made: list[SensitivitySummary] = []

    def once() -> SensitivitySummary:  # computed after the entries have streamed past
        made.append(summary())
        return made[0]

    path = job.write(SENSITIVITY, entries, once)
    csv_path = job.store.analysis_dir / "sensitivity_exams.csv"
    tmp = csv_path.with_suffix(".csv.tmp")
    tmp.write_text(rows_csv(made[0].exams), encoding="utf-8")
    tmp.replace(csv_path)
    return path, made[0]


def read_report(root: Path) -> SensitivityReport | None:
    """The stored sensitivity document as one `SensitivityReport` (None when it has not run)."""
    doc = SENSITIVITY.read(root)
    if doc is None:
        return None
    return SensitivityReport(**doc.summary.model_dump(), questions=list(SENSITIVITY.entries(root)))


def run(job: AnalysisJob[SensitivityOptions]) -> Outcome[SensitivitySummary]:
    """Compute and write question by question (see the module notes); the summary."""
    with job.executor(default_workers=1) as executor:
        stream = _Stream(job.store, job.options.config(), executor)
        flagged: list[str] = []

        def entries() -> Iterator[QuestionSensitivity]:
            for q in stream.entries():
                if q.flags:
                    flagged.append(f"{q.exam_id}/{q.question_id} ({', '.join(f.name for f in q.flags)})")
                yield q

        path, report = _write(job, entries(), stream.summary)
    notes = [f"flagged for instructors: {'; '.join(flagged)}"] if flagged else []
    summary = SensitivitySummary.model_validate(report.model_dump(exclude={"questions"}))
    return Outcome.ok(summary, path, status=report.status, notes=notes)


def describe(summary: SensitivitySummary) -> list[str]:
    """Questions and exam rows computed; responses left out as degenerate."""
    lines = [f"{summary.n_questions} question(s), {len(summary.exams)} exam row(s)"]
    if summary.note:
        lines.append(summary.note)
    if summary.excluded_degenerate:
        lines.append(f"excluded as degenerate: {summary.excluded_degenerate} response(s)")
    return lines


ANALYZER = Analyzer(name="sensitivity", title="ablation sensitivity: robustness, phrase sensitivity, impact, flags",
                    options=SensitivityOptions, summary=SensitivitySummary, run=run, writes=(SENSITIVITY,),
                    reads=("flow",), describe=describe)
