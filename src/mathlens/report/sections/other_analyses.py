"""Analysis files that no section of this report draws, summarised by their top-level values, so
that a new analysis is visible in the report before it has a section of its own."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.lookup import scalar_items
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Table

#: Analyses some section reads (prefix match for families such as `tutor_stats_<annotator>`).
DRAWN = ("flow", "answers", "grades", "grade_tables", "human_grades", "sensitivity", "maple", "tutor_scores",
         "tutor_stats", "tutor_agreement", "tutor_human", "agreement", "grade_agreement")


@dataclass(frozen=True)
class Other:
    tables: tuple[Table, ...]


def _drawn(name: str) -> bool:
    return any(name == d or name.startswith(d + "_") for d in DRAWN)


def build(ctx: ReportContext) -> Other | None:
    """A two-column table (field, value) per analysis file not drawn elsewhere."""
    tables = []
    for run in ctx.runs:
        for name in run.analysis_names:
            if _drawn(name):
                continue
            doc = run.analysis(name)
            items = scalar_items(doc) if isinstance(doc, dict) else []
            lists = ([f"{k}: {len(v)} entries" for k, v in doc.items() if isinstance(v, list)]
                     if isinstance(doc, dict) else [])
            rows = tuple((k, v if not isinstance(v, bool) else str(v).lower()) for k, v in items)
            rows += tuple(("list", s) for s in lists)
            if isinstance(doc, list):
                rows += (("entries", len(doc)),)
            tables.append(Table(ctx.uid("other", name, run.label), f"analysis/{name}.json"
                                + (f" · {run.label}" if ctx.multi_run else ""), ("field", "value"), rows))
    return Other(tuple(tables)) if tables else None


SECTION = ReportSection(id="other_analyses", title="Other analyses", template="sections/other_analyses.html.j2",
                        build=build)
