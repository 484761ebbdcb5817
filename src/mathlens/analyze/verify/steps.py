"""Check every claim of a solution, one step at a time, each step under its own time budget.

``verify_steps(step_texts, question)`` is the entry point. The question's definitions (``f(x, y)
= x^2 y``) are read first; then each step runs as one bounded call in a worker: its math is
extracted and parsed, each relation is checked (`claims.check_relation`), and the definitions it
makes (``A = -14``, ``g(x) = ...``) are passed on to later steps. A step over its budget is
``unverifiable``; once the whole solution's budget is spent, the remaining steps are not checked.

Besides verdicts, each step reports what the reasoning graph and the annotator need: the
deepest expression tree (syntactic depth), symbolic cues (derivative, integral, vector...),
the names it defines, the values it states, and everything it mentions.
"""

from __future__ import annotations

import math
import pickle
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

import sympy
from sympy.core.function import AppliedUndef

from mathlens.analyze.verify.claims import EQUATION_REASON, PairInfo, check_relation
from mathlens.analyze.verify.context import Context, defined_names, definition_of, given, substitute
from mathlens.analyze.verify.equations import (
    continues_derivation,
    equivalent_form,
    implicit_derivative,
    rewrite_check,
    solves_pending,
)
from mathlens.analyze.verify.guesses import bears_on, comma_split, guesses
from mathlens.analyze.verify.kinds import claim_kind, rational_only
from mathlens.analyze.verify.limits import tree_depth
from mathlens.analyze.verify.modular import (
    check_congruence,
    check_mod_chain,
    congruence,
    divisor_claims,
    has_mod_operator,
    remainder_claims,
)
from mathlens.analyze.verify.numbers import carried_error, fmt, num, rounds_to
from mathlens.analyze.verify.parse import Parsed, parse_math_unbounded
from mathlens.analyze.verify.pieces import (
    DEFINED_NAME,
    QUOTIENT,
    RETRACTION,
    REWRITE_WORDS,
    SOLVED_FOR,
    STARTS_WITH_RELATION,
    UNIT_MARK,
    WORDED,
    Piece,
    link_units,
    pieces,
    worded_sides,
)
from mathlens.analyze.verify.reading import DEFAULT_READING, Reading
from mathlens.analyze.verify.results import (
    MAX_SPANS_PER_SOLUTION,
    SOLUTION_BUDGET_S,
    STEP_TIMEOUT_S,
    ClaimCheck,
    StepMath,
    StepStatus,
    VerifyConfig,
)
from mathlens.analyze.verify.signs import PlusMinus
from mathlens.analyze.verify.text import split_relations

# Kept importable from here, where they were defined before `results.py`.
__all__ = ["MAX_SPANS_PER_SOLUTION", "SOLUTION_BUDGET_S", "STEP_TIMEOUT_S", "ClaimCheck", "StepMath", "StepStatus",
           "VerifyConfig", "analyze_step", "context_from_question", "verify_steps"]

# Less than this left of the solution's budget: the remaining steps are skipped.
_MIN_STEP_S = 0.05


def _cues(parsed: Parsed, text: str) -> set[str]:
    raw = parsed.raw
    cues: set[str] = set()
    if raw is None:
        return cues
    if raw.has(sympy.Derivative):
        cues.add("derivative")
        for d in raw.atoms(sympy.Derivative):
            if len(d.expr.free_symbols) > 1:
                cues.add("partial")
    names = {getattr(s, "name", "") for s in raw.free_symbols}
    if any(re.match(r"^[fghFGH]_\{?[a-z]{1,3}\}?$", n) for n in names):
        cues.add("partial")
    names |= {a.func.__name__ for a in raw.atoms(AppliedUndef)}  # "∇f(-1, 4)"
    if any(n.startswith("nabla_") for n in names):
        cues.update({"partial", "vector"})
    for cls, cue in ((sympy.Integral, "integral"), (sympy.Limit, "limit"), (sympy.Sum, "sum")):
        if raw.has(cls):
            cues.add(cue)
    if any(isinstance(side, sympy.Tuple | sympy.MatrixBase) and not isinstance(side, PlusMinus)
           for side in parsed.sides or (raw,)):
        cues.add("vector")
    if any(a.args and all(x.is_number for x in a.args) for a in raw.atoms(AppliedUndef)):
        cues.add("substitution")
    if parsed.relations and any(op in ("<", "<=", ">", ">=") for op in parsed.relations):
        cues.add("inequality")
    if parsed.relations and all(getattr(s, "is_number", False) for s in parsed.sides):
        cues.add("arithmetic")
    return cues


_CALCULUS_CUES = frozenset({"derivative", "partial", "integral", "limit", "sum"})


#: a side that starts with a number and goes on with an operator ("25 + 10", "\\$20 \\times 3")
_LEADING_NUMBER = re.compile(r"\s*\\?\$?\s*(\d[\d,]*(?:\.\d+)?)\s*(?:[-+*/×÷−]|\\times|\\cdot|\\div)")


#: the last operation of a side ("- 39" in "389 - 39") and the first after a leading number
_OPERATION = r"(?:[-+*/×÷−]|\\times|\\cdot|\\div)\s*\\?\$?\s*\d[\d,]*(?:\.\d+)?"
_LAST_OPERATION = re.compile(_OPERATION + r"\s*$")
_FIRST_OPERATION = re.compile(r"\s*" + _OPERATION + r"(?![\d.])")


def _running_total(item: Piece, i: int, left: sympy.Basic) -> bool:
    """Whether link `i` of the piece's chain goes on from its left side's value: "20 + 5 = 25 + 10"
    (25 is 20 + 5, and the chain adds 10 to it)."""
    sides, _ = split_relations(item.text, latex=item.notation == "latex")
    m = _LEADING_NUMBER.match(sides[i + 1]) if len(sides) > i + 1 else None
    if m is None or not getattr(left, "is_number", False):
        return False
    # "389 - 39 = 350 - 39": the operation just done is done again, a slip rather than a new step
    done, again = _LAST_OPERATION.search(sides[i]), _FIRST_OPERATION.match(sides[i + 1][m.end(1):])
    if done and again and " ".join(done.group().split()) == " ".join(again.group().split()):
        return False
    value = num(left)
    lead = float(m.group(1).replace(",", ""))
    return value is not None and abs(value.imag) < 1e-12 and abs(value.real - lead) <= 1e-9 * max(1.0, abs(lead))


def _numbers_only(*sides: sympy.Basic) -> bool:
    """Both sides are numbers written out, with no derivative, integral, limit or sum in them."""
    return all(getattr(side, "is_number", False) and not side.has(sympy.Derivative, sympy.Integral, sympy.Limit,
                                                                   sympy.Sum, sympy.Subs) for side in sides)


def _unreduced(raw: sympy.Basic) -> list[str]:
    """Constant function values left unevaluated, such as ``ln(e)`` (= 1) or ``sqrt(4)``."""
    notes = []
    for node in sympy.preorder_traversal(raw):
        if isinstance(node, sympy.Function) and node.args and all(a.is_number for a in node.args) \
                and isinstance(node, sympy.log | sympy.exp | sympy.sin | sympy.cos | sympy.tan):
            value = node.func(*node.args)
            if value.is_Rational:
                notes.append(f"{sympy.sstr(node)} left unreduced (= {value})")
        elif isinstance(node, sympy.Pow) and node.exp == sympy.Rational(1, 2) and node.base.is_Integer:
            value = sympy.sqrt(node.base)
            if value.is_Integer:
                notes.append(f"{sympy.sstr(node)} left unreduced (= {value})")
    return notes


@lru_cache(maxsize=4096)  # one side is named for its claim, what it mentions and what it states
def _shown_side(item: Piece, raw_sides: tuple[sympy.Basic, ...] | list[sympy.Basic], k: int) -> str:
    """Side `k` as a claim shows it: in words when it is a quantity named in words (the parsed side
    has lost them: ``\\frac{\\text{Total}}{\\text{Per pan}}``), else as parsed."""
    if "\\text" in item.text or "\\mathrm" in item.text:
        words = worded_sides(item)
        if len(words) == len(raw_sides) and words[k] is not None:
            return str(words[k])
    return _key(raw_sides[k])


def _key(expr: sympy.Basic) -> str:
    """How an expression is named in claims and in what a step states and mentions: SymPy's
    printing on one line (a matrix prints on several), without the factors 1 an unevaluated parse
    keeps (``k - 1*5``), so that ``(k - 5)**2 - 16`` stated in one step is found when a later one
    writes it."""
    text = sympy.sstr(expr, full_prec=False)
    if "1*" in text:
        text = sympy.sstr(_without_unit_factors(expr), full_prec=False)
    return " ".join(text.split("\n"))


#: the size up to which an expression's name is cleaned of unit factors (`_without_unit_factors`)
_MAX_KEY_NODES = 400


def _without_unit_factors(expr: sympy.Basic) -> sympy.Basic:
    """`expr` with every factor 1 of an unevaluated product left out and ``-1*5`` written -5, the
    rest as written (``-1*1/(24*x**2)`` is ``-1/(24*x**2)``; dropping the "1*" from its printing
    would read ``-1/24*x**2``). Expressions of more than `_MAX_KEY_NODES` nodes are left as they are."""
    nodes = sympy.preorder_traversal(expr)
    if sum(1 for _ in zip(range(_MAX_KEY_NODES + 1), nodes, strict=False)) > _MAX_KEY_NODES:
        return expr

    def strip(node: sympy.Basic) -> sympy.Basic:
        if not node.args or node.is_Atom:
            return node
        args = tuple(strip(a) for a in node.args)
        if isinstance(node, sympy.Mul):
            rest = [a for a in args if a != 1]
            if len(rest) == 2 and rest[0] == -1 and rest[1].is_Number and rest[1] > 0:
                return -rest[1]
            return sympy.Mul(*rest) if len(rest) > 1 else rest[0] if rest else sympy.S.One
        if args == node.args:
            return node
        if isinstance(node, sympy.Integral):  # built unevaluated, an integral puts a factor 1 back
            with sympy.evaluate(True):
                return node.func(*args)
        return node.func(*args)

    try:
        with sympy.evaluate(False):  # the rest as written: "3 - 1" stays 3 - 1
            return strip(expr)
    except Exception:  # a structure SymPy cannot rebuild: printed as it is
        return expr


@dataclass
class _Acc:
    """What `analyze_step` gathers over the pieces of one step."""

    ctx: Context
    claims: list[ClaimCheck] = field(default_factory=list)
    cues: set[str] = field(default_factory=set)
    defines: list[str] = field(default_factory=list)
    produces: list[str] = field(default_factory=list)
    mentions: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    depth: int = 0
    parsed: int = 0
    integer_division: bool = False
    solved: bool = False  # a stated value solved a pending equation: it is no longer pending
    # What the piece being checked holds: its cues, and whether its numbers are all rational.
    piece_cues: frozenset[str] = frozenset()
    piece_rational: bool = False
    #: the words before names mentioned in the prose since the last statement ("... a quadratic
    #: equation in \\( x \\) and \\( y \\):"), which lead to the next statement as well
    carried_lead: str = ""
    #: the words that led to the display equation just checked: a display right after it, with no
    #: words between, goes on with the same derivation ("Rearranging: \\[ A \\] \\[ B \\]")
    display_lead: str = ""


def analyze_step(text: str, ctx: Context) -> tuple[StepMath, Context]:
    """Parse and check one step (no time budget: run it through `run_bounded`)."""
    items = pieces(text)
    # A name the step states again ("-a = 112, so a = -112") is being worked out: its earlier
    # value does not hold inside this step.
    solved_for = {m.group(1) for m in SOLVED_FOR.finditer(text)}
    acc = _Acc(replace(ctx.forget(_restated_names(items) | solved_for), carry=None),
               integer_division=bool(QUOTIENT.search(text)))
    if items and ctx.carry is not None and ctx.carry[1] == items[0].notation and items[0].display and \
            STARTS_WITH_RELATION.match(items[0].text) and re.fullmatch(r"(?:.*:)?\s*", items[0].lead, re.S) and \
            not _ELSEWHERE.search(items[0].lead):
        # "\\[ = 2 \\times 9 \\]" at the start of a step goes on from the previous step's chain.
        items[0] = replace(items[0], text=f"{ctx.carry[0]} {items[0].text}", continued=False)
    spans: list[int] = []  # where each piece's claims start in acc.claims
    for piece in items:
        acc.piece_cues, acc.piece_rational = frozenset(), False
        before = (len(acc.claims), acc.ctx)
        spans.append(before[0])
        try:
            _piece(acc, piece)
            if UNIT_MARK.search(piece.text) and any(c.status == "invalid" for c in acc.claims[before[0]:]):
                _second_reading(acc, piece, before[0], before[1])
            if _PERCENT_CHANGE.search(piece.text) and any(c.status == "invalid" for c in acc.claims[before[0]:]):
                _percent_change_reading(acc, piece, before[0], before[1])
            if (_UNBASED_LATEX_LOG if piece.notation == "latex" else _UNBASED_PLAIN_LOG).search(piece.text) and \
                    any(c.status == "invalid" for c in acc.claims[before[0]:]):
                _common_log_reading(acc, piece, before[0], before[1])
            if any(c.status == "invalid" for c in acc.claims[before[0]:]) and _INVERSE.match(piece.text) and \
                    _MODULAR_WORDS.search(text):
                _modular_inverse(acc, piece, before[0], text)
            _settle(acc, piece, before[0], text)
        except Exception as exc:  # one odd snippet must not lose the step's other claims
            del acc.claims[before[0]:]
            acc.ctx = before[1]
            acc.notes.append(f"could not check {piece.text[:60]!r} ({type(exc).__name__})")
    taken_back = [m.start() for m in RETRACTION.finditer(text)]
    if taken_back:
        _retract(acc, items, spans, taken_back[-1])
    acc.claims.extend(replace(c, kind="whole-number") if c.status in ("valid", "invalid") else c
                      for c in remainder_claims(text) + divisor_claims(text))
    if acc.solved:
        acc.ctx = replace(acc.ctx, equations=())
    acc.ctx = replace(acc.ctx, carry=_carry(items))
    return StepMath("ok", tuple(acc.claims), acc.depth, tuple(sorted(acc.cues)), tuple(acc.defines),
                    tuple(acc.produces), tuple(sorted(acc.mentions)), tuple(dict.fromkeys(acc.notes)),
                    len(items), acc.parsed), acc.ctx


#: "997^{-1} = 4": in a step about remainders, the power -1 of a whole number is its inverse modulo n
_INVERSE = re.compile(r"^\s*(\d{1,12})\s*\^\s*\{?\s*-\s*1\s*\}?\s*(?:=|≡|\\equiv)\s*(\d{1,12})\s*"
                      r"(?:\\pmod\s*\{?\s*\d{1,12}\s*\}?|\(\s*mod\s+\d{1,12}\s*\))?\s*[.,]?\s*$")
_MODULAR_WORDS = re.compile(r"\bmod(?:ulo|ular)?\b|\\pmod|\\bmod|\\mod\b", re.I)
_MODULUS = re.compile(r"(?:\\pmod\s*\{?|\\bmod\s*\{?|\\mod\s*\{?|\bmod(?:ulo)?\s+\$?(?:\\\(\s*)?)\s*(\d{1,12})")


def _modular_inverse(acc: _Acc, piece: Piece, first: int, step: str) -> None:
    """Check ``a^{-1} = b`` as an inverse modulo the one modulus the step names (``4 · 997 ≡ 1``?),
    not as the fraction 1/a; undecided when the step names no modulus or several."""
    m = _INVERSE.match(piece.text)
    moduli = {int(x) for x in _MODULUS.findall(step)}
    if m is None or len(acc.claims) != first + 1:
        return
    a, b = int(m.group(1)), int(m.group(2))
    label = f"{a}^(-1) ≡ {b}"
    if len(moduli) != 1 or next(iter(moduli)) < 2:
        acc.claims[first] = ClaimCheck(label, "unverifiable", reason="a modular inverse, with no one modulus named")
        return
    n = next(iter(moduli))
    label += f" (mod {n})"
    if math.gcd(a, n) != 1:
        acc.claims[first] = ClaimCheck(label, "invalid", expected=f"no inverse ({a} and {n} share a factor)",
                                       method="modular inverse")
        return
    inverse = pow(a, -1, n)
    acc.claims[first] = ClaimCheck(label, "valid" if b % n == inverse else "invalid",
                                   expected="" if b % n == inverse else str(inverse), method="modular inverse")


def _settle(acc: _Acc, piece: Piece, first: int, step: str) -> None:
    """Each claim of the piece gets its kind and the reading choices it rests on; a claim found
    false on a reading the solution does not confirm (a guess) is left undecided."""
    found = guesses(piece.text, acc.ctx.reading, defined_names(acc.ctx), comma_split(step, piece.start, piece.end))
    labels = tuple(g.label() for g in found)
    open_guesses = [g for g in found if not g.confirmed]
    for k in range(first, len(acc.claims)):
        claim = acc.claims[k]
        if claim.status in ("valid", "invalid") and not claim.kind:
            claim = replace(claim, kind=claim_kind(claim.method, acc.piece_cues, acc.piece_rational))
        if claim.status == "invalid" and claim.expected and _DEGREE_MARK.search(piece.text):
            claim = replace(claim, expected=_in_degrees(claim.expected))
        bearing = [g.what for g in open_guesses if bears_on(g, claim.text)]
        if claim.status == "invalid" and bearing:
            claim = replace(claim, status="unverifiable", expected="", kind="",
                            reason="rests on a guess: " + "; ".join(bearing))
        acc.claims[k] = replace(claim, reading=labels) if labels else claim


_DEGREE_MARK = re.compile(r"°|\\circ")


def _in_degrees(expected: str) -> str:
    """An expected angle of a statement written in degrees, in degrees (``pi`` -> ``180°``); any
    other value as it is."""
    try:
        value = sympy.sympify(expected, rational=True)
    except (sympy.SympifyError, TypeError, ValueError, SyntaxError):
        return expected
    turns = value / sympy.pi
    if value.free_symbols or not turns.is_Rational or value == 0:
        return expected
    return f"{fmt(turns * 180)}°"


def _retract(acc: _Acc, items: list[Piece], starts: list[int], at: int) -> None:
    """Claims written before the solution takes them back ("Oops! ... incorrectly") are not
    its claims any more: a slip among them is left undecided."""
    cut = next((starts[k] for k, piece in enumerate(items) if piece.end > at), len(acc.claims))
    for k in range(cut):
        if acc.claims[k].status == "invalid":
            acc.claims[k] = replace(acc.claims[k], status="unverifiable", expected="",
                                    reason="the solution takes it back")


def _carry(items: list[Piece]) -> tuple[str, str] | None:
    """The last side of a chain that ends the step (only words of punctuation after it)."""
    if not items or not re.fullmatch(r"[\s.,;:$\\)\]]*", items[-1].tail):
        return None
    sides, ops = split_relations(items[-1].text, latex=items[-1].notation == "latex")
    if not ops or any(op != "=" for op in ops) or not sides[-1].strip():
        return None
    return sides[-1].strip().rstrip(".,;"), items[-1].notation


#: words before a step's opening "= ..." that point to an expression other than the one the
#: previous step ended on ("Substitute back into the expression:", "Using the first result:")
_ELSEWHERE = re.compile(r"\b(?:substitut\w*|plug\w*|back|using|from|recall\w*|original|given|earlier|other|"
                        r"another|first|second)\b", re.I)


#: a condition right after a function's formula: "f(x) = x^2 if x < 0 and 2x if x >= 0"
_CONDITION_AFTER = re.compile(r"\s*,?\s*(if|when|whenever|for)\b[^.;:]{0,60}?(?:[<>≤≥=]|\\[lg]e)", re.I)
_ANOTHER_CONDITION = re.compile(r"\b(?:if|when|for|otherwise)\b", re.I)


def _conditional(item: Piece) -> bool:
    """Whether the words after a function's formula make it one piece of a piecewise definition
    (or a formula that holds only under a condition), so it does not define the function: "if x <
    0", or "for x < 0" with another piece in the same sentence. "for x > 0" alone states a domain."""
    m = _CONDITION_AFTER.match(item.tail)
    if m is None:
        return False
    after = re.split(r"[.;]\s", item.tail[m.end():], maxsplit=1)[0]
    return m.group(1).lower() != "for" or bool(_ANOTHER_CONDITION.search(f"{item.opening} {after}"))


#: words right after a statement that say its right side was rounded
_ROUNDING_WORDS = re.compile(r"\b(?:round(?:ed|ing)?(?: (?:it |this )?(?:up|down|off))?|to the nearest)\b", re.I)


def _direction(words: str) -> Literal["up", "down", "nearest"]:
    low = words.lower()
    return "up" if low.endswith("up") else "down" if low.endswith("down") else "nearest"


def _restated_names(pieces: list[Piece]) -> set[str]:
    names = set()
    for piece in pieces:
        m = DEFINED_NAME.match(piece.text)
        if m:
            names.add(m.group(1).replace("{", "").replace("}", ""))
    return names


#: a percentage added to or taken from a number ("$50 - 20%"), as a calculator's % key reads it
_PERCENT_CHANGE = re.compile(r"(\d(?:[\d,]*\d)?(?:\.\d+)?)\s*([-+−])\s*(\d+(?:\.\d+)?)\s*\\?%")


def _percent_change_reading(acc: _Acc, piece: Piece, first: int, ctx: Context) -> None:
    """Read ``a - p%`` as a less p% of a ("$50 - 20% = $40"); a claim false as written and true so
    is left undecided: the notation is loose, the arithmetic may be right."""
    sign = {"+": "+", "-": "-", "−": "-"}
    text = _PERCENT_CHANGE.sub(lambda m: f"{m.group(1)}*(1 {sign[m.group(2)]} {m.group(3)}/100)", piece.text)
    for k, claim, _ in _holding_on(acc, replace(piece, text=text), first, ctx):
        acc.claims[k] = replace(claim, status="unverifiable", expected="",
                                reason="true only if a ± p% is read as a change of a by p%")


#: ``log`` with no base, in LaTeX and in plain text ("\\log 100", "log(100)", "log 100")
_UNBASED_LATEX_LOG = re.compile(r"\\log(?![_a-zA-Z])")
_UNBASED_PLAIN_LOG = re.compile(r"(?<![A-Za-z\\])log(?![_a-zA-Z])\s*(\(|\d+(?:\.\d+)?)")


def _common_log_reading(acc: _Acc, piece: Piece, first: int, ctx: Context) -> None:
    """Read ``log`` with no base by the other convention: the LaTeX grammar takes ``\\log`` as base
    10 and the plain reader as the natural logarithm, and both are in use ("\\log 100 = 2",
    "\\frac{d}{dx} \\log x = \\frac{1}{x}"). A claim false as read and true with the logarithm of
    the other base holds."""
    if piece.notation == "latex":
        readings = [(_UNBASED_LATEX_LOG.sub(r"\\log_{10}", piece.text), "log read as base 10"),
                    (_UNBASED_LATEX_LOG.sub(r"\\ln", piece.text), "log read as the natural logarithm")]
    else:
        readings = [(_UNBASED_PLAIN_LOG.sub(lambda m: "log_10(" if m.group(1) == "(" else f"log_10({m.group(1)})",
                                            piece.text), "log read as base 10")]
    for text, how in readings:
        for k, _, other in _holding_on(acc, replace(piece, text=text), first, ctx):
            acc.claims[k] = replace(other, method=f"{other.method}, {how}".lstrip(", "))


def _holding_on(acc: _Acc, piece: Piece, first: int, ctx: Context) -> list[tuple[int, ClaimCheck, ClaimCheck]]:
    """The claims of `acc` from `first` on that are invalid as read and valid when `piece` (the
    same statement, rewritten to another reading) is checked from `ctx` instead: (index, the claim
    as read, the claim on the other reading)."""
    alt = _Acc(ctx, integer_division=acc.integer_division)
    _piece(alt, piece)
    mine = acc.claims[first:]
    if len(alt.claims) != len(mine):
        return []
    return [(first + k, claim, other) for k, (claim, other) in enumerate(zip(mine, alt.claims, strict=True))
            if claim.status == "invalid" and other.status == "valid"]


def _second_reading(acc: _Acc, piece: Piece, first: int, ctx: Context) -> None:
    """Read a piece with ``%`` and ``°`` as units; a claim false in the first reading and true in
    this one is taken as true ("(2/4) x 100 = 50%", "2235° ÷ 360° = 6.2")."""
    alt = _Acc(replace(ctx, reading=ctx.reading.as_units()), integer_division=acc.integer_division)
    _piece(alt, piece)
    mine = acc.claims[first:]
    if len(alt.claims) != len(mine):
        return
    for k, (claim, other) in enumerate(zip(mine, alt.claims, strict=True)):
        if claim.status == "invalid" and other.status == "valid":
            acc.claims[first + k] = replace(other, method=f"{other.method}, % and ° as units".lstrip(", "))


def _piece(acc: _Acc, item: Piece) -> None:
    if acc.carried_lead:
        item = replace(item, lead=acc.carried_lead + item.lead)
        acc.carried_lead = ""
    piece, notation, continued = item.text, item.notation, item.continued
    if _modular(acc, item):
        return
    parsed = parse_math_unbounded(piece, notation, reading=acc.ctx.reading)  # type: ignore[arg-type]
    # Only the statement right before an equation can be what it rewrites.
    previous, acc.ctx = acc.ctx.last_equation, replace(acc.ctx, last_equation=None)
    if parsed.ok and not parsed.relations and isinstance(parsed.raw, sympy.Symbol) and not item.display:
        # "in \\( x \\) and \\( y \\)": a name the words mention, not a statement of its own
        acc.ctx = replace(acc.ctx, last_equation=previous)
        acc.carried_lead = f"{item.lead} {piece} "
    named = False
    if parsed.status == "unparseable":
        rest, parsed = _after_name(piece, notation, acc.ctx.reading)
        # The dropped left side was the part written in words: the rest starts complete.
        item, named, continued = replace(item, text=rest, continued=False), True, False
    if not parsed.ok:
        return
    acc.parsed += 1
    acc.depth = max(acc.depth, tree_depth(parsed.raw))
    piece_cues = _cues(parsed, piece)
    acc.cues |= piece_cues
    acc.piece_cues, acc.piece_rational = frozenset(piece_cues), rational_only(_raw_sides(parsed))
    raw_sides = _raw_sides(parsed)
    for side in raw_sides:
        acc.mentions |= _mentions(side, acc.ctx)
    if not parsed.relations:
        acc.notes.extend(_unreduced(parsed.raw))
        if piece.lstrip().startswith("(") and _point(parsed.value) and \
                all(getattr(v, "is_number", False) for v in parsed.value):
            acc.ctx = acc.ctx.with_point(tuple(parsed.value))
        return
    acc.notes.extend(_unreduced(raw_sides[-1]))
    sides = parsed.sides
    first_claim = len(acc.claims)
    start = 0
    # "d = 20% of 50": the words carry the last side on, so it names no value
    if parsed.relations[0] == "=" and not continued and not (item.open_end and len(parsed.relations) == 1) \
            and not (isinstance(raw_sides[0], AppliedUndef) and _conditional(item)):
        # "w = z + 1 != 0": the name takes the chain's result only when every link is "=".
        whole_chain = len(sides) > 2 and all(op == "=" for op in parsed.relations) and not item.open_end
        restated = _restated_value(acc, item, sides[0], raw_sides[1], f"{_key(raw_sides[0])} = {_key(raw_sides[1])}")
        new_ctx = definition_of(sides[0], sides[-1] if whole_chain else sides[1], acc.ctx)
        # "y - 1 = 3(x - 1), i.e. y = 3x - 2": words that say the equation is the one before it
        # in another form make the definition a rewriting of it, checked as one
        rewritten = _defined_as_rewrite(previous, item, sides, f"{_key(raw_sides[0])} = {_key(raw_sides[1])}") \
            if new_ctx is not None and len(parsed.relations) == 1 else None
        if rewritten is not None and rewritten.status == "invalid":
            acc.claims.append(rewritten)
            start = 1
            new_ctx = None
        if new_ctx is not None:
            name = _defined_name(sides[0])
            acc.claims.append(restated or rewritten or
                              ClaimCheck(f"{_key(raw_sides[0])} = {_shown_side(item, raw_sides, 1)}", "definition"))
            # After a root was found, a value stated later in the step (not in the same list of
            # roots: "x = 4 or x = 8") recalls an earlier result ("we accept x = 1").
            recalled = acc.solved and len(item.lead.split()) > 3
            solved = None if item.supposed or recalled or not isinstance(sides[0], sympy.Symbol) else \
                solves_pending(name, acc.ctx, sides[-1] if whole_chain else sides[1],
                               f"{_key(raw_sides[0])} = {_key(raw_sides[-1])}")
            if solved is not None:
                acc.claims.append(solved)
                acc.cues.add("solved")
                acc.solved = acc.solved or solved.status == "valid"
            acc.defines.append(name)
            if not (item.hypothetical and isinstance(sides[0], sympy.Symbol)):
                acc.ctx = new_ctx
            start = 1
    chain_identity = start == 1 or named
    # "x^4 = 3x^3 - ..." derives a power from a relation: a chain of forms starts with a sum.
    forms = start == 0 and len(sides) >= 3 and _same_unknowns(raw_sides) and not _lone_power(raw_sides[0])
    # "f(x) = A = B" for an f defined before: A and B are forms of one value, whether or not the
    # first link holds everywhere (on one case of a piecewise f it does not); a name the call
    # hides (a parameter p of f) appears only on the forms.
    call_forms = start == 0 and len(sides) >= 3 and isinstance(raw_sides[0], AppliedUndef) and \
        all(op == "=" for op in parsed.relations) and _same_unknowns(raw_sides[1:])
    # "x^3 + y^3 >= 2√(x^3 y^3) = 2(xy)^{3/2}": in a chain of bounds, "=" rewrites the bound.
    bounds = any(op in ("<", "<=", ">", ">=") for op in parsed.relations)
    units = link_units(item, len(parsed.relations))
    for i in range(start, len(parsed.relations)):
        op = parsed.relations[i]
        label = f"{_key(raw_sides[i])} {op} {_key(raw_sides[i + 1])}"
        if continued and i == 0:
            acc.claims.append(ClaimCheck(label, "unverifiable", reason="its left side continues in words"))
            continue
        if item.open_end and i == len(parsed.relations) - 1:
            acc.claims.append(ClaimCheck(label, "unverifiable", reason="its right side continues in words"))
            continue
        if units[i]:
            if units[i] == WORDED:  # show the words the parsed sides have lost
                label = f"{_shown_side(item, raw_sides, i)} {op} {_shown_side(item, raw_sides, i + 1)}"
            acc.claims.append(ClaimCheck(label, "unverifiable", reason=units[i]))
            chain_identity = False
            continue
        if i == 0 and raw_sides[0].is_Atom and raw_sides[0].free_symbols and raw_sides[1].has(raw_sides[0]):
            acc.claims.append(ClaimCheck(label, "unverifiable", reason="an update of the name (i = i + 1)"))
            continue
        info = PairInfo(op, i, chain_identity, acc.integer_division, carried_error(raw_sides[i]),
                        bool(REWRITE_WORDS.search(item.lead)),
                        (i == 0 and forms) or (i > 0 and call_forms) or (bounds and op == "="),
                        item.supposed or bool(_ALTERNATIVE.search(item.lead)))
        verdict = (op == "=" and implicit_derivative(sides[i], sides[i + 1], acc.ctx, label)) or \
            check_relation(sides[i], sides[i + 1], acc.ctx, info, label)
        if verdict.status == "invalid" and op == "=" and i < len(parsed.relations) - 1 and \
                _running_total(item, i, sides[i]):
            # "20 + 5 = 25 + 10 = 35": a running total written as one chain, each step right
            verdict = ClaimCheck(label, "unverifiable", reason="a running total written as one chain")
        rounding = _ROUNDING_WORDS.search(item.tail[:48])
        if verdict.status == "invalid" and op == "=" and i == len(parsed.relations) - 1 and rounding and \
                rounds_to(sides[i], sides[i + 1], _direction(rounding.group())):
            # "150/20 = 8 buses (rounded up)": the words say the right side is the value rounded
            verdict = ClaimCheck(label, "valid", method="rounded, as the words after it say")
        is_equation = verdict.reason == EQUATION_REASON
        if is_equation and i == start and previous is not None:
            verdict = _as_rewrite(acc, previous, item, (sides[i], sides[i + 1]), label) or verdict
        elif verdict.status == "invalid" and i == start and previous is not None and \
                _restates(acc, previous, (sides[i], sides[i + 1])):
            # "We can rewrite this equation as 1/(z+w) = (z+w)/(zw)": not an identity, but the
            # equation just stated, written another way; "4a = 4(a - 3) ⇒ 0 = -12" finds that the
            # equation has no solution.
            if parsed.sides[i].free_symbols or parsed.sides[i + 1].free_symbols:
                verdict = ClaimCheck(label, "valid", method="an equivalent form of the previous equation")
                is_equation = True
            else:
                verdict = ClaimCheck(label, "unverifiable", reason="the equation before it holds for no value")
        if verdict.status in ("valid", "invalid") and not verdict.kind and \
                _numbers_only(raw_sides[i], raw_sides[i + 1]):
            # "2(-1)(4) = -8" inside "f_x(-1, 4) = 2(-1)(4) = -8": arithmetic, whatever else the piece holds
            cues = acc.piece_cues - _CALCULUS_CUES
            verdict = replace(verdict, kind=claim_kind(verdict.method, cues, rational_only(raw_sides[i:i + 2])))
        acc.claims.append(verdict)
        if i == start:
            chain_identity = verdict.status == "valid" or chain_identity
        elif verdict.status != "valid":
            chain_identity = False
        if is_equation:
            chain_identity = False
            acc.ctx = acc.ctx.with_equation(sides[i], sides[i + 1])
            if i == start:
                acc.display_lead = (item.lead if item.lead.strip(" ,.:;") else acc.display_lead) if item.display else ""
            if i == start and _ALTERNATIVE_LEAD.search(item.lead):
                # "x - 4 = 1 or x - 4 = 11": the next equation is not a rewriting of this one.
                acc.ctx = replace(acc.ctx, last_equation=None)
    if item.disowned:  # "..., which is not true": the solution tests the claim and rejects it
        for k in range(first_claim, len(acc.claims)):
            if acc.claims[k].status == "invalid":
                acc.claims[k] = replace(acc.claims[k], status="unverifiable", expected="",
                                        reason="the solution says it does not hold")
    if start == 1 and len(sides) > 2 and all(op == "=" for op in parsed.relations) and not item.hypothetical:
        # The name keeps the chain's result, unless a link of the chain is a slip. Then its value
        # is in doubt: a later step may go on from the slipped result (as model solutions do) or
        # from the right one, so a value takes no value at all (nothing later is flagged for
        # using either), and a function keeps what it was defined as.
        slipped = any(c.status == "invalid" for c in acc.claims[first_claim:])
        name = _defined_name(sides[0])
        if slipped and name in acc.ctx.values:
            acc.ctx = acc.ctx.forget({name})
        else:
            acc.ctx = definition_of(sides[0], sides[1] if slipped else sides[-1], acc.ctx) or acc.ctx
    last, _ = substitute(sides[-1], acc.ctx)
    acc.produces.append(_key(last))


def _modular(acc: _Acc, item: Piece) -> bool:
    """Check a congruence (``56 ≡ 6 (mod 17)``) or a chain with ``A mod N`` sides; False when
    the piece is neither."""
    def read(text: str) -> sympy.Basic | None:
        got = parse_math_unbounded(text, item.notation, reading=acc.ctx.reading)  # type: ignore[arg-type]
        return got.value if got.ok and not got.relations else None

    latex = item.notation == "latex"
    found = congruence(item.text)
    if found is not None:
        claims = check_congruence(*found, latex, read)
    elif has_mod_operator(item.text):
        claims = check_mod_chain(item.text, latex, read)
    else:
        return False
    if item.disowned or item.continued:
        claims = [replace(c, status="unverifiable", expected="", reason="the solution says it does not hold")
                  if c.status == "invalid" else c for c in claims]
    acc.claims.extend(claims)
    acc.ctx = replace(acc.ctx, last_equation=None)
    return True


#: a left side that is a name in words ("\\text{Number of cylinders}", "Total cost")
_WORDS = re.compile(r"\s*(?:\\(?:text|mathrm|textbf|mbox)\s*\{[^{}]*\}|[A-Za-z][A-Za-z ]{2,})\s*")


def _after_name(piece: str, notation: str, reading: Reading) -> tuple[str, Parsed]:
    """``Total\\ Sum = 24 \\times 24 = 576``: a chain whose left side does not parse (a name in
    words) read from its second side on, where it states forms of one value. With a single ``=``
    the right side is read alone, for what it mentions."""
    sides, ops = split_relations(piece, latex=notation == "latex")
    if ops == ["="] and (not sides[0].strip() or _WORDS.fullmatch(sides[0])):  # the words may be in the lead
        # "\text{Number of cylinders} = \frac{V_s}{V_c}": no claim, but what the value is made of
        parsed = parse_math_unbounded(sides[1], notation, reading=reading)  # type: ignore[arg-type]
        return (sides[1], parsed) if parsed.ok and not parsed.relations else (piece, Parsed("unparseable"))
    if len(ops) < 2 or any(op != "=" for op in ops):
        return piece, Parsed("unparseable")
    for k in range(1, min(3, len(ops))):
        rest = " = ".join(sides[k:])
        parsed = parse_math_unbounded(rest, notation, reading=reading)  # type: ignore[arg-type]
        if parsed.ok:
            return rest, parsed
    return piece, Parsed("unparseable")


#: words that say a value is written another way, never changed ("combining the counts", "the
#: total becomes", "expanding the garden", "rearranging the chairs" may give a name a new value)
_SAME_VALUE = re.compile(r"simplif|rewrit|factori[sz]|factoring|like terms", re.I)


def _restated_value(acc: _Acc, item: Piece, name: sympy.Basic, value: sympy.Basic, label: str) -> ClaimCheck | None:
    """``t = 4·7 + 3. Simplifying, t = 33``: a name this step gave a value, given another after
    words that announce a rewriting, claims the two are equal (None when it is not such a
    restatement)."""
    # a name given two values already ("n = √4 or n = -√4") has no one value to write again
    if not (isinstance(name, sympy.Symbol) and acc.defines.count(name.name) == 1 and _SAME_VALUE.search(item.lead)) \
            or value.has(name):
        return None
    before = acc.ctx.values.get(name.name)
    after = substitute(value, acc.ctx)[0] if value.free_symbols else value
    if before is None or isinstance(before, PlusMinus) or isinstance(after, PlusMinus) or \
            not isinstance(before, sympy.Expr) or not isinstance(after, sympy.Expr):
        return None
    return check_relation(before, after, acc.ctx, PairInfo("=", 1, True), label)


#: words that say an equation is the previous one written another way
_RESTATING = re.compile(r"\bi\.e\.|\bthat is\b|\bequivalently\b|\bin other words\b|\bsimplif|\brearrang|"
                        r"\bsolving for\b|\bisolat", re.I)


def _defined_as_rewrite(previous: sympy.Basic | None, item: Piece, sides: tuple[sympy.Basic, ...],
                        label: str) -> ClaimCheck | None:
    """`name = value` checked as a rewriting of the equation right before it, when the words
    before it say it is one and both hold the same unknowns; None otherwise (a definition)."""
    if previous is None or not _RESTATING.search(item.lead):
        return None
    left, right = sides[0], sides[1]
    if not previous.free_symbols or (left.free_symbols | right.free_symbols) != previous.free_symbols:
        return None
    return rewrite_check(previous, left, right, item.lead, label, restating=True)


def _as_rewrite(acc: _Acc, previous: sympy.Basic, item: Piece, sides: tuple[sympy.Basic, sympy.Basic],
                label: str) -> ClaimCheck | None:
    """The equation checked as a rewriting of the equation stated right before it (in this step
    or at the end of the previous one), unless the step has just given its unknown a value
    ("for n = 5: n(n+1) = 30")."""
    if {getattr(s, "name", "") for s in previous.free_symbols} & set(acc.defines):
        return None
    if not item.lead.strip(" ,.:;") and not item.display:
        return None  # "$x - 3 = 0,$ $x - 7 = 0,$" in running text: a list, not a derivation
    left, _ = substitute(sides[0], acc.ctx)
    right, _ = substitute(sides[1], acc.ctx)
    several = item.notation == "latex"
    verdict = rewrite_check(previous, left, right, item.lead, label, several=several)
    if verdict is None and item.display and not item.lead.strip(" ,.:;") and continues_derivation(acc.display_lead):
        # no words of its own: the words that led to the display before it lead to this one too
        verdict = rewrite_check(previous, left, right, acc.display_lead, label, several=several)
    return verdict


# "... or 1/x = -1/(5 - x)": one of several cases, which may have no solution.
_ALTERNATIVE = re.compile(r"\bor\b")
# An equation listed after another ("x = 1 or x - 4 = 11", "and"): one of a list.
_ALTERNATIVE_LEAD = re.compile(r"\b(?:or|and)\b[\s{}:,]*$", re.I)


def _restates(acc: _Acc, previous: sympy.Basic, sides: tuple[sympy.Basic, sympy.Basic]) -> bool:
    """True when the relation is the previous equation written another way."""
    try:
        left, _ = substitute(sides[0], acc.ctx)
        right, _ = substitute(sides[1], acc.ctx)
        return equivalent_form(previous, left, right)
    except Exception:
        return False


def _point(value: sympy.Basic) -> bool:
    """A point or vector written as a tuple (not the two values of a ± expression)."""
    return isinstance(value, sympy.Tuple) and not isinstance(value, PlusMinus)


def _lone_power(side: sympy.Basic) -> bool:
    return side.is_Atom or (isinstance(side, sympy.Pow) and side.base.is_Atom) or isinstance(side, AppliedUndef)


def _same_unknowns(sides: tuple[sympy.Basic, ...]) -> bool:
    """True when every side is an expression in the same (non-empty) unknowns, as written."""
    if not all(isinstance(side, sympy.Expr) for side in sides):
        return False
    names = {frozenset(side.free_symbols) for side in sides}
    return len(names) == 1 and bool(next(iter(names)))


def _raw_sides(parsed: Parsed) -> tuple[sympy.Basic, ...]:
    return parsed.raw_sides or (parsed.raw,)


def _defined_name(lhs: sympy.Basic) -> str:
    if isinstance(lhs, AppliedUndef):
        return lhs.func.__name__
    return getattr(lhs, "name", _key(lhs))


def _mentions(side: sympy.Basic, ctx: Context) -> set[str]:
    """Names, numbers and whole expressions a side uses (what a later step can depend on)."""
    out = {getattr(s, "name", "") for s in side.free_symbols}
    out |= {a.func.__name__ for a in side.atoms(AppliedUndef)}
    for r in side.atoms(sympy.Rational):
        out.add(_key(r))
        out.add(_key(-r))
    try:
        value, _ = substitute(side, ctx)
        out.add(_key(value))
    except Exception:
        pass
    out.add(_key(side))
    out |= _named_parts(side)
    out.discard("")
    return out


#: sub-expressions of one side recorded as mentions (a bound on what one side adds)
_MAX_NAMED_PARTS = 16


def _named_parts(side: sympy.Basic) -> set[str]:
    """Results used by name inside a larger expression: ``|v|`` in ``v/|v|``, ``f(-1, 4)``,
    ``f'(2)``, ``∇f(-1, 4)`` (a function of a name, or a named function at its arguments)."""
    out: set[str] = set()
    for node in sympy.preorder_traversal(side):
        if len(out) >= _MAX_NAMED_PARTS:
            break
        if node is side or not node.args:
            continue
        if isinstance(node, AppliedUndef | sympy.Subs | sympy.Derivative) or \
                (isinstance(node, sympy.Function) and node.free_symbols and
                 all(a.is_Atom for a in node.args)):
            out.add(_key(node))
    return out


# "Find all n such that f(n) = n": a condition the question asks about, not a definition.
_CONDITION = re.compile(r"\b(?:find|solve|determine|how many|all)\b[^.;:]{0,60}\b(?:such that|for which|so that|"
                        r"satisfying|whenever)\s*[$\\(]*\s*$", re.I)


def context_from_question(question: str | None, reading: Reading = DEFAULT_READING) -> Context:
    """Definitions stated in a question (``f(x, y) = x^2 y``, ``a = 3``), without a budget."""
    ctx = Context(reading=reading)
    if not question:
        return ctx
    for item in pieces(question):
        piece = item.text
        parsed = parse_math_unbounded(piece, item.notation, reading=ctx.reading)  # type: ignore[arg-type]
        if parsed.ok and parsed.relations[:1] == ("=",) and len(parsed.sides) == 2 and \
                not _CONDITION.search(question[max(0, item.start - 80):item.start]) and \
                not item.continued and not item.open_end and \
                not (isinstance(parsed.sides[0], AppliedUndef) and _conditional(item)):
            ctx = definition_of(parsed.sides[0], parsed.sides[1], ctx) or ctx
        elif parsed.ok and not parsed.relations and piece.lstrip().startswith("(") and \
                _point(parsed.value) and all(getattr(v, "is_number", False) for v in parsed.value):
            ctx = ctx.with_point(tuple(parsed.value))
    return given(ctx)


def step_in_worker(text: str, ctx_data: bytes | None, reading: Reading, advance: int,
                   skipped: bool = False) -> tuple[StepMath, bytes]:
    """`analyze_step` on one step, the context kept as pickled bytes: the caller passes it from
    step to step without unpickling it, so it never needs SymPy itself (`checker.verify_steps`).
    `advance`: steps since the context was last used (0 for the first step); `skipped`: the caller
    left out steps with nothing to check in between (a chain does not go on across them)."""
    ctx = pickle.loads(ctx_data) if ctx_data is not None else Context(reading=reading)
    for _ in range(advance):
        ctx = ctx.next_step()
    if skipped:
        ctx = replace(ctx, carry=None)
    step, ctx = analyze_step(text, ctx)
    return step, pickle.dumps(ctx, protocol=pickle.HIGHEST_PROTOCOL)


def question_in_worker(question: str, reading: Reading) -> bytes:
    """`context_from_question` with the context returned as pickled bytes."""
    return pickle.dumps(context_from_question(question, reading), protocol=pickle.HIGHEST_PROTOCOL)


def verify_steps(step_texts: list[str], question: str | None = None,
                 config: VerifyConfig | None = None) -> list[StepMath]:
    """Check each step of a solution in order (see `checker.verify_steps`)."""
    from mathlens.analyze.verify.checker import verify_steps as run

    return run(step_texts, question, config)
