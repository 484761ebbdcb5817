"""Publication tables: every result table of a run as CSV, Markdown or LaTeX (booktabs).

`mathlens report RUN --tables latex|markdown|csv --out DIR` writes one file per table plus
`index.json`. The pieces:

* `table.py`: `PublicationTable` (title, caption, columns, rows of typed cells, row groups);
* `builder.py`, `calculus.py`, `maple.py`, `agreement.py`, `tutoring.py`: one builder per table,
  each reading one analysis document through its spec;
* `registry.py`: the list of builders, run in order, with the skipped tables and their reasons;
* `render.py`: the three renderers; `writer.py`: the folder and its index.

    >>> from mathlens.report.export import export_tables           # doctest: +SKIP
    >>> export_tables(load_run("runs/demo"), Path("runs/demo/tables"), ("latex",))
"""

from __future__ import annotations

from mathlens.report.export.registry import BUILDERS, BuiltTables, Skipped, build_tables
from mathlens.report.export.render import FORMATS, RENDERERS, Format, to_csv, to_latex, to_markdown
from mathlens.report.export.table import Column, Estimate, PublicationTable, Ratio
from mathlens.report.export.writer import TablesIndex, export_tables, parse_formats

__all__ = [
    "BUILDERS", "FORMATS", "RENDERERS", "BuiltTables", "Column", "Estimate", "Format", "PublicationTable", "Ratio",
    "Skipped", "TablesIndex", "build_tables", "export_tables", "parse_formats", "to_csv", "to_latex", "to_markdown",
]
