"""Results tables by MATH level and subject, CSV files, and the data of the seed's Figures 3 and 5.

Every row and point belongs to one (model, configuration, variant) cell (`RecordRef.group`):
baseline and RAG configurations, and each ablation variant, are tabled separately.

Accuracy is over solutions whose answer could be checked (correct / incorrect / unparseable /
no answer before the token cap cut the response);
MAPLE means are over scored solutions (a correct answer scores 0, as the seed only labels wrong
ones), and separately over scored wrong answers. Every mean carries a percentile bootstrap CI.
Degenerate responses left out of the analysis (status `degenerate`) enter no figure and are
counted in each row's `n_degenerate`.
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mathlens.analyze.maple.results import Figure, FigurePoint, GroupBy, GroupRow, SolutionMaple
from mathlens.flags import MAX_RESAMPLES, Flag
from mathlens.runs.documents import RecordRef
from mathlens.stats.bootstrap import bootstrap_ci

#: the answer statuses of solutions whose answer was checked (a cut response that states no answer
#: is a wrong one)
CHECKED = ("correct", "incorrect", "unparseable", "no_answer")
#: Level and subject order used by MATH.
SUBJECT_ORDER = (
    "Prealgebra",
    "Algebra",
    "Number Theory",
    "Counting & Probability",
    "Geometry",
    "Intermediate Algebra",
    "Precalculus",
)


class BootstrapConfig(BaseModel):
    """Resampling settings for every CI in the tables."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_resamples: Annotated[int, Flag("--resamples")] = Field(2000, ge=1, le=MAX_RESAMPLES,
                                                                         description="bootstrap resamples per CI")
    confidence: float = Field(0.95, gt=0, lt=1)
    seed: int = 0


def _group_key(sol: SolutionMaple, by: str) -> str:
    if by == "level":
        return str(sol.level) if sol.level is not None else "unknown"
    if by == "subject":
        return sol.subject or "unknown"
    return "all"


def _order(by: str) -> Callable[[str], Any]:
    if by == "level":
        return lambda g: (g == "unknown", int(g) if g.isdigit() else 0, g)
    if by == "subject":
        rank = {s: i for i, s in enumerate(SUBJECT_ORDER)}
        return lambda g: (g == "unknown", rank.get(g, len(rank)), g)
    return lambda g: g


def _cell_order(ref: RecordRef) -> tuple[str, str, bool, str]:
    """Cells by model, then configuration, the original prompt before its variants."""
    return ref.model, ref.configuration, not ref.original, ref.variant


def group_rows(solutions: Sequence[SolutionMaple], by: GroupBy, boot: BootstrapConfig | None = None) -> list[GroupRow]:
    """One row per (model, configuration, variant) cell and group, with accuracy, mean MAPLE and
    mean e, each with a bootstrap CI. Cells are never pooled: a run with two configurations or
    with ablation variants gets a row for each."""
    boot = boot or BootstrapConfig()
    groups: dict[tuple[tuple[str, str, str], str], list[SolutionMaple]] = defaultdict(list)
    refs: dict[tuple[str, str, str], RecordRef] = {}
    for sol in solutions:
        refs.setdefault(sol.record.group, sol.record)
        groups[(sol.record.group, _group_key(sol, by))].append(sol)
    order = _order(by)
    rows = []
    for cell, group in sorted(groups, key=lambda k: (_cell_order(refs[k[0]]), order(k[1]))):
        sols = groups[(cell, group)]
        checked = [s for s in sols if s.answer_status in CHECKED]
        scored = [s for s in checked if s.status == "ok" and s.maple is not None]
        wrong = [s for s in scored if s.answer_status != "correct"]

        def ci(values: Iterable[float]) -> Any:
            return bootstrap_ci(list(values), n_resamples=boot.n_resamples, confidence=boot.confidence, seed=boot.seed)

        labels: Counter[str] = Counter()
        for s in scored:
            labels.update(s.counts)
        model, configuration, variant = cell
        rows.append(
            GroupRow(
                model=model,
                configuration=configuration,
                variant=variant,
                by=by,
                group=group,
                n=len(checked),
                n_correct=sum(s.answer_status == "correct" for s in checked),
                n_scored=len(scored),
                n_unjudged=sum(s.status == "unjudged" for s in checked),
                n_degenerate=sum(s.status == "degenerate" for s in sols),
                accuracy=ci(float(s.answer_status == "correct") for s in checked),
                mean_maple=ci(s.maple for s in scored if s.maple is not None),
                mean_maple_incorrect=ci(s.maple for s in wrong if s.maple is not None),
                mean_e=ci(s.e for s in scored if s.e is not None),
                label_counts=dict(sorted(labels.items())),
            )
        )
    return rows


def figure_data(rows: Sequence[GroupRow], x: Literal["level", "subject"]) -> Figure:
    """The points of a two-panel plot: accuracy and mean MAPLE per group, one series per
    (model, configuration, variant) cell. `rows` are the table rows grouped by `x`."""
    points = []
    for row in rows:
        if row.by != x:
            raise ValueError(f"a figure by {x} is drawn from rows by {x}, not by {row.by}")
        points.append(
            FigurePoint(
                model=row.model,
                configuration=row.configuration,
                variant=row.variant,
                x=row.group,
                n=row.n,
                accuracy=row.accuracy.estimate,
                accuracy_low=row.accuracy.low,
                accuracy_high=row.accuracy.high,
                maple=row.mean_maple.estimate,
                maple_low=row.mean_maple.low,
                maple_high=row.mean_maple.high,
            )
        )
    return Figure(x=x, points=points)


CSV_COLUMNS = (
    "model",
    "configuration",
    "variant",
    "by",
    "group",
    "n",
    "n_correct",
    "n_scored",
    "n_unjudged",
    "n_degenerate",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "mean_maple",
    "mean_maple_low",
    "mean_maple_high",
    "mean_maple_incorrect",
    "mean_maple_incorrect_low",
    "mean_maple_incorrect_high",
    "mean_e",
)


def _csv_row(row: GroupRow) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: getattr(row, k)
        for k in ("model", "configuration", "variant", "by", "group", "n", "n_correct", "n_scored", "n_unjudged",
                  "n_degenerate")
    }
    for name in ("accuracy", "mean_maple", "mean_maple_incorrect"):
        ci = getattr(row, name)
        out[name], out[f"{name}_low"], out[f"{name}_high"] = ci.estimate, ci.low, ci.high
    out["mean_e"] = row.mean_e.estimate
    # An empty cell, never "nan", where a value does not exist.
    return {k: ("" if v is None else v) for k, v in out.items()}


def write_csv(rows: Sequence[GroupRow], path: Path) -> Path:
    """Write a results table as CSV (one line per row, empty cells for undefined values)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow(_csv_row(row))
    return path
