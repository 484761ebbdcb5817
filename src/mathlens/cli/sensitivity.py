"""`mathlens sensitivity RUN`: robustness, phrase sensitivity and impact factors from stored records."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from mathlens.analyze.ablation import SensitivityReport, read_report
from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.flags import MAX_RESAMPLES, MAX_SEED
from mathlens.runs.store import RunStore


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _print(report: SensitivityReport, top: int) -> None:
    console.print(f"run {escape(report.run_id)}: {report.n_questions} question(s), status {report.status}"
                  + (f" — {escape(report.note)}" if report.note else ""))
    if report.include_degenerate:
        console.print("degenerate responses included (--include-degenerate)")
    else:
        console.print(f"excluded as degenerate: {report.excluded_degenerate} response(s), "
                      f"{report.excluded_questions} whole question(s) (--include-degenerate keeps them)")
    console.print(f"answer flips over answered pairs only: {report.answer_pairs.describe()}")
    table = Table(title="Exam level (mean ± sd [95% CI])")
    for col in ("Course", "Exam", "Model", "Configuration", "Robustness", "Complexity", "Step count", "Phrase sens.",
                "Flagged", "Excluded (degenerate)"):
        table.add_column(col)
    for r in report.exams:
        cells = []
        for m in (r.robustness, r.complexity, r.step_count, r.phrase_sensitivity):
            ci = f" [{_num(m.ci_low)}, {_num(m.ci_high)}]" if m.ci_low is not None else ""
            cells.append(f"{_num(m.mean)} ± {_num(m.sd)}{ci}" if m.mean is not None else "—")
        table.add_row(r.course or "", r.exam, r.model, r.configuration, *cells,
                      f"{r.flagged_questions}/{r.n_questions}",
                      f"{r.excluded_degenerate} resp., {r.excluded_questions} q.")
    out_console.print(table)
    for q in report.questions:
        head = (f"{q.exam_id}/{q.question_id} [{q.configuration}] R={_num(q.robustness)}"
                f" ± {_num(q.robustness_sd)}  PS={_num(q.phrase_sensitivity)}"
                f"  flips={_num(q.answer_flip_rate, 2)} of {q.answer_pairs.describe()}"
                f"  pattern changes={_num(q.pattern_change_rate, 2)}"
                f"  excluded degenerate={q.excluded_degenerate}"
                + (f"  [{q.status}: {q.note}]" if q.status == "degenerate" else ""))
        out_console.print(head, highlight=False)
        c = q.consistency
        if c is not None and c.status == "ok":
            out_console.print(f"    repeats: answer agreement={_num(c.answer_agreement, 2)} of {c.n_answer_pairs}"
                              f" answered pair(s) (left out: {c.n_answer_unanswered} unanswered,"
                              f" {c.n_answer_truncated} truncated, {c.n_unknown_pairs} not comparable)"
                              f"  mean cosine={_num(c.mean_pairwise_cosine)} over {c.n_runs} runs",
                              highlight=False, markup=False)
        for imp in q.impact[:top]:
            out_console.print(f"    Important phrase: {imp.element_text}  ({imp.element_type})"
                              f"  Impact: {imp.impact:.3f}", highlight=False, markup=False)
        for flag in q.flags:
            out_console.print(f"    flag {flag.name}: {flag.reason}", highlight=False, markup=False)


@user_errors
def sensitivity(
    run_dir: Path = typer.Argument(..., help="A run directory (made with `mathlens run --ablate`)."),
    complexity_max: float = typer.Option(None, min=0, max=1_000_000,
                                         help="Flag questions whose complexity is above this (default: the "
                                         "threshold of the flow depth definition: 3.4 for tree, docs/flow.md)."),
    ps_max: float = typer.Option(0.5, "--ps-max", min=0, max=1,
                                  help="Flag questions whose phrase sensitivity is above this."),
    no_flow: bool = typer.Option(False, "--no-flow", help="Skip step counts and reasoning patterns."),
    resamples: int = typer.Option(2000, min=0, max=MAX_RESAMPLES,
                                  help="Bootstrap resamples for the exam-level intervals."),
    seed: int = typer.Option(0, min=0, max=MAX_SEED, help="Bootstrap seed."),
    top: int = typer.Option(5, min=0, max=1000, help="Impact factors shown per question."),
    include_degenerate: bool = typer.Option(
        False, "--include-degenerate", help="Keep empty, echoed, looping or wrong-script responses in the metrics."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Prompt-ablation sensitivity of a run (no model calls).

    Reads the stored records; writes analysis/sensitivity.jsonl and sensitivity_exams.csv (the analyzer's)."""
    from mathlens.analyze.registry import run_one

    store = RunStore(run_dir)
    run_one(store, "sensitivity", {"complexity_max": complexity_max, "phrase_sensitivity_max": ps_max,
                                   "flow": not no_flow, "n_resamples": resamples, "seed": seed,
                                   "include_degenerate": include_degenerate})
    report = read_report(store.root)
    assert report is not None  # just written
    if as_json:
        emit_json(report)
        return
    _print(report, top)


def register(app: typer.Typer) -> None:
    """Add `mathlens sensitivity`."""
    app.command("sensitivity")(sensitivity)
