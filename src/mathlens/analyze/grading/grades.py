"""Grade a whole run with a judge and keep the grades in `analysis/grades.json`.

Only original prompts are graded by default (ablation variants are probes, not exam answers);
every repeat of a question is graded, so Table 6 can average over repeats and the consistency of
repeated runs (seed 000, §5.3) shows in the spread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from mathlens.analyze.grading.analyzer import question_index
from mathlens.analyze.grading.judge import Grade, JudgeOptions, grade_records
from mathlens.analyze.grading.rubric import Rubric
from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.models.model import Model
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore


class GradesFile(BaseModel):
    """`analysis/grades.json` (judge grades) and `analysis/human_grades.json` (human grades)."""

    rubric: Rubric
    grader_kind: str = "judge"
    judge: str | None = None
    judge_options: dict[str, Any] = Field(default_factory=dict)
    grades: list[Grade]


def _flow_by_key(store: RunStore) -> dict[str, dict[str, Any]]:
    flow = store.read_analysis("flow")
    if not isinstance(flow, dict):
        return {}
    rows = flow.get("records") or flow.get("results") or []
    out: dict[str, dict[str, Any]] = {}
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and "key" in row:
            metrics = row.get("metrics")
            step = row.get("first_invalid_step")
            if step is None and isinstance(metrics, dict):
                step = metrics.get("first_invalid_step")
            out[row["key"]] = {"first_invalid_step": step}
    return out


def gradable_records(store: RunStore, all_variants: bool = False, limit: int | None = None
                     ) -> list[tuple[RunRecord, Question]]:
    """The records a grader grades, with their questions, in run order."""
    questions = question_index(store)
    jobs = []
    for rec in store.records():
        if not all_variants and rec.variant.name != "original":
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


async def grade_run(store: RunStore, model: Model, rubric: Rubric, options: JudgeOptions,
                    limit: int | None = None, on_done: Callable[[Grade], None] | None = None) -> GradesFile:
    """Grade every original record of the run with `model` and write `analysis/grades.json`."""
    flow = _flow_by_key(store) if options.with_evidence else {}
    jobs = [(rec, q, flow.get(rec.key)) for rec, q in gradable_records(store, limit=limit)]
    grades = await grade_records(model, jobs, rubric, options, on_done)
    result = GradesFile(rubric=rubric, judge=model.spec, grades=grades, judge_options={
        "with_evidence": options.with_evidence, "max_tokens": options.max_tokens,
        "temperature": options.temperature, "seed": options.seed, "runs": options.runs,
        "identity": model.identity(),
    })
    store.write_analysis("grades", result)
    return result


def read_grades(store: RunStore, name: str = "grades") -> GradesFile | None:
    """Load `analysis/<name>.json` if it exists."""
    data = store.read_analysis(name)
    return GradesFile.model_validate(data) if data is not None else None
