"""Reading choices a claim rests on, and which of them the solution confirms.

Reading a line of model-written math takes choices that the notation alone does not settle: a run
of letters (``ab``, ``AB``) is a product or one name; ``e`` is Euler's number or a quantity;
``1/2x`` is x/2 or 1/(2x); ``-3^2`` is -9 or a sloppy (-3)^2; ``2 1/2`` is a mixed number or a
product; ``sin(30)`` is in radians or in degrees; a comma between digits separates thousands or
two statements. The reader picks the usual meaning (docs/flow.md), and `guesses` lists every such
choice a piece of text needed, each with whether the solution confirms it (a declared variable, a
definition, ``ln``/``exp`` beside ``e``...). A claim whose verdict would be ``invalid`` on an
unconfirmed guess is left ``unverifiable`` instead: a flag is only given on a reading the solution
itself supports (`steps.analyze_step`).

Everything here is a linear scan with bounded regexes over one piece of text (a piece is at most
a few hundred characters after the parse limits).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from mathlens.analyze.verify.extract import UNIT_ABBREVIATIONS
from mathlens.analyze.verify.reading import Reading

#: how much of a piece is scanned (the parse caps pieces far below this)
_MAX_SCAN = 4000

# Words of a letter run that are never a product of single-letter names.
_KNOWN_WORDS = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "asin",
    "acos", "atan", "ln", "log", "exp", "sqrt", "cbrt", "frac", "lim", "max", "min", "gcd", "lcm", "mod",
    "abs", "oo", "inf", "pi", "dx", "dy", "dz", "dt", "du", "dv", "df", "dr", "ds", "deg", "rad", "ceil",
    "floor", "sgn", "det", "tr", "and", "or", "if", "to", "of", "as", "is", "in", "on", "at", "by", "for",
    "the", "so", "we", "let", "then", "thus", "hence",
}) | UNIT_ABBREVIATIONS
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_LATEX_GROUPED_TEXT = re.compile(r"\\(?:text|mathrm|operatorname|textbf|mbox)\s*\{[^{}]{0,80}\}")
# "xy", and "erf(x)" (a name the reader does not know, before a bracket, is a product too)
_LETTER_RUN = re.compile(r"(?<![A-Za-z_\\'])([a-z]{2,4})(?![A-Za-z_])")
_CAPITALS = re.compile(r"(?<![A-Za-z_\\])([A-Z]{2,3})(?![A-Za-z_(])")
_E_ALONE = re.compile(r"(?<![A-Za-z_\\])e(?![A-Za-z_(])")
# "1/2x", "1/2(x + 1)", "a/bc": a product right after a division bar, with no bracket round it
# (the bar of a derivative, "dy/dx", "∂f/∂x", is not one).
_BAR = r"(?<![A-Za-z∂])(?<!\bd)\s*/\s*"
_NUMBER_BELOW = re.compile(rf"{_BAR}\d+(?:\.\d+)?\s*(?:[A-Za-z(√π]|\\(?!frac))")
_LETTERS_BELOW = re.compile(rf"{_BAR}([A-Za-z]+)(\s*\()?")
_NEGATIVE_POWER = re.compile(r"(?:^|[=(\[,:]|\\left\()\s*-\s*\d+(?:\.\d+)?\s*\^")
_MIXED_NUMBER = re.compile(r"(?<![\d.,])\d+\s+\d+\s*/\s*\d+(?![\d.])"
                           r"|(?<![\d.,}])\d+\s*\\[dt]?frac\s*\{?\d+\}?\s*\{?\d+")
_TRIG_NUMBER = re.compile(r"(?:\\)?\b(?:sin|cos|tan|cot|sec|csc)\s*(?:\\left)?\(?\s*(\d+(?:\.\d+)?)"
                          r"(?!\s*(?:°|\^\s*\{?\s*\\circ|\\circ|\\pi|π|pi|[\d.]))")
_TIMES_X = re.compile(r"\d\s+x\s+\.?\d")
_PERCENT_BETWEEN = re.compile(r"\d\s*%\s*\d")
_SPACED_NUMBERS = re.compile(r"(?<![\d.,^_{])\d+\s+\d+(?![\d./])")


@dataclass(frozen=True)
class Guess:
    """One reading choice: what was read how, and whether the solution confirms it."""

    what: str
    confirmed: bool
    #: the choice is about letters (a name, a product of letters, e): it bears only on claims
    #: that still have letters in them, not on a link between numbers of the same chain
    letters: bool = False

    def label(self) -> str:
        """The choice in words, as stored on a claim (``AB read as one name (confirmed)``)."""
        return f"{self.what} ({'confirmed' if self.confirmed else 'a guess'})"


def guesses(text: str, reading: Reading, defined: Collection[str] = (), comma_split: bool = False) -> list[Guess]:
    """The reading choices `text` (one statement) needs; `defined` are the names the solution has
    given values or definitions so far; `comma_split`: the statement was cut off from a number at a
    comma between digits (``12,000`` split in two)."""
    s = _LATEX_GROUPED_TEXT.sub(" ", text[:_MAX_SCAN])
    # Commands become a mark that is neither a letter nor a digit ("7 \cdot 8" is not "7 8").
    plain = _LATEX_COMMAND.sub(" ¤ ", s)
    found: list[Guess] = []
    if comma_split:
        found.append(Guess("a comma between digits read as the end of a statement", False))
    if not reading.e_variable and _E_ALONE.search(plain):
        found.append(Guess("e read as Euler's number", reading.euler, letters=True))
    runs = {m.group(1) for m in _LETTER_RUN.finditer(plain)} - _KNOWN_WORDS
    runs = {r for r in runs if r not in defined}
    if runs:
        letters = {ch for run in runs for ch in run}
        found.append(Guess(f"{', '.join(sorted(runs))} read as a product of letters",
                           letters <= reading.letters, letters=True))
    names = {m.group(1) for m in _CAPITALS.finditer(plain)}
    if names:
        found.append(Guess(f"{', '.join(sorted(names))} read as one name", names <= set(defined), letters=True))
    if _NUMBER_BELOW.search(s) or any(_product_below(m, reading) for m in _LETTERS_BELOW.finditer(plain)):
        found.append(Guess("a/bc read as (a/b)c", False))
    if _NEGATIVE_POWER.search(s):
        found.append(Guess("-a^n read as -(a^n)", False))
    if _MIXED_NUMBER.search(s):
        found.append(Guess("a whole number before a fraction read as a mixed number", False))
    trig = [float(m.group(1)) for m in _TRIG_NUMBER.finditer(s)]
    if any(v >= 4 for v in trig):
        found.append(Guess("a trigonometric function of a bare number read in radians", reading.radians))
    if _TIMES_X.search(s):
        found.append(Guess("x between numbers read as times", "x" not in reading.letters))
    if _PERCENT_BETWEEN.search(s):
        found.append(Guess("a % sign between two numbers", False))
    if _SPACED_NUMBERS.search(_TIMES_X.sub(" ", plain)):
        found.append(Guess("two numbers side by side read as a product", False))
    return found


_NAME = re.compile(r"[A-Za-z_]\w*")
#: names in a printed claim that are not letters of the text (functions and constants)
_PRINTED_FUNCTIONS = frozenset({"sqrt", "sin", "cos", "tan", "cot", "sec", "csc", "log", "exp", "Abs", "pi", "oo",
                                "asin", "acos", "atan", "floor", "ceiling", "factorial", "binomial", "Rational"})


def bears_on(guess: Guess, claim_text: str) -> bool:
    """Whether `guess` can affect a claim printed as `claim_text` (``8 + 8 + 16 = 41`` has no
    letters left: how ``age`` was read does not matter to it).

    >>> bears_on(Guess("ab read as a product of letters", False, letters=True), "8 + 8 = 16")
    False
    """
    if not guess.letters:
        return True
    return any(name not in _PRINTED_FUNCTIONS for name in _NAME.findall(claim_text))


def _product_below(m: re.Match[str], reading: Reading) -> bool:
    """``/ab`` or ``/x(x + 1)`` (a product below the bar), not ``/sqrt(x)`` or ``/f(x)``."""
    word, call = m.group(1), bool(m.group(2))
    if word in _KNOWN_WORDS or (len(word) == 1 and (word in "fghFGH" or word in reading.functions)):
        return False
    return len(word) > 1 or call


def comma_split(step: str, start: int, end: int) -> bool:
    """Whether the statement at ``step[start:end]`` was cut from a number at a comma between digits
    (``12,000``: a statement ending in ``12`` or starting with ``000``)."""
    before = step[max(0, start - 2):start]
    after = step[end:end + 2]
    return (len(before) == 2 and before[1] == "," and before[0].isdigit() and start < len(step)
            and step[start:start + 1].isdigit()) or \
        (len(after) == 2 and after[0] == "," and after[1].isdigit() and end > 0 and step[end - 1].isdigit())
