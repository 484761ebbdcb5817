"""Tables on a narrow terminal: a table wider than the console is laid out again rather than squeezed.

Rich fits a wide table into the terminal by wrapping its cells between words, and when that is not
enough by cutting words, which on 80 columns leaves headers like "conf…" and model names like
"embe…". A table is printed as Rich prints it unless Rich would cut a word of it; then:

1. the columns that hold the same value in every row are taken out and printed once above the
   table, as "header  value" lines (a run of one model and one configuration says so once);
2. if Rich can print what is left without cutting a word, it is printed as a table of the columns
   that differ;
3. otherwise each row is printed as a block of "header  value" lines, one block per row (a value
   longer than the line folds onto the next).

Nothing is dropped: every header and every non-empty cell of the original is printed in one of the
layouts (an empty cell of a "header  value" line is left out with its header).
Only tables with a header and rows are laid out again (grids, bare and empty tables are printed
as Rich prints them), and a console that is not a terminal never narrows (`mathlens.cli.consoles`), so logs and
pipes keep the plain table.
"""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

#: the width a table is measured at so that Rich reports its width with nothing wrapped
_UNBOUNDED = 100_000


def _cuts(console: Console, table: Table, width: int) -> bool:
    """Whether Rich, printing `table` in `width` columns, would cut a word of a header or a cell (it
    marks each cut with an ellipsis)."""
    if Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum <= width:
        return False
    lines = console.render_lines(table, console.options.update_width(width), pad=False)
    shown = sum(segment.text.count("…") for line in lines for segment in line)
    return shown > sum((_plain(c) or "").count("…") for col in table.columns for c in [col.header, *col.cells])


def fitted(console: Console, table: Table, width: int | None = None) -> RenderableType:
    """`table`, or the same headers and cells laid out to fit `width` columns (`console.width` by
    default; see the module notes)."""
    width = console.width if width is None else width
    if not table.show_header or not table.columns or not table.rows or not _cuts(console, table, width):
        return table
    cells = [list(column.cells) for column in table.columns]
    n_rows = len(table.rows)
    same = [_all_equal(column) for column in cells]
    parts: list[RenderableType] = []
    if table.title:
        parts.append(_text(console, table.title, "table.title"))
    fixed = [(table.columns[i].header, cells[i][0]) for i, is_same in enumerate(same) if is_same]
    if fixed:
        parts.append(_pairs(fixed))
    varying = [i for i, is_same in enumerate(same) if not is_same]
    if varying:
        rest = _subtable(table, varying)
        if not _cuts(console, rest, width):
            parts.append(rest)
        else:
            for row in range(n_rows):
                parts.append(Text(""))
                parts.append(_pairs([(table.columns[i].header, cells[i][row]) for i in varying]))
    if table.caption:
        parts.append(_text(console, table.caption, "table.caption"))
    return Group(*parts)


def _plain(cell: RenderableType) -> str | None:
    """A cell's text, or None for a renderable that is not text (never taken for equal)."""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, Text):
        return cell.plain
    return None


def _all_equal(column: list[RenderableType]) -> bool:
    texts = [_plain(cell) for cell in column]
    return texts[0] is not None and all(t == texts[0] for t in texts)


def _text(console: Console, text: RenderableType, style: str) -> RenderableType:
    """A title or caption, a string passing through the console's own reading of strings (a
    `SafeConsole` escapes control characters)."""
    return text if not isinstance(text, str) else console.render_str(text, style=style, highlight=False)


def _pairs(pairs: list[tuple[RenderableType, RenderableType]]) -> Table:
    """"header  value" lines; long values wrap within their own column."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for header, value in pairs:
        if _plain(value) == "":
            continue
        name = header.plain if isinstance(header, Text) else str(header)
        grid.add_row(" ".join(name.split()), value)
    return grid


def _subtable(table: Table, keep: list[int]) -> Table:
    """`table` (no title or caption) with only the columns `keep`."""
    sub = Table(box=table.box, show_lines=table.show_lines, header_style=table.header_style,
                show_edge=table.show_edge, pad_edge=table.pad_edge, padding=table.padding)
    for index, original in enumerate(keep):
        sub.columns.append(replace(table.columns[original], _index=index))
    sub.rows = list(table.rows)
    return sub
