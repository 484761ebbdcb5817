"""`mathlens maple RUN` (MAPLE score of a run), `mathlens maple-audit DATA` (judge vs human first
errors) and `mathlens maple-agreement RUN` (judge vs human step labels of a run)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Literal, cast

import typer
from rich.table import Table

from mathlens.analyze.maple.aggregate import BootstrapConfig
from mathlens.analyze.maple.agreement import AgreementTable, LabelSource
from mathlens.analyze.maple.agreement import MapleAgreementSummary as AgreementSummary
from mathlens.analyze.maple.audit import AuditReport, load_audit_data, run_audit
from mathlens.analyze.maple.labels import LabelSet, default_labels, load_label_set
from mathlens.analyze.maple.pipeline import MapleOptions
from mathlens.analyze.maple.procedure import LabelProcedure
from mathlens.analyze.maple.reflection import ReflectionMode
from mathlens.analyze.maple.results import MAPLE, GroupRow, MapleSummary
from mathlens.analyze.maple.score import FORMULAS, Formula
from mathlens.analyze.maple.vr import VR_SOURCES, RedundancyMode, ValidityMode, VRSource
from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.errors import UserError
from mathlens.models.base import GenerateConfig
from mathlens.models.cache import ResponseCache
from mathlens.models.model import closing_all
from mathlens.models.registry import get_model, parse_options
from mathlens.runs.documents import Document
from mathlens.runs.store import RunStore


def _labels(path: Path | None, weights: list[str] | None) -> LabelSet:
    labels = load_label_set(path) if path else default_labels()
    if weights:
        parsed = parse_options(weights)
        try:
            labels = labels.with_weights({k: float(v) for k, v in parsed.items()})
        except (TypeError, ValueError):
            raise UserError(f"--weight values must be numbers: {weights}") from None
    return labels


def _discover(value: str | None) -> int | Literal["auto"] | None:
    if value is None:
        return None
    if value == "auto":
        return "auto"
    if not value.isdigit() or int(value) < 1:
        raise UserError(f"--discover-labels takes a number of clusters or 'auto', not {value!r}")
    return int(value)


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
def maple(
    run_dir: Path = typer.Argument(..., help="A run directory (from `mathlens run`)."),
    judge: str = typer.Option(None, "--judge", help="Judge model [the judge recorded in the run]."),
    judge_option: list[str] = typer.Option(None, "-J", help="Judge model option key=value."),
    reflector: str = typer.Option(None, "--reflector", help="Model that reflects on wrong answers [the solver]."),
    labels: Path = typer.Option(None, "--labels", help="Label set file (YAML/JSON) [the seven defaults]."),
    weight: list[str] = typer.Option(None, "--weight", help="Override a penalty weight: label_id=number."),
    discover: str = typer.Option(None, "--discover-labels", help="Cluster reflections: K clusters, or 'auto'."),
    embedder: str = typer.Option(None, "--embedder", help="Embedder for label discovery [local MiniLM]."),
    formula: str = typer.Option("printed", "--formula", "--variant",
                                help="printed: tanh(e·v/r); prose: tanh(e·r/v)."),
    vr: str = typer.Option("flow", "--vr", help="Source of v and r: flow, judge or reasoneval."),
    validity_mode: str = typer.Option("share", "--validity", help="flow validity: share or min."),
    redundancy_mode: str = typer.Option("share", "--redundancy",
                                        help="flow redundancy: share or max (min/max: ReasonEval's rule)."),
    step_judge: str = typer.Option(None, "--step-judge",
                                   help="Judge for the steps SymPy cannot decide (v from the hybrid check)."),
    step_judge_option: list[str] = typer.Option(None, "--step-judge-option", "-S",
                                                help="Step judge model option key=value."),
    reasoneval: Path = typer.Option(None, "--reasoneval", help="Local ReasonEval checkpoint folder (--vr reasoneval)."),
    floor: float = typer.Option(0.05, "--floor", help="Lower bound of the divisor (r or v)."),
    judge_correct: bool = typer.Option(False, "--judge-correct", help="Also judge solutions with a right answer."),
    judge_limit: int = typer.Option(None, "--judge-limit", min=0, help="Judge at most N solutions (rest: unjudged)."),
    no_reflect: bool = typer.Option(False, "--no-reflect", help="Skip the self-reflection stage."),
    reflection: str = typer.Option("loop", "--reflection",
                                   help="loop: the study's multi-turn reflection; single: one request."),
    reflect_rounds: int = typer.Option(3, "--reflect-rounds", min=1, max=10,
                                       help="Most rounds of a reflection loop."),
    label_procedure: str = typer.Option("fixed", "--label-procedure",
                                        help="fixed: the given labels; paper: labels compiled from the "
                                             "clustered reflections, then judged with them."),
    max_tokens: int = typer.Option(384, "--max-tokens", help="Token cap of each judge reply."),
    reflect_tokens: int = typer.Option(160, "--reflect-tokens", help="Token cap of each reflection."),
    resamples: int = typer.Option(2000, "--resamples", help="Bootstrap resamples per CI."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    include_degenerate: bool = typer.Option(
        False, "--include-degenerate", help="Also score empty, echoed, looping or wrong-script responses."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Error labels, step judging and the MAPLE score for every solution of a run, by level and subject."""
    from mathlens.analyze.protocol import OutcomeDocument
    from mathlens.analyze.registry import run_one

    if formula not in FORMULAS:
        raise UserError(f"--formula must be one of {', '.join(FORMULAS)}, not {formula!r}")
    if vr not in VR_SOURCES:
        raise UserError(f"--vr must be one of {', '.join(VR_SOURCES)}, not {vr!r}")
    if validity_mode not in ("share", "min"):
        raise UserError(f"--validity must be share or min, not {validity_mode!r}")
    if reflection not in ("loop", "single"):
        raise UserError(f"--reflection must be loop or single, not {reflection!r}")
    if label_procedure not in ("fixed", "paper"):
        raise UserError(f"--label-procedure must be fixed or paper, not {label_procedure!r}")
    if redundancy_mode not in ("share", "max"):
        raise UserError(f"--redundancy must be share or max, not {redundancy_mode!r}")
    if not 0 < floor <= 1:
        raise UserError(f"--floor must lie in (0, 1], not {floor}")
    discover_k = _discover(discover)
    store = RunStore(run_dir)
    store.manifest()  # a clear error before anything else when RUN is not a run
    options = MapleOptions(
        reflector=reflector,
        labels=_labels(labels, weight),
        formula=cast(Formula, formula),
        vr_source=cast(VRSource, vr),
        validity_mode=cast(ValidityMode, validity_mode),
        redundancy_mode=cast(RedundancyMode, redundancy_mode),
        reasoneval_path=str(reasoneval) if reasoneval else None,
        step_judge=step_judge,
        step_judge_options=parse_options(step_judge_option),
        floor=floor,
        discover=discover_k,
        embedder=embedder,
        reflect=not no_reflect,
        reflection=cast(ReflectionMode, reflection),
        reflect_rounds=reflect_rounds,
        label_procedure=cast(LabelProcedure, label_procedure),
        judge_correct=judge_correct,
        judge_limit=judge_limit,
        judge_tokens=max_tokens,
        reflect_tokens=reflect_tokens,
        include_degenerate=include_degenerate,
        boot=BootstrapConfig(n_resamples=resamples),
    )
    outcome = run_one(store, "maple", options.model_dump(), judge=judge, judge_options=parse_options(judge_option),
                      no_cache=no_cache)
    if as_json:
        emit_json(OutcomeDocument.of("maple", outcome))
        return
    doc = MAPLE.read(store.root)
    if doc is None:  # the analyzer writes the document or raises
        raise UserError(f"{store.root}: MAPLE wrote no {MAPLE.path(store.root).name}")
    _print_result(doc, store)


def _print_audit(report: AuditReport) -> None:
    m = report.metrics

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

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
    labels: Path = typer.Option(None, "--labels", help="Label set file [the seven defaults]."),
    limit: int = typer.Option(None, "--limit", min=1, help="A seeded random sample of N solutions."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed for --limit."),
    max_tokens: int = typer.Option(384, "--max-tokens", help="Token cap of each judge reply."),
    out: Path = typer.Option(None, "--out", help="Also write the full report (every item) as JSON here."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Audit a judge: its first erroneous step vs human first-error labels (ProcessBench metrics)."""
    label_set = _labels(labels, None)
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
    resamples: int = typer.Option(2000, "--resamples", min=0, help="Bootstrap resamples per CI."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Agreement of the MAPLE step judge with human step labels: per label, per step, first error."""
    from mathlens.analyze.maple.agreement import LABEL_SOURCES, MAPLE_AGREEMENT, import_human_labels
    from mathlens.analyze.maple.human import write_worksheet

    if (human is None) == (worksheet is None):
        raise UserError("give exactly one of --human FILE (compare) and --worksheet FILE (write a file to label)")
    if labels_from not in LABEL_SOURCES:
        raise UserError(f"--labels-from must be one of {', '.join(LABEL_SOURCES)}, not {labels_from!r}")
    store = RunStore(run_dir)
    store.manifest()  # a clear error first when RUN is not a run
    if worksheet is not None:
        if MAPLE.read(store.root) is None:
            raise UserError(f"{store.root}: no MAPLE document; run `mathlens maple {store.root}` first")
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
