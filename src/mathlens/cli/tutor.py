"""`mathlens tutor`: the learner-adaptivity study (run, score, stats, worksheets, agreement)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mathlens.analyze.adaptivity.analyzer import ScoreOptions, listening
from mathlens.analyze.adaptivity.conditions import IMAGE_MODES, parse_conditions
from mathlens.analyze.adaptivity.design import design_of
from mathlens.analyze.adaptivity.study import (
    StudyOptions,
    compute_agreement,
    compute_stats,
    load_cells,
    load_scores,
    new_manifest,
    prepare,
    rubric_of,
    run_study,
    study_exams,
)
from mathlens.analyze.adaptivity.tables import TutorStats
from mathlens.analyze.adaptivity.worksheet import export_worksheet, import_worksheet, save_human
from mathlens.analyze.judging.agreement import AgreementRow
from mathlens.analyze.judging.entries import Judgement
from mathlens.analyze.protocol import OutcomeDocument
from mathlens.analyze.registry import get_analyzer, run_one
from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, user_errors
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.cli.summary import print_summary, run_summary
from mathlens.errors import UserError
from mathlens.flags import FlagValues
from mathlens.models.cache import ResponseCache
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.models.registry import DEFAULT_MODEL, parse_options
from mathlens.runs.records import RunRecord
from mathlens.runs.runner import Progress as RunProgress
from mathlens.runs.runner import build_models, now_utc
from mathlens.runs.store import RunStore

tutor_app = typer.Typer(help="Does a model adapt its tutoring to the learner? (learner-model rubric)",
                        no_args_is_help=True)
worksheet_app = typer.Typer(help="Human annotation worksheets (CSV).", no_args_is_help=True)
tutor_app.add_typer(worksheet_app, name="worksheet")


def _bar(enabled: bool, label: str) -> Progress:
    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not enabled)


def _csv(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


@tutor_app.command("run")
@user_errors
def run_cmd(
    items: list[str] = typer.Argument(None, help="Item files, or 'tutoring' for the built-in items."),
    profiles: str = typer.Option("default", "--profiles", "-p",
                                 help="default | balanced[:PER_CELL[:SEED]] | a profile YAML file."),
    conditions: str = typer.Option("1,2,3,4", "--conditions", "-c", help="Context conditions to run (1-4)."),
    model: list[str] = typer.Option(None, "--model", "-m", help=f"provider/model, repeatable ({DEFAULT_MODEL})"),
    model_option: list[str] = typer.Option(None, "-M", help="Model option key=value (all models)."),
    images: str = typer.Option("auto", "--images", help="auto | send | describe: how diagrams reach models."),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Token cap per tutoring response."),
    limit: int = typer.Option(None, "--limit", min=1, help="First K items of each file."),
    all_grades: bool = typer.Option(False, "--all-grades", help="Pair every learner with every item."),
    out: Path = typer.Option(None, "--out", help="Run directory (default runs/RUN_ID)."),
    resume: Path = typer.Option(None, "--resume", help="Continue a tutoring run in this directory."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count the requests; call nothing."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Ask models to tutor each learner profile on each item under each context condition."""
    if images not in IMAGE_MODES:
        raise UserError(f"--images must be one of {', '.join(IMAGE_MODES)} (not {images!r})")
    if resume is not None:
        if items:
            raise UserError("--resume takes the run directory only; the design is in its manifest")
        store = RunStore(resume)
        manifest = store.manifest()
    else:
        if not items:
            raise UserError("name at least one item file, or 'tutoring' for the built-in items")
        opts = StudyOptions(items=list(items), models=list(model or [DEFAULT_MODEL]), profiles=profiles,
                            conditions=parse_conditions(conditions), model_options=parse_options(model_option),
                            image_mode=images, max_tokens=max_tokens, limit=limit,
                            match_grade=not all_grades)
        manifest = new_manifest(opts)
        store = RunStore(out or Path("runs") / manifest.run_id)
        if store.records_path.exists() and store.records_path.stat().st_size > 0:
            raise UserError(f"{store.root} already holds a run: use --resume {store.root} or another --out")
    design_of(manifest)  # a clear error before any model is built when --resume names another kind of run
    cache = None if no_cache else ResponseCache()
    models = build_models(manifest, cache, RetryPolicy(), None)
    try:
        if dry_run:
            asyncio.run(closing_all(asyncio.sleep(0), models.values()))  # nothing is sent; close them now
            _, tasks = prepare(manifest, models, study_exams(store, manifest))
            done = store.done_keys() if resume is not None else set()
            doc: dict[str, Any] = {"requests": len([t for t in tasks if t.key not in done]),
                                   "total_requests": len(tasks), "already_done": len(done),
                                   "models": [m.spec for m in manifest.models],
                                   "conditions": manifest.configurations}
            emit_json(doc) if as_json else console.print(f"{doc['requests']} requests to send")
            return
        bar = _bar(not as_json and sys.stderr.isatty(), "tutoring")
        task_id: Any = None

        def on_start(total: int, done: int) -> None:
            nonlocal task_id
            bar.start()
            task_id = bar.add_task("t", total=total, completed=done)

        def on_record(_: RunRecord) -> None:
            bar.update(task_id, advance=1)

        try:
            result = asyncio.run(closing_all(run_study(store, manifest, models, RunProgress(on_start, on_record)),
                                             models.values()))
        finally:
            bar.stop()
        store.write_manifest(store.manifest().model_copy(update={"finished_at": now_utc()}))
    finally:
        if cache is not None:
            cache.close()
    summary = run_summary(store, result)
    emit_json(summary) if as_json else print_summary(summary)


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
        for line in get_analyzer("tutor_scores").lines(outcome):
            console.print(line, markup=False, highlight=False)


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
def stats_cmd(
    run_dir: Path = typer.Argument(..., help="A scored tutoring run directory."),
    source: str = typer.Option("judge", "--source", help="judge | human:<annotator>"),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0001, max=0.5),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Dimension percentages (Tables 1 and 2) and two-way ANOVAs with Tukey HSD."""
    st = compute_stats(RunStore(run_dir), source=source, alpha=alpha, seed=seed)
    emit_json(st) if as_json else _print_stats(st)


@tutor_app.command("agreement")
@user_errors
def agreement_cmd(
    run_dir: Path = typer.Argument(..., help="A tutoring run with judge scores and/or worksheets."),
    seed: int = typer.Option(0, "--seed"),
    resamples: int = typer.Option(1000, "--resamples", min=0),
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
