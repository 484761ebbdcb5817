"""`mathlens grade` and `mathlens agreement`: rubric grades by a judge or humans, and how far they agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from mathlens.analyze.grading.agreement_report import (
    AGREEMENT,
    AgreementOptions,
    AgreementReport,
    agreement_report,
)
from mathlens.analyze.grading.grades import GRADES, GradeOptions, all_grades, refresh_tables, rubric_for
from mathlens.analyze.grading.reconcile import JudgeReliability
from mathlens.analyze.grading.tables import GRADE_TABLES, ExamScore, GradeChange, table7
from mathlens.analyze.grading.worksheet import export_worksheet, import_worksheets
from mathlens.analyze.registry import run_one
from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.cli.grade_tables import pct, print_changes, print_tables
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.errors import UserError
from mathlens.flags import MAX_RESAMPLES, MAX_SEED, FlagValues
from mathlens.models.registry import parse_options
from mathlens.runs.store import RunStore


def _table6(store: RunStore) -> list[ExamScore]:
    """Table 6 rows as written in the run's `GRADE_TABLES` document."""
    doc = GRADE_TABLES.read(store.root)
    return doc.summary.table6 if doc is not None else []


def _changes(store: RunStore) -> list[GradeChange]:
    """Questions whose grade changed between repeats, as written in the `GRADE_TABLES` document."""
    doc = GRADE_TABLES.read(store.root)
    return doc.summary.changes if doc is not None else []


def print_reliability(reliability: JudgeReliability | None) -> None:
    """The judge's agreement with mathlens' checks, and every disagreement, one per line."""
    if reliability is None:
        return
    style = "bold red" if reliability.unreliable else "bold"
    console.print(f"[{style}]{escape(reliability.mark())}[/]")
    if reliability.final_answer == "judge":
        console.print("final-answer points: the judge's own (--final-answer judge)")
    else:
        console.print("final-answer points: the checker's where it is decisive, else the judge's")
    for d in reliability.listed:
        console.print(f"  {escape(d.exam_id)} · {escape(d.question_id)} ({escape(d.record)}): {escape(d.why)}")


def _split(values: list[Path] | None) -> list[Path]:
    return [Path(p.strip()) for v in values or [] for p in str(v).split(",") if p.strip()]


@with_model_options(GradeOptions)
def grade_cmd(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    judge: str | None = typer.Option(None, "--judge", help="Judge model (default: the judge recorded in the run)."),
    judge_option: list[str] | None = typer.Option(None, "--judge-option", "-J", help="Judge model option key=value."),
    export_worksheet_to: Path | None = typer.Option(None, "--export-worksheet", help="Write a human worksheet CSV."),
    import_human: list[Path] | None = typer.Option(None, "--import-human", help="Filled worksheet CSV(s)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not reuse cached judge replies."),
    quiet: bool = QUIET_OPTION,
    json_out: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Grade a run with the rubric: by a judge, or by people.

    People grade through worksheets this command exports and imports."""
    store = RunStore(run_dir)
    store.manifest()
    options = options_from(GradeOptions, flags)
    rubric = options.rubric
    if export_worksheet_to is not None:
        chosen = rubric_for(store.root, rubric)
        rows = export_worksheet(store, chosen, export_worksheet_to, options.all_variants)
        result: dict[str, Any] = {"worksheet": str(export_worksheet_to), "rows": rows, "rubric": chosen.label}
        emit_json(result) if json_out else console.print(f"wrote {rows} rows to {escape(export_worksheet_to)}")
        return
    if import_human:
        humans = import_worksheets(store, rubric_for(store.root, rubric), _split(import_human))
        tables = refresh_tables(store)
        rows6 = tables.table6 if tables is not None else []
        graders = sorted({g.grader for g in humans.grades})
        if json_out:
            emit_json({"graders": graders, "grades": len(humans.grades), "table6": rows6, "table7": table7(rows6),
                       "changes": tables.changes if tables is not None else []})
        else:
            console.print(f"imported {len(humans.grades)} grades from {escape(', '.join(graders))}")
            print_tables(rows6)
            print_changes(tables.changes if tables is not None else [])
        return
    rubric_for(store.root, rubric)  # a rubric that does not load is reported before any judge is looked for
    with console.status("grading", spinner="dots") if not (json_out or quiet) else _Null():
        run_one(store, "grades", options.model_dump(), judge=judge, judge_options=parse_options(judge_option),
                no_cache=no_cache)
    graded = GRADES.read(store.root)
    if graded is None:  # the analyzer writes it or fails
        raise UserError(f"{run_dir}: grading wrote no grades")
    summary = graded.summary
    spec = summary.judge.model.spec if summary.judge is not None else "?"
    rows6, changes = _table6(store), _changes(store)
    if json_out:
        emit_json({"judge": spec, "rubric": summary.rubric.label, "counts": summary.counts,
                   "groups": summary.groups, "table6": rows6, "table7": table7(rows6), "changes": changes,
                   "reliability": summary.reliability, "path": str(graded.path)})
        return
    if quiet:
        return
    console.print(f"judge {escape(spec)}: {summary.graded} graded, {summary.ungraded} ungraded "
                  f"(rubric {summary.rubric.label})")
    print_reliability(summary.reliability)
    print_tables(rows6)
    print_changes(changes)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def agreement_cmd(
    run_dir: Path = typer.Argument(..., help="The run directory."),
    resamples: int = typer.Option(2000, "--resamples", min=0, max=MAX_RESAMPLES, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Bootstrap seed."),
    json_out: bool = JSON_OPTION,
) -> None:
    """Agreement of the judge with human graders and itself."""
    store = RunStore(run_dir)
    store.manifest()
    grades = all_grades(store.root)
    if not grades:
        raise UserError(f"{run_dir}: no grades yet (run `mathlens grade` or import worksheets first)")
    rubric = rubric_for(store.root, None)
    report = agreement_report(grades, rubric, resamples, seed)
    AGREEMENT.write(store.root, run_id=store.manifest().run_id, records=store.snapshot(),
                    entries=(), summary=report, options=AgreementOptions(resamples=resamples, seed=seed))
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
        table.add_row(p.a, p.b, p.scope, str(p.n), p.kappa.format(), p.alpha.format(),
                      p.mae.format() if p.mae is not None else "-")
    out_console.print(table)
    if report.self_agreement:
        selves = Table(title="Judge agreement with itself across runs")
        for col in ("judge", "runs", "scope", "units", "alpha (interval)", "identical"):
            selves.add_column(col)
        for s in report.self_agreement:
            selves.add_row(s.grader, str(s.runs), s.scope, str(s.units), s.alpha.format(),
                           pct(None if s.identical_share is None else 100 * s.identical_share))
        out_console.print(selves)


def register(app: typer.Typer) -> None:
    """Add `grade` and `agreement` to the mathlens command line."""
    app.command("grade")(user_errors(grade_cmd))
    app.command("agreement")(user_errors(agreement_cmd))
