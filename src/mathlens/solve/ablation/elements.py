"""Decompose a question prompt into typed elements, each with the edit that ablates it.

Element types (calculus seed 000, §3.2 and Table 1):

=============  ==============================================  ==========================================
type           what it is                                      how its variant changes the prompt
=============  ==============================================  ==========================================
coordinate     points, intervals, `x = 2`, bare numbers        removed, with the words that introduce it
                                                               ("at point (-1,4)", "from x = 0 to x = 2")
expression     function definitions, equations, vectors        removed, with a governing "of"/"for"/...
keyword        instruction verbs: find, compute, evaluate...   replaced by a synonym ("Find" → "Compute")
notation       `∇f`, `dy/dx`, `f'(x)`, `∫`, `‖v‖`              dropped when the prose already names it
                                                               ("the gradient ∇f"), else put into words
linguistic     punctuation, casing, sentence order             perturbed (marks dropped, lowered, rotated)
word           single content words of the prose (optional,    removed (`words.py`; not part of `all`)
               only when asked for)
=============  ==============================================  ==========================================

An element with the same text in several places (a point named in three parts) is one element
whose edit touches every occurrence. A sentence left with nothing but filler words after a
removal ("Let ." ) is removed whole. Every edit is a list of (start, end, replacement) splices on
the original text, so two elements can be ablated together when their splices do not overlap.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from mathlens.solve.ablation.classify import MathType, classify, is_bare_number, normalize, notation_of
from mathlens.solve.ablation.segments import Span, split_text

ElementType = Literal["coordinate", "expression", "keyword", "notation", "linguistic", "word"]
#: Typed elements in the order their variants are listed (the order of the seed's Table 1); what
#: `--ablate all` means.
ELEMENT_TYPES: tuple[ElementType, ...] = ("coordinate", "expression", "keyword", "notation", "linguistic")
#: Element types sent only when named (`--ablate all,words`): single content words (`words.py`).
OPTIONAL_TYPES: tuple[ElementType, ...] = ("word",)
Action = Literal["remove", "substitute", "perturb"]

#: Instruction verb -> a synonym that keeps the sentence grammatical.
KEYWORD_SYNONYMS: dict[str, str] = {
    "find": "compute", "compute": "calculate", "calculate": "compute", "evaluate": "compute",
    "determine": "find", "show": "prove", "prove": "show", "sketch": "draw", "solve": "work out",
    "simplify": "reduce", "differentiate": "find the derivative of", "integrate": "find the integral of",
    "explain": "describe", "justify": "explain", "approximate": "estimate", "estimate": "approximate",
    "verify": "check", "express": "write", "derive": "obtain", "describe": "explain", "locate": "find",
    "use": "apply", "write": "express", "give": "provide", "classify": "categorise", "decide": "determine",
    "expand": "multiply out", "identify": "name",
}
_KEYWORD_RE = re.compile(r"\b(" + "|".join(sorted(KEYWORD_SYNONYMS, key=len, reverse=True)) + r")\b", re.I)

_COORD_GOV = re.compile(
    r"(?:\s+|^)(?:(?:at\s+)?(?:the\s+)?points?\s+where|(?:passing\s+)?(?:at|through|near|about|around|on|over|for|when|where|if|with|as|in|to|"
    r"from|between)(?:\s+the)?(?:\s+(?:points?|intervals?|values?|coordinates?|region|location))?|"
    r"(?:the\s+)?points?)\s*$", re.I)
_EXPR_GOV = re.compile(
    r"(?:\s+|^)(?:of|for|if|where|when|given|with|by|let|suppose|consider|under|to|on|above|below)\s*$", re.I)
_FILLER = {
    "let", "suppose", "consider", "given", "assume", "define", "we", "have", "the", "function", "functions",
    "curve", "equation", "be", "and", "is", "are", "where", "with", "a", "an", "for", "if", "of", "defined",
    "by", "as", "follows", "on", "its", "at", "point", "when", "then",
}
_LABEL = re.compile(r"(?<!\S)\((?:[a-z]|[ivx]+)\)(?=\s)")
_TERMINAL = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.?!](?=\s|$)")
_PUNCT_MARK = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.?!;:](?=\s|$)")
_EMPHASIS = re.compile(r"\b(?!(?:I|II|III|IV|V|VI)\b)[A-Z]{2,}\b")
_AND_AFTER = re.compile(r"[ \t]*,?[ \t]+and[ \t]+")
_AND_BEFORE = re.compile(r"[ \t]*,?[ \t]+and[ \t]+$")
_START_AFTER = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.?!]\s+|\n|\(\w{1,3}\)\s+")
_LINGUISTIC_ORDER = ("punctuation", "casing", "word order")
_INTERVAL_JOIN = re.compile(r"^\s+(?:to|and)\s+$", re.I)
_INTERVAL_OPEN = re.compile(r"\b(?:from|between)\s+$", re.I)


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` by `replacement`; `capitalize_next` re-capitalises a sentence
    whose first words were removed."""

    start: int
    end: int
    replacement: str = ""
    capitalize_next: bool = False


@dataclass(frozen=True)
class Element:
    """One prompt element and the splices that ablate it."""

    type: ElementType
    text: str
    action: Action
    edits: tuple[Edit, ...]
    meaning_preserving: bool
    detail: str = ""


@dataclass(frozen=True)
class _Clause:
    start: int
    end: int


def clauses(text: str, spans: list[Span]) -> list[_Clause]:
    """Sentence-like units: split at terminal punctuation, line breaks and part labels `(a)`."""
    cuts = {0, len(text)}
    for sp in spans:
        if sp.kind != "prose":
            continue
        for m in re.finditer(r"[.?!;](?=\s)|\n", sp.text):
            cuts.add(sp.start + m.end())
        for m in _LABEL.finditer(sp.text):
            cuts.add(sp.start + m.start())
    pts = sorted(cuts)
    out = []
    for a, b in itertools.pairwise(pts):
        while a < b and text[a].isspace():
            a += 1
        if a < b:
            out.append(_Clause(a, b))
    return out


def _clause_of(cls: list[_Clause], pos: int) -> _Clause:
    """The clause holding `pos` (the last one starting before it, for a position in blank space)."""
    best = cls[0]
    for c in cls:
        if c.start <= pos:
            best = c
    return best


def _removal(text: str, start: int, end: int, clause: _Clause, gov: re.Pattern[str] | None,
             math: list[Span]) -> Edit:
    """The splice removing `text[start:end]` with its governing words, or its whole clause when
    nothing but filler would remain."""
    gs = start
    if gov is not None and (m := gov.search(text, clause.start, start)) and m.end() == start:
        gs = m.start()
    # "Let u = <1, 2> and v = <3, 4>": with no governing word of its own (or only the clause's
    # lead-in), an element joined by "and" goes with the conjunction and the lead-in stays.
    if gs == start or not text[clause.start:gs].strip():
        after_and = _AND_AFTER.match(text, end)
        if after_and and any(s.start == after_and.end() for s in math):
            return Edit(start, after_and.end())
        before_and = _AND_BEFORE.search(text, clause.start, start)
        if before_and and before_and.end() == start and any(s.end == before_and.start() for s in math):
            return Edit(before_and.start(), end)
    at_clause_start = text[clause.start:gs].strip() == "" or _LABEL.fullmatch(text[clause.start:gs].strip())
    rest = text[clause.start:gs] + text[end:clause.end]
    other_math = any(s.start >= clause.start and s.end <= clause.end and not (s.start >= gs and s.end <= end)
                     for s in math)
    words = re.findall(r"[A-Za-z]+", _LABEL.sub("", rest))
    if not other_math and all(w.lower() in _FILLER for w in words):
        s, e = clause.start, clause.end
        while e < len(text) and text[e] in " \t":
            e += 1
        if e >= len(text) or text[e] == "\n":  # last clause of its line: take the space before instead
            e = clause.end
            while s > 0 and text[s - 1] in " \t":
                s -= 1
        return Edit(s, e)
    if at_clause_start:
        e = end
        m2 = re.compile(r",?[ \t]*").match(text, e)
        e = m2.end() if m2 else e
        first = text[gs:start + 1].lstrip()[:1]
        gs_trim = gs
        while gs_trim < start and text[gs_trim].isspace():
            gs_trim += 1
        return Edit(gs_trim, e, "", capitalize_next=first.isupper())
    while gs > clause.start and text[gs - 1] in " \t":
        gs -= 1
    return Edit(gs, end)


def _math_elements(text: str, spans: list[Span], cls: list[_Clause]) -> list[Element]:
    math = [s for s in spans if s.kind == "math"]
    typed: list[tuple[Span, MathType]] = [(s, k) for s in math if (k := classify(s.text, s.latex)) != "skip"]
    groups: dict[tuple[MathType, str], list[tuple[int, int, Span]]] = {}
    i = 0
    while i < len(typed):
        sp, kind = typed[i]
        start, end, label = sp.start, sp.end, sp.text
        # "from x = 0 to x = 2" and "between 1 and 3" are one interval reference.
        if kind == "coordinate" and i + 1 < len(typed) and typed[i + 1][1] == "coordinate" and \
                _INTERVAL_JOIN.match(text[sp.end:typed[i + 1][0].start]) and \
                (m := _INTERVAL_OPEN.search(text, 0, sp.start)) and m.end() == sp.start:
            end = typed[i + 1][0].end
            label = text[m.start():end]
            i += 1
        key = (kind, normalize(label, sp.latex).lower() if kind != "notation" else normalize(label, sp.latex))
        groups.setdefault(key, []).append((start, end, sp))
        i += 1
    out = []
    for (kind, _), occ in groups.items():
        first = occ[0][2]
        label = text[occ[0][0]:occ[0][1]]
        edits = []
        for start, end, sp in occ:
            clause = _clause_of(cls, start)
            if kind == "notation":
                edits.append(_notation_edit(text, sp, clause))
            else:
                bare = kind == "coordinate" and is_bare_number(sp.text, sp.latex) and end == sp.end
                gov = None if bare else (_COORD_GOV if kind == "coordinate" else _EXPR_GOV)
                edits.append(_removal(text, start, end, clause, gov, math))
        if kind == "notation":
            note = notation_of(normalize(first.text, first.latex))
            out.append(Element("notation", label, "substitute", tuple(edits), True,
                               detail=note.words if note else ""))
        elif kind in ("coordinate", "expression"):
            out.append(Element(kind, label, "remove", tuple(edits), False))
    return out


def _notation_edit(text: str, sp: Span, clause: _Clause) -> Edit:
    note = notation_of(normalize(sp.text, sp.latex))
    assert note is not None
    before = text[clause.start:sp.start].lower().split()[-3:]
    if any(name in w for w in before for name in note.names):
        s = sp.start
        while s > clause.start and text[s - 1] in " \t":
            s -= 1
        return Edit(s, sp.end)  # "the gradient ∇f of f" -> "the gradient of f"
    return Edit(sp.start, sp.end, note.words)


def _keyword_elements(text: str, spans: list[Span], cls: list[_Clause]) -> list[Element]:
    found: dict[str, list[Edit]] = {}
    starts = {c.start for c in cls} | {m.end() + 1 for m in _LABEL.finditer(text)}
    for sp in spans:
        if sp.kind != "prose":
            continue
        for m in _KEYWORD_RE.finditer(sp.text):
            word = m.group(1)
            if re.search(r"\bthe\s+$", sp.text[:m.start()], re.I):
                continue  # a noun ("the sketch"), not an instruction
            pos = sp.start + m.start()
            repl = KEYWORD_SYNONYMS[word.lower()]
            if word.isupper() and len(word) > 1:
                repl = repl.upper()
            elif word[0].isupper() or pos in starts:
                repl = repl[0].upper() + repl[1:]
            found.setdefault(word.lower(), []).append(Edit(pos, pos + len(word), repl))
    return [Element("keyword", w, "substitute", tuple(e), True, detail=KEYWORD_SYNONYMS[w])
            for w, e in found.items()]


def _linguistic_elements(text: str, spans: list[Span]) -> list[Element]:
    prose = [s for s in spans if s.kind == "prose"]
    out = []
    marks = [Edit(s.start + m.start(), s.start + m.end()) for s in prose for m in _PUNCT_MARK.finditer(s.text)]
    if marks:
        out.append(Element("linguistic", "punctuation", "perturb", tuple(marks), True,
                           detail="sentence punctuation removed"))
    sentence_starts = _sentence_starts(text, prose)
    lowered = [Edit(p, p + 1, text[p].lower()) for p in sentence_starts
               if text[p].isupper() and _word_at(text, p) not in {"I"}]
    emphasis = [Edit(s.start + m.start(), s.start + m.end(), m.group(0).lower())
                for s in prose for m in _EMPHASIS.finditer(s.text)]
    multi = len(_paragraph_sentences(text, spans)) >= 2 or len(sentence_starts) >= 2
    edits = _merge_disjoint(lowered if multi else [], emphasis)
    if edits:
        out.append(Element("linguistic", "casing", "perturb", tuple(edits), True,
                           detail="sentence capitals and emphasis lowered"))
    sents = _paragraph_sentences(text, spans)
    if len(sents) >= 2:
        first, last = sents[0], sents[-1]
        moved = text[last[0]:last[1]].rstrip()
        if not re.search(r"[.?!]$", moved):
            moved += "."
        body = text[first[0]:last[0]].rstrip()
        repl = f"{moved} {body}"
        if not re.search(r"[.?!]$", body) and text[last[0]:last[1]].rstrip()[-1:] in ".?!":
            repl += text[last[0]:last[1]].rstrip()[-1]
        out.append(Element("linguistic", "word order", "perturb", (Edit(first[0], last[1], repl),), True,
                           detail="last sentence moved to the front"))
    return out


def _word_at(text: str, pos: int) -> str:
    m = re.match(r"\w+", text[pos:])
    return m.group(0) if m else ""


def _sentence_starts(text: str, prose: list[Span]) -> list[int]:
    """Positions of the first letter of each sentence or part, when that letter is in prose."""
    starts = []
    prose_at = {i for s in prose for i in range(s.start, s.end)}
    cands = [0] + [s.start + m.end() for s in prose for m in _START_AFTER.finditer(s.text)]
    for c in cands:
        while c < len(text) and text[c] in " \t\"“":
            c += 1
        if c < len(text) and c in prose_at and text[c].isalpha():
            starts.append(c)
    return sorted(set(starts))


def _paragraph_sentences(text: str, spans: list[Span]) -> list[tuple[int, int]]:
    """(start, end) of each sentence in the first paragraph (the stem before any part)."""
    para_end = text.find("\n")
    para_end = len(text) if para_end < 0 else para_end
    label = _LABEL.search(text, 0, para_end)
    if label:
        para_end = label.start()
    cuts = [0]
    for sp in spans:
        if sp.kind == "prose" and sp.start < para_end:
            for m in _TERMINAL.finditer(sp.text):
                pos = sp.start + m.end()
                if pos < para_end and text[pos:para_end].strip():
                    cuts.append(pos)
    cuts.append(para_end)
    out = []
    for a, b in itertools.pairwise(cuts):
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def _merge_disjoint(a: Iterable[Edit], b: Iterable[Edit]) -> list[Edit]:
    out: list[Edit] = []
    for e in sorted([*a, *b], key=lambda x: (x.start, -x.end)):
        if out and e.start < out[-1].end:
            continue
        out.append(e)
    return out


def extract_elements(text: str) -> list[Element]:
    """Every ablatable element of `text`, in the order of `ELEMENT_TYPES`, then by position.

    >>> [(e.type, e.text) for e in extract_elements("Find the gradient ∇f of f(x,y) = x^2 y at point (-1,4)")]
    [('coordinate', '(-1,4)'), ('expression', 'f(x,y) = x^2 y'), ('keyword', 'find'), ('notation', '∇f')]
    """
    spans = split_text(text)
    cls = clauses(text, spans)
    elements = _math_elements(text, spans, cls) + _keyword_elements(text, spans, cls) + \
        _linguistic_elements(text, spans)
    order = {t: i for i, t in enumerate(ELEMENT_TYPES)}
    return sorted(elements, key=lambda e: (order[e.type], _LINGUISTIC_ORDER.index(e.text)
                                           if e.type == "linguistic" else e.edits[0].start))
