"""String-level normalisation of answers: numbers, units, percentages, and answers in words.

Everything here is cheap and runs in the calling process; only symbolic work is sent to a worker.

    >>> to_number("$1,250.50")
    Fraction(2501, 2)
    >>> to_number("6kg"), to_number("2x")
    (Fraction(6, 1), None)
    >>> answer_word("The series diverges"), answer_word("DNE")
    ('diverges', 'does not exist')
"""

from __future__ import annotations

import re
from fractions import Fraction

#: canonical answer word -> spellings (matched as whole words, case-insensitive)
ANSWER_WORDS: dict[str, tuple[str, ...]] = {
    "does not exist": ("does not exist", "doesn't exist", "dne", "do not exist", "no limit",
                       "limit does not exist", "not exist"),
    "diverges": ("diverges", "divergent", "diverge", "is divergent"),
    "converges absolutely": ("converges absolutely", "absolutely convergent", "absolutely converges"),
    "converges conditionally": ("converges conditionally", "conditionally convergent",
                                "conditionally converges"),
    "converges": ("converges", "convergent", "converge", "is convergent"),
    "no solution": ("no solution", "no solutions", "no real solution", "no real solutions", "empty set",
                    "the empty set", "null set"),
    "undefined": ("undefined", "is not defined", "not defined"),
    "infinitely many": ("infinitely many", "infinitely many solutions", "an infinite number of solutions",
                        "infinite number of solutions", "infinitely many values"),
    "neither": ("neither even nor odd", "neither odd nor even", "neither"),
    "odd": ("odd", "odd function"),
    "even": ("even", "even function"),
    "true": ("true",),
    "false": ("false",),
    "yes": ("yes",),
    "no": ("no",),
}
_WORD_PATTERNS = [
    (word, re.compile(r"(?i)(?<![A-Za-z])(?:" + "|".join(re.escape(s) for s in sorted(spellings, key=len,
                                                                                       reverse=True))
                      + r")(?![A-Za-z])"))
    for word, spellings in ANSWER_WORDS.items()
]
#: words that are math, not units: "2pi" is not "2 of the unit pi"
_NOT_UNITS = {"pi", "e", "i", "j", "k", "x", "y", "z", "t", "n", "ln", "log", "sin", "cos", "tan", "sqrt",
              "oo", "inf", "infinity", "infty", "exp", "sec", "csc", "cot", "arcsin", "arccos", "arctan"}
_NUMBER = r"[-+−]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:\s*/\s*\d+)?"
_NUMBER_WITH_UNIT = re.compile(
    r"^(?:\\\$|\$|US\$|€|£)?\s*(?P<num>" + _NUMBER + r")\s*(?P<pct>\\?%|percent)?"
    r"\s*(?P<unit>(?:[A-Za-z]{2,}\.?(?:\^?[23])?(?:\s*(?:/|per)\s*[A-Za-z]{1,}(?:\^?[23])?)?\s*){0,3})$"
)
_DEGREE = re.compile(r"\s*(?:°|\^\s*\{?\s*\\circ\s*\}?|\\degree|\s+degrees?)\s*$")
_SUBJECT_THEN_WORD = re.compile(r"(?i)\b(?:series|sequence|integral|limit|function)\s+(?:is\s+|itself\s+)?"
                                r"(?P<w>[a-z]+(?:\s+[a-z]+){0,3})$")
#: "The integral from 1 to infinity of $1/\\sqrt{x}\\,dx$ diverges": a subject named by words and
#: math, then the answer word; no clause between them (`_CLAUSE_WORD`)
_NAMED_SUBJECT = re.compile(r"(?i)^\W*(?:(?:so|thus|hence|therefore)\W+)?(?:the|this|our)\s+(?:[a-z]+\s+){0,2}?"
                            r"(?:series|sequence|integral|limit)\b")
_CLAUSE_WORD = re.compile(r"(?i)\b(?:is|are|was|were|since|because|and|but|while|so|which|that|if|when|"
                          r"although|then|thus|hence|by|not|converges?|diverges?|convergent|divergent)\b|[;:]")
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textnormal|textrm|textit|textsf|mathrm|mbox)\s*\{([^{}]*)\}")


def strip_text_wrappers(s: str) -> str:
    r"""`\text{ cm}` -> ` cm` (LaTeX wrappers around words)."""
    return _TEXT_WRAPPER.sub(lambda m: m.group(1), s)


def normalize_answer(s: str) -> str:
    """Whitespace-free, delimiter-free form for an exact comparison (`1/2` vs `1/2`, `x=3` vs `x = 3`)."""
    s = strip_text_wrappers(s).strip().strip("$").strip()
    s = re.sub(r"\\[,;:! ]|\\left|\\right|\\displaystyle", "", s)
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("−", "-")
    return re.sub(r"\s+", "", s).rstrip(".")


def to_number(s: str, allow_units: bool = True) -> Fraction | None:
    """An exact number from a plain numeric answer, or None when the text is not just a number.

    Accepts thousands separators, currency signs, a trailing `%` (kept as the number before it),
    degrees, and, with `allow_units`, trailing unit words of two or more letters ("6kg",
    "18 dollars", "5 cm^2"), but never a trailing variable or constant ("2x", "3pi").
    """
    t = strip_text_wrappers(s).strip().rstrip(".").strip()
    if len(t) > 2 and t.startswith("$") and t.endswith("$"):
        t = t.strip("$").strip()  # LaTeX math delimiters, not currency
    t = _DEGREE.sub("", t).replace("\\!", "").replace("{,}", ",")
    m = _NUMBER_WITH_UNIT.match(t)
    if not m:
        return None
    unit = m.group("unit").strip()
    if unit:
        words = re.findall(r"[A-Za-z]+", unit)
        if not allow_units or any(w.lower() in _NOT_UNITS for w in words):
            return None
    raw = m.group("num").replace("−", "-").replace(",", "").replace(" ", "")
    try:
        if "/" in raw:
            num, den = raw.split("/")
            return Fraction(num) / Fraction(den) if Fraction(den) != 0 else None
        return Fraction(raw)
    except (ValueError, ZeroDivisionError):
        return None


def is_percent(s: str) -> bool:
    """True when a numeric answer is written as a percentage."""
    return bool(re.search(r"(?:\\?%|percent)\s*\.?$", s.strip()))


def answer_word(s: str) -> str | None:
    """The canonical answer word an answer consists of ("diverges", "does not exist"...), or None.

    The word must carry the answer: it is found when the text, with articles and a few
    connecting words removed, holds nothing else but the subject words ("the limit", "the
    series"...). "The series diverges" is `diverges`; "x = 3, so it converges to 3" is not a word.
    """
    t = strip_text_wrappers(s).lower()
    t = re.sub(r"[$*_.!,:;()]", " ", t)
    t = re.sub(r"\\[a-z]+", " ", t)
    found = None
    for word, pattern in _WORD_PATTERNS:
        if pattern.search(t):
            found = word
            t = pattern.sub(" ", t)
            break
    if found is None:
        return None
    leftover = re.sub(r"\b(?:the|a|an|it|this|that|so|thus|therefore|hence|limit|series|sequence|"
                      r"integral|function|value|answer|is|are|and|lim|f|x|n|sum|to|which|means|"
                      r"equation|system|has|there|its)\b", " ", t)
    leftover = re.sub(r"[a-z]\s*(?:->|→)\s*\S+", " ", leftover)
    if not re.search(r"[a-z0-9]", leftover):
        return found
    # "by the divergence test the series diverges": the word closes a clause about its subject
    sentence = strip_text_wrappers(s).strip().rstrip(".!")
    said = _SUBJECT_THEN_WORD.search(sentence)
    if said and answer_word(said.group("w")) == found:
        return found
    return found if _named_subject_then(sentence) == found else None


def _named_subject_then(sentence: str) -> str | None:
    """The answer word closing "the <subject> <its name> <word>" (see `_NAMED_SUBJECT`)."""
    subject = _NAMED_SUBJECT.match(sentence) if len(sentence) <= 400 else None
    if subject is None:
        return None
    words = sentence[subject.end():].split()
    for n in range(1, min(4, len(words) - 1) + 1):
        name, tail = words[:-n], words[-n:]
        if name and name[-1].lower() == "is":
            name = name[:-1]  # "... is divergent"
        word = answer_word(" ".join(tail)) if all(w.isalpha() for w in tail) else None
        if word is not None:
            return None if _CLAUSE_WORD.search(" ".join(name)) else word
    return None


_SOLUTION = re.compile(r"^\s*([A-Za-z]\w*)\s*=\s*(.+?)\s*$")
#: `a ± b` (also `\pm`, `+/-`, `+-`): what comes before the sign and the term after it
PLUS_MINUS = re.compile(r"^(.*?)(?:±|\\pm|\+/-|\+-)\s*(.+)$")


def solutions_as_set(s: str) -> str | None:
    """`x = 1 or x = -1`, `x = 2, x = 3`, `x = ±2` -> `{1, -1}`, `{2, 3}`, `{2, -2}` (else None).

    Lists of solutions for one variable are compared as sets, whatever their order.
    """
    pieces = [p for p in re.split(r"\s*(?:,|;|\bor\b|\band\b|\\text\{\s*(?:or|and)\s*\})\s*", s.strip()) if p]
    if not pieces:
        return None
    names, values = set(), []
    for piece in pieces:
        m = _SOLUTION.match(piece)
        if not m:
            return None
        names.add(m.group(1))
        values.append(m.group(2))
    if len(names) != 1:
        return None
    expanded = []
    for v in values:
        pm = PLUS_MINUS.match(v)
        if pm:
            head, tail = pm.group(1).strip().rstrip("+").strip(), pm.group(2).strip()
            expanded += [f"{head} + {tail}" if head else tail, f"{head} - {tail}" if head else f"-{tail}"]
        else:
            expanded.append(v)
    if len(expanded) < 2:
        return None
    latex = "\\" in s
    return ("\\{" + ", ".join(expanded) + "\\}") if latex else "{" + ", ".join(expanded) + "}"
