"""`mathlens maple RUN` (MAPLE score of a run), `mathlens maple-audit DATA` (judge vs human first
errors) and `mathlens maple-agreement RUN` (judge vs human step labels of a run)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, cast

import typer
from rich.table import Table

from mathlens.analyze.maple.agreement import AgreementTable, LabelSource
from mathlens.analyze.maple.agreement import MapleAgreementSummary as AgreementSummary
from mathlens.analyze.maple.audit import AuditReport, load_audit_data, run_audit
from mathlens.analyze.maple.labels import LabelSet, default_labels, load_label_set
from mathlens.analyze.maple.pipeline import MapleOptions
from mathlens.analyze.maple.results import MAPLE, GroupRow, MapleSummary
from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.errors import UserError
from mathlens.flags import MAX_RESAMPLES, MAX_SEED, MAX_TOKENS, FlagValues
from mathlens.models.base import GenerateConfig
from mathlens.models.cache import ResponseCache
from mathlens.models.model import closing_all
from mathlens.models.registry import get_model, parse_options
from mathlens.rounding import percent
from mathlens.runs.documents import Document
from mathlens.runs.judge import judged_command
from mathlens.runs.store import RunStore


def _weighted(labels: LabelSet, weights: list[str]) -> LabelSet:
    """`labels` with the penalty weights `--weight label_id=number` gives."""
    parsed = parse_options(weights)
    try:
        return labels.with_weights({k: float(v) for k, v in parsed.items()})
    except (TypeError, ValueError):
        raise UserError(f"--weight values must be numbers: {weights}") from None


def _table(title: str, rows: list[GroupRow]) -> Table:
    table = Table(title=title)
    for col in ("model", "configuration", "variant", "group", "n", "accuracy", "MAPLE (all)", "MAPLE (wrong)",
                "unjudged", "degenerate (excluded)"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            escape(r.model),
            escape(r.configuration),
            escape(r.variant),
            escape(r.group),
            str(r.n),
            r.accuracy.format(),
            r.mean_maple.format(),
            r.mean_maple_incorrect.format(),
            str(r.n_unjudged),
            str(r.n_degenerate),
        )
    return table


def _print_result(doc: Document[MapleSummary], store: RunStore) -> None:
    s = doc.summary
    console.print(
        f"[bold]MAPLE[/] of run {escape(doc.envelope.run_id)}: judge {escape(s.judge)}, formula {s.formula}, "
        f"v/r from {s.vr_source}, labels {escape(s.labels.id)} v{s.labels.version}"
    )
    console.print(f"solutions: {s.statuses}; answers: {s.answers}")
    console.print(f"labels ({s.label_procedure}): {escape(s.labels_note)}; reflection: {s.reflection}"
                  + (f", up to {s.reflect_rounds} rounds" if s.reflection == "loop" else "")
                  + (f"; the models' own check of their wrong answers: {s.self_checks}" if s.self_checks else ""))
    if s.excluded_degenerate:
        console.print(f"{s.excluded_degenerate} degenerate response(s) left out of every figure "
                      "(--include-degenerate keeps them)")
    elif s.include_degenerate:
        console.print("degenerate responses included (--include-degenerate)")
    out_console.print(_table("Overall", s.overall))
    out_console.print(_table("By MATH level", s.by_level))
    out_console.print(_table("By subject", s.by_subject))
    for row in s.overall:
        if row.label_counts:
            cell = " · ".join(escape(part) for part in row.cell)
            console.print(f"label counts ({cell}): " + ", ".join(f"{k} {v}" for k, v in row.label_counts.items()))
    console.print(f"written: {escape(doc.path)}, maple_by_level.csv, maple_by_subject.csv")
    disc = s.discovery
    if disc is not None and disc.status != "ok":
        console.print(f"label discovery not made: {escape(disc.error)}")
    elif disc is not None and disc.result is not None:
        console.print(
            f"label discovery: {disc.result.k} clusters; edit "
            f"{escape(store.analysis_dir / 'maple_labels_draft.yaml')} and re-run with --labels"
        )


@user_errors
@with_model_options(MapleOptions)
def maple(
    run_dir: Path = typer.Argument(..., help="A run directory (from `mathlens run`)."),
    judge: str = typer.Option(None, "--judge", help="Judge model (default: the judge recorded in the run)."),
    judge_option: list[str] = typer.Option(None, "-J", help="Judge model option key=value."),
    weight: list[str] = typer.Option(None, "--weight", help="Override a penalty weight: label_id=number."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    quiet: bool = QUIET_OPTION,
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """MAPLE: error labels, step judging and the score of a run.

    Every solution is scored; results are given by level and subject."""
    from mathlens.analyze.protocol import OutcomeDocument
    from mathlens.analyze.registry import run_one

    options = options_from(MapleOptions, flags)
    if weight:
        options = options.model_copy(update={"labels": _weighted(options.labels or default_labels(), weight)})
    store = RunStore(run_dir)
    store.manifest()  # a clear error before anything else when RUN is not a run
    outcome = run_one(store, "maple", options.model_dump(), judge=judge, judge_options=parse_options(judge_option),
                      no_cache=no_cache)
    if as_json:
        emit_json(OutcomeDocument.of("maple", outcome))
        return
    if quiet:
        return
    doc = MAPLE.read(store.root)
    if doc is None:  # the analyzer writes the document or raises
        raise UserError(f"{store.root}: MAPLE wrote no {MAPLE.path(store.root).name}")
    _print_result(doc, store)


def _print_audit(report: AuditReport) -> None:
    m = report.metrics

    def pct(x: float | None) -> str:
        return "n/a" if x is None else percent(x, 1)

    console.print(
        f"[bold]judge audit[/] {report.judge} on {report.data} ({report.source}, {m.n} solutions, "
        f"{m.n_erroneous} erroneous, {m.n_error_free} error-free, {m.n_unjudged} unjudged)"
    )
    table = Table()
    for col in ("", "erroneous acc.", "error-free acc.", "F1"):
        table.add_column(col)
    table.add_row("all", pct(m.acc_erroneous), pct(m.acc_error_free), pct(m.f1))
    table.add_row("judged only", pct(m.judged_acc_erroneous), pct(m.judged_acc_error_free), pct(m.judged_f1))
    out_console.print(table)
    console.print(f"erroneous: {m.erroneous_outcomes}; error-free: {m.error_free_outcomes}")
    if report.label_confusion:
        conf = Table(title="where the judge put each label (relative to the human first error)")
        for col in ("label", "before", "at", "after", "error-free solution"):
            conf.add_column(col)
        for label, row in report.label_confusion.items():
            conf.add_row(label, *(str(row[k]) for k in ("before", "at", "after", "error_free")))
        out_console.print(conf)


@user_errors
def maple_audit(
    data: Path = typer.Argument(..., help="processbench_*.json or a BIG-Bench Mistake .jsonl file."),
    judge: str = typer.Option(..., "--judge", help="Judge model to audit."),
    judge_option: list[str] = typer.Option(None, "-J", help="Judge model option key=value."),
    labels: Path = typer.Option(None, "--labels", help="Label set file (default: the seven defaults)."),
    limit: int = typer.Option(None, "--limit", min=1, max=10_000_000, help="A seeded random sample of N solutions."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Sampling seed for --limit."),
    max_tokens: int = typer.Option(384, "--max-tokens", min=1, max=MAX_TOKENS, help="Token cap of each judge reply."),
    out: Path = typer.Option(None, "--out", help="Also write the full report (every item) as JSON here."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Audit a judge's first wrong step against human labels.

    Reports the ProcessBench metrics of the judge's first erroneous step."""
    label_set = load_label_set(labels) if labels else default_labels()
    samples = load_audit_data(data, limit=limit, seed=seed)
    model = get_model(judge, parse_options(judge_option), cache=None if no_cache else ResponseCache())
    start = time.perf_counter()
    metrics, confusion, items = asyncio.run(closing_all(
        run_audit(samples, model, label_set, GenerateConfig(max_tokens=max_tokens)), [model]))
    report = AuditReport(
        data=str(data),
        source=samples[0].source if samples else "",
        judge=judge,
        labels=f"{label_set.id} v{label_set.version}",
        metrics=metrics,
        label_confusion=confusion,
        items=items,
        seconds=time.perf_counter() - start,
    )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if as_json:
        doc: dict[str, Any] = report.model_dump(mode="json", exclude={"items"})
        doc["n_items"] = len(items)
        emit_json(doc)
    else:
        _print_audit(report)


def _agreement_table(title: str, table: AgreementTable) -> Table:
    out = Table(title=title)
    for col in ("label", "steps", "judge", "human", "both", "agreement", "kappa [95% CI]"):
        out.add_column(col)
    for row in [*table.labels, table.any_label]:
        pct = "n/a" if row.percent_agreement is None else f"{100 * row.percent_agreement:.1f}%"
        out.add_row(escape(row.label), str(row.n), str(row.judge_yes), str(row.human_yes), str(row.both_yes), pct,
                    row.kappa.format())
    return out


def _print_agreement(doc: Document[AgreementSummary]) -> None:
    s = doc.summary
    console.print(f"[bold]step-label agreement[/] of judge {escape(s.judge)} ({s.labels_from} labels, "
                  f"{escape(s.label_set)}) with {escape(s.human_file)}: {s.n_compared} solution(s) compared of "
                  f"{s.n_annotated} annotated")
    for reason, n in s.skipped.items():
        console.print(f"  skipped: {n} {escape(reason)}")
    if s.n_judged_not_annotated:
        console.print(f"  {s.n_judged_not_annotated} judged solution(s) have no human labels")
    o = s.overall
    out_console.print(_agreement_table(f"All compared solutions ({o.n_steps} steps)", o))
    console.print(f"identical label set: {o.identical_steps.format()} of steps, "
                  f"{o.identical_labelled_steps.format()} of the {o.n_labelled_steps} labelled steps; "
                  f"same first erroneous step: {o.first_error_agreement.format()} of solutions")
    if len(s.cells) > 1:
        cells = Table(title="by model, configuration and variant")
        for col in ("model", "configuration", "variant", "solutions", "identical steps", "same first error",
                    "kappa (any label)"):
            cells.add_column(col)
        for t in s.cells:
            cell = t.cell or ("", "", "")
            cells.add_row(*(escape(c) for c in cell), str(t.n_solutions), t.identical_steps.format(),
                          t.first_error_agreement.format(), t.any_label.kappa.format())
        out_console.print(cells)
    console.print(f"written: {escape(doc.path)}")


@user_errors
def maple_agreement(
    run_dir: Path = typer.Argument(..., help="A run scored with `mathlens maple`."),
    human: Path = typer.Option(None, "--human", help="Human step labels (.jsonl or .csv) to compare with."),
    worksheet: Path = typer.Option(None, "--worksheet",
                                   help="Write a file (.jsonl or .csv) of the judged solutions to label by hand."),
    labels_from: str = typer.Option("merged", "--labels-from",
                                    help="merged: the labels the score counts (judge and detectors); judge: the "
                                         "judge's own."),
    resamples: int = typer.Option(2000, "--resamples", min=0, max=MAX_RESAMPLES, help="Bootstrap resamples per CI."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Bootstrap seed."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Agreement of the MAPLE step judge with human step labels.

    Given per label, per step and for the first error."""
    from mathlens.analyze.maple.agreement import LABEL_SOURCES, MAPLE_AGREEMENT, import_human_labels
    from mathlens.analyze.maple.human import write_worksheet

    if (human is None) == (worksheet is None):
        raise UserError("give exactly one of --human FILE (compare) and --worksheet FILE (write a file to label)")
    if labels_from not in LABEL_SOURCES:
        raise UserError(f"--labels-from must be one of {', '.join(LABEL_SOURCES)}, not {labels_from!r}")
    store = RunStore(run_dir)
    manifest = store.manifest()  # a clear error first when RUN is not a run
    if worksheet is not None:
        if MAPLE.read(store.root) is None:
            raise UserError(f"{store.root}: no MAPLE document; run "
                            f"`{judged_command(f'mathlens maple {store.root}', manifest)}` first")
        questions = store.questions()
        judged = [s for s in MAPLE.entries(store.root) if s.judgement is not None and s.judgement.status == "ok"]
        prompts = {s.record.key: q.prompt_text() for s in judged
                   if (q := questions.get((s.record.exam_id, s.record.question_id))) is not None}
        n = write_worksheet(worksheet, judged, prompts)
        if as_json:
            emit_json({"status": "ok", "worksheet": str(worksheet), "solutions": n})
        else:
            console.print(f"{n} judged solution(s) written to {escape(worksheet)}; label the erroneous steps and "
                          f"run `mathlens maple-agreement {escape(run_dir)} --human {escape(worksheet)}`")
        return
    assert human is not None
    path = import_human_labels(store, human, cast(LabelSource, labels_from), n_resamples=resamples, seed=seed)
    doc = MAPLE_AGREEMENT.read(store.root)
    if doc is None:
        raise UserError(f"{store.root}: no {path.name} was written")
    if as_json:
        emit_json({"status": "ok", "path": str(doc.path), "run_id": doc.envelope.run_id,
                   **doc.summary.model_dump(mode="json")})
    else:
        _print_agreement(doc)


def register(app: typer.Typer) -> None:
    """Add `maple`, `maple-audit` and `maple-agreement` to the CLI."""
    app.command("maple")(maple)
    app.command("maple-audit")(maple_audit)
    app.command("maple-agreement")(maple_agreement)
