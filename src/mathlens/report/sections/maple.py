"""MAPLE results (`analysis/maple.json`): accuracy and MAPLE by MATH level and subject with CIs,
the label set, and how often each error label was given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.report.charts import ChartLayout, Series, grouped_bars, ranked_bars
from mathlens.report.context import ReportContext
from mathlens.report.lookup import num
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table

GROUP_COLS = ("model", "group", "n", "correct", "scored", "unjudged", "accuracy", "accuracy low", "accuracy high",
              "mean MAPLE", "MAPLE low", "MAPLE high", "mean MAPLE (wrong answers)", "mean e",
              "degenerate (excluded)")


@dataclass(frozen=True)
class MapleData:
    settings: tuple[tuple[str, str], ...]
    tables: tuple[Table, ...]
    charts: tuple[ChartLayout, ...]


def _ci(row: dict[str, Any], name: str) -> tuple[float | None, float | None, float | None]:
    ci = row.get(name)
    ci = ci if isinstance(ci, dict) else {}
    return num(ci.get("estimate")), num(ci.get("low")), num(ci.get("high"))


def _group_table(ctx: ReportContext, id: str, title: str, rows: list[dict[str, Any]]) -> Table | None:
    body: list[tuple[Cell, ...]] = []
    for r in rows:
        body.append((r.get("model"), r.get("group"), r.get("n"), r.get("n_correct"), r.get("n_scored"),
                     r.get("n_unjudged"), *_ci(r, "accuracy"), *_ci(r, "mean_maple"),
                     _ci(r, "mean_maple_incorrect")[0], _ci(r, "mean_e")[0], r.get("n_degenerate", 0)))
    return Table(ctx.uid("maple", id), title, GROUP_COLS, tuple(body)) if body else None


def _chart(ctx: ReportContext, rows: list[dict[str, Any]], metric: str, title: str, x_title: str) -> ChartLayout | None:
    cats = list(dict.fromkeys(str(r.get("group")) for r in rows))
    models = list(dict.fromkeys(str(r.get("model")) for r in rows))
    by = {(str(r.get("model")), str(r.get("group"))): _ci(r, metric) for r in rows}
    series = [Series(m, tuple(by.get((m, c), (None, None, None))[0] for c in cats),
                     lows=tuple(by.get((m, c), (None, None, None))[1] for c in cats),
                     highs=tuple(by.get((m, c), (None, None, None))[2] for c in cats)) for m in models]
    return grouped_bars(ctx.uid("maple-chart", metric, x_title), title, cats, series, y_title=title.split(" by ")[0],
                        x_title=x_title, y_max=1.0)


def build(ctx: ReportContext) -> MapleData | None:
    """Tables by level, subject and overall; charts of MAPLE and accuracy by level; label counts."""
    tables: list[Table] = []
    charts: list[ChartLayout] = []
    settings: list[tuple[str, str]] = []
    for run in ctx.runs:
        doc = run.analysis("maple")
        if not isinstance(doc, dict):
            continue
        sfx = f" · {run.label}" if ctx.multi_run else ""
        settings += [(f"{k}{sfx}", str(doc.get(k))) for k in ("judge", "reflector", "variant", "vr_source", "floor")
                     if doc.get(k) is not None]
        settings.append((f"degenerate responses{sfx}", "included" if doc.get("include_degenerate") else
                         f"{doc.get('excluded_degenerate', 0)} left out of every figure"))
        for key, title in (("overall", "All solutions"), ("by_level", "By MATH level"), ("by_subject", "By subject")):
            rows = [r for r in doc.get(key) or [] if isinstance(r, dict)]
            t = _group_table(ctx, key, f"MAPLE · {title}{sfx}", rows)
            if t is not None:
                tables.append(t)
            if key != "overall" and rows:
                x = "MATH level" if key == "by_level" else "Subject"
                for metric, name in (("mean_maple", "Mean MAPLE (0–1)"), ("accuracy", "Accuracy (share correct)")):
                    c = _chart(ctx, rows, metric, f"{name} by {x.lower()}{sfx}", x)
                    if c is not None:
                        charts.append(c)
        label_set = doc.get("labels")
        label_set = label_set if isinstance(label_set, dict) else {}
        labels = {str(lb.get("id")): lb for lb in label_set.get("labels") or [] if isinstance(lb, dict)}
        totals = doc.get("label_totals") or {}
        if labels:
            tables.append(Table(ctx.uid("maple-labels"), f"Error labels{sfx}",
                                ("label", "name", "severity", "weight", "times given", "definition"),
                                tuple((i, lb.get("name"), lb.get("severity"), num(lb.get("weight")),
                                       int(totals.get(i, 0)), lb.get("definition")) for i, lb in labels.items())))
        dist = [(str(labels.get(k, {}).get("name", k)), float(v)) for k, v in totals.items() if num(v) is not None]
        c = ranked_bars(ctx.uid("maple-label-dist"), f"How often each error label was given{sfx}", dist,
                        x_title="Steps carrying the label (count)", highlight_first=False, digits=0)
        if c is not None:
            charts.append(c)
    if not tables:
        return None
    return MapleData(settings=tuple(settings), tables=tuple(tables), charts=tuple(charts))


SECTION = ReportSection(id="maple", title="MAPLE", template="sections/maple.html.j2", build=build,
                        analyses=("maple",))
