"""What the flow analysis writes: per-step reports, per-solution metrics, per-exam tables."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mathlens.runs.documents import DocumentSpec, RecordRef
from mathlens.stats.bootstrap import CI

Verdict = Literal["valid", "invalid", "unverifiable", "none"]
#: what d̄ in the complexity score C = 0.5|O| + 0.3|K| + 0.2·d̄ is measured in (docs/flow.md):
#: ``tree`` the height of the deepest parsed expression tree (mean over steps with math),
#: ``tokens`` words, numbers, LaTeX commands and symbols per step, ``chars`` characters per step
DepthDefinition = Literal["tree", "tokens", "chars"]
DEPTH_DEFINITIONS: tuple[DepthDefinition, ...] = ("tree", "tokens", "chars")
DEFAULT_DEPTH: DepthDefinition = "tree"
#: "too dense" thresholds on C per definition. ``chars`` is the calculus study's own scale (its
#: worked example, 7 steps, 4 operations, 4 concepts, prints 23 and measures 25.1), so it keeps the
#: study's 20; the others are 20/23 of that example measured the same way (tree 3.9, tokens 8.9).
DENSE_THRESHOLDS: dict[DepthDefinition, float] = {"chars": 20.0, "tokens": 7.7, "tree": 3.4}


def dense_threshold(definition: DepthDefinition) -> float:
    """The complexity above which a solution is flagged "too dense", for C under `definition`."""
    return DENSE_THRESHOLDS[definition]
JudgeWord = Literal["correct", "incorrect", "unsure"]
Provenance = Literal["symbolic", "judge", "both", "none"]


class ClaimReport(BaseModel):
    """One relation of a step and its verdict; `expected` is set for an invalid claim."""

    text: str
    status: Literal["valid", "invalid", "unverifiable", "definition"]
    expected: str = ""
    method: str = ""
    reason: str = ""
    kind: str = Field("", description="how the verdict was reached (arithmetic, symbolic identity, numeric "
                      "sampling, derivative rule, ...); empty when undecided")
    confidence: Literal["high", "medium", "low"] | None = Field(
        None, description="how sure a flag of this kind is (invalid claims only; docs/flow.md)")
    reading: list[str] = Field(default_factory=list, description="the reading choices the verdict rests on, "
                               "each confirmed by the solution or a guess")


class StepReport(BaseModel):
    """One reasoning step with its labels and verification."""

    index: int
    label: str | None = None
    text: str
    start: int
    end: int
    operations: list[str] = Field(default_factory=list)
    concepts: list[str] = Field(default_factory=list)
    depth: int = Field(0, description="height of the deepest parsed expression tree in the step (0: no math)")
    tokens: int = Field(0, description="words, numbers, LaTeX commands and symbols in the step")
    complexity: Literal["low", "medium", "high"] = "low"
    verdict: Verdict = "none"
    claims: list[ClaimReport] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    check_status: Literal["ok", "timeout", "error", "skipped"] = "ok"
    check_error: str = ""
    redundant: bool = False
    final: bool = Field(False, description="gives the answer to the question or to one of its parts")
    uses: list[int] = Field(default_factory=list, description="earlier steps this one depends on")
    confidence: Literal["high", "medium", "low"] | None = Field(
        None, description="for an invalid step: the surest of its flags (`ClaimReport.confidence`)")


class FlowMetrics(BaseModel):
    """Per-solution summary. `complexity_score` is the seed's C = 0.5|O| + 0.3|K| + 0.2·d̄, with d̄
    measured as `depth_definition` says (`mean_depth`, `mean_tokens` or `mean_chars`)."""

    total_steps: int
    total_operations: int
    unique_operations: int
    unique_concepts: int
    mean_complexity_level: float | None
    mean_depth: float | None
    mean_tokens: float | None = None
    mean_chars: float | None = None
    depth_definition: DepthDefinition = DEFAULT_DEPTH
    complexity_score: float
    valid_steps: int
    invalid_steps: int
    unverifiable_steps: int
    unchecked_steps: int
    first_invalid_step: int | None
    redundant_steps: list[int]
    reasoning_pattern: list[str]


class GraphEdge(BaseModel):
    source: int
    target: int
    via: list[str] = Field(default_factory=list)


class FlowCap(BaseModel):
    """A bound that cut the analysis of one text short (docs/traces.md): nothing is cut silently.

    `limit`: ``text_chars`` (characters read), ``steps`` (steps analysed), ``math_snippets``
    (math snippets checked by SymPy per text) or ``time_budget`` (seconds of step checks per text);
    `bound` its value; `analysed` how many steps were analysed (``text_chars``: characters read)
    or, for the two checking bounds, checked; `total` how many there were, when known."""

    limit: Literal["text_chars", "steps", "math_snippets", "time_budget"]
    bound: float
    analysed: int
    total: int | None = None


class FlowResult(BaseModel):
    """The reasoning-flow analysis of one solution."""

    status: Literal["ok", "empty"] = "ok"
    question: str | None = None
    steps: list[StepReport]
    edges: list[GraphEdge] = Field(default_factory=list)
    final_step: int | None = None
    metrics: FlowMetrics
    lexicon_version: str
    #: the bounds that cut this analysis short (empty: the whole text was analysed and checked)
    capped: list[FlowCap] = Field(default_factory=list)
    # Timings are left out (None) of stored run analyses, so that re-running gives the same file.
    elapsed_s: float | None = None
    sympy_s: float | None = Field(None, description="time spent in bounded SymPy calls")

    @property
    def first_invalid_step(self) -> int | None:
        return self.metrics.first_invalid_step

    @property
    def redundant_steps(self) -> list[int]:
        return self.metrics.redundant_steps

    @property
    def complexity_score(self) -> float:
        return self.metrics.complexity_score

    @property
    def reasoning_pattern(self) -> list[str]:
        return self.metrics.reasoning_pattern


class HybridStep(BaseModel):
    """The hybrid verdict on one step, with both sources kept."""

    index: int
    verdict: Verdict
    provenance: Provenance
    symbolic: Verdict
    judge: JudgeWord | None = None
    judge_reason: str = ""
    disagreement: bool = False


class HybridResult(BaseModel):
    """The hybrid check of one solution. `status`: ``ok`` (the judge answered), ``not_needed``
    (SymPy decided every step with math), ``invalid``/``error`` (the judge failed; the symbolic
    verdicts stand)."""

    status: Literal["ok", "not_needed", "invalid", "error"]
    judge: str
    steps: list[HybridStep]
    asked: list[int] = Field(default_factory=list, description="0-based steps the judge was asked about")
    first_invalid_step: int | None = None
    disagreements: int = 0
    error: str = ""


class FlowRecord(BaseModel):
    """The flow analysis of one run record (one entry of the flow document)."""

    record: RecordRef
    status: Literal["ok", "no_response"]
    result: FlowResult | None = None
    hybrid: HybridResult | None = Field(None, description="symbolic and judge verdicts (with --step-judge)")
    #: the analysed text is the record's reasoning trace (not its visible answer)
    trace: bool = False
    #: the token cap cut the trace before a visible answer (`RunRecord.trace_truncated`)
    trace_truncated: bool = False


class ExamRow(BaseModel):
    """One exam under one model and configuration, as in Tables 2-3 of the calculus study."""

    exam_id: str
    model: str
    configuration: str
    responses: int
    mean_steps: float | None = Field(None, description="S: mean step count per response")
    mean_complexity: float | None = None
    sd_complexity: float | None = None
    mean_invalid_steps: float | None = None
    share_with_invalid_step: float | None = None
    sd_steps: float | None = None
    #: seeded bootstrap intervals of the mean step count and mean complexity (seed 0, 2000 resamples)
    steps_ci: CI | None = None
    complexity_ci: CI | None = None


class StepJudgeSummary(BaseModel):
    """How the step judge did over a run (flow analysis with a step judge)."""

    judge: str
    judge_status: dict[str, int]
    steps_by_provenance: dict[str, int]
    disagreements: int


class FlowSummary(BaseModel):
    """The summary of the flow document."""

    lexicon_version: str
    depth_definition: DepthDefinition = Field(DEFAULT_DEPTH, description="what d̄ of the complexity score is")
    dense_threshold: float = Field(DENSE_THRESHOLDS[DEFAULT_DEPTH], description="'too dense' above this C")
    records: int = 0
    analysed: int = 0
    with_invalid_step: int = 0
    #: records whose reasoning trace was analysed, and those whose trace the token cap cut
    with_trace: int = 0
    trace_truncated: int = 0
    #: analysed texts cut short by a bound (`FlowResult.capped`)
    capped: int = 0
    exams: list[ExamRow] = Field(default_factory=list)
    step_judge: StepJudgeSummary | None = None


#: `analysis/flow.jsonl`: one `FlowRecord` per run record.
FLOW = DocumentSpec("flow", 2, FlowRecord, FlowSummary)
