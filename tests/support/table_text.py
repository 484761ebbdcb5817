"""Read an exported table back: the cells of a Markdown table and of a LaTeX tabular, unescaped,
so a test compares what a reader sees with the values the table was built from."""

from __future__ import annotations

import re


def md_rows(text: str) -> list[list[str]]:
    """The cells of every table line of a Markdown document, unescaped (a backslash takes the next
    character literally; an unescaped `|` separates cells)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells, cur, i = [], "", 1
        while i < len(line):
            ch = line[i]
            if ch == "\\" and i + 1 < len(line):
                cur += line[i + 1]
                i += 2
                continue
            if ch == "|":
                cells.append(cur.strip())
                cur = ""
            else:
                cur += ch
            i += 1
        rows.append(cells)
    return rows


_TEX_BACK = {r"\textbackslash{}": "\\", r"\&": "&", r"\%": "%", r"\$": "$", r"\#": "#", r"\_": "_", r"\{": "{",
             r"\}": "}", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^", r"\textless{}": "<",
             r"\textgreater{}": ">", r"\textbar{}": "|", r"$\pm$": "±", "---": "—", "--": "–",
             r"$\kappa$": "κ", r"$\alpha$": "α", r"$\eta^2$": "η²", r"$\eta$": "η", r"$\times$": "×",
             r"$\cdot$": "·", r"$\geq$": "≥", r"$\leq$": "≤", r"$-$": "-"}
TEX_ESCAPES = re.compile("|".join(re.escape(k) for k in sorted(_TEX_BACK, key=len, reverse=True)))


def tex_unescape(text: str) -> str:
    return TEX_ESCAPES.sub(lambda m: _TEX_BACK[m.group(0)], text)


def tex_rows(text: str) -> list[list[str]]:
    """The cells of every tabular row (between \\toprule and \\bottomrule), split on unescaped `&`."""
    body = text.split(r"\toprule", 1)[1].split(r"\bottomrule", 1)[0]
    rows = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line in (r"\midrule", r"\addlinespace"):
            continue
        assert line.endswith(r"\\"), line
        rows.append([c.strip() for c in re.split(r"(?<!\\)&", line[:-2])])
    return rows
