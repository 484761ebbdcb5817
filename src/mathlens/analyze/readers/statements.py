"""Reduce a sentence or an equation to the answer it states.

These helpers work on one short piece of text (a sentence, an answer line) and never parse math:

* `split_equals` splits at the top-level `=` signs only: `<=`, `>=`, `!=`, `==`, `=>` and an `=`
  inside brackets or braces (`\\sum_{k=0}`, `f_{n=2}`) do not count;
* `reduce_equation` keeps an equation whole when it *is* the answer (`x = 4`, `2x + 3y = 4`, a
  list of solutions `x = -1 or x = 3`) and reduces it to its right-hand side when the left side
  only names what is computed (`f'(3) = 6`, `Area = 12`, `2 + 3 = 5`, `\\sum_{i=1}^{10} i = 55`);
* `reduce_statement` takes the answer out of "<subject> is <answer>" or "<answer> is <prose>",
  cuts trailing prose ("42 because ...") and leading prose ("We find x >= 5"); a formula equal
  to a number after words that name a quantity gives the number ("the area is $s^2 = 36$"), not
  after words that name an equation ("the equation of the circle is ...").

    >>> reduce_statement("Therefore x ≥ 5 is the solution")
    'x ≥ 5'
    >>> reduce_equation("-34x-45y+20z-100=0")
    '-34x-45y+20z-100=0'
    >>> reduce_equation("f'(3) = 6")
    '6'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mathlens.analyze.readers.durations import last_duration
from mathlens.analyze.readers.inline import closing_run
from mathlens.analyze.readers.normalize import answer_word
from mathlens.analyze.readers.numberwords import mixed_in_words, words_to_digits
from mathlens.analyze.readers.setwords import set_phrase

MATH_WORDS = frozenset({"infinity", "odd", "even", "neither", "none", "undefined", "diverges", "converges",
                        "both", "all real numbers", "empty", "true", "false", "yes", "no"})
#: words that are math, never prose, when they start an expression
FUNCTION_NAMES = frozenset({"sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "sinh",
                            "cosh", "tanh", "ln", "log", "exp", "sqrt", "lim", "int", "sum", "det", "max",
                            "min", "pi", "oo", "inf", "infinity", "abs", "grad", "curl", "div", "proj"})

LINK = re.compile(r"(?i)\b(?:is|are|equals|gives|becomes|get|obtain|was|will\s+be)\b")
# math right after a word: "$", "\(" or a letter and "=" ("for $x > 0$", "at x = 1")
_MATH_NEXT = r"(?=\$|\\\(|[a-z]\s*=)"
_TRAILING_PROSE = re.compile(
    r"(?i)(?:,\s*|\s+)(?:(?:because|since|which|where|so\s+that|due\s+to|given\s+that|using|by\s+the|from\s+the|"
    r"for\s+(?:all|every|the)|but|however|although|though|(?:and\s+)?not(?=\s+[$\\\d(-]))\b|as\s+(?=[a-z])|"
    r"when\s+(?=[a-z$\\])|"
    rf"for\s+{_MATH_NEXT}).*$|"
    # a participle or a place after the value: ", attained at $x = 2$", ", at $x = 1$"
    r",\s*(?:(?:which\s+is\s+)?(?:attained|achieved|reached|obtained|occurring|taken|found)\b|"
    rf"at\s+{_MATH_NEXT}).*$")
_TRAILING_PAREN_WORDS = re.compile(r"\s*\((?:[A-Za-z]{2,}[\s,-]*){1,6}\)\s*$")
_STEP_LABEL = re.compile(r"(?i)^\s*(?:[-*•]\s*)?(?:step\s*\d+\s*[:.)]?|\d+[.)](?=\s))\s*")
_SUBJECT_LEAD = re.compile(r"(?i)^all\s+(?:real\s+)?(?:numbers\s+)?[a-z]\s+(?:with|such\s+that|where|satisfying)\s+")
#: a character that only math uses: a digit, a relation, an operator, a bracket, a LaTeX backslash
MATHY = re.compile(r"[\d=<>()\[\]{}^/*+\\√π∞≤≥≠-]")
_VARIABLE = re.compile(r"^(?:\\?[A-Za-z]|\\[a-z]+)(?:_\{?[A-Za-z0-9]+\}?)?'*$")
_DERIVATIVE_NAME = re.compile(r"^(?:d\^?\d*[A-Za-z]?\s*/\s*d[A-Za-z]\^?\d*|"
                              r"\\frac\{d\^?\{?\d*\}?[A-Za-z]?\}\{d[A-Za-z]\^?\{?\d*\}?\})")
_OPERATION = re.compile(r"^(?:\\(?:sum|int|iint|prod|lim|oint)(?![A-Za-z])|(?:lim|sum|int|integral|limit)\b|"
                        r"d\s*/\s*d[a-z])",
                        re.I)
# a word, or a title before a name ("Mr. Ruther had 32 hectares")
_LEADING_WORD = re.compile(r"\s*((?:Mrs|Mr|Ms|Dr|Prof|St)\.|[A-Za-z]{2,})(?=[\s,:])[ \t]*[,:]?[ \t]*")
_LETTER = re.compile(r"[A-Za-z]")
_SUBSCRIPT_NAME = re.compile(r"^[A-Za-z]_\{[^{}]*=[^{}]*\}$")
_EXPRESSION = re.compile(r"[+\-*/^]|\d[A-Za-z]|[A-Za-z]\s*\(.*\)\s*[A-Za-z(]")
_CALL_ARGUMENTS = re.compile(r"\([^()]*\)")
_FUNCTION_MARKS = re.compile(r"(?<=[A-Za-z'])\^\{?(?:-1|\(\d+\)|\\prime+)\}?(?=\s*\()")
_NAME_WORD = re.compile(r"[A-Z][a-z]{2,}")
_ONE_LETTER = re.compile(r"\(?[A-Za-z]\)?")
_OPEN, _CLOSE = "([{", ")]}"
# LaTeX commands, function names and constants: what is left of a value once they go is no letter
_GREEK = (r"(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|rho|"
          r"sigma|tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Sigma|Phi|Psi|Omega)(?![A-Za-z])")
# LaTeX commands other than Greek letters (which are variables), function names and constants
_CONSTANT_WORDS = re.compile(rf"\\(?!{_GREEK})(?:(?:begin|end)\{{[A-Za-z*]+\}}|[A-Za-z]+)|"
                             r"(?<![A-Za-z])(?:sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|sinh|cosh|tanh|ln|log|"
                             r"exp|sqrt|pi|deg)(?![A-Za-z])|°")
_MATRIX_VALUE = re.compile(r"^\s*(?:\\left\s*)?(?:\\begin\{[pbBvV]?matrix\}|\[\s*\[|Matrix\()")


def split_equals(s: str) -> list[str]:
    """The pieces of `s` between its top-level `=` signs.

    >>> split_equals(r"S = \\sum_{k=0}^{n} k = 3")
    ['S ', ' \\\\sum_{k=0}^{n} k ', ' 3']
    """
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == "\\" and s.startswith(("\\begin{", "\\end{"), i):
            # the rows of an environment (`cases`, `pmatrix`) are inside it, like inside brackets
            depth = depth + 1 if s[i + 1] == "b" else max(0, depth - 1)
        elif ch == "=" and depth == 0:
            before = s[i - 1] if i else ""
            after = s[i + 1] if i + 1 < len(s) else ""
            if before in "<>!=≤≥:" or after in "=>":
                continue
            pieces.append(s[start:i])
            start = i + 1
    pieces.append(s[start:])
    return pieces


def split_top_level(s: str, separators: str = ",;") -> list[str]:
    """Split at separators outside brackets (angle brackets of a vector `<a, b>` count too)."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch in "([{" or (ch == "<" and "," in s[i:] and ">" in s[i:] and s[i + 1:i + 2] != "="):
            depth += 1
        elif ch in ")]}" or (ch == ">" and depth > 0 and s[i - 1:i] != "-"):
            depth = max(0, depth - 1)
        elif ch in separators and depth == 0:
            pieces.append(s[start:i])
            start = i + 1
    pieces.append(s[start:])
    return pieces


_ALTERNATIVES = re.compile(r"\s*(?:\bor\b|\band\b|\\text\{\s*(?:or|and)\s*\}|\\(?:quad|qquad|lor)\b)\s*")


def alternatives(s: str) -> list[str]:
    """The pieces of a list written with commas, semicolons, "or" and "and" (top level only)."""
    out: list[str] = []
    for piece in split_top_level(s):
        out += [p for p in _ALTERNATIVES.split(piece) if p.strip()]
    return [p.strip() for p in out if p.strip()]


#: white space at the start of a piece, LaTeX's spacing commands too (`\ `, `\,`)
LEADING_SPACE = re.compile(r"^(?:\\[,;:! ]|\s)+")


def is_assignment_list(s: str) -> bool:
    """`x = -1 or x = 3`, `x = 1, y = 2`, `W(x) = 1 or W(x) = -1`: two or more `name = value` pieces."""
    pieces = alternatives(s)
    if len(pieces) < 2:
        return False
    sides = [split_equals(p) for p in pieces]
    if not all(len(eq) == 2 and eq[0].strip() and eq[1].strip() for eq in sides):
        return False
    # `x = 1, y = 2` (unknowns), or one name given several values: `W(x) = 1 or W(x) = -1`
    names = [LEADING_SPACE.sub("", eq[0]).strip() for eq in sides]  # `x = 1,\ y = 2`: LaTeX spacing is no name
    return all(_VARIABLE.match(n) for n in names) or len(set(names)) == 1


def strip_leading_prose(s: str) -> str:
    """`We find x >= 5` -> `x >= 5`: leading words go while math remains after them."""
    s = _STEP_LABEL.sub("", s)
    s = _SUBJECT_LEAD.sub("", s)
    while True:
        m = _LEADING_WORD.match(s)
        if not m or m.group(1).lower() in FUNCTION_NAMES:
            return s.strip()
        rest = s[m.end():]
        if not rest or not MATHY.search(rest):
            return s.strip()
        s = rest


def lhs_kind(lhs: str) -> str:
    """What the left side of an equation is: `variable`, `expression`, `name` or `value`.

    A `variable` (`x`, `y_1`) or an `expression` (`2x + 3y`) makes the equation the answer;
    a `name` (`f'(3)`, `Area`, `dy/dx`) or a `value` (`2 + 3`) only labels its right side.
    """
    t = strip_leading_prose(lhs.strip())
    if not _LETTER.search(_CONSTANT_WORDS.sub(" ", t)):
        return "value"  # `2 + 3`, `\\sin 30^\\circ`, `\\log_2 64`: numbers and functions of numbers
    if _SUBSCRIPT_NAME.match(t):
        return "name"
    if _VARIABLE.match(t):
        return "variable"
    if _DERIVATIVE_NAME.match(t) or _OPERATION.match(t):
        return "name"
    if _EXPRESSION.search(_strip_calls(t)):
        return "expression"
    return "name"


def _strip_calls(t: str) -> str:
    """`f'(x)` -> `f'`, `f^{-1}(x)` -> `f`: a function's argument and the marks of its inverse or
    derivative are not read as an expression."""
    return _CALL_ARGUMENTS.sub("", _FUNCTION_MARKS.sub("", t))


@dataclass(frozen=True)
class Reduced:
    """The answer a sentence or an equation states, and the left side it dropped as a mere name
    (`\\cos(x)` of `\\cos(x) = \\frac{42}{59}`, `c` of `c = \\sqrt{25} = 5`), if any."""

    text: str
    subject: str | None = None


def reduce_equation_named(s: str) -> Reduced:
    """The answer an equation states (see the module docstring), with the name it dropped."""
    sides = split_equals(s)
    if len(sides) < 2 or not sides[-1].strip():
        return Reduced(s.strip())
    if is_assignment_list(s):
        return Reduced(s.strip())
    first = strip_leading_prose(sides[0]).strip()
    if _WORDY.search(first):
        first = ""  # "the area A": a description, not a name to compare
    named = first if lhs_kind(sides[0]) in ("name", "variable") and first else None
    if len(sides) > 2:
        return Reduced(sides[-1].strip(), named)
    lhs, rhs = sides
    kind = lhs_kind(_after_prose(lhs))  # "4 friends gets 36 / 4 = 9": the left side is `36 / 4`
    if kind in ("variable", "expression") and not _MATRIX_VALUE.match(rhs):
        bare = strip_leading_prose(lhs)
        return Reduced(s.strip() if bare == lhs.strip() else bare + " " + s[len(lhs):].strip())
    return Reduced(rhs.strip(), first if kind != "value" and first else None)


def reduce_equation(s: str) -> str:
    """The answer an equation states; see the module docstring."""
    return reduce_equation_named(s).text


def cut_trailing_prose(s: str) -> str:
    """`42 because ...` -> `42`; `3/4 (three quarters)` -> `3/4`."""
    m = _TRAILING_PROSE.search(s)
    head = s[: m.start()] if m else ""
    # only after a value: "The inequality holds for $x < -1$" keeps what follows "for"
    if m and head.strip() and (MATHY.search(head) or answer_word(head)):
        s = head
    return _TRAILING_PAREN_WORDS.sub("", s).strip()


def drop_trailing_clause(s: str) -> str:
    """`s` without a closing clause of the kinds `cut_trailing_prose` drops after a value ("...
    because", "... when she finishes"), whatever comes before it."""
    m = _TRAILING_PROSE.search(s)
    return s[: m.start()].strip() if m and s[: m.start()].strip() else s


#: words that mark an illustration of the answer, not the answer: "for example", "for instance", "e.g."
_ILLUSTRATION = re.compile(r"(?i)(?<![A-Za-z])(?:for\s+(?:example|instance)|e\.\s?g\.)(?![A-Za-z])")


def _clause_breaks(s: str) -> list[int]:
    """Offsets where a clause of `s` begins after a comma, a semicolon or "and" outside brackets."""
    out, depth = [], 0
    for i, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch in ",;" or s.startswith(" and ", i)):
            out.append(i)
    return out


def cut_illustration(s: str) -> str:
    """The statement without the example it gives: "the range is [0, inf), e.g. f(47) = 7" and "the
    range is [0, inf) and f(47) = 7 for example" state `the range is [0, inf)`. The marked clause is
    the one the marker opens (words follow it) or, at the end, the one it closes. Unchanged when no
    math would be left before it.

    >>> cut_illustration("so the range is [0, inf) and f(47) = 7, for example.")
    'so the range is [0, inf)'
    >>> cut_illustration("For example, x = 2 works.")
    'For example, x = 2 works.'
    """
    m = _ILLUSTRATION.search(s)
    if m is None:
        return s
    if s[m.end():].strip(" \t.,;:)"):
        head = s[:m.start()]  # the marker opens the illustration
    else:  # it closes one: the clause before it
        before = s[:m.start()].rstrip(" ,;(")
        breaks = _clause_breaks(before)
        head = before[:breaks[-1]] if breaks else ""
    head = re.sub(r"(?i)\s*(?:[,;(]|\band)\s*$", "", head.rstrip()).rstrip()
    return head if MATHY.search(head) else s


def answerish(s: str) -> bool:
    """True when `s` can be an answer on its own: math, an answer word, or a single short token."""
    t = s.strip().strip(".").strip()
    if not t:
        return False
    if MATHY.search(t) or answer_word(t) or set_phrase(t):
        return True
    low = t.lower()
    # a single capitalised word names the answer: "Tuesday", "Maria"
    return low in MATH_WORDS or bool(_ONE_LETTER.fullmatch(t)) or bool(_NAME_WORD.fullmatch(t))


_PIECEWISE_HINT = re.compile(r"(?i)\b(?:if|for|when)\b[^.]*[<>≤≥=]|\\begin\{cases\}")


def _piecewise(s: str) -> str | None:
    """A piecewise function stated by the sentence ("f(x) = x^2 if x < 0 and 2x otherwise"),
    kept whole: its conditions are not trailing prose."""
    if not _PIECEWISE_HINT.search(s):
        return None
    from mathlens.analyze.readers.piecewise import read_piecewise  # imports the evaluators

    t = strip_leading_prose(s.strip().rstrip("."))
    return t if read_piecewise(t) is not None else None


def reduce_statement_named(s: str) -> Reduced:
    """The answer stated by a sentence such as "the area is 12" or "x ≥ 5 is the solution", with
    the name it dropped (see `Reduced`).

    A sentence that closes on inline math (`$...$`) gives that math (`inline.closing_run`), unless
    an answer word follows it ("so $f(x) = x^2$ is even"); a sentence in words with several
    numbers gives the quantity it states (`last_quantity`).
    """
    s = cut_illustration(s)
    piecewise = _piecewise(s)
    if piecewise is not None:
        return Reduced(piecewise)
    if answer_word(s):
        return Reduced(s.strip().rstrip("."))  # "the integral of $1/x$ diverges": the word is the answer
    if set_phrase(s):
        return Reduced(s.strip().rstrip("."))  # "all real numbers greater than 5": the words are the set
    s = cut_trailing_prose(drop_leading_clause(restated(s.strip())))
    run = closing_run(s)
    subject = ""  # the words before "is" when the answer follows them ("the area is $s^2 = 36$")
    if run is not None and not answer_word(s[run[1]:]):
        subject = _subject_words(s[: run[0]])
        s = run[2]
    else:
        links = list(LINK.finditer(s))
        if links:
            last = links[-1]
            left, right = s[: last.start()].strip(), s[last.end():].strip()
            if set_phrase(right):  # "the domain is all real numbers": the words are the set
                return Reduced(right.rstrip("."))
            if answerish(right):
                s, subject = right, _subject_words(s[: last.end()])
            elif left and MATHY.search(left):
                s = left
            else:
                s = right
        s = last_quantity(strip_leading_prose(s))
    if len(split_equals(s)) == 2 and subject:
        formula, value = split_equals(s)
        exact = _TRAILING_WORDS.sub("", _APPROXIMATE.split(value)[0].replace("$", ""))
        # (an equation set to 0 is an equation in standard form: "the plane is x + y - z = 0")
        if (lhs_kind(formula.replace("$", "")) == "expression" and lhs_kind(exact) == "value"
                and exact.strip() != "0"):
            return Reduced(value.replace("$", "").strip())  # the formula for the named quantity, then its value
    return reduce_equation_named(s) if len(split_equals(s)) > 1 else Reduced(s)


# what an equation is the answer as: "the equation of the circle is (x-2)^2 + (y+1)^2 = 9"
_EQUATION_NOUN = re.compile(r"(?i)\b(?:equations?|lines?|circles?|parabola|ellipse|hyperbola|planes?|curves?|graphs?|"
                            r"relations?|identity|conditions?|constraints?|system|locus|spheres?|surfaces?|"
                            r"inequality|formula|expression|polynomial|form)\b")
# words that name no quantity: "the answer is $x^2 + y^2 = 4$" keeps the equation
_NO_QUANTITY = re.compile(r"(?i)(?:so|thus|hence|therefore|then|and)?\s*,?\s*(?:the\s+)?"
                          r"(?:(?:final\s+)?(?:answer|solution|result)s?|it|this|that|which|we\s+get|one|"
                          r"we|i|you|they)")
#: a clause that does something rather than names a quantity: "Completing the square (gives)",
#: "Solving for x (gives)", "Simplifying (gives)"; "Remaining area" (a participle before a noun) names one
_ACTION = re.compile(r"(?i)^(?:so|thus|then|and|now|next)?\s*,?\s*[a-z]{3,}ing"
                     r"(?:\s+(?:the|a|an|for|both|this|these|that|it|them|each|all|back|out|in|into|over|by|with)\b.*)?$")
_TRAILING_WORDS = re.compile(r"(?:\s+[A-Za-z]{2,}\.?)+\s*$")


def _subject_words(before: str) -> str:
    """The words before the answer when they end in a link ("The area of the square is") and name a
    quantity, not an equation; else empty."""
    links = list(LINK.finditer(before))
    if not links or before[links[-1].end():].strip() or MATHY.search(before):
        return ""
    words = before[: links[-1].start()].strip().split(",")[-1].strip()  # the clause of the link
    head = re.split(r"(?i)\b(?:of|through|for|in|on|at|with|to|between)\b", words)[0]  # "the area of the circle"
    if not words or _EQUATION_NOUN.search(head) or _NO_QUANTITY.fullmatch(words) or _ACTION.match(words):
        return ""
    return words


def reduce_statement(s: str) -> str:
    """The answer stated by a sentence such as "the area is 12" or "x ≥ 5 is the solution"."""
    return reduce_statement_named(s).text


_QUANTITY = re.compile(r"(?:\\?\$|€|£|¥)?-?\d[\d,]*(?:\.\d+)?(?:\s+\d+/\d+|\s*/\s*\d+)?"
                       r"(?:\s*(?:\\?%|percent\b|pct\b))?")
_LEADING_SHARE = re.compile(r"^\s*(?P<q>(?:\\?\$)?-?\d[\d,]*(?:\.\d+)?(?:\s*(?:\\?%|percent|pct))?)\s+(?:out\s+)?of\b")
_UNIT_AFTER = re.compile(r"(?:\s*(?!(?:as|my|the|an|of|in|on|for|to|at|by|with|and|or|is|are|was|were|it|its|this|"
                         r"that|so|per|each|over|from|than|after|before|until|during|within)\b)"
                         r"[A-Za-z]{2,}\.?(?:\^?[23])?){0,2}", re.I)
_CONDITION = re.compile(r"(?i)\b(?:in|over|for|per|after|within|every|each|at|on|by|from|to|with|than)\s+"
                        r"(?:the\s+|a\s+)?$")


def last_quantity(s: str) -> str:
    """The quantity a sentence in words states, with the unit words after it: its last number not
    set as a condition by a preposition ("for 8 hours he earns 120 USD" -> `120 USD`; "a total
    of 34 hours in 4 weeks" -> `34 hours`); "47 of the first 100 ..." and "35 percent of the
    students ..." state their first. Anything with an equation, a relation or brackets is left
    alone, as is a short phrase with one number ("27 marbles left").
    """
    s = mixed_in_words(s)  # "2 and a half hours": one quantity, `2 1/2 hours`
    duration = last_duration(s)
    if duration is not None and not re.search(r"[=<>≤≥\\^]", s):
        return duration.group(0).rstrip(".")  # "It takes 2 hours and 30 minutes": the whole length of time
    words = re.findall(r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])", s)
    if (len(words) < 2 or _prose_words(s) < 1 or re.search(r"[=<>≤≥()\[\]{}\\^]", s)
            or re.search(r"(?i)\b(?:between|from)\b.*\band\b|≈|\b(?:about|approximately|roughly)\b", s)):
        return s  # one word, math, a range "between 3 and 5", an approximation after the value
    share = _LEADING_SHARE.match(s)
    if share:
        return share.group("q")
    numbers = list(_QUANTITY.finditer(s))
    if not numbers:
        written = words_to_digits(s)  # "she has three apples left"
        return last_quantity(written) if written != s and _QUANTITY.search(written) else s
    if len(numbers) == 1:
        unit = _UNIT_AFTER.match(s, numbers[0].end())
        after = s[unit.end():] if unit else s[numbers[0].end():]
        before = len(re.findall(r"(?<![\\A-Za-z])[A-Za-z]{2,}", s[:numbers[0].start()]))
        if before < 2 and _prose_words(after) < 2:
            return s  # one number with at most a word around its units: "36pi cubic centimeters"
    stated = [m for m, condition in zip(numbers, _conditions(s, numbers), strict=True) if not condition] or numbers
    last = stated[-1]
    unit = _UNIT_AFTER.match(s, last.end())
    return (last.group(0) + (unit.group(0) if unit else "")).strip()


#: what joins a number to the one before it in the same phrase: words, then "and", "or" or a comma
_JOINED = re.compile(r"(?i)(?:\s+[A-Za-z]{2,})*\s*(?:,\s*(?:and|or)?|\band|\bor)\s+(?:the\s+|a\s+)?")


def _conditions(s: str, numbers: list[re.Match[str]]) -> list[bool]:
    """Which numbers set a condition rather than state a result: one after "in", "over", "for"...
    ("in 4 weeks", "at 6 pm"), and one joined by "and"/"or"/a comma to a condition before it ("for 5
    apples and 5 oranges", "after 3 weeks and 2 days")."""
    out: list[bool] = []
    for i, m in enumerate(numbers):
        joined = i > 0 and out[-1] and _JOINED.fullmatch(s, numbers[i - 1].end(), m.start()) is not None
        out.append(bool(_CONDITION.search(s, 0, m.start())) or joined)
    return out


def leading_quantity(s: str) -> str:
    """The quantity a phrase opens with, when every later number sets a condition: "$12.00 for 5
    apples and 5 oranges" -> `$12.00`, "30 stickers left after 2 weeks" -> `30 stickers`. Anything
    else (math, a second number stated as a result, no number first) is left as it is.

    >>> leading_quantity("$12.00 for 5 apples and 5 oranges"), leading_quantity("3 cats and 5 dogs")
    ('$12.00', '3 cats and 5 dogs')
    """
    if _prose_words(s) < 2 or re.search(r"[=<>≤≥()\[\]{}\\^]", s):
        return s
    numbers = list(_QUANTITY.finditer(s))
    if not numbers or numbers[0].start() != 0 or any(not c for c in _conditions(s, numbers)[1:]):
        return s
    unit = _UNIT_AFTER.match(s, numbers[0].end())
    return (numbers[0].group(0) + (unit.group(0) if unit else "")).strip()


_RESTATED = re.compile(r"(?i),?\s*\(?\b(?:i\.e\.|that\s+is|or\s+equivalently|which\s+is)\s*,?\s*")
_APPROXIMATE = re.compile(r"(?i)≈|\\approx|\b(?:about|approximately|roughly|nearly)\b")


def restated(s: str) -> str:
    """"$\\frac{5}{36}$, i.e. about 13.9%" (or ", which is about 13.9%") -> the exact value with the
    approximation after it;
    "about 31.4 cm, i.e. $10\\pi$" -> `$10\\pi$`: of a value and its restatement, the exact one
    (two exact forms are left as they are)."""
    m = _RESTATED.search(s)
    if m is None or m.start() == 0:
        return s
    left, right = s[: m.start()].strip(), s[m.end():].strip().rstrip(").")
    if _APPROXIMATE.search(right) and not _APPROXIMATE.search(left) and re.search(r"\d", right):
        return f"{left} \\approx {_APPROXIMATE.sub(' ', right).strip()}"
    if _APPROXIMATE.search(left) and not _APPROXIMATE.search(right) and MATHY.search(right):
        return right
    return s


def restated_forms(s: str) -> tuple[str, str] | None:
    """The two exact forms of "0.25, i.e. 25%" (or "that is", "which is", "or equivalently"):
    `("0.25", "25%")`, when both sides are math and neither is an approximation; None otherwise."""
    m = _RESTATED.search(s)
    if m is None or m.start() == 0 or _APPROXIMATE.search(s):
        return None
    left, right = s[: m.start()].strip(), s[m.end():].strip().rstrip(").")
    if not (MATHY.search(left) and MATHY.search(right)) or _RESTATED.search(right):
        return None
    return left, right


_LEADING_CLAUSE = re.compile(r"(?i)^\s*(?:since|because|as|given(?:\s+that)?|for|when|whenever|if|at|where|once|"
                             r"using|by|after|with|from|assuming|letting|setting|taking|"
                             r"substituting|solving|plugging|applying)\b")


def drop_leading_clause(s: str) -> str:
    """"Since $W(x)^2 = 1$ for every $x$, we get ..." -> "we get ...": a subordinate clause that
    opens the sentence ends at its first comma outside brackets and math, and is not the answer."""
    if not _LEADING_CLAUSE.match(s):
        return s
    depth, math = 0, False
    for i, ch in enumerate(s):
        if ch == "$":
            math = not math
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0 and not math and s[i + 1:i + 2].isspace():
            rest = s[i + 1:].strip()
            return rest if rest and (MATHY.search(rest) or answer_word(rest)) else s
    return s


_WORDY = re.compile(r"(?<![\\A-Za-z])[A-Za-z]?[a-z]{2,}\s+[A-Za-z]?[a-z]{2,}")  # two words in lower case
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z(_^'])")


def _after_prose(lhs: str) -> str:
    """The math after the last words of prose on a left side ("the plane -34x - 45y" -> the
    polynomial), when there are two or more such words; the left side itself otherwise."""
    words = [m for m in _PROSE.finditer(lhs) if m.group(0).lower() not in FUNCTION_NAMES]
    if len(words) < 2:
        return lhs
    rest = lhs[words[-1].end():]
    return rest if MATHY.search(rest) else lhs


def _prose_words(s: str) -> int:
    return len([w for w in re.findall(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z])", s)
                if w.lower() not in ("and", "or")])
