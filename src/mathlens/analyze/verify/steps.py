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

import re
import time
from dataclasses import dataclass, field
from typing import Literal

import sympy
from sympy.core.function import AppliedUndef

from mathlens.analyze.verify.budget import run_bounded
from mathlens.analyze.verify.claims import EQUATION_REASON, ClaimCheck, PairInfo, check_relation, solves_pending
from mathlens.analyze.verify.context import Context, definition_of, substitute
from mathlens.analyze.verify.extract import extract_math
from mathlens.analyze.verify.limits import tree_depth
from mathlens.analyze.verify.parse import Parsed, parse_math_unbounded
from mathlens.analyze.verify.text import split_top_level

StepStatus = Literal["ok", "timeout", "error", "skipped"]

STEP_TIMEOUT_S = 2.0
SOLUTION_BUDGET_S = 10.0
MAX_SPANS_PER_STEP = 40
#: Math snippets checked in one solution; later steps are `skipped` (a worked answer has < 100).
MAX_SPANS_PER_SOLUTION = 300
# A claim whose side is continued in words ("20% of 50 = 10" gives the span "50 = 10").
_BINDING_WORD = re.compile(r"\b(of|times|plus|minus|by|per|over|into|than|multiplied|divided)\s*$", re.I)


# A relation in a piece of a step; "<" and ">" only count with spaces (else they delimit a vector).
_RELATION = re.compile(r"=|≤|≥|≈|\s<\s|\s>\s|\\le|\\ge|\\ne|\\approx")


_LATEX_VECTOR = re.compile(r"\\langle.*?\\rangle")
_ANGLE_VECTOR = re.compile(r"(?:(?<=^)|(?<=[=(,\s]))<[^<>=;]*,[^<>=;]*>")


@dataclass(frozen=True)
class StepMath:
    """The symbolic reading of one step."""

    status: StepStatus = "ok"
    claims: tuple[ClaimCheck, ...] = ()
    depth: int = 0
    cues: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    spans: int = 0
    parsed: int = 0
    error: str = ""
    elapsed_s: float = 0.0

    @property
    def verdict(self) -> Literal["valid", "invalid", "unverifiable", "none"]:
        """``invalid`` if any claim is, ``valid`` if some are and none is invalid, ``none`` when
        the step states nothing checkable."""
        statuses = {c.status for c in self.claims}
        if "invalid" in statuses:
            return "invalid"
        if "valid" in statuses:
            return "valid"
        if "unverifiable" in statuses or self.status != "ok":
            return "unverifiable"
        return "none"


@dataclass(frozen=True)
class VerifyConfig:
    """Time budgets for `verify_steps`."""

    step_timeout_s: float = STEP_TIMEOUT_S
    solution_budget_s: float = SOLUTION_BUDGET_S
    max_spans: int = MAX_SPANS_PER_SOLUTION


@dataclass(frozen=True)
class _Work:
    pieces: list[tuple[str, str, bool]] = field(default_factory=list)  # text, notation, continued


def _pieces(text: str) -> list[tuple[str, str, bool]]:
    """Math snippets of a step, split into single statements: top-level commas, ``\\\\`` rows and
    ``\\quad`` gaps separate claims (``f_x = 2xy, f_y = x^2``)."""
    out: list[tuple[str, str, bool]] = []
    for span in extract_math(text)[:MAX_SPANS_PER_STEP]:
        # Only a left side that starts with a number can be the tail of a worded expression.
        continued = bool(_BINDING_WORD.search(text[max(0, span.start - 20):span.start])) and \
            bool(re.match(r"\s*[-(]?\s*\d", span.text))
        body = span.text.replace("&", " ")
        if span.notation == "latex":
            body = re.sub(r"\\[,;:!]", " ", body)  # thin spaces: "\," is not a separating comma
        rows = re.split(r"\\\\|\\q?quad|\\text\{\s*(?:and|or|so|then)\s*\}|;", body) if span.notation == "latex" \
            else [body]
        for row in rows:
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
                if part.strip():
                    out.append((part.strip(), span.notation, continued))
                    continued = False
    return out


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
    if any(n.startswith("nabla_") for n in names):
        cues.update({"partial", "vector"})
    for cls, cue in ((sympy.Integral, "integral"), (sympy.Limit, "limit"), (sympy.Sum, "sum")):
        if raw.has(cls):
            cues.add(cue)
    if any(isinstance(side, sympy.Tuple | sympy.MatrixBase) for side in parsed.sides or (raw,)):
        cues.add("vector")
    if any(a.args and all(x.is_number for x in a.args) for a in raw.atoms(AppliedUndef)):
        cues.add("substitution")
    if parsed.relations and any(op in ("<", "<=", ">", ">=") for op in parsed.relations):
        cues.add("inequality")
    if parsed.relations and all(getattr(s, "is_number", False) for s in parsed.sides):
        cues.add("arithmetic")
    return cues


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


def _key(expr: sympy.Basic) -> str:
    return sympy.sstr(expr)


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


def analyze_step(text: str, ctx: Context) -> tuple[StepMath, Context]:
    """Parse and check one step (no time budget: run it through `run_bounded`)."""
    acc = _Acc(ctx)
    pieces = _pieces(text)
    for piece, notation, continued in pieces:
        before = (len(acc.claims), acc.ctx)
        try:
            _piece(acc, piece, notation, continued)
        except Exception as exc:  # one odd snippet must not lose the step's other claims
            del acc.claims[before[0]:]
            acc.ctx = before[1]
            acc.notes.append(f"could not check {piece[:60]!r} ({type(exc).__name__})")
    return StepMath("ok", tuple(acc.claims), acc.depth, tuple(sorted(acc.cues)), tuple(acc.defines),
                    tuple(acc.produces), tuple(sorted(acc.mentions)), tuple(dict.fromkeys(acc.notes)),
                    len(pieces), acc.parsed), acc.ctx


def _piece(acc: _Acc, piece: str, notation: str, continued: bool) -> None:
    parsed = parse_math_unbounded(piece, notation)  # type: ignore[arg-type]
    if not parsed.ok:
        return
    acc.parsed += 1
    acc.depth = max(acc.depth, tree_depth(parsed.raw))
    acc.cues |= _cues(parsed, piece)
    raw_sides = _raw_sides(parsed)
    for side in raw_sides:
        acc.mentions |= _mentions(side, acc.ctx)
    if not parsed.relations:
        acc.notes.extend(_unreduced(parsed.raw))
        if piece.lstrip().startswith("(") and isinstance(parsed.value, sympy.Tuple) and \
                all(getattr(v, "is_number", False) for v in parsed.value):
            acc.ctx = acc.ctx.with_point(tuple(parsed.value))
        return
    acc.notes.extend(_unreduced(raw_sides[-1]))
    sides = parsed.sides
    start = 0
    if parsed.relations[0] == "=" and not continued:
        new_ctx = definition_of(sides[0], sides[-1] if len(sides) > 2 else sides[1], acc.ctx)
        if new_ctx is not None:
            name = _defined_name(sides[0])
            acc.claims.append(ClaimCheck(f"{_key(raw_sides[0])} = {_key(raw_sides[1])}", "definition"))
            solved = solves_pending(name, acc.ctx, new_ctx, f"{_key(raw_sides[0])} = {_key(raw_sides[-1])}")
            if solved is not None:
                acc.claims.append(solved)
                acc.cues.add("solved")
            acc.defines.append(name)
            acc.ctx = new_ctx
            start = 1
    chain_identity = start == 1
    for i in range(start, len(parsed.relations)):
        op = parsed.relations[i]
        label = f"{_key(raw_sides[i])} {op} {_key(raw_sides[i + 1])}"
        if continued and i == 0:
            acc.claims.append(ClaimCheck(label, "unverifiable", reason="its left side continues in words"))
            continue
        verdict = check_relation(sides[i], sides[i + 1], acc.ctx, PairInfo(op, i, chain_identity), label)
        acc.claims.append(verdict)
        if i == start:
            chain_identity = verdict.status == "valid" or chain_identity
        elif verdict.status != "valid":
            chain_identity = False
        if verdict.reason == EQUATION_REASON:
            chain_identity = False
            acc.ctx = acc.ctx.with_equation(sides[i], sides[i + 1])
    if start == 1 and len(sides) > 2:
        acc.ctx = definition_of(sides[0], sides[-1], acc.ctx) or acc.ctx  # the name keeps the chain's result
    last, _ = substitute(sides[-1], acc.ctx)
    acc.produces.append(_key(last))


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
    out.discard("")
    return out


def _analyze_step_bytes(text: str, ctx: Context) -> tuple[StepMath, Context]:
    return analyze_step(text, ctx)


def context_from_question(question: str | None) -> Context:
    """Definitions stated in a question (``f(x, y) = x^2 y``, ``a = 3``), without a budget."""
    ctx = Context()
    if not question:
        return ctx
    for piece, notation, _ in _pieces(question):
        parsed = parse_math_unbounded(piece, notation)  # type: ignore[arg-type]
        if parsed.ok and parsed.relations[:1] == ("=",) and len(parsed.sides) == 2:
            ctx = definition_of(parsed.sides[0], parsed.sides[1], ctx) or ctx
        elif parsed.ok and not parsed.relations and piece.lstrip().startswith("(") and \
                isinstance(parsed.value, sympy.Tuple) and all(getattr(v, "is_number", False) for v in parsed.value):
            ctx = ctx.with_point(tuple(parsed.value))
    return ctx


def verify_steps(step_texts: list[str], question: str | None = None,
                 config: VerifyConfig | None = None) -> list[StepMath]:
    """Check each step of a solution in order, each under `config.step_timeout_s`."""
    config = config or VerifyConfig()
    started = time.perf_counter()
    ctx = Context()
    if question:
        got = run_bounded(context_from_question, question, timeout_s=config.step_timeout_s)
        if got.status == "ok":
            ctx = got.value
    results: list[StepMath] = []
    spans = 0
    for text in step_texts:
        if time.perf_counter() - started > config.solution_budget_s:
            results.append(StepMath("skipped", error="the solution's time budget was spent"))
            continue
        if spans >= config.max_spans:
            results.append(StepMath("skipped", error=f"the solution's limit of {config.max_spans} math "
                                                     "snippets was reached"))
            continue
        got = run_bounded(_analyze_step_bytes, text, ctx, timeout_s=config.step_timeout_s)
        if got.status == "ok":
            step, ctx = got.value
            spans += step.spans
            results.append(_with_elapsed(step, got.elapsed_s))
        else:
            status: StepStatus = "timeout" if got.status == "timeout" else "error"
            results.append(StepMath(status, error=got.error, elapsed_s=got.elapsed_s))
    return results


def _with_elapsed(step: StepMath, elapsed: float) -> StepMath:
    from dataclasses import replace

    return replace(step, elapsed_s=elapsed)
