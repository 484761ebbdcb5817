"""Analysis documents that no section of this report draws, summarised by their envelope (the
analysis, its schema version, options and entry count, and the scalar values of its summary), so
that a new analysis is visible in the report before it has a section of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.runs.documents import DocumentError, read_envelope


@dataclass(frozen=True)
class Other:
    tables: tuple[Table, ...]


def drawn() -> set[str]:
    """The analyses some section of the report reads (each section declares its `analyses`)."""
    from mathlens.report.registry import load_sections

    return {name for section in load_sections() for name in section.analyses}


def build(ctx: ReportContext) -> Other | None:
    """A two-column table (field, value) per analysis document not drawn elsewhere."""
    tables = []
    shown = drawn()
    for run in ctx.runs:
        for name in run.analysis_names:
            if name in shown:
                continue
            path = run.root / "analysis" / f"{name}.jsonl"
            try:
                env = read_envelope(path)
            except DocumentError as exc:
                run.notes.append(str(exc))
                continue
            rows: tuple[tuple[Cell, ...], ...] = (
                ("analysis", env.analysis), ("schema version", env.schema_version),
                ("written by mathlens", env.mathlens_version), ("entries", env.entries),
                *((f"option {k}", _cell(v)) for k, v in env.options.items() if _scalar(v)),
                *((k, _cell(v)) for k, v in env.summary.items() if _scalar(v)),
                *((k, f"{len(v)} items") for k, v in env.summary.items() if isinstance(v, list)))
            tables.append(Table(ctx.uid("other", name, run.label), f"analysis/{name}.jsonl"
                                + (f" · {run.label}" if ctx.multi_run else ""), ("field", "value"), rows))
    return Other(tuple(tables)) if tables else None


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _cell(v: Any) -> Cell:
    return str(v).lower() if isinstance(v, bool) else v


SECTION = ReportSection(id="other_analyses", title="Other analyses", template="sections/other_analyses.html.j2",
                        build=build)
