"""`mathlens grade` and `mathlens agreement`: rubric grades by a judge or humans, and how far they agree."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from mathlens.analyze.grading.agreement_report import AgreementReport, agreement_report
from mathlens.analyze.grading.grades import GradesFile, grade_run, read_grades
from mathlens.analyze.grading.judge import Grade, JudgeOptions
from mathlens.analyze.grading.rubric import Rubric, resolve_rubric
from mathlens.analyze.grading.tables import ExamScore, exam_scores, table6_csv, table7, table7_csv
from mathlens.analyze.grading.worksheet import export_worksheet, import_worksheets
from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.errors import UserError
from mathlens.models.cache import ResponseCache
from mathlens.models.registry import get_model, parse_options
from mathlens.runs.judge import resolve_judge
from mathlens.runs.store import RunStore


def _judge_model(store: RunStore, judge: str | None, judge_option: list[str] | None, no_cache: bool) -> Any:
    entry = resolve_judge(store.manifest(), judge, parse_options(judge_option))
    return get_model(entry.spec, entry.options, cache=None if no_cache else ResponseCache())


def _tables(store: RunStore, grades: list[Grade]) -> list[ExamScore]:
    rows = exam_scores(grades, store.exams())
    if rows:
        store.write_analysis("grade_tables", {"table6": [r.model_dump() for r in rows], "table7": table7(rows)})
        (store.analysis_dir / "table6.csv").write_text(table6_csv(rows), encoding="utf-8")
        (store.analysis_dir / "table7.csv").write_text(table7_csv(rows), encoding="utf-8")
    return rows


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def print_tables(rows: list[ExamScore]) -> None:
    """Tables 6 and 7 of the calculus study, from this run's grades."""
    t6 = Table(title="Exam scores (as in Table 6 of the calculus study)")
    for col in ("exam", "model", "configuration", "grader", "score", "%", "class avg", "diff", "ungraded"):
        t6.add_column(col)
    for r in rows:
        t6.add_row(r.exam_name, r.model, r.configuration, r.grader, f"{r.score:g}/{r.total:g}", _pct(r.percent),
                   _pct(r.cohort.class_average), _pct(r.cohort.difference), str(r.ungraded))
    out_console.print(t6)
    t7 = Table(title="Across configurations (as in Table 7 of the calculus study)")
    for col in ("exam", "configuration", "model", "score %"):
        t7.add_column(col)
    for row in table7(rows):
        pct = row["percent"]
        t7.add_row(str(row["exam"]), str(row["configuration"]), str(row["model"]),
                   _pct(pct if isinstance(pct, float | int) else None))
    out_console.print(t7)


def _rubric_for(store: RunStore, spec: str | None) -> Rubric:
    if spec is not None:
        return resolve_rubric(spec)
    previous = read_grades(store)
    return previous.rubric if previous is not None else resolve_rubric(None)


def _split(values: list[Path] | None) -> list[Path]:
    return [Path(p.strip()) for v in values or [] for p in str(v).split(",") if p.strip()]


def grade_cmd(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    judge: str | None = typer.Option(None, "--judge", help="Judge model [the judge recorded in the run]."),
    judge_option: list[str] | None = typer.Option(None, "--judge-option", "-J", help="Judge model option key=value."),
    rubric: str | None = typer.Option(None, "--rubric", help="Rubric YAML file or built-in id (default: calculus)."),
    with_evidence: bool = typer.Option(False, "--with-evidence", help="Show the judge mathlens' answer check."),
    judge_runs: int = typer.Option(1, "--judge-runs", min=1, help="Grade each record N times (self-agreement)."),
    max_tokens: int = typer.Option(768, "--max-tokens", min=16, help="Token cap of each judge reply."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Grade only the first N records."),
    export_worksheet_to: Path | None = typer.Option(None, "--export-worksheet", help="Write a human worksheet CSV."),
    import_human: list[Path] | None = typer.Option(None, "--import-human", help="Filled worksheet CSV(s)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not reuse cached judge replies."),
    json_out: bool = JSON_OPTION,
) -> None:
    """Grade a run with the rubric: by a judge model, or export/import worksheets for human graders."""
    store = RunStore(run_dir)
    store.manifest()
    chosen = _rubric_for(store, rubric)
    if export_worksheet_to is not None:
        rows = export_worksheet(store, chosen, export_worksheet_to)
        result: dict[str, Any] = {"worksheet": str(export_worksheet_to), "rows": rows, "rubric": chosen.label}
        emit_json(result) if json_out else console.print(f"wrote {rows} rows to {escape(export_worksheet_to)}")
        return
    if import_human:
        humans = import_worksheets(store, chosen, _split(import_human))
        rows6 = _tables(store, _all_grades(store))
        graders = sorted({g.grader for g in humans.grades})
        if json_out:
            emit_json({"graders": graders, "grades": len(humans.grades), "table6": rows6, "table7": table7(rows6)})
        else:
            console.print(f"imported {len(humans.grades)} grades from {escape(', '.join(graders))}")
            print_tables(rows6)
        return
    model = _judge_model(store, judge, judge_option, no_cache)
    options = JudgeOptions(with_evidence=with_evidence, max_tokens=max_tokens, runs=judge_runs)
    with console.status("grading", spinner="dots") if not json_out else _Null():
        graded: GradesFile = asyncio.run(_grade(store, model, chosen, options, limit))
    rows6 = _tables(store, _all_grades(store))
    counts = {s: sum(g.status == s for g in graded.grades) for s in ("graded", "ungraded")}
    if json_out:
        emit_json({"judge": model.spec, "rubric": chosen.label, "counts": counts, "table6": rows6,
                   "table7": table7(rows6), "path": str(store.analysis_dir / "grades.json")})
        return
    console.print(f"judge {escape(model.spec)}: {counts['graded']} graded, {counts['ungraded']} ungraded "
                  f"(rubric {chosen.label})")
    print_tables(rows6)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


async def _grade(store: RunStore, model: Any, rubric: Rubric, options: JudgeOptions, limit: int | None) -> GradesFile:
    try:
        return await grade_run(store, model, rubric, options, limit=limit)
    finally:
        await model.aclose()


def _all_grades(store: RunStore) -> list[Grade]:
    out: list[Grade] = []
    for name in ("grades", "human_grades"):
        found = read_grades(store, name)
        if found is not None:
            out += found.grades
    return out


def agreement_cmd(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    resamples: int = typer.Option(2000, "--resamples", min=0, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    json_out: bool = JSON_OPTION,
) -> None:
    """Agreement between the judge and human graders (and the judge with itself)."""
    store = RunStore(run_dir)
    store.manifest()
    grades = _all_grades(store)
    if not grades:
        raise UserError(f"{run_dir}: no grades yet (run `mathlens grade` or import worksheets first)")
    rubric = _rubric_for(store, None)
    report = agreement_report(grades, [c.id for c in rubric.criteria], resamples, seed)
    store.write_analysis("agreement", report)
    if json_out:
        emit_json(report)
        return
    _print_agreement(report)


def _print_agreement(report: AgreementReport) -> None:
    if not report.pairs and not report.self_agreement:
        console.print(f"only one grader ({escape(', '.join(report.graders))}): nothing to compare")
    table = Table(title="Agreement between graders")
    for col in ("a", "b", "scope", "n", "kappa (quadratic)", "alpha (interval)", "MAE (points)"):
        table.add_column(col)
    for p in report.pairs:
        table.add_row(p.a, p.b, p.scope, str(p.n), p.kappa_quadratic.format(), p.alpha_interval.format(),
                      p.mae.format())
    out_console.print(table)
    if report.self_agreement:
        selves = Table(title="Judge agreement with itself across runs")
        for col in ("judge", "runs", "scope", "units", "alpha (interval)", "identical"):
            selves.add_column(col)
        for s in report.self_agreement:
            selves.add_row(s.grader, str(s.runs), s.scope, str(s.units), s.alpha_interval.format(),
                           _pct(None if s.identical_share is None else 100 * s.identical_share))
        out_console.print(selves)


def register(app: typer.Typer) -> None:
    """Add `grade` and `agreement` to the mathlens command line."""
    app.command("grade")(user_errors(grade_cmd))
    app.command("agreement")(user_errors(agreement_cmd))
