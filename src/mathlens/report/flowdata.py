"""Reading reasoning-flow results (`analysis/flow.json`) into what the report draws.

The flow analysis stores, per record, its steps (text, operations, concepts, depth, complexity
level, verification), the reasoning graph and the solution metrics. This module reads those
fields by name, accepting the few spellings an entry may use (a result nested under `flow` or
`result`, edges as pairs or as source/target objects, 0- or 1-based step numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mathlens.report.graph import StepNode
from mathlens.report.lookup import first, num, num_of


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


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        out = []
        for v in value:
            if isinstance(v, Mapping):
                v = first(v, "name", "label", "id", default="")
            out.append(str(v))
        return tuple(o for o in out if o)
    if isinstance(value, str) and value:
        return (value,)
    return ()


def _verification(step: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    ver = first(step, "verification", "verify", "check", "verdict")
    if ver == "none":
        ver = None
    claims = step.get("claims")
    if isinstance(claims, list) and (ver is None or isinstance(ver, str)):
        bad = [c for c in claims if isinstance(c, Mapping) and c.get("status") == "invalid"]
        expected = "; ".join(f"{c.get('text')}: expected {c.get('expected')}" for c in bad if c.get("expected"))
        reason = "; ".join(str(c.get("reason")) for c in bad if c.get("reason"))
        return (None if ver is None else str(ver)), expected or None, reason or None
    if isinstance(ver, str):
        return ver, None, None
    if isinstance(ver, Mapping):
        status = first(ver, "status", "verdict")
        exp_val: Any = first(ver, "expected", "expected_value")
        detail = first(ver, "detail", "reason", "note", "error")
        claims = ver.get("claims")
        if exp_val is None and isinstance(claims, list):
            exp = [str(first(c, "expected")) for c in claims if isinstance(c, Mapping) and first(c, "expected")]
            exp_val = "; ".join(exp) or None
        return (str(status) if status is not None else None, None if exp_val is None else str(exp_val),
                None if detail is None else str(detail))
    return (None if first(step, "status") is None else str(first(step, "status"))), None, None


def _level(step: Mapping[str, Any]) -> str | None:
    """The low/medium/high level (`complexity` may hold it as a word or as a number)."""
    level = first(step, "complexity_level", "level", "cognitive_level")
    if level is None and isinstance(step.get("complexity"), str):
        level = step["complexity"]
    return None if level is None else str(level).lower()


def _edge_pairs(raw: Any) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    if not isinstance(raw, list):
        return out
    for e in raw:
        if isinstance(e, list | tuple) and len(e) >= 2 and isinstance(e[0], int) and isinstance(e[1], int):
            out.append((e[0], e[1]))
        elif isinstance(e, Mapping):
            a, b = first(e, "source", "from", "src", "u"), first(e, "target", "to", "dst", "v")
            if isinstance(a, int) and isinstance(b, int):
                out.append((a, b))
    return out


def read_flow(entry: Mapping[str, Any]) -> FlowView:
    """A `FlowView` of one record's flow entry."""
    res = first(entry, "flow", "result", "analysis")
    res = res if isinstance(res, Mapping) else entry
    metrics = first(res, "metrics")
    metrics = metrics if isinstance(metrics, Mapping) else res
    raw_steps = [s for s in (first(res, "steps") or []) if isinstance(s, Mapping)]
    indices: list[int] = []
    for i, s in enumerate(raw_steps):
        idx = s.get("index")
        indices.append(idx if isinstance(idx, int) and not isinstance(idx, bool) else i)
    base = 0 if indices and min(indices) == 0 else 1  # shown numbers are 1-based
    redundant_raw = first(metrics, "redundant_steps", "redundant") or first(res, "redundant_steps") or []
    redundant_idx = {r for r in redundant_raw if isinstance(r, int)} if isinstance(redundant_raw, list) else set()
    steps = []
    for idx, s in zip(indices, raw_steps, strict=True):
        status, expected, detail = _verification(s)
        steps.append(FlowStep(
            index=idx, number=idx + 1 - base, text=str(first(s, "text", default="")),
            operations=_names(first(s, "operations", "ops")), concepts=_names(first(s, "concepts")),
            level=_level(s),
            depth=num_of(s, "depth", "syntactic_depth"), verification=status, expected=expected, detail=detail,
            redundant=bool(s.get("redundant")) or idx in redundant_idx))
    graph = first(res, "graph")
    edges = _edge_pairs(first(graph, "edges") if isinstance(graph, Mapping) else graph)
    if not edges:
        edges = _edge_pairs(first(res, "edges"))
    fi = first(metrics, "first_invalid_step")
    first_invalid = (fi + 1 - base) if isinstance(fi, int) and not isinstance(fi, bool) else None
    pattern = _names(first(metrics, "reasoning_pattern", "pattern") or first(res, "reasoning_pattern", "pattern"))
    shown = []
    for name in ("total_steps", "unique_operations", "unique_concepts", "mean_complexity_level",
                 "mean_syntactic_depth", "complexity_score", "valid_steps", "invalid_steps", "unverifiable_steps"):
        val = metrics.get(name) if isinstance(metrics, Mapping) else None
        if isinstance(val, list):
            val = len(val)
        if isinstance(val, float):
            val = round(val, 3)
        if val is not None and not isinstance(val, Mapping):
            shown.append((name.replace("_", " "), val))
    return FlowView(
        status=str(first(entry, "status", default=first(res, "status", default="ok"))),
        steps=tuple(steps), edges=tuple(edges),
        complexity=num_of(metrics, "complexity_score", "complexity"),
        first_invalid=first_invalid,
        redundant=tuple(sorted(r + 1 - base for r in redundant_idx)),
        pattern=pattern, metrics=tuple(shown), error=first(entry, "error") or first(res, "error"))


def step_nodes(view: FlowView) -> list[StepNode]:
    """Graph nodes of a flow view (labelled by shown step number)."""
    return [StepNode(index=s.index, label=str(s.number), text=s.text[:300], level=s.level,
                     verification=s.verification, redundant=s.redundant) for s in view.steps]


def flow_for(run: Any, key: str) -> FlowView | None:
    """The flow view of record `key` of `run` (a RunData), if the flow analysis covers it."""
    entry = run.entry("flow", key)
    return read_flow(entry) if entry is not None else None


def step_count(view: FlowView) -> float | None:
    """Total steps (from the metrics when stored, else the steps listed)."""
    for k, v in view.metrics:
        if k == "total steps":
            return num(v)
    return float(len(view.steps)) if view.steps else None
