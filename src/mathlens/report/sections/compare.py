"""Paired comparison: did the change make it better? (the `mathlens compare` statistics, recomputed).

Shown when the report has two or more runs (the first run against each other one, items paired on
every record field; when nothing pairs, by model or by configuration, each run holding one value)
or one run with several configurations, variants or models (each against baseline, the original
prompt, or the first model); left out while no compared metric's analysis exists. The numbers are
computed again from the runs' analysis documents by the same function as `mathlens compare`
(`analyze.compare.compare_runs`, default seed and resamples), so no separate document has to be
kept in step with the runs.

Per comparison: the pairing (with the ids found on one side only), the metric table (means, the
difference B - A with its bootstrap CI, the test, the raw and corrected p-values), the metrics
that could not be computed with the command that makes them, and the items whose final answer
changed verdict. Each changed item links to a side-by-side view of the two responses with their
verdicts, further down in the section.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.compare import CompareOptions, CompareReport, Comparison, compare_runs, load_run_values
from mathlens.analyze.compare.models import By, ChangedItem
from mathlens.analyze.compare.sources import RunValues
from mathlens.errors import UserError
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.rounding import percent
from mathlens.runs.records import RunRecord

#: changed items shown side by side per comparison (the table counts all of them)
MAX_PAIRS = 200


@dataclass(frozen=True)
class SideView:
    side: str
    label: str
    status: str
    predicted: str | None
    text: str | None
    found: bool


@dataclass(frozen=True)
class PairView:
    anchor: str
    item: str
    direction: str
    sides: tuple[SideView, SideView]


@dataclass(frozen=True)
class ComparisonView:
    title: str
    pairing: str
    only_a: tuple[int, list[str]]
    only_b: tuple[int, list[str]]
    metrics: Table
    unavailable: list[tuple[str, str, str]]
    changed: Table | None
    pairs: list[PairView]


@dataclass(frozen=True)
class CompareView:
    rule: str
    settings: str
    comparisons: list[ComparisonView]


def _report(ctx: ReportContext, values: list[RunValues], by: By | None, opts: CompareOptions) -> CompareReport | None:
    try:
        return compare_runs(values, opts.model_copy(update={"by": by}))
    except UserError:
        return None


def _two_or_more(ctx: ReportContext, values: list[RunValues], opts: CompareOptions) -> list[CompareReport]:
    out = []
    for other in values[1:]:
        pair = [values[0], other]
        for by in (None, "model", "configuration"):
            rep = _report(ctx, pair, by, opts)
            if rep is not None and any(c.pairing.paired for c in rep.comparisons):
                out.append(rep)
                break
    return out


def _one(ctx: ReportContext, run: RunValues, opts: CompareOptions) -> list[CompareReport]:
    out = []
    for by in ("configuration", "variant", "model"):
        if len({getattr(r, by) for r in run.refs}) > 1:
            rep = _report(ctx, [run], by, opts)
            if rep is not None:
                out.append(rep)
    return out


def _metrics_table(ctx: ReportContext, c: Comparison, uid: str, opts: CompareOptions) -> Table:
    cols = ("metric", "status", "n", "A", "B", "Δ (B − A)", "CI low", "CI high", "test", "b (A✓ B✗)",
            "c (A✗ B✓)", "p", f"p ({opts.correction})", "significant")
    rows: list[tuple[Cell, ...]] = []
    for m in c.metrics:
        if m.status != "ok":
            continue
        rows.append((m.title, m.status, m.n, m.mean_a, m.mean_b, m.delta, m.ci_low, m.ci_high, m.test, m.b, m.c,
                     m.p_value, m.p_adjusted, m.significant))
    caption = (f"{percent(opts.confidence)} percentile bootstrap CIs over pairs ({opts.resamples} resamples, seed "
               f"{opts.seed}); p: McNemar's exact test for accuracy, a sign-flip permutation test for scores; "
               f"significant: corrected p below {opts.alpha}.")
    return Table(ctx.uid("compare", uid), f"{c.a.label} → {c.b.label}", cols, tuple(rows), caption=caption,
                 decimals={3: 3, 4: 3, 5: 3, 6: 3, 7: 3, 11: 4, 12: 4})


def _records(runs: dict[str, RunData], run_path: str) -> dict[str, RunRecord]:
    run = runs.get(run_path)
    return {r.key: r for r in run.records} if run is not None else {}


def _side(side: str, label: str, status: str, predicted: str | None, rec: RunRecord | None) -> SideView:
    return SideView(side, label, status, predicted, rec.response if rec is not None else None, rec is not None)


def _changed(ctx: ReportContext, c: Comparison, uid: str, runs: dict[str, RunData]) -> tuple[Table | None,
                                                                                               list[PairView]]:
    if not c.changed:
        return None, []
    recs_a, recs_b = _records(runs, c.a.run), _records(runs, c.b.run)
    base = ctx.uid("cmp-pair", uid)
    rows: list[tuple[Cell, ...]] = []
    links: list[str | None] = []
    pairs: list[PairView] = []
    for j, ch in enumerate(c.changed):
        anchor = f"{base}-{j}" if j < MAX_PAIRS else None
        rows.append((ch.item, _direction(ch), ch.status_a, ch.predicted_a, ch.status_b, ch.predicted_b))
        links.append(anchor)
        if anchor is not None:
            pairs.append(PairView(anchor, ch.item, _direction(ch), (
                _side("A", c.a.label, ch.status_a, ch.predicted_a, recs_a.get(ch.record.key)),
                _side("B", c.b.label, ch.status_b, ch.predicted_b, recs_b.get(ch.record_b.key)))))
    title = f"Changed verdicts: {c.correct_to_wrong} correct → wrong, {c.wrong_to_correct} wrong → correct"
    caption = "Each item opens both responses side by side below."
    if c.correct_to_wrong + c.wrong_to_correct > len(c.changed):
        caption += f" Listed: the first {len(c.changed)}."
    table = Table(ctx.uid("compare-changed", uid), title, ("item", "change", "A verdict", "A answer", "B verdict",
                  "B answer"), tuple(rows), caption=caption, row_links=tuple(links))
    return table, pairs


def _direction(ch: ChangedItem) -> str:
    return "correct → wrong" if ch.direction == "correct_to_wrong" else "wrong → correct"


def _view(ctx: ReportContext, c: Comparison, runs: dict[str, RunData], opts: CompareOptions) -> ComparisonView:
    uid = f"{c.a.label}-{c.b.label}"
    p = c.pairing
    changed, pairs = _changed(ctx, c, uid, runs)
    unavailable = [(m.title, m.reason, m.command) for m in c.metrics if m.status != "ok"]
    pairing = (f"{p.paired} paired item(s) (key: {', '.join(p.key)}); {p.only_a} only in A, {p.only_b} only in B")
    return ComparisonView(title=f"A: {c.a.label} · B: {c.b.label}", pairing=pairing,
                          only_a=(p.only_a, p.only_a_ids), only_b=(p.only_b, p.only_b_ids),
                          metrics=_metrics_table(ctx, c, uid, opts), unavailable=unavailable, changed=changed,
                          pairs=pairs)


def build(ctx: ReportContext) -> CompareView | None:
    """The comparisons the report's runs call for (module notes), or None when there is nothing to compare."""
    opts = CompareOptions(max_listed=MAX_PAIRS)
    try:
        values = [load_run_values(run.root) for run in ctx.runs]
    except UserError:
        return None
    reports = _two_or_more(ctx, values, opts) if len(values) > 1 else _one(ctx, values[0], opts) if values else []
    if not any(m.status != "unavailable" for rep in reports for c in rep.comparisons for m in c.metrics):
        return None  # no analysis to compare yet (the overview lists the section as skipped, with why)
    runs = {str(r.root): r for r in ctx.runs}
    views = [_view(ctx, c, runs, rep.options) for rep in reports for c in rep.comparisons]
    settings = (f"The p-values of each set of comparisons are corrected together ({opts.correction}); "
                f"{percent(opts.confidence)} CIs; seed {opts.seed}. `mathlens compare` prints the same numbers "
                f"(docs/compare.md).")
    rule = "; ".join(dict.fromkeys(rep.rule for rep in reports))
    return CompareView(rule=rule[:1].upper() + rule[1:], settings=settings, comparisons=views)


SECTION = ReportSection(id="compare", title="Comparison", template="sections/compare.html.j2", build=build,
                        analyses=("answers",))
