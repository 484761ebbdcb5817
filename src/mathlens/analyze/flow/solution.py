"""``analyze_solution``: segmentation, labels, verification, graph and metrics for one text."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from mathlens.analyze.flow.annotate import LEVEL_VALUE, complexity_level, label, load_lexicon
from mathlens.analyze.flow.graph import (
    StepFacts,
    answer_step,
    build_graph,
    equation_unknowns,
    final_step,
    final_steps,
    question_parts,
    redundant_steps,
)
from mathlens.analyze.flow.models import (
    DEFAULT_DEPTH,
    ClaimReport,
    DepthDefinition,
    FlowCap,
    FlowMetrics,
    FlowResult,
    GraphEdge,
    StepReport,
)
from mathlens.analyze.flow.segment import MAX_STEP_CHARS, UNREAD_SENTENCE, Step, segment_steps
from mathlens.analyze.verify.checker import verify_steps
from mathlens.analyze.verify.results import ClaimCheck, Confidence, StepMath, VerifyConfig, confidence

MAX_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class FlowConfig:
    """Options for `analyze_solution`."""

    verify: VerifyConfig = field(default_factory=VerifyConfig)
    max_step_chars: int = MAX_STEP_CHARS
    max_text_chars: int = MAX_TEXT_CHARS
    #: what d̄ of the complexity score is measured in (see `models.DepthDefinition`)
    depth: DepthDefinition = DEFAULT_DEPTH


#: a token of a step: a LaTeX command, a word, a number, or any other symbol except LaTeX grouping
#: braces and math delimiters (markup rather than content)
_TOKEN = re.compile(r"\\[A-Za-z]+|[^\W\d_]+|\d+(?:\.\d+)?|[^\s\w{}$]")


def step_tokens(text: str) -> int:
    """Tokens of a step for the ``tokens`` depth.

    >>> step_tokens(r"Compute $\\nabla f = \\langle -8, 1 \\rangle$."), step_tokens("f_x = 2xy")
    (11, 5)
    """
    return len(_TOKEN.findall(text))


def complexity_score(unique_operations: int, unique_concepts: int, mean_depth: float | None) -> float:
    """The seed's C = 0.5|O| + 0.3|K| + 0.2·d̄ (d̄ = 0 when it is missing: no step, or with the
    ``tree`` depth no step with parsed math)."""
    return round(0.5 * unique_operations + 0.3 * unique_concepts + 0.2 * (mean_depth or 0.0), 4)


def analyze_solution(text: str, question: str | None = None, config: FlowConfig | None = None, *,
                     cut: bool = False) -> FlowResult:
    """The full reasoning-flow analysis of one solution (never raises on odd input).

    Text beyond `max_text_chars` is not analysed (a note on the last step says so). Every bound
    that cut the analysis short is listed in `FlowResult.capped` (`caps_hit`). With `cut` (the
    token cap cut the text), the line the text stops in is unfinished ("\\[ 2.24 = 0."): its
    statements are not checked, and a note on its step says so.
    """
    config = config or FlowConfig()
    started = time.perf_counter()
    lexicon = load_lexicon()
    clipped = text[: config.max_text_chars] if text else ""
    steps = segment_steps(clipped, config.max_step_chars)
    # The solution's budget covers segmentation and every later check, not the step checks alone.
    # A piece of an over-long sentence is no statement: its math is not checked (hostile or
    # garbled text, such as 20,000 nested brackets on one line, costs nothing there).
    checked = ["" if s.cut else s.text for s in steps]
    unfinished = cut and bool(steps) and not clipped.endswith("\n") and len(clipped) == len(text)
    if unfinished:
        checked[-1] = checked[-1][: max(checked[-1].rfind("\n"), 0)]
    maths = verify_steps(checked, question, _left(config, started)) if steps else []
    reports: list[StepReport] = []
    facts: list[StepFacts] = []
    for step, math in zip(steps, maths, strict=True):
        cues = set(math.cues)
        operations, concepts = label(step.text, cues, lexicon)
        reports.append(StepReport(
            index=step.index, label=step.label, text=step.text, start=step.start, end=step.end,
            operations=operations, concepts=concepts, depth=math.depth, tokens=step_tokens(step.text),
            complexity=complexity_level(math.depth, operations, concepts, cues), verdict=math.verdict,
            claims=[_claim_report(c) for c in math.claims], confidence=step_confidence(math.claims),
            notes=[*math.notes, *([step.note] if step.note else []),
                   *([_UNREAD.format(UNREAD_SENTENCE * config.max_step_chars)] if step.cut else []),
                   *([UNFINISHED] if unfinished and step.index == steps[-1].index else [])],
            check_status=math.status,
            check_error=math.error))
        facts.append(StepFacts(step.text, math.defines, math.produces, math.mentions, math.parsed > 0, step.label,
                               tuple(c.text for c in math.claims),
                               equation_unknowns(c.text for c in math.claims if c.is_equation)))
    if text and len(text) > config.max_text_chars and reports:
        reports[-1].notes.append(f"text after {config.max_text_chars} characters was not analysed")
    facts = _with_part_answers(facts, question, replace(config, verify=_left(config, started)))
    graph = build_graph(facts)
    final = final_step(facts)
    finals = final_steps(facts, graph, question_parts(question))
    redundant = redundant_steps(graph, facts, finals)
    for r in reports:
        r.final = r.index in finals
        r.redundant = r.index in redundant
        r.uses = sorted(graph.predecessors(r.index))
    edges = [GraphEdge(source=a, target=b, via=d.get("via", [])) for a, b, d in graph.edges(data=True)]
    return FlowResult(
        status="ok" if reports else "empty", question=question, steps=reports, edges=edges, final_step=final,
        capped=caps_hit(text, steps, maths, config),
        metrics=_metrics(reports, maths, redundant, config.depth), lexicon_version=lexicon.version,
        elapsed_s=round(time.perf_counter() - started, 4),
        sympy_s=round(sum(m.elapsed_s for m in maths), 4))


_UNREAD = "past the first {} characters of one sentence: not checked"
#: the note on the step whose last line the token cap cut
UNFINISHED = "the token cap cut its last line, which is not checked"
_RANK = {"high": 0, "medium": 1, "low": 2}


def _claim_report(c: ClaimCheck) -> ClaimReport:
    return ClaimReport(text=c.text, status=c.status, expected=c.expected, method=c.method, reason=c.reason,
                       kind=c.kind, confidence=confidence(c.kind) if c.status == "invalid" else None,
                       reading=list(c.reading))


def step_confidence(claims: tuple[ClaimCheck, ...]) -> Confidence | None:
    """The surest flag of a step (None when no claim is invalid)."""
    best: Confidence | None = None
    for c in claims:
        if c.status == "invalid":
            grade = confidence(c.kind)
            if best is None or _RANK[grade] < _RANK[best]:
                best = grade
    return best


def _left(config: FlowConfig, started: float) -> VerifyConfig:
    """The step checks' config with what is left of the solution's time budget."""
    spent = time.perf_counter() - started
    return replace(config.verify, solution_budget_s=max(0.0, config.verify.solution_budget_s - spent))


def caps_hit(text: str, steps: list[Step], maths: list[StepMath], config: FlowConfig) -> list[FlowCap]:
    """The bounds that cut the analysis of `text` short, in the order they apply.

    ``text_chars``: the text was longer than `max_text_chars`; ``steps``: segmentation stopped at
    its step limit (only then does the last step carry a note); ``math_snippets`` and
    ``time_budget``: the step checks stopped early, told apart by whether the math snippets
    checked reached their limit.
    """
    caps: list[FlowCap] = []
    if text and len(text) > config.max_text_chars:
        caps.append(FlowCap(limit="text_chars", bound=config.max_text_chars, analysed=config.max_text_chars,
                            total=len(text)))
    if steps and steps[-1].note is not None:
        caps.append(FlowCap(limit="steps", bound=len(steps), analysed=len(steps)))
    skipped = sum(m.status == "skipped" for m in maths)
    if skipped:
        checked = len(maths) - skipped
        if sum(m.spans for m in maths) >= config.verify.max_spans:
            caps.append(FlowCap(limit="math_snippets", bound=config.verify.max_spans, analysed=checked,
                                total=len(maths)))
        else:
            caps.append(FlowCap(limit="time_budget", bound=config.verify.solution_budget_s, analysed=checked,
                                total=len(maths)))
    return caps


_PART_LABEL = re.compile(r"(?:^|\s)\(?[a-h]\)\s*[:.]?\s*|;", re.I)


def _with_part_answers(facts: list[StepFacts], question: str | None, config: FlowConfig) -> list[StepFacts]:
    """The answer step's mentions with those of each part answer it lists, read one by one.

    ``Final answer: (a) ∇f = <2xy, x^2> (b) 9/sqrt(2) (c) ...`` reads as one run of math that does
    not parse; read part by part it restates the results the graph links it to.
    """
    k = answer_step(facts)
    if k is None:
        return facts
    pieces = [p.strip() for p in _PART_LABEL.split(facts[k].text) if p.strip()]
    if len(pieces) < 3:  # the lead-in and at least two part answers
        return facts
    found = verify_steps(pieces, question, config.verify)
    mentions = {m for math in found for m in math.mentions}
    if not mentions - set(facts[k].mentions):
        return facts
    out = list(facts)
    out[k] = replace(facts[k], mentions=tuple(sorted({*facts[k].mentions, *mentions})), has_math=True)
    return out


def _metrics(reports: list[StepReport], maths: list[StepMath], redundant: list[int],
             depth: DepthDefinition = DEFAULT_DEPTH) -> FlowMetrics:
    all_ops = [op for r in reports for op in r.operations]
    unique_ops = set(all_ops)
    unique_concepts = {c for r in reports for c in r.concepts}
    depths = [r.depth for r in reports if r.depth > 0]
    mean_depth = round(sum(depths) / len(depths), 4) if depths else None
    mean_tokens = round(sum(r.tokens for r in reports) / len(reports), 4) if reports else None
    mean_chars = round(sum(len(r.text) for r in reports) / len(reports), 4) if reports else None
    d_bar = {"tree": mean_depth, "tokens": mean_tokens, "chars": mean_chars}[depth]
    levels = [LEVEL_VALUE[r.complexity] for r in reports]
    verdicts = [r.verdict for r in reports]
    first_invalid = next((r.index for r in reports if r.verdict == "invalid"), None)
    return FlowMetrics(
        total_steps=len(reports), total_operations=len(all_ops), unique_operations=len(unique_ops),
        unique_concepts=len(unique_concepts),
        mean_complexity_level=round(sum(levels) / len(levels), 4) if levels else None,
        mean_depth=mean_depth, mean_tokens=mean_tokens, mean_chars=mean_chars, depth_definition=depth,
        complexity_score=complexity_score(len(unique_ops), len(unique_concepts), d_bar),
        valid_steps=verdicts.count("valid"), invalid_steps=verdicts.count("invalid"),
        unverifiable_steps=verdicts.count("unverifiable"), unchecked_steps=verdicts.count("none"),
        first_invalid_step=first_invalid, redundant_steps=redundant,
        reasoning_pattern=[r.operations[0] if r.operations else "statement" for r in reports])
