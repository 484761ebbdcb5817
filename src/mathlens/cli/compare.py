"""`mathlens compare RUN_A [RUN_B] [--by model|configuration|variant]`: paired comparison with tests.

Prints, per comparison, how the items paired (and which were on one side only), one row per
metric (means, the difference B - A with its bootstrap CI, the test, the raw and the corrected
p-value) with the metrics that could not be computed and the command that makes them, and the
items whose final answer went from correct to wrong or back. `--json` prints the `CompareReport`,
`--csv PATH` writes the metric rows, `--changed-csv PATH` the items whose verdict changed (up to
`--max-listed` per comparison), `--out DIR` writes the `COMPARE` document
(`DIR/analysis/compare.jsonl`). The statistics are described in docs/compare.md.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable
from pathlib import Path

import typer
from rich.table import Table

from mathlens.analyze.compare import COMPARE, CompareOptions, CompareReport, compare_runs, load_run_values
from mathlens.analyze.compare.models import By, Comparison, CorrectionName
from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.errors import UserError
from mathlens.flags import MAX_SEED
from mathlens.report.tables import Cell, csv_cell
from mathlens.rounding import percent
from mathlens.runs.documents import records_digest
from mathlens.runs.store import RunStore

CSV_COLUMNS = ("comparison", "side_a", "side_b", "paired", "only_a", "only_b", "metric", "status", "n", "missing",
               "mean_a", "mean_b", "delta", "ci_low", "ci_high", "test", "p_value", "p_adjusted", "significant",
               "b_a_right_b_wrong", "c_a_wrong_b_right", "reason", "command")


SHORT = {"accuracy": "accuracy", "rubric_percent": "rubric %", "maple": "MAPLE", "robustness": "robustness",
         "complexity": "complexity", "invalid_step_share": "invalid steps"}


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    if x is None:
        return "–"
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def _print(report: CompareReport) -> None:
    opts = report.options
    console.print(f"{escape(report.rule)}; {report.family} p-value(s) corrected together "
                  f"({opts.correction}, alpha {opts.alpha}); CIs {percent(opts.confidence)} percentile bootstrap, "
                  f"{opts.resamples} resamples, seed {opts.seed}")
    for c in report.comparisons:
        _print_one(c, opts)


def _print_one(c: Comparison, opts: CompareOptions) -> None:
    p = c.pairing
    console.print(f"\n[bold]A[/] {escape(c.a.label)}  [bold]vs B[/] {escape(c.b.label)}: {p.paired} paired item(s), "
                  f"{p.only_a} only in A, {p.only_b} only in B (key: {escape(', '.join(p.key))})")
    for name, ids, count in (("A", p.only_a_ids, p.only_a), ("B", p.only_b_ids, p.only_b)):
        if count:
            more = f" … and {count - len(ids)} more" if count > len(ids) else ""
            console.print(f"  only in {name}: {escape(', '.join(ids))}{more}")
    table = Table(title=f"B - A ({c.a.label} → {c.b.label})")
    for col in ("metric", "n", "A", "B", f"Δ [{percent(opts.confidence)} CI]", "test", "p", f"p {opts.correction}"):
        table.add_column(col)
    gone = []
    for m in c.metrics:
        if m.status != "ok":
            gone.append(m)
            continue
        test = f"McNemar b={m.b} c={m.c}" if m.b is not None else "sign-flip"
        sig = " *" if m.significant else ""
        table.add_row(SHORT[m.metric], f"{m.n}" + (f"+{m.missing}?" if m.missing else ""), _num(m.mean_a),
                      _num(m.mean_b), f"{_num(m.delta)} [{_num(m.ci_low)}, {_num(m.ci_high)}]", test,
                      _p(m.p_value), _p(m.p_adjusted) + sig)
    table.caption = f"* significant at alpha {opts.alpha} after correction"
    out_console.print(table)
    for note in dict.fromkeys(n for m in c.metrics for n in m.stale):
        console.print(f"  [yellow]not up to date:[/] {escape(note)}", highlight=False, soft_wrap=True)
    if any(m.missing for m in c.metrics if m.status == "ok"):
        console.print("  n+k?: k paired items lack a value on a side (e.g. an answer that could not be checked)")
    for m in gone:
        hint = f" — run `{escape(m.command)}`" if m.command else ""
        console.print(f"  {escape(m.title)}: {m.status.replace('_', ' ')}: {escape(m.reason)}{hint}")
    if c.changed:
        changed = Table(title=f"Changed verdicts: {c.correct_to_wrong} correct→wrong, "
                              f"{c.wrong_to_correct} wrong→correct")
        for col in ("item", "change", "A answer", "B answer", "A record", "B record"):
            changed.add_column(col)
        for ch in c.changed:
            changed.add_row(ch.item, ch.direction.replace("_", " "), ch.predicted_a or ch.status_a,
                            ch.predicted_b or ch.status_b, ch.record.key, ch.record_b.key)
        out_console.print(changed)


def no_pairs_reason(report: CompareReport) -> str:
    """Why a comparison has nothing to test: no item is on both sides (with a few ids of each)."""
    c = report.comparisons[0]
    p = c.pairing

    def some(ids: list[str], count: int) -> str:
        shown = ", ".join(ids[:3])
        return f"{count} item(s)" + (f", e.g. {shown}" if shown else "")

    more = f" (and in the {len(report.comparisons) - 1} other comparison(s))" if len(report.comparisons) > 1 else ""
    return (f"nothing to compare: no item is in both {c.a.label} and {c.b.label}{more}. Items pair on "
            f"{', '.join(p.key)}; A holds {some(p.only_a_ids, p.only_a)} and B holds "
            f"{some(p.only_b_ids, p.only_b)}. Compare runs of the same questions, or use --by within one run")


def _write_rows(path: Path, columns: tuple[str, ...], rows: Iterable[tuple[Cell, ...]]) -> int:
    """A CSV file of `columns` and `rows` (formula-looking text escaped); returns the row count."""
    count = 0
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([csv_cell(v) for v in row])
            count += 1
    return count


def write_csv(report: CompareReport, path: Path) -> int:
    """One row per comparison and metric (raw numbers); returns the row count."""
    return _write_rows(path, CSV_COLUMNS, (
        (c.index, c.a.label, c.b.label, c.pairing.paired, c.pairing.only_a, c.pairing.only_b, m.metric, m.status,
         m.n, m.missing, m.mean_a, m.mean_b, m.delta, m.ci_low, m.ci_high, m.test, m.p_value, m.p_adjusted,
         m.significant, m.b, m.c, m.reason, m.command)
        for c in report.comparisons for m in c.metrics))


CHANGED_COLUMNS = ("comparison", "a", "b", "item", "direction", "status_a", "status_b", "answer_a", "answer_b",
                   "record_a", "record_b")


def write_changed_csv(report: CompareReport, path: Path) -> int:
    """One row per item whose verdict changed; returns the row count."""
    return _write_rows(path, CHANGED_COLUMNS, (
        (c.index, c.a.label, c.b.label, ch.item, ch.direction, ch.status_a, ch.status_b, ch.predicted_a,
         ch.predicted_b, ch.record.key, ch.record_b.key)
        for c in report.comparisons for ch in c.changed))


def write_document(report: CompareReport, runs: list[Path], out: Path) -> Path:
    """The `COMPARE` document in `out/analysis/compare.jsonl` (summary + one entry per changed item)."""
    stores = [RunStore(r) for r in runs]
    run_id = " vs ".join(s.manifest().run_id for s in stores)
    digest = hashlib.sha256("".join(records_digest(s.records_path) for s in stores).encode()).hexdigest()
    entries = [ch for c in report.comparisons for ch in c.changed]
    summary = report.model_copy(update={"comparisons": [c.model_copy(update={"changed": []})
                                                        for c in report.comparisons]})
    return COMPARE.write(out, run_id=run_id, records_sha256=digest, entries=iter(entries),
                         summary=COMPARE.summary.model_validate(summary.model_dump()), options=report.options)


@user_errors
def compare(
    runs: list[Path] = typer.Argument(..., help="RUN_A [RUN_B]: two runs, or one run with --by."),
    by: str | None = typer.Option(None, "--by", help="model | configuration | variant: the field whose groups "
                                  "are compared (within one run: each against baseline / original / first model)."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Seed of the bootstrap and the permutation draws."),
    resamples: int = typer.Option(2000, "--resamples", min=1, max=100_000, help="Bootstrap resamples (and "
                                  "random sign flips when there are too many pairs to enumerate)."),
    confidence: float = typer.Option(0.95, "--confidence", min=0.5, max=0.999, help="CI level."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0001, max=0.5, help="Significance level after correction."),
    correction: str = typer.Option("holm", "--correction", help="holm | bh (Benjamini-Hochberg) | none."),
    max_listed: int = typer.Option(500, "--max-listed", min=0, max=100_000,
                                   help="Most ids listed per unpaired side and of changed items."),
    csv_path: Path | None = typer.Option(None, "--csv", help="Write the metric rows to this CSV file."),
    changed_csv: Path | None = typer.Option(None, "--changed-csv", help="Write the items whose verdict changed "
                                            "to this CSV file."),
    out: Path | None = typer.Option(None, "--out", help="Write the COMPARE document to DIR/analysis/compare.jsonl."),
    json_out: bool = JSON_OPTION,
) -> None:
    """Did a change help? Paired tests between runs or groups.

    Compares two runs, or the groups (configurations, variants, models) of one run."""
    if by not in (None, "model", "configuration", "variant"):
        raise UserError(f"--by {by!r}: choose model, configuration or variant")
    if correction not in ("holm", "bh", "none"):
        raise UserError(f"--correction {correction!r}: choose holm, bh or none")
    byf: By | None = by  # type: ignore[assignment]
    corr: CorrectionName = correction  # type: ignore[assignment]
    opts = CompareOptions(by=byf, seed=seed, resamples=resamples, confidence=confidence, alpha=alpha,
                          correction=corr, max_listed=max_listed)
    if len(runs) > 2:
        raise UserError(f"compare takes one or two runs, not {len(runs)}")
    report = compare_runs([load_run_values(r) for r in runs], opts)
    if report.comparisons and all(c.pairing.paired == 0 for c in report.comparisons):
        raise UserError(no_pairs_reason(report))
    written = []
    if csv_path is not None:
        write_csv(report, csv_path)
        written.append(str(csv_path))
    if changed_csv is not None:
        write_changed_csv(report, changed_csv)
        written.append(str(changed_csv))
    if out is not None:
        written.append(str(write_document(report, runs, out)))
    if json_out:
        emit_json(report)
        return
    _print(report)
    for w in written:
        console.print(f"written: {escape(w)}")


def register(app: typer.Typer) -> None:
    """Add `compare` to the mathlens command line."""
    app.command("compare")(compare)
