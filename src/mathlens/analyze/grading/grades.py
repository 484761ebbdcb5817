"""Grade a whole run with a judge: the `grades` analyzer and its documents.

`analysis/grades.jsonl` holds one `Grade` per graded record and judge run (the record's identity
is the grade's `RecordRef`); its summary names the rubric, the judge and the counts per model,
configuration and variant. Human grades imported from worksheets (`worksheet.py`) go to
`analysis/human_grades.jsonl`, same entries. After grading (or an import) the tables of
`tables.py` are recomputed from both and written to `analysis/grade_tables.jsonl`.

Only original prompts are graded by default (ablation variants are probes, not exam answers);
the `all_variants` option grades them too, and each variant then has its own rows in the tables.
Every repeat of a question is graded, so Table 6 can average over repeats and the consistency
of repeated runs (seed 000, §5.3) shows in the spread.

By default (`with_evidence`) the judge is shown mathlens' answer check and, when the run has a
flow analysis, the invalid steps with the values expected; the flow analysis is read if present,
never run for this. Every grade is then reconciled with those checks (`reconcile.py`): a decisive
final-answer verdict supplies that criterion's points unless `final_answer` is `judge`, and the
summary counts and lists every disagreement (`JudgeReliability`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.judge import FlowEvidence, Grade, JudgeOptions, grade_records
from mathlens.analyze.grading.reconcile import FinalAnswerPolicy, JudgeReliability, judge_reliability, reconcile
from mathlens.analyze.grading.rubric import Rubric, resolve_rubric
from mathlens.analyze.grading.tables import GRADE_TABLES, GradeTables, grade_tables, write_table_csvs
from mathlens.analyze.judging.entries import StepEvidence
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.errors import UserError
from mathlens.flags import MAX_TOKENS, Flag
from mathlens.items.schema import Question
from mathlens.models.cache import ResponseCache
from mathlens.models.model import Model
from mathlens.models.registry import get_model
from mathlens.runs.documents import DocumentSpec, DocumentVersionError, RecordRef
from mathlens.runs.records import ModelEntry, RunRecord
from mathlens.runs.store import RunStore


class GroupCounts(BaseModel):
    """Grades of one (model, configuration, variant) cell, by status."""

    model: str
    configuration: str
    variant: str
    graded: int = 0
    ungraded: int = 0


class JudgeSettings(BaseModel):
    """How the judge was asked (recorded with its grades)."""

    #: the judge as named (spec and options) with its backend's identity (what cache keys are built from)
    model: ModelEntry
    with_evidence: bool = False
    max_tokens: int
    temperature: float
    seed: int
    runs: int = 1
    #: who scores the final-answer criterion: the checker where decisive (default), or the judge alone
    final_answer: FinalAnswerPolicy = "checker"


class GradesSummary(BaseModel):
    """The summary of `analysis/grades.jsonl` (a judge) or `analysis/human_grades.jsonl` (humans)."""

    rubric: Rubric
    grader_kind: Literal["judge", "human"] = "judge"
    judge: JudgeSettings | None = None
    graders: list[str] = Field(default_factory=list)
    #: grades per grader (every status)
    by_grader: dict[str, int] = Field(default_factory=dict)
    graded: int = 0
    ungraded: int = 0
    groups: list[GroupCounts] = Field(default_factory=list)
    #: the judge's agreement with mathlens' checks (None for human grades and older documents)
    reliability: JudgeReliability | None = None

    @property
    def counts(self) -> dict[str, int]:
        return {"graded": self.graded, "ungraded": self.ungraded}


#: `analysis/grades.jsonl`: one `Grade` per graded record and judge run.
GRADES = DocumentSpec("grades", 2, Grade, GradesSummary, rerun="mathlens grade RUN")
#: `analysis/human_grades.jsonl`: one `Grade` per record and human grader (imported worksheets).
HUMAN_GRADES = DocumentSpec("human_grades", 2, Grade, GradesSummary,
                            rerun="mathlens grade RUN --import-human SHEET.csv")


class GradeOptions(AnalyzerOptions):
    """Options of the `grades` analyzer (`mathlens grade` flags)."""

    rubric: Annotated[str | None, Flag("--rubric")] = Field(
        None, description="built-in rubric id or YAML file (default: the run's earlier rubric, else calculus)")
    with_evidence: Annotated[bool, Flag("--with-evidence/--without-evidence")] = Field(
        True, description="show the judge mathlens' answer check and invalid steps (default: shown)")
    final_answer: Annotated[FinalAnswerPolicy, Flag("--final-answer")] = Field(
        "checker", description="who scores the final-answer criterion: the answer checker where it is decisive, "
                               "or the judge alone")
    judge_runs: Annotated[int, Flag("--judge-runs")] = Field(
        1, ge=1, le=20, description="grade each record N times (judge self-agreement)")
    max_tokens: Annotated[int, Flag("--max-tokens")] = Field(768, ge=16, le=MAX_TOKENS,
                                                                  description="token cap of each judge reply")
    limit: Annotated[int | None, Flag("--limit")] = Field(None, ge=1, le=10_000_000,
                                                                    description="grade only the first N records")
    all_variants: Annotated[bool, Flag("--all-variants")] = Field(
        False, description="grade ablation variants too (their own table rows)")


@dataclass(frozen=True)
class GradedRun:
    """Grades of a run with the summary they are stored with."""

    grades: list[Grade]
    summary: GradesSummary


def summarize(grades: list[Grade], rubric: Rubric, grader_kind: Literal["judge", "human"] = "judge",
              judge: JudgeSettings | None = None) -> GradesSummary:
    """Counts by status, overall and per (model, configuration, variant)."""
    cells: dict[tuple[str, str, str], Counter[str]] = {}
    for g in grades:
        ref = g.record
        cells.setdefault((ref.model, ref.configuration, ref.variant), Counter())[g.status] += 1
    groups = [GroupCounts(model=m, configuration=c, variant=v, graded=n["graded"], ungraded=n["ungraded"])
              for (m, c, v), n in cells.items()]
    reliability = judge_reliability(grades, judge.final_answer) if judge is not None else None
    return GradesSummary(rubric=rubric, grader_kind=grader_kind, judge=judge,
                         graders=sorted({g.grader for g in grades}),
                         by_grader=dict(sorted(Counter(g.grader for g in grades).items())),
                         graded=sum(g.status == "graded" for g in grades),
                         ungraded=sum(g.status == "ungraded" for g in grades), groups=groups,
                         reliability=reliability)


#: invalid steps shown to the judge per response (the first ones)
MAX_INVALID_STEPS = 3
#: characters of an invalid step's text and expected value shown to the judge
MAX_STEP_CHARS = 160


def flow_evidence(root: Path) -> dict[str, FlowEvidence]:
    """Record key -> the flow analysis's invalid steps (empty when the run has no flow analysis).

    Records whose flow analysis read a reasoning trace are left out: the judge grades the visible
    answer, and a step number of the trace would point at text the judge never sees."""
    out: dict[str, FlowEvidence] = {}
    for entry in FLOW.entries(root):
        if entry.trace:
            continue
        result = entry.result
        step = result.first_invalid_step if result is not None else None
        invalid: list[StepEvidence] = []
        for s in result.steps if result is not None else []:
            if s.verdict != "invalid" or len(invalid) >= MAX_INVALID_STEPS:
                continue
            claim = next((c for c in s.claims if c.status == "invalid"), None)
            text = claim.text if claim is not None else s.text
            invalid.append(StepEvidence(step=s.index, text=text[:MAX_STEP_CHARS],
                                        expected=(claim.expected if claim is not None else "")[:MAX_STEP_CHARS]))
        out[entry.record.key] = FlowEvidence(first_invalid_step=step, invalid_steps=tuple(invalid))
    return out


def gradable_records(store: RunStore, all_variants: bool = False, limit: int | None = None
                     ) -> list[tuple[RunRecord, Question]]:
    """The records a grader grades, with their questions, in run order: the original prompts,
    or every record with `all_variants`."""
    questions = store.questions()
    jobs = []
    for rec in store.records():
        if not all_variants and not RecordRef.of(rec).original:
            continue
        q = questions.get((rec.exam_id, rec.question_id))
        if q is None:
            continue
        jobs.append((rec, q))
        if limit is not None and len(jobs) >= limit:
            break
    if not jobs:
        raise UserError(f"{store.root}: no records to grade (did the run finish, and are its item files still there?)")
    return jobs


async def grade_run(store: RunStore, model: Model, rubric: Rubric, options: JudgeOptions, *,
                    limit: int | None = None, all_variants: bool = False, judge: ModelEntry | None = None,
                    on_done: Callable[[Grade], None] | None = None,
                    final_answer: FinalAnswerPolicy = "checker") -> GradedRun:
    """Grade the run's records with `model` and reconcile each grade with mathlens' checks (nothing
    is written: the analyzer writes `GRADES`). `judge` is how the model was named (spec and
    options), recorded in the summary; `final_answer` who scores that criterion (`reconcile.py`)."""
    flow = flow_evidence(store.root)
    jobs = [(rec, q, flow.get(rec.key)) for rec, q in gradable_records(store, all_variants, limit)]
    points = {rec.key: q.total_points for rec, q, _ in jobs}
    raw = await grade_records(model, jobs, rubric, options, on_done)
    grades = [reconcile(g, rubric, points.get(g.record.key), final_answer) for g in raw]
    named = judge or ModelEntry(spec=model.spec)
    settings = JudgeSettings(model=named.model_copy(update={"identity": model.identity()}),
                             with_evidence=options.with_evidence, max_tokens=options.max_tokens,
                             temperature=options.temperature, seed=options.seed, runs=options.runs,
                             final_answer=final_answer)
    return GradedRun(grades=grades, summary=summarize(grades, rubric, "judge", settings))


def rubric_for(root: Path, spec: str | None) -> Rubric:
    """The rubric named by `spec`; else the one the run's judge grades used; else the calculus rubric.
    Grades in an older layout are about to be rewritten, so their rubric is not looked at."""
    if spec is not None:
        return resolve_rubric(spec)
    previous = None
    with contextlib.suppress(DocumentVersionError):
        previous = GRADES.read(root)
    return previous.summary.rubric if previous is not None else resolve_rubric(None)


def all_grades(root: Path) -> list[Grade]:
    """Every judge grade and every imported human grade of the run."""
    return [*GRADES.entries(root), *HUMAN_GRADES.entries(root)]


def current_tables(store: RunStore) -> GradeTables | None:
    """Tables 6 and 7 from every grade of the run (None when it has none)."""
    return grade_tables(all_grades(store.root), store.exams())


def refresh_tables(store: RunStore, options: BaseModel | None = None) -> GradeTables | None:
    """Recompute Tables 6 and 7 and write them (`GRADE_TABLES`, `table6.csv`, `table7.csv`) outside
    the analyzer (after a worksheet import); None when the run has no grades."""
    tables = current_tables(store)
    if tables is not None:
        GRADE_TABLES.write(store.root, run_id=store.manifest().run_id,
                           records=store.snapshot(), entries=(), summary=tables,
                           options=options)
        write_table_csvs(store.analysis_dir, tables)
    return tables


async def _grade_with(job: AnalysisJob[GradeOptions], rubric: Rubric) -> GradedRun:
    entry, opts = job.require_judge(), job.options
    model = get_model(entry.spec, entry.options, cache=None if job.no_cache else ResponseCache())
    async with model:
        return await grade_run(job.store, model, rubric,
                               JudgeOptions(with_evidence=opts.with_evidence, max_tokens=opts.max_tokens,
                                            runs=opts.judge_runs),
                               limit=opts.limit, all_variants=opts.all_variants, judge=entry,
                               final_answer=opts.final_answer)


def run_grades(job: AnalysisJob[GradeOptions]) -> Outcome[GradesSummary]:
    """Grade the run with the judge, write `GRADES`, then recompute and write `GRADE_TABLES`."""
    rubric = rubric_for(job.store.root, job.options.rubric)
    graded = asyncio.run(_grade_with(job, rubric))
    paths = [job.write(GRADES, graded.grades, graded.summary)]
    tables = current_tables(job.store)
    if tables is not None:
        paths.append(job.write(GRADE_TABLES, (), tables))
        write_table_csvs(job.store.analysis_dir, tables)
    return Outcome.ok(graded.summary, *paths)


def describe(summary: GradesSummary) -> list[str]:
    """The rubric, the judge and how many records it graded; the judge against the checker."""
    judge = summary.judge.model.spec if summary.judge is not None else "?"
    lines = [f"rubric {summary.rubric.label}, judge {judge}: {summary.graded} graded, {summary.ungraded} ungraded"]
    if summary.reliability is not None:
        lines.append(f"judge vs checker: {summary.reliability.mark()}")
    return lines


ANALYZER = Analyzer(
    name="grades", title="Rubric grades by a judge model, with Tables 6 and 7 of the calculus study",
    options=GradeOptions, summary=GradesSummary, run=run_grades, writes=(GRADES, GRADE_TABLES), judge="grader",
    describe=describe,
)
