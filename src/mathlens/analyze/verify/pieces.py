"""A step's math split into single statements, with what the words around each one say.

`pieces(text)` extracts the math of a step (`extract.extract_math`) and splits it into single
statements: top-level commas, LaTeX ``\\\\`` rows, ``\\quad`` gaps and ``;`` separate claims, a
thousands separator does not. Each piece records whether its left side continues in words ("20%
of 50 = 10" gives the span "50 = 10") and whether it is a supposition ("when x = 3"), and
`link_units` says which relations of a LaTeX piece compare different units ("2 \\text{ dozen} =
24").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise

from mathlens.analyze.verify.extract import extract_math
from mathlens.analyze.verify.text import TEXT_COMMAND, split_relations, split_top_level

MAX_SPANS_PER_STEP = 40

# A claim whose side is continued in words ("20% of 50 = 10" gives the span "50 = 10"), also
# across the words that only point at the number ("half of the 48 = 24", "twice the 12 = 24").
_POINTING = (r"(?:\s+(?:the|a|an|his|her|their|its|our|your|my|these|those|this|that|each|every|"
             r"remaining|other|total|original|initial|entire|whole|same|first|last|new|current))*")
_BINDING_WORD = re.compile(r"(?:\b(?:of|times|plus|minus|by|per|over|into|than|multiplied|divided|twice|half|"
                           rf"double|triple|thrice|at)|@){_POINTING}\s*$", re.I)
# "3:4 = 0.75": a ratio (or a score) whose first term the reader does not take
_RATIO_BEFORE = re.compile(r"\d:$")
# A percentage or a fraction of a number that is a whole side ("20% of 50 = 10", "3/4 of 48 = 36"):
# a product, as "20\\% \\text{ of } 400" is in LaTeX. A side that goes on ("20% of 50 + 10") is not read.
_PART_OF = re.compile(r"(?<![\d.,/])(?P<share>\d+(?:\.\d+)?%|\d+/\d+)(?P<of>[ \t]+of[ \t]+)"
                      r"(?=\$?\d[\d,]*(?:\.\d+)?[ \t]*(?:=|≈))")
_OPERATOR_BEFORE = frozenset("+-−–*/×÷^(")
# A count with its unit words inside plain arithmetic ("5 boxes * 12 pencils/box = 60 pencils",
# "2.5 hours × 60 = 150 minutes", "$15 per hour * 8 hours", "3 apples + 4 apples = 7 apples"): the
# words go (blanked, so offsets hold) when they stand between a number and an operator, or between
# a number that is the right operand of one and "=". Added or subtracted counts must carry the same words ("2 hours +
# 30 minutes" adds different units), and "=" after a count that no operator made stays a
# conversion ("2 hours = 120 minutes").
_COUNT_UNIT = re.compile(
    r"(?<![\w.,/\\^_{])(?P<num>\d[\d,]*(?:\.\d+)?)"
    r"(?P<unit>[ \t]+per[ \t]+[a-z]{2,}|(?:[ \t]+[a-z]{2,}(?:/[a-z]{2,}|[ \t]+per[ \t]+[a-z]{2,})?){1,2})"
    r"(?=[ \t]*(?P<op>[*×/÷+\-−=]|x(?=[ \t]))[ \t]*\$?(?P<next>\d[\d,]*(?:\.\d+)?)(?P<after>(?:[ \t]+[a-z]{2,}){0,2}))")
_NOT_UNIT_WORDS = frozenset({
    "times", "of", "per", "percent", "cent", "dozen", "dozens", "hundred", "hundreds", "thousand", "thousands",
    "million", "millions", "billion", "half", "halves", "third", "thirds", "quarter", "quarters", "squared",
    "cubed", "more", "less", "fewer", "than", "and", "or", "is", "are", "was", "were", "plus", "minus", "divided",
    "multiplied", "over", "by", "to", "from", "each", "every", "at", "in", "on", "for", "the", "an", "so", "then",
    "equals", "makes", "gives", "total", "left", "remaining", "which", "that", "it", "we", "get", "has", "have",
    "had", "be", "mod", "sin", "cos", "tan", "ln", "log", "exp", "lim", "max", "min", "gcd", "lcm", "if", "as",
    "with", "into",
})


_DIFFERENTIAL = re.compile(r"d[a-z]")  # "dx" in "x^2 dx", "3 dt"
_RATE_BEFORE = re.compile(r"(?i)\b(?:in|per|each|every|for)$")


# Arithmetic said in words between numbers ("3 times 4 is 12", "48 divided by 2 equals 24",
# "12 plus 5 makes 17", "20% of 50 is 10"): the words become their signs and the link "=", in place
# (same length, so offsets hold). Only a chain of numbers joined by such words, then the link and a
# number, is rewritten; "5 times a day" or "2 plus 3 more" is left as words, and so is a result in
# percent ("60% of 100 is 60%", where the percent sign only restates the share).
_NUMBER_WORDED = r"\$?\d[\d,]*(?:\.\d+)?"
_OPERATION_WORD = r"(?:times|multiplied\s+by|divided\s+by|plus|minus)"
_SHARE_OF_WORDED = rf"(?:\d+(?:\.\d+)?%|\d+/\d+)[ \t]+of[ \t]+{_NUMBER_WORDED}"  # "20% of 50", "3/4 of 48"
WORDED_ARITHMETIC = re.compile(
    rf"(?<![\w.,/])(?:{_SHARE_OF_WORDED}(?:[ \t]+{_OPERATION_WORD}[ \t]+{_NUMBER_WORDED})*"
    rf"|{_NUMBER_WORDED}(?:[ \t]+{_OPERATION_WORD}[ \t]+{_NUMBER_WORDED})+)"
    rf"[ \t]+(?:is|equals|makes|gives|=)[ \t]+"
    rf"(?={_NUMBER_WORDED}(?![\w.]*[A-Za-z]*\s*(?:times|plus|minus)\b)(?![\d.,]*\s*%))")
_SIGNS = {"times": "*", "multiplied": "*", "divided": "/", "plus": "+", "minus": "-", "of": "*"}


def _signs_for_words(text: str) -> str:
    """`text` with arithmetic said in words between numbers written in signs (see `WORDED_ARITHMETIC`)."""
    def signs(m: re.Match[str]) -> str:
        if m.string[max(0, m.start() - 8):m.start()].rstrip()[-1:] in _OPERATOR_BEFORE:
            return m.group(0)  # "100% - 20% of 50 is 40": how the words group is not written

        def sign(w: re.Match[str]) -> str:
            word = w.group(0)
            symbol = "=" if word.split()[0].lower() in ("is", "equals", "makes", "gives") else \
                _SIGNS.get(word.split()[0].lower(), word)
            return symbol.ljust(len(word)) if symbol != word else word
        return re.sub(r"(?i)\b(?:multiplied\s+by|divided\s+by|times|plus|minus|of|is|equals|makes|gives)\b",
                      sign, m.group(0))
    return WORDED_ARITHMETIC.sub(signs, text)


def _words_of(unit: str) -> list[str]:
    return re.findall(r"[a-z]+", unit)


def _same_unit(a: str, b: str) -> bool:
    """"apples" and "apple", "blue eggs" and "blue eggs": the same words but for a plural s."""
    return [w.rstrip("s") for w in _words_of(a)] == [w.rstrip("s") for w in _words_of(b)]


def _blank_count_units(text: str) -> str:
    """`text` with the unit words of counts in plain arithmetic blanked (see `_COUNT_UNIT`)."""
    out = list(text)
    for m in _COUNT_UNIT.finditer(text):
        unit, op = m.group("unit"), m.group("op")
        words = _words_of(unit)
        if any((w in _NOT_UNIT_WORDS and not (w == "per" and i in (0, len(words) - 2)))
               or _DIFFERENTIAL.fullmatch(w) for i, w in enumerate(words)):
            continue
        # what stands before the count, as read so far (earlier counts blanked), within a bound
        before = "".join(out[max(0, m.start() - 64):m.start()]).rstrip().rstrip("$").rstrip()
        if _RATE_BEFORE.search(before):
            continue  # "24 eggs in 1 tray x 2 trays": the count is part of a rate said in words
        if op == "=":
            operator = before[-1:] if before[-1:] in _OPERATOR_BEFORE - {"("} else "x" if before.endswith(" x") else ""
            if not operator:
                continue  # "2 hours = 120 minutes": a conversion, not the end of an operation
            if not re.search(r"[\d)%]$", before[:-1].rstrip()):
                continue  # "12 red cars-2 green cars =": the left operand is words
        if op in "+-−" and not _same_unit(unit, m.group("after") or ""):
            continue  # "2 hours + 30 minutes": different units are not added as numbers
        out[m.start("unit"):m.end("unit")] = " " * len(unit)
    return "".join(out)


# Words right after a statement that carry its last side on ("d = 20% of 50", "x = 5 squared"):
# that side is not all of the value. "of" does so only before a number: "1/8 = 0.125 of the whole"
# is a share.
_BINDS_NEXT = re.compile(r"\s*(?:(?:times|plus|minus|squared|cubed|multiplied|divided)\b|"
                         rf"of{_POINTING}\s+\$?\d)", re.I)


# A quantity in two units after a statement's last number ("= 1 hour 17 minutes", "= 3 feet 6
# inches", "= 2 hours and 30 minutes"): the number is only its first part.
_MEASURE = (r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|feet|foot|ft|inch(?:es)?|"
            r"yards?|yds?|miles?|meters?|metres?|cm|mm|km|pounds?|lbs?|ounces?|oz|kg|grams?|dollars?|cents?|"
            r"gallons?|quarts?|pints?|cups?|liters?|litres?|ml)")
_COMPOUND_AFTER = re.compile(rf"[ \t]*{_MEASURE}\.?,?(?:[ \t]+and)?[ \t]+\d+(?:\.\d+)?[ \t]*{_MEASURE}\b", re.I)


# A relation in a piece of a step; "<" and ">" only count with spaces (else they delimit a vector).
_RELATION = re.compile(r"=|≤|≥|≈|\s<\s|\s>\s|\\le|\\ge|\\ne|\\approx")


_LATEX_VECTOR = re.compile(r"\\langle.*?\\rangle")
# "12,000 / 48": a thousands separator is not a comma between two claims.
_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])")
# Words before a relation that make it a supposition, not a result: "when x = 3", "if k = 2".
_SUPPOSITION = re.compile(r"\b(?:when|whenever|if|at|for|where|suppose|assume|assuming|consider|test|try|"
                          r"trying|plug|plugging|substitut\w*|let|letting|put|setting|set|such that)\b"
                          r"[^.;:!?]{0,40}$", re.I)
# A case, not a fact: the names it gives values to keep none ("If p = 15 when c = 1500").
_HYPOTHESIS = re.compile(r"\b(?:when|whenever|if|suppose|assume|assuming|trying|try)\b[^.;:!?]{0,40}$", re.I)
# Words right after a statement that call it false: the solution is testing it.
# Also an equation set up and found to have no solution ("\\[ 4 = 0 \\] This equation has no
# solution", "0 = -12, so there is no solution", "4 = 0 gives a contradiction").
_DISOWNED = re.compile(r"[\s,.;]*(?:but|which|that|this|so|and)?\s*(?:this|which|that|the|there)?\s*"
                       r"(?:equation|equality|statement|system|case)?\s*(?:is|are)?\s*"
                       r"(?:not true|false|not valid|invalid|contradicts|"
                       r"impossible|a contradiction|not possible|extraneous|incorrect|not satisfied|"
                       r"does not hold|doesn't hold|not hold|never (?:true|holds?)|"
                       r"(?:has|have)? ?no (?:real )?(?:solutions?|roots?)\b|"
                       r"(?:gives|leads to|yields) (?:a |an )?(?:contradiction|impossibility)|"
                       r"cannot (?:happen|hold|be true))", re.I)
# Words by which a solution takes back what it has just written ("Oops! This simplification led
# us astray"): a slip before them is corrected, not left standing.
RETRACTION = re.compile(r"\b(?:oops|whoops|I made (?:a|an) (?:mistake|error)|(?:that|this)(?:'s| is| was) "
                        r"(?:not (?:right|correct)|incorrect|wrong|a mistake)|led (?:us|me) astray|"
                        r"(?:simplified|calculated|computed) (?:that )?incorrectly|let(?: me|'s| us) "
                        r"(?:correct|re-?check|re-?calculate|redo|re-?evaluate) (?:this|that|it|the))\b", re.I)
# Words announcing that the next relation rewrites an expression ("Expanding, we have").
REWRITE_WORDS = re.compile(r"expand|simplif|rewrit|factori[sz]|factoring|rearrang|combin|like terms|becomes", re.I)
STARTS_WITH_RELATION = re.compile(r"\s*(?:=|<|>|≈|≤|≥|\\approx|\\leq?|\\geq?|\\lt|\\gt)(?![a-zA-Z])")
_ENDS_WITH_RELATION = re.compile(r"(?:=|≈|\\approx|\\leq?|\\geq?)\s*$")
# "A = B \\implies C = D": an implication arrow ends one statement and starts the next, which
# rewrites it ("⇒" is then the lead of the next piece).
_ARROW = r"\\(?:Rightarrow|Longrightarrow|implies|iff|Leftrightarrow|Longleftrightarrow|therefore)(?![a-zA-Z])|⟹|⇒|⟺|⇔"
_PLAIN_ARROW = r"<=>|=>|⟹|⇒|⟺|⇔|∴"
_SEPARATOR = re.compile(rf"\\\\|\\q?quad|\\text\{{\s*(?i:and|or|so|then)\s*\}}|;|{_ARROW}|{_PLAIN_ARROW}")
_ARROW_ROW = re.compile(rf"(?:{_ARROW}|{_PLAIN_ARROW})")
_DELIMITERS = re.compile(r"\\[\[\]()]|\$+")
_MATRIX = re.compile(r"\\begin\{([pbB]?matrix)\}.*?\\end\{\1\}", re.S)
# A plain span that starts with a binary operator: its left side is in the words before it.
_LEADING_OPERATOR = re.compile(r"\s*[+*/^=×÷·]")
# A minus with a space after it, right after a word, is an operator whose left operand is that
# word's phrase ("10 blue eggs - 1 = 9"), not a sign ("is -1").
_WORDED_MINUS = re.compile(r"\s*[-−–]\s")
# An expression left open before words: an operator after a number, then only words before the
# span ("December 2013 - December 2012 = 1" gives the span "2012 = 1"); a hyphen ("100-foot") is
# not one.
_OPEN_BEFORE_WORDS = re.compile(r"[\d)%]\s*[-−–+*/×÷]\s+(?:[A-Za-z]+\s+)+$")
# "0 = y + 4 -4 = y": a new statement run on after a term ("-4 = y" starts where the minus has a
# space before it and none after, and a relation follows).
_RUN_ON = re.compile(r"(?<=[\w)])\s+(?=-\d+(?:\.\d+)?\s*=)")
# A step about integer division: "2863 ÷ 1344 = 2 (quotient)".
QUOTIENT = re.compile(r"quotient|remainder|integer part|whole number part|\bfloor\b", re.I)
_NOT_UNITS = frozenset({"", "and", "or", "of", "if", "so", "then", "since", "where", "for", "is", "when", "valid",
                        "true", "false", "quotient", "(quotient)"})
# Notation with a second reading as a unit: "%" and "°".
UNIT_MARK = re.compile(r"%|°|\\circ")
# "to find the values of a", "solve for x": the step works the name out again.
SOLVED_FOR = re.compile(r"\b(?:solve for|solving for|find|finding|values? of|determine)\s+(?:the\s+)?"
                        r"(?:\$|\\\(\s*)?([A-Za-z])\b(?!\s*\()")
# A name stated with "=" in a step: the step works it out again.
DEFINED_NAME = re.compile(r"^\s*([A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?)\s*=(?!=)")
_ANGLE_VECTOR = re.compile(r"(?:(?<=^)|(?<=[=(,\s]))<[^<>=;]*,[^<>=;]*>")


@dataclass(frozen=True)
class Piece:
    """One statement of a step."""

    text: str
    notation: str
    continued: bool = False  # its left side continues in words ("20% of 50 = 10")
    open_end: bool = False  # its last side continues in words ("d = 20% of 50")
    supposed: bool = False  # a supposition ("when x = 3"), not a result
    # The words between the previous statement and this one ("" inside one display, "," after
    # a comma): "Factoring, we get" makes it a rewriting of the previous equation.
    lead: str = ""
    display: bool = False  # from displayed math (\\[...\\], align), where rows form derivations
    hypothetical: bool = False  # "if p = 15 when c = 1500": a case, its names keep no value
    disowned: bool = False  # the words after it say it is false ("which is not true")
    tail: str = ""  # the words after its span, up to the end of the step (at most 80 characters)
    end: int = 0  # where its span ends in the step's text
    start: int = 0  # where its span starts
    #: the words of its sentence before its span (at most 120 characters)
    opening: str = ""


_SENTENCE_END = re.compile(r"[.;!?]\s|\n")


_ARROW_WORD = re.compile(r"→|->")


def _implications(body: str) -> str:
    """"x/3 = 4 → x = 12": an arrow between two statements is an implication; in "x → 0" (no
    statement before it in the row) it is a limit's and stays."""
    out, start = [], 0
    for m in _ARROW_WORD.finditer(body):
        row = body[start:m.start()].rsplit(";", 1)[-1]
        if "=" in row and "=" in body[m.end():].split(";", 1)[0]:
            out.append(body[start:m.start()] + "⇒")
            start = m.end()
    return "".join(out) + body[start:]


def _part_of(m: re.Match[str]) -> str:
    """"20% of 50" as "20% *  50" (the same length, so offsets hold), unless an operator comes
    before the share ("100% - 20% of 50": which share is taken is not written)."""
    if m.string[:m.start()].rstrip()[-1:] in _OPERATOR_BEFORE:
        return m.group()
    of = m.group("of")
    return m.group("share") + " *" + " " * (len(of) - 2)


def pieces(text: str) -> list[Piece]:
    """Math snippets of a step, split into single statements: top-level commas, ``\\\\`` rows and
    ``\\quad`` gaps separate claims (``f_x = 2xy, f_y = x^2``)."""
    out: list[Piece] = []
    prev_end = 0
    if " of " in text:
        text = _PART_OF.sub(_part_of, text)
    text = _signs_for_words(_blank_count_units(text))
    for span in extract_math(text)[:MAX_SPANS_PER_STEP]:
        before = text[max(0, span.start - 48):span.start]
        after = text[span.end:span.end + 48]
        lead = _DELIMITERS.sub(" ", text[max(prev_end, span.start - 120):span.start]).strip()
        prev_end = span.end
        # Only a left side that starts with a number can be the tail of a worded expression.
        # (a currency sign may sit between: "25% of $1.60 = 0.25 * $1.60"), and a span that
        # starts with an operator continues a worded left side ("the GCF + 11 = 23").
        worded = bool(_BINDING_WORD.search(before.rstrip("$€£ "))) and bool(re.match(r"\s*[-(]?\s*\d", span.text))
        continued = worded or bool(_LEADING_OPERATOR.match(span.text)) \
            or (bool(_WORDED_MINUS.match(span.text)) and before.rstrip()[-1:].isalpha()) \
            or bool(_OPEN_BEFORE_WORDS.search(before)) \
            or (bool(_RATIO_BEFORE.search(before)) and span.text[:1].isdigit())
        supposed = bool(_SUPPOSITION.search(before.rstrip("$\\( ")))
        hypothetical = bool(_HYPOTHESIS.search(before.rstrip("$\\( ")))
        disowned = bool(_DISOWNED.match(_DELIMITERS.sub(" ", after)))
        # "\&" is a custom operation ("9 \& 2"), not an alignment mark; "\!" is no gap.
        # Inside a matrix "&" separates entries and "\\\\" rows: kept for the reader, not split.
        body = _MATRIX.sub(lambda m: m.group().replace("&", "\x04").replace("\\\\", "\x05"), span.text)
        body = body.replace("\\&", "\\star ").replace("&", " ").replace("{,}", "").replace("\\!", "")
        # A display that goes on from the previous one ("\\[ = \\sqrt{6336} \\]") continues its
        # chain, and so does a row of a display that starts with "=" ("&= x^2 - 1" after "\\\\").
        joinable = bool(out and out[-1].display and span.display and span.notation == "latex")
        body = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), body)
        if span.notation == "latex":
            body = re.sub(r"\\[,;:!]", " ", body)  # thin spaces: "\," is not a separating comma
        if span.notation == "plain":
            body = _implications(_RUN_ON.sub("; ", body))
        # The separators are kept: "\text{or}" between two equations makes them alternatives.
        rows = re.split(rf"(\\\\|\\q?quad|\\text\{{\s*(?i:and|or|so|then)\s*\}}|;|{_ARROW})", body) \
            if span.notation == "latex" else re.split(f"(;|{_PLAIN_ARROW})", body)
        for row in rows:
            if row is None:
                continue
            if _SEPARATOR.fullmatch(row.strip()) and row.strip():
                joinable = row.strip() == "\\\\" and bool(out) and out[-1].notation == "latex"
                if _ARROW_ROW.fullmatch(row.strip()):
                    lead = "⇒"  # the next statement follows from this one
                elif "text" in row:
                    lead = f"{lead} {row}".strip()
                continue
            # Commas inside an angle-bracket vector <a, b> do not separate claims.
            row = _ANGLE_VECTOR.sub(lambda m: m.group().replace(",", "\x01"), row)
            row = _LATEX_VECTOR.sub(lambda m: m.group().replace(",", "\x01"), row)
            parts = [p.replace("\x01", ",") for p in split_top_level(row)]
            merged: list[str] = []
            for part in parts:
                if merged and not _RELATION.search(part):
                    merged[-1] += "," + part
                else:
                    merged.append(part)
            for part in merged:
                part = part.replace("\x04", "&").replace("\x05", "\\\\")
                if not part.strip():
                    continue
                if joinable and (STARTS_WITH_RELATION.match(part) or _ENDS_WITH_RELATION.search(out[-1].text)):
                    # "A &= B \\\\ &= C" is the chain "A = B = C".
                    out[-1] = replace(out[-1], text=f"{out[-1].text} {part.strip()}")
                else:
                    out.append(Piece(part.strip(), span.notation, continued, False, supposed, lead, span.display,
                                     hypothetical, disowned, text[span.end:span.end + 80], span.end,
                                     span.start, _SENTENCE_END.split(text[max(0, span.start - 120):span.start])[-1]))
                    continued = supposed = False
                lead = ","
                joinable = False
            if row.strip():
                lead = ""
                joinable = False
        if out and out[-1].end == span.end and (_BINDS_NEXT.match(after) or _COMPOUND_AFTER.match(after)):
            out[-1] = replace(out[-1], open_end=True)
    return out


#: a remark in brackets inside a unit's text: "\\text{ cents (quarters)}" says what the cents count
_REMARK = re.compile(r"\s*\([^()]*\)")


def unit_words(text: str) -> str:
    """The words of a ``\\text{...}`` without a bracketed remark ("cents (quarters)" -> "cents")."""
    return _REMARK.sub("", text).strip()


def _worded(text: str) -> bool:
    """Whether a ``\\text{...}`` names a quantity in words ("Jamal's apples", "Total sprinkles"),
    rather than holding a unit word."""
    words = unit_words(text)
    return " " in words or "'" in words


def _units(side: str) -> frozenset[str]:
    """Words written into a LaTeX side as units (``4 \\text{ hours}``)."""
    return frozenset(unit_words(w).lower() for w in TEXT_COMMAND.findall(side)) - _NOT_UNITS


#: a side that is a product or quotient of numbers with units: "300 \\, \\text{rolls} \\times 4 \\, \\text{inches/roll}"
_PRODUCT_TOKEN = re.compile(r"\s+|\\[,;:! ]|~|\\?\$|(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)|"
                            r"(?P<unit>\\(?:text|mathrm)\{[^{}]*\})|(?P<times>\\times|\\cdot|\*)|(?P<div>/|\\div)")
_IRREGULAR = {"feet": "foot", "people": "person", "children": "child", "men": "man", "women": "woman",
              "teeth": "tooth", "geese": "goose", "mice": "mouse"}


def _singular(word: str) -> str:
    """A unit word in the singular, so that "rolls" cancels "roll" ("inches" -> "inch")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > 2:
        return word[:-1]
    return word


def _dimension(side: str) -> dict[str, int] | None:
    """The units of a side that multiplies and divides numbers with units, as exponents by unit
    word (``rolls × inches/roll`` -> {inch: 1}); None for any other side (a sum, a name)."""
    out: dict[str, int] = {}
    sign, at, terms = 1, 0, 0
    for m in _PRODUCT_TOKEN.finditer(side):
        if m.start() != at:
            return None  # something else on the side
        at = m.end()
        if m.group("times"):
            sign = 1
        elif m.group("div"):
            sign = -1
        elif m.group("num"):
            terms += 1
        elif m.group("unit"):
            word = unit_words(m.group("unit")[m.group("unit").index("{") + 1:-1]).lower()
            if not word or " " in word or word.count("/") > 1:
                return None
            top, _, bottom = word.partition("/")
            for unit, power in ((top, sign), (bottom, -sign)):
                if unit:
                    key = _singular(unit)
                    out[key] = out.get(key, 0) + power
    if at != len(side) or not terms:
        return None
    return {k: v for k, v in out.items() if v}


def _same_dimension(left: str, right: str) -> bool:
    """Whether the units of two sides cancel to the same ones ("300 rolls × 4 inches/roll" and
    "1200 inches"; "3 posts/day × 30 days" and "90 posts"), so their numbers compare directly."""
    a, b = _dimension(left), _dimension(right)
    return a is not None and b is not None and bool(b) and a == b


_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SPACING = re.compile(r"\\[,;:! ]|\\(?:left|right|quad|qquad)\b")
_SYMBOLS = {"\\times": "×", "\\cdot": "·", "\\div": "÷", "\\%": "%", "\\$": "$"}


def worded_sides(piece: Piece) -> list[str | None]:
    """For each side of a LaTeX piece, the side in plain words when it holds a quantity named in
    words (``\\frac{\\text{Total sprinkles}}{\\text{Cupcakes per pan}}`` -> "(Total
    sprinkles)/(Cupcakes per pan)"), else None: what a claim on that side is shown as, since the
    parsed side has lost the words."""
    if piece.notation != "latex" or "\\" not in piece.text:
        return []
    sides, _ = split_relations(piece.text, latex=True)
    out: list[str | None] = []
    for side in sides:
        if not any(_worded(w) for w in TEXT_COMMAND.findall(side)):
            out.append(None)
            continue
        text = TEXT_COMMAND.sub(lambda m: m.group(1).strip(), side)
        for _ in range(3):
            text = _FRAC.sub(lambda m: f"({m.group(1).strip()})/({m.group(2).strip()})", text)
        for latex, plain in _SYMBOLS.items():
            text = text.replace(latex, plain)
        out.append(" ".join(_SPACING.sub(" ", text).split())[:120])
    return out


#: why a link with a quantity named in words is undecided
WORDED = "a quantity named in words"


def link_units(piece: Piece, links: int) -> list[str]:
    """For each relation of the piece, why it compares different units ('' when it does not):
    "2 dozen = 2 x 12" converts, "4 hours = 240 minutes" converts, "2 x 12 = 24 cups" is checked."""
    if piece.notation != "latex" or "\\" not in piece.text:
        return [""] * links
    sides, _ = split_relations(piece.text, latex=True)
    if len(sides) != links + 1:
        return [""] * links
    units = [_units(side) for side in sides]
    # "\text{Jamal's apples} + 8": a quantity named in words, not a number; the links that do
    # not touch it are arithmetic ("= 12 + 8 = 20").
    worded = [any(_worded(word) for word in TEXT_COMMAND.findall(side)) for side in sides]
    out = []
    for k, (left, right) in enumerate(pairwise(units)):
        if worded[k] or worded[k + 1]:
            out.append(WORDED)
        elif any("remainder" in word or word == "r" for word in left | right):
            out.append("a quotient with a remainder")
        elif left and left != right and not _same_dimension(sides[k], sides[k + 1]):
            out.append(f"a conversion between units ({', '.join(sorted(left | right))})")
        else:
            out.append("")
    return out

