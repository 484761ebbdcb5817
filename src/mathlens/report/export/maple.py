"""MAPLE results (seed 001) by MATH level, by subject and overall, from the `maple` summary.

One row per (model, configuration, prompt variant) cell and level or subject: solutions whose
answer could be checked, correct answers, accuracy and mean MAPLE score (over scored solutions,
and over those with a wrong answer), each with its bootstrap interval, and the mean error rate e.
The study draws these as Figures 3 and 5; the tables give the numbers behind them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mathlens.analyze.maple.results import MAPLE, GroupRow, MapleSummary
from mathlens.report.export.builder import Col, Layout, TableBuilder, configuration_key, constant
from mathlens.report.export.table import Column, Estimate
from mathlens.report.loader import RunData
from mathlens.runs.documents import Document
from mathlens.stats.bootstrap import CI


def _caption(summary: MapleSummary) -> str:
    formula = "tanh(e·r/v)" if summary.formula == "prose" else "tanh(e·v/r)"
    return (f"Accuracy is the share of checked answers that are correct; MAPLE = {formula}, averaged over scored "
            "solutions (a correct answer scores 0) and over those with a wrong answer; e is the weighted mean of "
            "log(1 + label frequency). Intervals are 95% bootstrap intervals.")


def _ci(ci: CI) -> Estimate:
    return Estimate.interval(ci.estimate, ci.low, ci.high, ci.n)


def _group_key(group: str) -> tuple[int, float, str]:
    try:
        return 0, float(group), group
    except ValueError:
        return 1, 0.0, group


def _table(title: str, rows: Sequence[GroupRow], group: Column | None, caption: str) -> Layout[GroupRow]:
    items = sorted(rows, key=lambda r: (r.model, configuration_key(r.configuration), r.variant != "original",
                                        r.variant, _group_key(r.group)))
    cols: list[Col[GroupRow]] = [
        Col(Column("Model"), lambda r: r.model, constant),
        Col(Column("Configuration"), lambda r: r.configuration),
        Col(Column("Prompt variant"), lambda r: r.variant, constant),
    ]
    if group is not None:
        cols.append(Col(group, lambda r: r.group))
    cols += [
        Col(Column("Solutions", 0), lambda r: r.n),
        Col(Column("Correct", 0), lambda r: r.n_correct),
        Col(Column("Accuracy", 3), lambda r: _ci(r.accuracy)),
        Col(Column("MAPLE", 3), lambda r: _ci(r.mean_maple)),
        Col(Column("MAPLE (wrong answers)", 3), lambda r: _ci(r.mean_maple_incorrect)),
        Col(Column("Error rate e", 3), lambda r: r.mean_e.estimate),
    ]
    return Layout(title, cols, items, caption, groups=3 if group else 0)


def _builder(id: str, short: str, title: str, rows: Callable[[MapleSummary], Sequence[GroupRow]],
             group: Column | None, lead: str) -> TableBuilder:
    """A table of the summary's rows of one grouping (level, subject, or none: overall)."""
    def build(run: RunData, doc: Document[MapleSummary]) -> list[Layout[Any]]:
        return [_table(title, rows(doc.summary), group, lead + _caption(doc.summary))]
    return TableBuilder(id, short, MAPLE, build)


BY_LEVEL = _builder("maple-by-level", "MAPLE by MATH level", "Accuracy and MAPLE score by MATH level",
                    lambda s: s.by_level, Column("Level"),
                    "By MATH difficulty level (the data of Figure 3 of the MAPLE study). ")
BY_SUBJECT = _builder("maple-by-subject", "MAPLE by subject", "Accuracy and MAPLE score by subject",
                      lambda s: s.by_subject, Column("Subject"),
                      "By MATH subject (the data of Figure 5 of the MAPLE study). ")
OVERALL = _builder("maple-overall", "MAPLE overall", "Accuracy and MAPLE score overall", lambda s: s.overall, None, "")
