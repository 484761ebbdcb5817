"""Human grading worksheets: export a CSV (one row per record and criterion), import filled ones.

A grader fills in `points` (and optionally `comment`, and `grader` with their name; otherwise
the file name is used). Blank points mean "not graded". Imported grades go to the `HUMAN_GRADES`
document (`analysis/human_grades.jsonl`); importing a grader again replaces that grader's earlier
grades. A worksheet may hold any record of the run (`all_variants` exports ablation variants too).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

from pydantic import Field

from mathlens.analyze.grading.grades import HUMAN_GRADES, GradedRun, gradable_records, summarize
from mathlens.analyze.grading.judge import CriterionGrade, Grade
from mathlens.analyze.grading.rubric import Rubric
from mathlens.analyze.protocol import AnalyzerOptions
from mathlens.errors import UserError
from mathlens.runs.documents import RecordRef, records_digest
from mathlens.runs.store import RunStore

COLUMNS = ["key", "exam_id", "question_id", "model", "configuration", "variant", "repeat", "criterion",
           "criterion_name", "max_points", "points", "comment", "grader", "question", "reference", "response"]


class ImportOptions(AnalyzerOptions):
    """What an import of human grades was given (the envelope's options)."""

    worksheets: list[str] = Field(default_factory=list)


def export_worksheet(store: RunStore, rubric: Rubric, path: Path, all_variants: bool = False) -> int:
    """Write the worksheet for every gradable record; returns the number of rows."""
    rows = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for rec, q in gradable_records(store, all_variants):
            refs = "; ".join([*q.answers, *(p.answer for p in q.parts if p.answer)])
            for c in rubric.criteria:
                writer.writerow({
                    "key": rec.key, "exam_id": rec.exam_id, "question_id": rec.question_id, "model": rec.model,
                    "configuration": rec.configuration, "variant": rec.variant.name, "repeat": rec.repeat,
                    "criterion": c.id,
                    "criterion_name": c.name, "max_points": f"{rubric.max_points(c.id, q.total_points):g}",
                    "points": "", "comment": "", "grader": "", "question": q.prompt_text(), "reference": refs,
                    "response": rec.response or "",
                })
                rows += 1
    return rows


def _parse_points(text: str, top: float, where: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        pts = float(text)
    except ValueError:
        raise UserError(f"{where}: points {text!r} is not a number") from None
    if not math.isfinite(pts) or pts < 0 or pts > top + 1e-9:
        raise UserError(f"{where}: {pts:g} points is outside 0..{top:g}")
    return pts


def read_worksheet(store: RunStore, rubric: Rubric, path: Path) -> list[Grade]:
    """Grades from one filled worksheet (validated against the run and the rubric)."""
    jobs = {rec.key: (rec, q) for rec, q in gradable_records(store, all_variants=True)}
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"{path}: no such worksheet") from None
    reader = csv.DictReader(text.splitlines())
    missing = {"key", "criterion", "points"} - set(reader.fieldnames or [])
    if missing:
        raise UserError(f"{path}: missing columns {sorted(missing)}")
    cells: dict[tuple[str, str], dict[str, CriterionGrade]] = defaultdict(dict)
    for n, row in enumerate(reader, start=2):
        where = f"{path}:{n}"
        key, cid = (row.get("key") or "").strip(), (row.get("criterion") or "").strip()
        if key not in jobs:
            raise UserError(f"{where}: record {key!r} is not in this run")
        q = jobs[key][1]
        if cid not in {c.id for c in rubric.criteria}:
            raise UserError(f"{where}: criterion {cid!r} is not in rubric {rubric.label}")
        top = rubric.max_points(cid, q.total_points)
        pts = _parse_points(row.get("points") or "", top, where)
        if pts is None:
            continue
        grader = (row.get("grader") or "").strip() or path.stem
        cells[(grader, key)][cid] = CriterionGrade(criterion=cid, points=pts, max_points=top,
                                                   rationale=(row.get("comment") or "").strip())
    grades = []
    for (grader, key), by_criterion in cells.items():
        rec, q = jobs[key]
        complete = len(by_criterion) == len(rubric.criteria)
        ordered = [by_criterion[c.id] for c in rubric.criteria if c.id in by_criterion]
        grades.append(Grade(
            record=RecordRef.of(rec), grader=f"human:{grader}", status="graded" if complete else "ungraded",
            criteria=ordered, total=sum(c.points for c in ordered) if complete else None,
            max_total=rubric.question_points(q.total_points),
            error="" if complete else f"{len(rubric.criteria) - len(ordered)} criteria left blank",
        ))
    return grades


def import_worksheets(store: RunStore, rubric: Rubric, paths: list[Path]) -> GradedRun:
    """Read every worksheet and merge it into the `HUMAN_GRADES` document (a grader imported again
    replaces their earlier grades); returns every human grade of the run."""
    new = [g for p in paths for g in read_worksheet(store, rubric, p)]
    if not new:
        raise UserError("the worksheets hold no points")
    incoming = {g.grader for g in new}
    kept = [g for g in HUMAN_GRADES.entries(store.root) if g.grader not in incoming]
    grades = kept + new
    summary = summarize(grades, rubric, "human")
    HUMAN_GRADES.write(store.root, run_id=store.manifest().run_id, records_sha256=records_digest(store.records_path),
                       entries=grades, summary=summary, options=ImportOptions(worksheets=[str(p) for p in paths]))
    return GradedRun(grades=grades, summary=summary)
