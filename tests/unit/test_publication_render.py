"""The three renderers of a `PublicationTable` on hand-built tables: escaping of hostile text,
estimates and ratios, row groups. Each format is parsed back and compared with the cells."""

from __future__ import annotations

import csv
import io
import re

import pytest

from mathlens.report.export import Column, Estimate, PublicationTable, Ratio, to_csv, to_latex, to_markdown
from mathlens.report.export.render import escape_latex, escape_markdown
from support.table_text import TEX_ESCAPES, md_rows, tex_rows, tex_unescape

HOSTILE = "a|b & 50% _x_ {y} \\z"
FORMULA = "=1+1"
MORE = "~ ^ # $5 <i>*bold*</i> `code` [link](x)"


def table(**kw: object) -> PublicationTable:
    base: dict[str, object] = dict(
        id="t", title="Hostile {title} & 100%", caption="caption with _under_ and |pipe|",
        columns=(Column("Group"), Column("Name"), Column("Value", 2), Column("Score", 1)),
        rows=(("g1", HOSTILE, Estimate(0.5, sd=0.25, low=0.1, high=0.9, n=4), Ratio(44, 70)),
              ("g1", FORMULA, Estimate(-1.0, sd=None, low=None, high=None, n=2), Ratio(8.5, 30)),
              ("g2", MORE, None, None)),
        group_columns=1)
    base.update(kw)
    return PublicationTable(**base)  # type: ignore[arg-type]


def test_csv_round_trips_raw_values_and_defuses_formulas() -> None:
    rows = list(csv.reader(io.StringIO(to_csv(table()))))
    assert rows[0] == ["Group", "Name", "Value", "Value sd", "Value CI low", "Value CI high", "Value n",
                       "Score", "Score total"]
    assert rows[1] == ["g1", HOSTILE, "0.5", "0.25", "0.1", "0.9", "4", "44", "70"]
    # a formula-like text cell is prefixed so a spreadsheet shows it as text; numbers stay numbers
    assert rows[2] == ["g1", "'" + FORMULA, "-1.0", "", "", "", "2", "8.5", "30"]
    assert rows[3] == ["g2", MORE, "", "", "", "", "", "", ""]  # group labels repeat on every CSV row


def test_markdown_escapes_every_special_and_reads_back() -> None:
    text = to_markdown(table())
    rows = md_rows(text)
    assert rows[0] == ["Group", "Name", "Value", "Score"]
    assert rows[1] == [":---", ":---", "---:", "---:"]
    body = rows[2:]
    assert all(len(r) == 4 for r in body)  # the pipe inside the hostile cell did not split it
    assert body[0] == ["g1", HOSTILE, "0.50 ± 0.25", "44/70"]
    assert body[1] == ["", FORMULA, "-1.00", "8.5/30"]  # repeated group label blanked, as in the study
    assert body[2] == ["g2", MORE, "–", "–"]
    # nothing Markdown would interpret is left unescaped
    raw_line = next(line for line in text.splitlines() if "50%" in line)
    assert r"a\|b & 50% \_x\_ {y} \\z" in raw_line
    assert r"\<i\>\*bold\*\<\/i\>" not in raw_line  # '/' needs no escape
    assert r"\<i\>\*bold\*\</i\> \`code\` \[link\](x)" in text
    assert text.startswith("## Hostile {title} & 100%\n")
    assert r"caption with \_under\_ and \|pipe\|" in text


def test_markdown_puts_line_breaks_on_one_line() -> None:
    t = table(rows=(("g", "two\nlines\r\nhere", None, None),))
    assert md_rows(to_markdown(t))[2][1] == "two lines here"
    assert escape_markdown("a\n\nb") == "a b"


def test_latex_booktabs_structure_and_escaping() -> None:
    text = to_latex(table())
    assert text.index(r"\toprule") < text.index(r"\midrule") < text.index(r"\bottomrule")
    assert r"\begin{tabular}{llrr}" in text and r"\label{tab:t}" in text
    rows = tex_rows(text)
    assert all(len(r) == 4 for r in rows), rows  # one unescaped & fewer than columns on every row
    for line in text.split(r"\toprule", 1)[1].split(r"\bottomrule", 1)[0].splitlines():
        if line.strip().endswith(r"\\"):
            assert len(re.findall(r"(?<!\\)&", line)) == 3
    header, first, second, third = rows
    assert header == ["Group", "Name", "Value", "Score"]
    assert first[1] == r"a\textbar{}b \& 50\% \_x\_ \{y\} \textbackslash{}z"
    assert tex_unescape(first[1]) == HOSTILE
    assert tex_unescape(third[1]) == MORE
    assert first[2] == r"0.50 $\pm$ 0.25" and first[3] == "44/70"
    assert second[0] == "" and second[2] == "$-$1.00"  # a minus sign in a numeric column
    assert third[2] == "--"
    # a new top-level group is ruled off
    assert re.search(r"\\midrule\n\s+g2 &", text)
    assert r"\caption{Hostile \{title\} \& 100\%. caption with \_under\_ and \textbar{}pipe\textbar{}}" in text


def test_latex_escape_leaves_no_raw_special() -> None:
    nasty = "\\ & % $ # _ { } ~ ^ < > | \\\\&"
    out = escape_latex(nasty)
    stripped = TEX_ESCAPES.sub("", out)
    assert not re.search(r"[\\&%$#_{}~^<>|]", stripped), stripped
    assert tex_unescape(out) == nasty
    assert escape_latex("partial η² · 3 × 4 – 5 ± 1") == r"partial $\eta^2$ $\cdot$ 3 $\times$ 4 -- 5 $\pm$ 1"


def test_p_values_and_intervals() -> None:
    t = PublicationTable(id="p", title="p", columns=(Column("p", 3, p_value=True), Column("ci", 1)),
                         rows=((0.0004, Estimate(40.0, low=30.0, high=50.0)), (0.0312, Estimate(None))))
    body = md_rows(to_markdown(t))[2:]
    assert body == [["< 0.001", "40.0 [30.0, 50.0]"], ["0.031", "–"]]
    assert tex_rows(to_latex(t))[1] == [r"\textless{} 0.001", "40.0 [30.0, 50.0]"]
    assert list(csv.reader(io.StringIO(to_csv(t))))[1] == ["0.0004", "40.0", "30.0", "50.0"]


def test_row_groups_and_shown_labels() -> None:
    t = PublicationTable(id="g", title="g", columns=(Column("Course"), Column("Exam"), Column("Conf"),
                                                     Column("v", 1)),
                         rows=(("I", "E1", "B", 1.0), ("I", "E1", "R", 2.0), ("I", "E2", "B", 3.0),
                               ("II", "E1", "B", 4.0)), group_columns=2)
    assert [(g.labels, len(g.rows)) for g in t.row_groups()] == [(("I", "E1"), 2), (("I", "E2"), 1),
                                                                  (("II", "E1"), 1)]
    shown = list(t.shown_labels())
    assert [d for d, _ in shown] == [0, 2, 1, 0]
    assert [r[:3] for _, r in shown] == [("I", "E1", "B"), ("", "", "R"), ("", "E2", "B"), ("II", "E1", "B")]
    tex = to_latex(t)
    assert tex.count(r"\addlinespace") == 1 and tex.count(r"\midrule") == 2  # under the header, before II


def test_malformed_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        PublicationTable(id="x", title="x", columns=(Column("a"), Column("b")), rows=(("only",),))
    with pytest.raises(ValueError, match="group_columns"):
        PublicationTable(id="x", title="x", columns=(Column("a"),), rows=(), group_columns=2)


def test_negative_numbers_get_minus_signs_in_latex_only_in_numeric_columns() -> None:
    t = PublicationTable(id="m", title="m", columns=(Column("text"), Column("v", 1)),
                         rows=(("-3 is text", Estimate(-1.25, low=-2.0, high=0.5)), ("x", None)))
    rows = tex_rows(to_latex(t))
    assert rows[1] == ["-3 is text", "$-$1.2 [$-$2.0, 0.5]"]
    assert rows[2] == ["x", "--"]
