"""The three renderers of a `PublicationTable`: CSV, Markdown (pipe table), LaTeX (booktabs).

* CSV holds raw values for a spreadsheet or a script: a header row, then one row per table row
  with its group labels repeated; an `Estimate` column becomes one column per part it has
  (``X``, ``X sd``, ``X CI low``, ``X CI high``, ``X n``), a `Ratio` column two (``X``,
  ``X total``). Cells go through the report's `csv_cell`, so text a spreadsheet would evaluate as a
  formula (``=1+1``) is prefixed with an apostrophe.
* Markdown: a ``## title`` heading, a pipe table (numbers right-aligned), the caption below. Text
  is escaped so it reads back as written: ``|`` cannot end a cell and ``* _ ` [ ] < > $ ~ \\``
  cannot start emphasis, code, links, HTML or math; line breaks become spaces.
* LaTeX: a ``table`` float with caption and ``\\label{tab:<id>}`` around a ``tabular`` ruled with
  booktabs (``\\toprule``, ``\\midrule``, ``\\bottomrule``; a ``\\midrule`` between top-level row
  groups, ``\\addlinespace`` between inner ones). The LaTeX specials ``\\ & % $ # _ { } ~ ^`` and
  ``< > |`` are escaped; the few symbols mathlens writes itself (± η² κ α × · – —) become their
  LaTeX forms. Needs ``\\usepackage{booktabs}``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable
from typing import Literal

from mathlens.report.export.table import PARTS, Cell, Column, Estimate, Part, PublicationTable, Ratio
from mathlens.report.tables import csv_cell

Format = Literal["csv", "markdown", "latex"]
FORMATS: tuple[Format, ...] = ("csv", "markdown", "latex")
EXTENSIONS: dict[Format, str] = {"csv": "csv", "markdown": "md", "latex": "tex"}

_PART_SUFFIX: dict[Part, str] = {"value": "", "sd": " sd", "low": " CI low", "high": " CI high", "n": " n"}


# -- shared formatting --------------------------------------------------------------------------

def _number(value: float | int, decimals: int | None) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    return f"{value:.{decimals}f}" if decimals is not None else f"{value:g}"


def _plain(col: Column, cell: Cell, *, pm: str, none: str, below: str) -> str:
    """A cell as display text before escaping (`pm`, `none`, `below` are the format's ±, missing
    value and "<" for small p-values)."""
    if cell is None:
        return none
    if isinstance(cell, str):
        return cell
    if isinstance(cell, Ratio):
        return f"{_number(cell.score, None)}/{_number(cell.total, None)}"
    if isinstance(cell, Estimate):
        if cell.value is None:
            return none
        text = _number(cell.value, col.decimals)
        shape = cell.shape
        if "sd" in shape:  # mean ± sd (the interval goes to the CSV only)
            return text if cell.sd is None else f"{text} {pm} {_number(cell.sd, col.decimals)}"
        if cell.low is not None and cell.high is not None:
            return f"{text} [{_number(cell.low, col.decimals)}, {_number(cell.high, col.decimals)}]"
        return text
    if col.p_value and isinstance(cell, float) and 0 <= cell < 0.001:
        return f"{below} 0.001"
    return _number(cell, col.decimals)


# -- CSV ----------------------------------------------------------------------------------------

def _csv_layout(table: PublicationTable, index: int) -> tuple[str, tuple[Part, ...]]:
    """What a column becomes in CSV: "plain", "ratio", or "estimate" with the parts it has."""
    cells = [row[index] for row in table.rows]
    if any(isinstance(c, Ratio) for c in cells):
        return "ratio", ()
    estimates = [c for c in cells if isinstance(c, Estimate)]
    if not estimates:
        return "plain", ()
    parts = tuple(p for p in PARTS if any(p in e.shape for e in estimates))
    return "estimate", parts


def to_csv(table: PublicationTable) -> str:
    """The table as CSV text (header row first; every row carries its group labels)."""
    layouts = [_csv_layout(table, i) for i in range(len(table.columns))]
    header: list[str] = []
    for col, (kind, parts) in zip(table.columns, layouts, strict=True):
        if kind == "ratio":
            header += [col.header, f"{col.header} total"]
        elif kind == "estimate":
            header += [col.header + _PART_SUFFIX[p] for p in parts]
        else:
            header.append(col.header)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([csv_cell(h) for h in header])
    for row in table.rows:
        out: list[str] = []
        for cell, (kind, parts) in zip(row, layouts, strict=True):
            if kind == "ratio":
                out += [csv_cell(cell.score), csv_cell(cell.total)] if isinstance(cell, Ratio) else ["", ""]
            elif kind == "estimate":
                est = cell if isinstance(cell, Estimate) else Estimate(cell if isinstance(cell, int | float) else None)
                out += [csv_cell(est.part(p)) for p in parts]
            else:
                out.append(csv_cell(cell if not isinstance(cell, Estimate | Ratio) else None))
        writer.writerow(out)
    return buf.getvalue()


# -- Markdown -----------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|$~])")
_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


def escape_markdown(text: str) -> str:
    """Text safe inside a Markdown table cell: specials backslash-escaped, line breaks as spaces."""
    return _MD_SPECIAL.sub(r"\\\1", _NEWLINES.sub(" ", text))


def to_markdown(table: PublicationTable) -> str:
    """The table as a Markdown pipe table under a heading, with its caption after it."""
    def cell(col: Column, value: Cell) -> str:
        text = _plain(col, value, pm="±", none="–", below="<")
        return escape_markdown(text) if isinstance(value, str) else text  # numbers need no escaping

    lines = [f"## {escape_markdown(table.title)}", ""]
    lines.append("| " + " | ".join(escape_markdown(c.header) for c in table.columns) + " |")
    lines.append("|" + "|".join("---:" if c.numeric else ":---" for c in table.columns) + "|")
    for _, row in table.shown_labels():
        lines.append("| " + " | ".join(cell(c, v) if v != "" else "" for c, v in zip(table.columns, row, strict=True))
                     + " |")
    if table.caption:
        lines += ["", escape_markdown(table.caption)]
    return "\n".join(lines) + "\n"


# -- LaTeX --------------------------------------------------------------------------------------

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}",
}
_TEX_SYMBOLS = {
    "±": r"$\pm$", "η²": r"$\eta^2$", "η": r"$\eta$", "κ": r"$\kappa$", "α": r"$\alpha$", "×": r"$\times$",
    "·": r"$\cdot$", "–": "--", "—": "---", "≥": r"$\geq$", "≤": r"$\leq$",
}
_TEX_PATTERN = re.compile("|".join(re.escape(k) for k in sorted([*_TEX_SPECIAL, *_TEX_SYMBOLS], key=len,
                                                                 reverse=True)))


def escape_latex(text: str) -> str:
    """Text safe in LaTeX's text mode: specials escaped in one pass, known symbols translated,
    line breaks as spaces."""
    text = _NEWLINES.sub(" ", text)
    return _TEX_PATTERN.sub(lambda m: _TEX_SPECIAL.get(m.group(0)) or _TEX_SYMBOLS[m.group(0)], text)


_HYPHEN_MINUS = re.compile(r"(?<![\w.\-])-(?=\d)")


def _latex_cell(col: Column, value: Cell) -> str:
    text = escape_latex(_plain(col, value, pm="±", none="–", below="<"))
    return _HYPHEN_MINUS.sub(r"$-$", text) if col.numeric else text  # minus signs, not hyphens


def to_latex(table: PublicationTable) -> str:
    """The table as a LaTeX `table` float around a booktabs `tabular`."""
    spec = "".join("r" if c.numeric else "l" for c in table.columns)
    caption = escape_latex(table.title) + (f". {escape_latex(table.caption)}" if table.caption else "")
    lines = [
        f"% {escape_latex(table.title)}",
        f"% written by mathlens from analysis/{table.source}.jsonl" if table.source else "% written by mathlens",
        r"\begin{table}[htbp]",
        r"  \centering",
        f"  \\caption{{{caption}}}",
        f"  \\label{{tab:{table.id}}}",
        f"  \\begin{{tabular}}{{{spec}}}",
        r"    \toprule",
        "    " + " & ".join(escape_latex(c.header) for c in table.columns) + r" \\",
        r"    \midrule",
    ]
    for i, (depth, row) in enumerate(table.shown_labels()):
        if i and depth < table.group_columns:
            lines.append(r"    \midrule" if depth == 0 else r"    \addlinespace")
        lines.append("    " + " & ".join(_latex_cell(c, v) if v != "" else "" for c, v in
                                        zip(table.columns, row, strict=True)) + r" \\")
    lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


RENDERERS: dict[Format, Callable[[PublicationTable], str]] = {
    "csv": to_csv, "markdown": to_markdown, "latex": to_latex,
}
