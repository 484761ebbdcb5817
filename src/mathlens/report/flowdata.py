"""The flow analysis of one response (`FLOW` entries) as the report draws it.

Steps are numbered from 1 on the page (the analysis stores 0-based indices).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.analyze.flow.models import (
    DEFAULT_DEPTH,
    FLOW,
    ClaimReport,
    DepthDefinition,
    FlowCap,
    FlowRecord,
    StepReport,
)
from mathlens.report.graph import StepNode


@dataclass(frozen=True)
class FlowStep:
    index: int
    number: int  # as shown (1-based)
    text: str
    operations: tuple[str, ...]
    concepts: tuple[str, ...]
    level: str | None
    depth: float | None
    verification: str | None
    expected: str | None
    detail: str | None
    redundant: bool


@dataclass(frozen=True)
class FlowView:
    status: str
    steps: tuple[FlowStep, ...]
    edges: tuple[tuple[int, int], ...]
    complexity: float | None
    first_invalid: int | None  # shown number
    redundant: tuple[int, ...]  # shown numbers
    pattern: tuple[str, ...]
    metrics: tuple[tuple[str, Any], ...]
    error: str | None
    depth_definition: DepthDefinition = DEFAULT_DEPTH  # what d̄ of `complexity` was measured in


#: solution metrics shown under each response's graph, as (field of FlowMetrics, label)
SHOWN_METRICS = (("total_steps", "total steps"), ("unique_operations", "unique operations"),
                 ("unique_concepts", "unique concepts"), ("mean_complexity_level", "mean complexity level"),
                 ("mean_depth", "mean depth"), ("complexity_score", "complexity score"),
                 ("valid_steps", "valid steps"), ("invalid_steps", "invalid steps"),
                 ("unverifiable_steps", "unverifiable steps"))


def _how(claim: ClaimReport) -> str:
    """How a flag was reached and how sure it is: ' [arithmetic, high confidence]'."""
    parts = [p for p in (claim.kind, f"{claim.confidence} confidence" if claim.confidence else "") if p]
    return f" [{', '.join(parts)}]" if parts else ""


def _step(s: StepReport) -> FlowStep:
    bad = [c for c in s.claims if c.status == "invalid"]
    expected = "; ".join(f"{c.text}: expected {c.expected}{_how(c)}" for c in bad if c.expected)
    reason = "; ".join(c.reason for c in bad if c.reason)
    return FlowStep(index=s.index, number=s.index + 1, text=s.text, operations=tuple(s.operations),
                    concepts=tuple(s.concepts), level=s.complexity, depth=float(s.depth),
                    verification=None if s.verdict == "none" else s.verdict, expected=expected or None,
                    detail=reason or s.check_error or None, redundant=s.redundant)


#: what each bound counts, as the page names it (`FlowCap.limit`)
_CAP_WHAT = {"text_chars": ("characters read", "characters"), "steps": ("steps analysed", "steps"),
             "math_snippets": ("steps checked", "math snippets"), "time_budget": ("steps checked", "s of checks")}


def cap_text(cap: FlowCap) -> str:
    """One bound that cut an analysis short, in words: 'steps analysed: 300 of 612 (limit 300 steps)'."""
    counted, unit = _CAP_WHAT[cap.limit]
    total = f" of {cap.total}" if cap.total is not None else ""
    return f"{counted}: {cap.analysed}{total} (limit {cap.bound:g} {unit})"


def read_flow(entry: FlowRecord) -> FlowView:
    """A `FlowView` of one record's flow entry."""
    res = entry.result
    if res is None:
        return FlowView(status=entry.status, steps=(), edges=(), complexity=None, first_invalid=None,
                        redundant=(), pattern=(), metrics=(), error=None)
    m = res.metrics
    shown: list[tuple[str, Any]] = []
    for name, label in SHOWN_METRICS:
        val = getattr(m, name)
        if val is not None:
            shown.append((label, round(val, 3) if isinstance(val, float) else val))
    if res.capped:  # nothing is cut silently: say which bounds stopped this analysis
        shown.append(("analysed in part", "; ".join(cap_text(c) for c in res.capped)))
    return FlowView(
        status=res.status, steps=tuple(_step(s) for s in res.steps),
        edges=tuple((e.source, e.target) for e in res.edges), complexity=m.complexity_score,
        first_invalid=None if m.first_invalid_step is None else m.first_invalid_step + 1,
        redundant=tuple(sorted(r + 1 for r in m.redundant_steps)), pattern=tuple(m.reasoning_pattern),
        metrics=tuple(shown), error=None, depth_definition=m.depth_definition)


def step_nodes(view: FlowView) -> list[StepNode]:
    """Graph nodes of a flow view (labelled by shown step number)."""
    return [StepNode(index=s.index, label=str(s.number), text=s.text[:300], level=s.level,
                     verification=s.verification, redundant=s.redundant) for s in view.steps]


def flow_for(run: Any, key: str) -> FlowView | None:
    """The flow view of record `key` of `run` (a RunData), if the flow analysis covers it."""
    entry = run.entry(FLOW, key)
    return read_flow(entry) if entry is not None else None


def step_count(view: FlowView) -> float | None:
    """Total steps (from the metrics when stored, else the steps listed)."""
    for k, v in view.metrics:
        if k == "total steps":
            return float(v)
    return float(len(view.steps)) if view.steps else None
