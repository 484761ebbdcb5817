"""`mathlens tutor`: the learner-adaptivity study (run, score, stats, worksheets, agreement)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mathlens.analyze.adaptivity.analyzer import ScoreOptions, listening
from mathlens.analyze.adaptivity.design import design_of
from mathlens.analyze.adaptivity.statistics import StatsOptions
from mathlens.analyze.adaptivity.study import compute_agreement, load_cells, load_scores, rubric_of
from mathlens.analyze.adaptivity.tables import TutorStats
from mathlens.analyze.adaptivity.worksheet import export_worksheet, import_worksheet, save_human
from mathlens.analyze.judging.agreement import AgreementRow
from mathlens.analyze.judging.entries import Judgement
from mathlens.analyze.protocol import OutcomeDocument
from mathlens.analyze.registry import get_analyzer, run_one
from mathlens.cli.analyze import print_lines
from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, made, user_errors
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.cli.run import Options as RunOptions
from mathlens.cli.run import resume_run, run_study
from mathlens.cli.run_args import check_out_dir, check_resume_dir
from mathlens.errors import UserError
from mathlens.flags import MAX_RESAMPLES, MAX_SEED, FlagValues
from mathlens.models.registry import parse_options
from mathlens.runs.store import RunStore
from mathlens.study.load import study_from
from mathlens.study.model import Study

tutor_app = typer.Typer(help="Does a model adapt its tutoring to the learner?\n\n"
                             "Scored on the learner-adaptivity rubric.",
                        no_args_is_help=True)
worksheet_app = typer.Typer(help="Human annotation worksheets (CSV).", no_args_is_help=True)
tutor_app.add_typer(worksheet_app, name="worksheet")


def _bar(enabled: bool, label: str) -> Progress:
    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=made(console), disable=not enabled)


def _csv(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


#: the study fields `tutor run` takes as options (the items are its arguments; the design replaces
#: the configurations, retrieval, ablation, role and exam mode)
TUTOR_RUN_FIELDS = ("models", "model_options", "base_urls", "judge", "tutoring", "items.*.limit", "items.*.sample",
                    "generation", "execution")


@tutor_app.command("run")
@user_errors
@with_model_options(Study, only=TUTOR_RUN_FIELDS)
def run_cmd(
    items: list[str] = typer.Argument(None, help="Item files, or 'tutoring' for the built-in items."),
    out: Path = typer.Option(None, "--out", help="Run directory (default runs/RUN_ID)."),
    resume: Path = typer.Option(None, "--resume", help="Continue a tutoring run in this directory."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count the requests; call nothing."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
    quiet: bool = QUIET_OPTION,
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Ask models to tutor each learner profile on each item under each context condition.

    The run is a tutoring study made of the items and these options (the `tutoring` part of a study
    file, `mathlens schema study`); `mathlens run study:tutoring` runs the whole study, scores and
    tables included."""
    check_out_dir(out)
    how = RunOptions(dry_run=dry_run, quiet=quiet, as_json=as_json, no_cache=no_cache)
    if resume is not None:
        if items:
            raise UserError("--resume takes the run directory only; the design is in its manifest")
        check_resume_dir(resume)
        design_of(RunStore(resume).manifest())  # a clear error when --resume names another kind of run
        resume_run(resume, flags, how)
        return
    if not items:
        raise UserError("name at least one item file, or 'tutoring' for the built-in items")
    data: dict[str, Any] = {"study": "command-line", "items": [{"source": s} for s in items], "tutoring": {}}
    run_study(study_from(data, "the command line", flags=flags), None, None, out, how)


@tutor_app.command("score")
@user_errors
@with_model_options(ScoreOptions)
def score_cmd(
    run_dir: Path = typer.Argument(..., help="A tutoring run directory."),
    judge: str | None = typer.Option(None, "--judge", "-j",
                                     help="Judge model (default: the judge recorded in the run)."),
    judge_option: list[str] = typer.Option(None, "-J", help="Judge model option key=value."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
    quiet: bool = QUIET_OPTION,
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Score every response item by item with a judge model (analysis/tutor_scores.jsonl).

    The judge is --judge, else the judge recorded with the run; without either the command stops
    and says how to name one."""
    options = options_from(ScoreOptions, flags)
    store = RunStore(run_dir)
    bar = _bar(not (as_json or quiet) and sys.stderr.isatty(), "judging")
    task_id = bar.add_task("j", total=None)

    def on_score(_: Judgement) -> None:
        bar.update(task_id, advance=1)

    with bar, listening(on_score):
        outcome = run_one(store, "tutor_scores", options.model_dump(), judge=judge,
                          judge_options=parse_options(judge_option), no_cache=no_cache)
    if as_json:
        emit_json(OutcomeDocument.of("tutor_scores", outcome))
    elif not quiet or outcome.status == "error":
        print_lines(console, get_analyzer("tutor_scores").lines(outcome))


def _print_stats(st: TutorStats) -> None:
    t1 = Table(title=f"Table 1: mean % of possible points ({st.source})")
    for col in ("model", "performance", "dimension", "mean % [95% CI]", "n", "excluded"):
        t1.add_column(col)
    for r in st.table1:
        t1.add_row(r.model, r.performance, r.dimension, r.mean_percent.format(1), str(r.n), str(r.excluded))
    console.print(t1)
    t2 = Table(title="Table 2: % meeting each adaptivity criterion, by condition")
    for col in ("model", "condition", "metric", "%", "n"):
        t2.add_column(col)
    for r2 in st.table2:
        pct = "-" if r2.percent_satisfied is None else f"{r2.percent_satisfied:.1f}"
        t2.add_row(r2.model, str(r2.condition), r2.code, pct, str(r2.n))
    console.print(t2)
    for dim, designs in st.anova.items():
        for name, res in designs.items():
            if res.status != "ok":
                console.print(f"[bold]{dim}, {name}:[/] not estimable ({escape(res.note)})")
                continue
            terms = "; ".join(
                f"{e.term}: F({e.df:g},{res.residual_df:g})="
                f"{'-' if e.F is None else f'{e.F:.2f}'}, p={'-' if e.p is None else f'{e.p:.3g}'}, "
                f"partial eta2={'-' if e.partial_eta_sq is None else f'{e.partial_eta_sq:.3f}'}"
                for e in res.effects)
            console.print(f"[bold]{dim}, {name}[/] (n={res.n}): {terms}")
            if res.note:
                console.print(f"  {escape(res.note)}")


@tutor_app.command("stats")
@user_errors
@with_model_options(StatsOptions)
def stats_cmd(
    run_dir: Path = typer.Argument(..., help="A scored tutoring run directory."),
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Dimension percentages (Tables 1 and 2) and two-way ANOVAs with Tukey HSD (the `tutor_stats`
    analysis, analysis/tutor_stats.jsonl)."""
    options = options_from(StatsOptions, flags)
    outcome = run_one(RunStore(run_dir), "tutor_stats", options.model_dump())
    stats = outcome.summary
    if not isinstance(stats, TutorStats):  # run_one raised on an error; a skipped run says why
        raise UserError(f"{run_dir}: {'; '.join(outcome.notes)}")
    emit_json(stats) if as_json else _print_stats(stats)


@tutor_app.command("agreement")
@user_errors
def agreement_cmd(
    run_dir: Path = typer.Argument(..., help="A tutoring run with judge scores and/or worksheets."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED),
    resamples: int = typer.Option(1000, "--resamples", min=0, max=MAX_RESAMPLES),
    as_json: bool = JSON_OPTION,
) -> None:
    """Agreement per item and dimension: judge vs annotators and annotators pairwise."""
    report = compute_agreement(RunStore(run_dir), seed=seed, n_resamples=resamples)
    if as_json:
        emit_json({"graders": report.graders, "rows": [_json_row(r) for r in report.pairs],
                   "self_agreement": report.self_agreement})
        return
    table = Table(title="agreement")
    for col in ("a", "b", "scope", "n", "% agree", "kappa", "alpha"):
        table.add_column(col)
    for r in report.pairs:
        table.add_row(r.a, r.b, r.scope, str(r.n), r.percent.format(2) if r.percent else "-", r.kappa.format(2),
                      r.alpha.format(2))
    console.print(table)


def _json_row(row: AgreementRow) -> dict[str, Any]:
    """A row as stored, plus `stats` ({n, percent, kappa, alpha}), the shape `--json` has always had."""
    out = row.model_dump(mode="json")
    out["stats"] = {k: out[k] for k in ("n", "percent", "kappa", "alpha")}
    return out


@worksheet_app.command("export")
@user_errors
def worksheet_export(
    run_dir: Path = typer.Argument(..., help="A tutoring run directory."),
    output: Path = typer.Option(..., "--output", "-o", help="CSV file to write."),
    items: list[str] = typer.Option(None, "--items", help="Rubric items to include (default: all 19)."),
    with_judge: bool = typer.Option(False, "--with-judge", help="Fill in the judge's scores and rationales."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Write a CSV with one row per response x rubric item, for annotators to fill in."""
    store = RunStore(run_dir)
    rubric = rubric_of(store)
    judge = load_scores(store, "judge") if with_judge else None
    rows = export_worksheet(output, load_cells(store), rubric, rubric.select(_csv(items)), judge)
    doc = {"worksheet": str(output), "rows": rows}
    emit_json(doc) if as_json else console.print(f"wrote {rows} rows to {escape(output)}")


@worksheet_app.command("import")
@user_errors
def worksheet_import(
    run_dir: Path = typer.Argument(..., help="The tutoring run the worksheet came from."),
    worksheet: Path = typer.Argument(..., help="The filled CSV."),
    annotator: str = typer.Option(..., "--annotator", "-a", help="Who filled it in."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Import a filled worksheet as one annotator's scores (analysis/tutor_human.jsonl)."""
    store = RunStore(run_dir)
    refs = {c.key: c.ref for c in load_cells(store)}
    scores = import_worksheet(worksheet, annotator, rubric_of(store), refs)
    save_human(store, annotator, scores, worksheet)
    doc = {"annotator": annotator, "source": scores.grader, "counts": scores.counts()}
    n_rows = sum(scores.counts().values())
    emit_json(doc) if as_json else console.print(f"imported {n_rows} rows for {escape(annotator)}")


def register(app: typer.Typer) -> None:
    """Add `mathlens tutor ...`."""
    app.add_typer(tutor_app, name="tutor")
