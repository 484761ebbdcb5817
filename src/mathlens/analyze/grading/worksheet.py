"""Human grading worksheets: export a CSV (one row per record and criterion), import filled ones.

A grader fills in `points` (and optionally `comment`, and `grader` with their name; otherwise
the file name is used). Blank points mean "not graded"; a record with only some criteria filled
is kept as `ungraded` ("N criteria left blank"). Reading is the judging core's
(`mathlens.analyze.judging.worksheet`), which also accepts the tutoring sheets' column names.
Imported grades go to the `HUMAN_GRADES` document (`analysis/human_grades.jsonl`); importing a
grader again replaces that grader's earlier grades. A worksheet may hold any record of the run
(`all_variants` exports ablation variants too).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from mathlens.analyze.grading.grades import HUMAN_GRADES, GradedRun, gradable_records, summarize
from mathlens.analyze.grading.judge import Grade, target_of
from mathlens.analyze.grading.rubric import Rubric
from mathlens.analyze.judging.worksheet import read_sheet, replace_graders, stored_judgements, write_sheet
from mathlens.analyze.protocol import AnalyzerOptions
from mathlens.errors import UserError
from mathlens.runs.store import RunStore

COLUMNS = ["key", "exam_id", "question_id", "model", "configuration", "variant", "repeat", "criterion",
           "criterion_name", "max_points", "points", "comment", "grader", "question", "reference", "response"]


class ImportOptions(AnalyzerOptions):
    """What an import of human grades was given (the envelope's options)."""

    worksheets: list[str] = Field(default_factory=list)


def export_worksheet(store: RunStore, rubric: Rubric, path: Path, all_variants: bool = False) -> int:
    """Write the worksheet for every gradable record; returns the number of rows."""

    def rows() -> Iterator[dict[str, object]]:
        for rec, q in gradable_records(store, all_variants):
            refs = "; ".join([*q.answers, *(p.answer for p in q.parts if p.answer)])
            for unit in rubric.units(q.total_points):
                yield {
                    "key": rec.key, "exam_id": rec.exam_id, "question_id": rec.question_id, "model": rec.model,
                    "configuration": rec.configuration, "variant": rec.variant.name, "repeat": rec.repeat,
                    "criterion": unit.id, "criterion_name": unit.name, "max_points": f"{unit.scale.top:g}",
                    "points": "", "comment": "", "grader": "", "question": q.prompt_text(), "reference": refs,
                    "response": rec.response or "",
                }

    return write_sheet(path, COLUMNS, rows())


def read_worksheet(store: RunStore, rubric: Rubric, path: Path) -> list[Grade]:
    """Grades from one filled worksheet (validated against the run and the rubric)."""
    targets = {rec.key: target_of(rec, q, rubric) for rec, q in gradable_records(store, all_variants=True)}
    return read_sheet(path, targets, noun="rubric criterion", missing="criteria left blank").judgements


def import_worksheets(store: RunStore, rubric: Rubric, paths: list[Path]) -> GradedRun:
    """Read every worksheet and merge it into the `HUMAN_GRADES` document (a grader imported again
    replaces their earlier grades); returns every human grade of the run."""
    new = [g for p in paths for g in read_worksheet(store, rubric, p)]
    if not new:
        raise UserError("the worksheets hold no points")
    grades = replace_graders(stored_judgements(HUMAN_GRADES, store.root), new)
    summary = summarize(grades, rubric, "human")
    HUMAN_GRADES.write(store.root, run_id=store.manifest().run_id, records=store.snapshot(),
                       entries=grades, summary=summary, options=ImportOptions(worksheets=[str(p) for p in paths]))
    return GradedRun(grades=grades, summary=summary)
