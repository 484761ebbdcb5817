"""Find the math in a prose response: LaTeX between delimiters, and runs of plain notation.

A plain run is a maximal stretch of math tokens (numbers, single letters, operators, brackets,
known function names, ``dx``, ``lim``, ``f_x``...) on one line; an English word of two or more
letters ends it, and so does a unit's abbreviation right after a number ("10/2 = 5 cm": the
math is "10/2 = 5", as with "6 feet"). A run is kept when it has an operator, a relation or a function call, so that
"Step 2" or a lone article "a" is not math. A ``$`` right before a digit is currency, not a
LaTeX delimiter, when the would-be LaTeX content starts or ends with a space (``$5 and $15``)
or its closing sign stands right before a number (``$30 +$200``); an amount may start with its
decimal point (``$.25``). A decimal may start with its point (``20 x .6``); an en dash between
numbers is a minus sign. A time of day (``5:00``) counts as a word: it ends a run; so do the
letters after an apostrophe (``That's``). GSM8K's calculator notes (``<<48/2=24>>``) are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class MathSpan:
    """A stretch of math in a text: ``text[start:end]`` is `raw`; `text` is the math inside it
    (delimiters removed)."""

    text: str
    start: int
    end: int
    notation: Literal["plain", "latex"]
    display: bool = False

    @property
    def has_relation(self) -> bool:
        """True when the snippet states something (``=``, ``<``, ...), i.e. can be checked."""
        return bool(re.search(r"(?<![-<>!])(=|<|>|\\le|\\ge|\\neq|\\approx|≤|≥|≠)", self.text.replace("->", "")))


_LATEX_BLOCKS = re.compile(
    r"\$\$(?P<dd>.+?)\$\$|\\\[(?P<br>.+?)\\\]|\\\((?P<pa>.+?)\\\)"
    r"|\\begin\{(?P<env>equation|align|gather|multline|eqnarray)\*?\}(?P<envbody>.+?)\\end\{(?P=env)\*?\}"
    r"|(?<![\\$])\$(?P<d>[^$]+?)(?<!\\)\$(?!\$)",
    re.S,
)

MATH_WORDS = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "ln", "log", "exp", "sqrt", "cbrt", "abs", "lim", "pi", "theta", "alpha",
    "beta", "lambda", "mu", "sigma", "phi", "inf", "infinity", "oo", "integral", "int", "grad", "nabla",
    "dx", "dy", "dz", "dt", "du", "dv", "dr", "max", "min", "floor", "ceil", "gcd", "lcm", "mod",
})
# Short words that are English, not products of variables ("xy", "abc" are math).
ENGLISH_SHORT = frozenset({
    "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it", "me", "my", "no", "of", "on",
    "or", "so", "to", "up", "us", "we", "am", "ok", "oh", "and", "are", "but", "can", "did", "for", "get",
    "got", "had", "has", "her", "him", "his", "how", "its", "let", "may", "not", "now", "one", "our", "out",
    "own", "per", "put", "say", "see", "set", "she", "the", "two", "use", "was", "way", "who", "why", "yes",
    "you", "all", "any", "new", "old", "too", "few", "ago", "add", "sum", "try", "end", "day", "off", "top",
    "ten", "six", "than", "then", "them", "they", "this", "that", "with", "from", "into", "each", "both",
    "when", "what", "were", "will", "also", "been", "have", "just", "like", "only", "over", "such", "very",
    "well", "more", "most", "some", "your", "four", "five", "nine",
})
#: abbreviations of units that would otherwise read as products of letters ("cm" as c·m); after a
#: number they are words. "sec" and "min" stay functions.
UNIT_ABBREVIATIONS = frozenset({
    "mm", "cm", "km", "mg", "kg", "ml", "ft", "yd", "mi", "lb", "lbs", "oz", "hr", "hrs", "mph", "kph",
})
#: what a quantity before a unit ends with: a number ("5 cm"), a bracket ("(5) cm"), π ("25π cm")
_QUANTITY_ENDS = frozenset({"num", ")", "π"})
# Phrases whose words belong to the math ("integral from 0 to 1 of x dx", "lim as x -> 0").
_MATH_PHRASES = re.compile(
    r"\b(?:integral|int)\s+(?:from\s+\S+\s+to\s+\S+\s+)?of\b|\blim(?:it)?\s+as\s+[a-z]\s*(?:->|→|approaches|goes to)",
    re.I)
_TOKEN = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)*(?:\.\d+)?|(?<![\w.])\.\d+)"
    r"|(?P<word>[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?'*)"
    r"|(?P<op>->|<=|>=|!=|[-+*/^=<>!|∫√∂∇π≤≥≠×·÷−–→²³°%≈'∞±∓≡])"
    r"|(?P<cmd>\\[a-zA-Z]+|\\[,;!{}|]|[_&])"
    r"|(?P<open>[(\[{⟨])|(?P<close>[)\]}⟩])"
    r"|(?P<comma>,)|(?P<space>[ \t]+)|(?P<other>.|\n)",
)
_PART_LABEL = re.compile(r"(?:(?<=^)|(?<=[\s,;:.]))\([a-hA-H]\)(?=\s)|(?:(?<=^)|(?<=\n))[a-hA-H]\)(?=\s)")
# Segment, point and acronym names ("AB", "PQ", "GCF") are math words.
_CAPITAL_NAME = re.compile(r"[A-Z]{2,3}")
_BULLET = re.compile(r"(?m)^[ \t]*[-*•][ \t]+")
_POINT = re.compile(r"\(\s*-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)+\s*\)")
#: the start of an amount after a currency sign: "5", "5.20", ".25"
_AMOUNT_START = re.compile(r"\.?\d")
_CALCULATOR_NOTE = re.compile(r"\$?<<[^<>\n]{1,200}>>")
_CONTRACTION = re.compile(r"(?<=[A-Za-z]{2})['’](?:s|t|re|ve|ll|d|m)\b")
_CLOCK = re.compile(r"(?<![\d:.,])\d{1,2}:\d{2}(?![\d:])")
_STRONG_OPS = set("+*/^=<>!|∫√∂∇≤≥≠×·÷−–→²³≈%≡") | {"->", "<=", ">=", "!="}


def extract_math(text: str, max_spans: int = 2000) -> list[MathSpan]:
    """Spans of math in `text`, in order; LaTeX spans first claim their region."""
    spans: list[MathSpan] = []
    taken: list[tuple[int, int]] = []
    if "<<" in text:  # GSM8K's calculator notes ("48/2 = <<48/2=24>>24"): the reader sees "48/2 = 24"
        text = _CALCULATOR_NOTE.sub(lambda m: " " * len(m.group()), text)
    for m in _LATEX_BLOCKS.finditer(text):
        group = next(g for g in ("dd", "br", "pa", "envbody", "d") if m.group(g) is not None)
        body = m.group(group)
        amount = group == "d" and _AMOUNT_START.match(body) is not None
        if amount and (body[0].isspace() or body[-1].isspace()):
            continue  # "$5 and $" (or "$.50 + $") is currency
        if amount and not re.search(r"[\\^_{}=+*/-]", body):
            continue  # "$20" written twice on a line: still currency
        if amount and _AMOUNT_START.match(text, m.end()):
            continue  # "$30 +$200": a "closing" sign right before a number opens an amount
        spans.append(MathSpan(body.strip(), m.start(group), m.end(group), "latex",
                              display=group in ("dd", "br", "envbody")))
        taken.append((m.start(), m.end()))
        if len(spans) >= max_spans:
            return spans
    masked = _mask(text, taken)
    spans.extend(_plain_spans(masked, max_spans - len(spans)))
    spans.sort(key=lambda s: s.start)
    return spans


def _mask(text: str, taken: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in taken:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = "\x00"
    # Currency signs next to digits ("$5", "$.25"), and part labels such as "(a) Find", are not math.
    masked = re.sub(r"\$(?=\s?\.?\d)", " ", "".join(chars))
    # A time of day ("5:00", "10:30") is a word here: its colon is not math, and an expression that
    # reaches it ("5:00 - 1:00 = 4 hours") has a side the reader cannot take.
    masked = _CLOCK.sub(lambda m: "h" * len(m.group()), masked)
    # "That's", "John's", "don't": the letters after an apostrophe belong to the word.
    masked = _CONTRACTION.sub(lambda m: " " * len(m.group()), masked)
    # A Markdown bullet ("- 10 = 2 * 5") is not a minus sign.
    masked = _BULLET.sub(lambda m: " " * len(m.group()), masked)
    return _PART_LABEL.sub(lambda m: " " * len(m.group()), masked)


def _is_math_word(word: str) -> bool:
    base = word.rstrip("'")
    if len(base) == 1 or "_" in base or _CAPITAL_NAME.fullmatch(base):
        return True
    low = base.lower()
    if low in MATH_WORDS or re.fullmatch(r"d[a-z]", low):
        return True
    return len(base) <= 3 and base.islower() and low not in ENGLISH_SHORT


def _plain_spans(text: str, budget: int) -> list[MathSpan]:
    spans: list[MathSpan] = []
    run_start: int | None = None
    run_end = 0
    forced = [(m.start(), m.end()) for m in _MATH_PHRASES.finditer(text)]
    last = None  # the kind of the last token that is not a space
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        unit = kind == "word" and last in _QUANTITY_ENDS and m.group() in UNIT_ABBREVIATIONS
        if kind != "space":
            last = m.group() if m.group() in _QUANTITY_ENDS else kind
        mathy = kind in ("num", "op", "open", "close", "cmd") or (kind == "word" and _is_math_word(m.group())
                                                                  and not unit) \
            or (kind == "word" and any(a <= m.start() < b for a, b in forced))
        if mathy:
            if run_start is None:
                run_start = m.start()
            run_end = m.end()
        elif kind in ("space", "comma") and run_start is not None:
            continue
        else:
            if run_start is not None:
                span = _finish(text, run_start, run_end)
                if span is not None:
                    spans.append(span)
                    if len(spans) >= budget:
                        return spans
            run_start = None
    if run_start is not None:
        span = _finish(text, run_start, run_end)
        if span is not None:
            spans.append(span)
    return spans


def _finish(text: str, start: int, end: int) -> MathSpan | None:
    raw = text[start:end]
    # Trim brackets that open or close outside the run ("(so x = 2" -> "x = 2").
    while raw and raw[0] in "([{" and raw.count(raw[0]) > raw.count({"(": ")", "[": "]", "{": "}"}[raw[0]]):
        raw, start = raw[1:].lstrip(), start + 1 + (len(raw[1:]) - len(raw[1:].lstrip()))
    while raw and raw[-1] in ")]}" and raw.count(raw[-1]) > raw.count({")": "(", "]": "[", "}": "{"}[raw[-1]]):
        raw, end = raw[:-1].rstrip(), end - 1 - (len(raw[:-1]) - len(raw[:-1].rstrip()))
    raw = raw.rstrip(" ,")
    # A bracket that opens words ("= 33 (rounded down)") is not part of the math.
    while raw and raw[-1] in "([{" and raw[:-1].rstrip():
        raw = raw[:-1].rstrip(" ,")
    end = start + len(raw)
    if not raw or not re.search(r"[A-Za-z0-9]", raw):
        return None
    if _POINT.fullmatch(raw):
        return MathSpan(raw, start, end, "latex" if "\\" in raw else "plain")
    ops = {t.group() for t in _TOKEN.finditer(raw) if t.lastgroup == "op"}
    call = (re.search(r"[A-Za-z]\s*\(", raw) and any(w in raw for w in MATH_WORDS)) or "\\" in raw
    # A lone minus ("-5") or a hyphenated word pair is not enough to count as math.
    if not (ops & _STRONG_OPS) and not call and not re.search(r"\d\s*-\s*\d|[a-z]\s*-\s*\d", raw):
        return None
    if re.fullmatch(r"[A-Za-z]\)?|\(?[A-Za-z0-9]\)", raw):
        return None
    return MathSpan(raw, start, end, "latex" if "\\" in raw else "plain")
