"""Split a question's text into math spans and prose, without a parser.

Exam questions mix English with math written three ways: LaTeX (`$\\nabla f$`), Unicode
(`∇f`, `√x`) and keyboard notation (`f(x,y) = x^2 y`). Element extraction only needs to know
*where* the math is, so this module works on whitespace-separated tokens: a token is math when it
carries a digit, an operator, a math symbol, a function call or a known function name, and
neighbouring math tokens (plus single-letter variables next to them) form one span. Everything is
a linear scan with simple regular expressions, so it is fast and safe on any input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

SpanKind = Literal["math", "prose"]

_LATEX = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_TOKEN = re.compile(r"\S+")
_TRAIL_PUNCT = re.compile(r"[.,;:?!\"”]+$")
_LEAD_PUNCT = re.compile(r"^[\"“‘']+")
MATH_SYMBOLS = set("∇∂∫∬∭∮∑Σ∏√∛πθαβγδλμσφωε≤≥≠≈→←↦∞·×÷⟨⟩‖∈∉⊂⊆∪∩°′″ⁱ²³⁻¹^=+*/<>|_−")
_MATH_WORDS = {
    "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "ln", "log", "exp", "sqrt", "lim", "dx", "dy", "dz", "dt", "du", "dv", "dr", "dθ", "pi", "e", "infinity",
}
_PART_LABEL = re.compile(r"^\((?:[a-z]|[ivx]+|\d{1,2})\)$")
_HYPHEN_WORD = re.compile(r"^[A-Za-z]+(?:-[A-Za-z]+)+$")
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.I)
_CALL = re.compile(r"^[A-Za-z]{1,6}'*\(")
_VAR_TUPLE = re.compile(r"^\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])+\s*\)$")
_PRIME = re.compile(r"^[A-Za-z]'+$")
_LEADING_OPS = ("=", "<", ">", "^", "+", "-", "*", "/", "≤", "≥", "→", "−", "·", "(", ".")
_TRAILING_OPS = ("=", "<", ">", "^", "+", "-", "*", "/", "≤", "≥", "→", "−", "·", ".")
_PROSE_WORD = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}")


@dataclass(frozen=True)
class Span:
    """A stretch of the text: `math` (with `latex` set for `$...$`-style spans) or `prose`."""

    start: int
    end: int
    text: str
    kind: SpanKind
    latex: bool = False


def _looks_like_latex(body: str) -> bool:
    """A `$...$` pair is math unless it is two prices with prose between them (`$5 and $3`)."""
    if any(c in body for c in "\\^_{}="):
        return True
    return not _PROSE_WORD.search(body)


def latex_spans(text: str) -> list[Span]:
    """Every `$...$`, `$$...$$`, `\\(...\\)` and `\\[...\\]` span that holds math."""
    out = []
    for m in _LATEX.finditer(text):
        body = next(g for g in m.groups() if g is not None)
        if m.group(0).startswith("$") and not m.group(0).startswith("$$") and not _looks_like_latex(body):
            continue
        out.append(Span(m.start(), m.end(), m.group(0), "math", latex=True))
    return out


def token_class(core: str) -> Literal["math", "var", "prose"]:
    """Classify one token stripped of sentence punctuation: math, a lone variable, or prose."""
    if not core:
        return "prose"
    if _PART_LABEL.match(core) or _ORDINAL.match(core) or core in {"e.g", "i.e", "etc"}:
        return "prose"
    if _HYPHEN_WORD.match(core) and any(len(p) >= 3 for p in core.split("-")):
        return "prose"
    if any(c in MATH_SYMBOLS for c in core) or any(c.isdigit() for c in core):
        return "math"
    if core.startswith("-") or core in {"(", ")", "."}:
        return "math"
    if _CALL.match(core) or _VAR_TUPLE.match(core) or _PRIME.match(core):
        return "math"
    if core.lower() in _MATH_WORDS:
        return "math"
    if len(core) == 1 and core.isalpha():
        return "var"
    return "prose"


@dataclass(frozen=True)
class _Tok:
    start: int
    end: int
    core: str
    cls: str
    cut_after: bool  # sentence punctuation followed the token, which ends a math span


def _raw_tokens(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Whitespace tokens, with a bracket group that holds only math kept whole: `(-1, 4)`."""
    raw = [(m.start(), m.end()) for m in _TOKEN.finditer(text, start, end)]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(raw):
        s, e = raw[i]
        depth = _depth(text[s:e])
        j = i
        # Join up to eight following tokens until the brackets close, if no prose word is inside.
        while depth > 0 and j + 1 < len(raw) and j - i < 8:
            j += 1
            depth += _depth(text[raw[j][0]:raw[j][1]])
        if j > i and depth <= 0 and not _has_prose_word(text[s:raw[j][1]]):
            out.append((s, raw[j][1]))
            i = j + 1
            continue
        out.append((s, e))
        i += 1
    return out


def _depth(tok: str) -> int:
    """Open minus closed brackets; `<` and `>` count only at a token's edges (`<1, 2>`)."""
    bare = tok.rstrip(".,;:?!")
    angle = int(bare.startswith("<") and not bare.startswith("<=")) - int(bare.endswith(">") and bare != ">")
    return sum(tok.count(c) for c in "([⟨") - sum(tok.count(c) for c in ")]⟩") + angle


def _has_prose_word(chunk: str) -> bool:
    return any(len(w) >= 3 and w.lower() not in _MATH_WORDS for w in re.findall(r"[A-Za-z]+", chunk))


def _tokens(text: str, start: int, end: int) -> list[_Tok]:
    toks = []
    for s0, e0 in _raw_tokens(text, start, end):
        s, e = s0, e0
        lead = _LEAD_PUNCT.match(text[s:e])
        if lead:
            s += lead.end()
        # A lone "." with blanks on both sides is a dot product ("u . v"), not a full stop.
        dot = text[s:e] == "." and s > 0 and text[s - 1].isspace() and e < len(text) and text[e].isspace()
        trail = None if dot else _TRAIL_PUNCT.search(text[s:e])
        # A trailing period is sentence punctuation ("x = 2."); "2.5" has none at its end.
        if trail:
            e -= len(trail.group(0))
        core = text[s:e]
        # Unbalanced brackets belong to the prose around the token: "(see x = 2)".
        while core.endswith(")") and core.count(")") > core.count("("):
            e -= 1
            core = text[s:e]
        while core.startswith("(") and core.count("(") > core.count(")"):
            s += 1
            core = text[s:e]
        toks.append(_Tok(s, e, core, token_class(core), cut_after=e < e0))
    return toks


def _runs(toks: list[_Tok]) -> list[tuple[int, int]]:
    """Index ranges [i, j) of tokens forming one math span."""
    runs: list[tuple[int, int]] = []
    i = 0
    n = len(toks)
    while i < n:
        if toks[i].cls != "math":
            i += 1
            continue
        j = i + 1
        while j < n and not toks[j - 1].cut_after:
            nxt = toks[j]
            after = toks[j + 1] if j + 1 < n else None
            if nxt.cls == "math" or (nxt.cls == "var" and _var_joins(toks[j - 1], nxt, after)):
                j += 1
            else:
                break
        s = i
        # A single letter just before an operator starts the span ("A = (1, 2)").
        if s > 0 and toks[s - 1].cls == "var" and not toks[s - 1].cut_after and \
                toks[s].core.startswith(_LEADING_OPS) and toks[s - 1].core not in {"a", "I"}:
            s -= 1
        # Operators dangling at either edge are prose dashes, not math ("limits - and").
        while j > s and toks[j - 1].core in {"-", "–", "—", "+", "=", "->", "→", "<", ">"}:
            j -= 1
        while s < j and toks[s].core in {"-", "–", "—", "+", "="}:
            s += 1
        if j > s:
            runs.append((s, j))
        i = max(j, i + 1)
    return runs


def _var_joins(prev: _Tok, var: _Tok, nxt: _Tok | None) -> bool:
    """Whether a lone letter continues a math span: `x^2 y` yes, `60 a day` no."""
    if prev.core.endswith(_TRAILING_OPS):
        return True
    if var.core in {"a", "A", "I"}:
        return nxt is not None and nxt.cls == "math" and nxt.core.startswith(_LEADING_OPS)
    if nxt is not None and nxt.cls == "math" and nxt.core.startswith(_LEADING_OPS):
        return True
    return not prev.core.replace(".", "").isdigit()


def split_text(text: str) -> list[Span]:
    """The text as alternating prose and math spans covering it exactly, in order.

    >>> [s.text for s in split_text("Find the gradient ∇f of f(x,y) = x^2 y at point (-1,4)")
    ...  if s.kind == "math"]
    ['∇f', 'f(x,y) = x^2 y', '(-1,4)']
    """
    math: list[Span] = []
    pos = 0
    for lx in latex_spans(text):
        math.extend(_plain_math(text, pos, lx.start))
        math.append(lx)
        pos = lx.end
    math.extend(_plain_math(text, pos, len(text)))
    out: list[Span] = []
    pos = 0
    for sp in math:
        if sp.start > pos:
            out.append(Span(pos, sp.start, text[pos:sp.start], "prose"))
        out.append(sp)
        pos = sp.end
    if pos < len(text):
        out.append(Span(pos, len(text), text[pos:], "prose"))
    return out


def _plain_math(text: str, start: int, end: int) -> list[Span]:
    toks = _tokens(text, start, end)
    spans = []
    for i, j in _runs(toks):
        s, e = toks[i].start, toks[j - 1].end
        spans.append(Span(s, e, text[s:e], "math"))
    return spans
