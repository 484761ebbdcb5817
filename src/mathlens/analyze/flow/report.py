"""Printed renderings: the per-question report (in the spirit of seed §6.1) and the exam table."""

from __future__ import annotations

from collections.abc import Iterable

from mathlens.analyze.flow.models import ClaimReport, ExamRow, FlowResult
from mathlens.analyze.protocol import Rows


def _claim_line(claim: ClaimReport) -> str:
    status, text, expected, reason = claim.status, claim.text, claim.expected, claim.reason
    how = f" · {claim.kind}" if claim.kind else ""
    sure = f", {claim.confidence} confidence" if claim.confidence else ""
    line = f"      [{status}{how}{sure}] {text}"
    guessed = [r for r in claim.reading if r.endswith("(a guess)")]
    if guessed and claim.status != "unverifiable":
        reason = "; ".join(filter(None, [reason, *guessed]))
    if expected:
        line += f"   (expected: {expected})"
    if reason:
        line += f"   ({reason})"
    return line


def render_text(result: FlowResult, title: str | None = None) -> str:
    """A readable report: question, totals, pattern, then every step (numbered from 1)."""
    m = result.metrics
    lines = [f"Reasoning flow analysis{': ' + title if title else ''}"]
    if result.question:
        lines.append(f"Question: {result.question.strip()}")
    depth = m.mean_depth if m.mean_depth is not None else "-"
    lines.append(f"Total steps: {m.total_steps}   Complexity score: {m.complexity_score:g}   Mean depth: {depth}")
    lines.append(f"Unique operations: {m.unique_operations}   Unique concepts: {m.unique_concepts}")
    lines.append("Reasoning pattern: " + ", ".join(m.reasoning_pattern))
    first = "-" if m.first_invalid_step is None else str(m.first_invalid_step + 1)
    redundant = ", ".join(str(i + 1) for i in m.redundant_steps) or "-"
    lines.append(f"Checked steps: {m.valid_steps} valid, {m.invalid_steps} invalid, {m.unverifiable_steps} "
                 f"unverifiable, {m.unchecked_steps} with nothing to check")
    lines.append(f"First invalid step: {first}   Redundant steps: {redundant}")
    lines.append("")
    lines.append("Detailed reasoning steps:")
    for s in result.steps:
        verdict = f"{s.verdict} ({s.confidence} confidence)" if s.confidence else s.verdict
        flags = [verdict] + (["redundant"] if s.redundant else []) + (["final"] if s.final else [])
        lines.append(f"  {s.index + 1}. {s.text.strip()}")
        lines.append(f"     Operations: {', '.join(s.operations) or '-'}")
        lines.append(f"     Concepts: {', '.join(s.concepts) or '-'}")
        uses = ", ".join(str(u + 1) for u in s.uses) or "-"
        lines.append(f"     Complexity: {s.complexity} (depth {s.depth})   Uses steps: {uses}   [{'; '.join(flags)}]")
        for c in s.claims:
            lines.append(_claim_line(c))
        for note in s.notes:
            lines.append(f"      note: {note}")
        if s.check_status != "ok":
            lines.append(f"      check {s.check_status}: {s.check_error}")
    return "\n".join(lines)


def exam_rows(rows: Iterable[ExamRow]) -> Rows:
    """Seed Tables 2-3 as printed lines: per exam, model and configuration, the responses, their mean
    step count (the seed's S), complexity (mean ± sd) and invalid steps per response."""
    cells = []
    for r in rows:
        comp = "-" if r.mean_complexity is None else f"{r.mean_complexity:.2f}"
        if r.sd_complexity is not None:
            comp += f" ± {r.sd_complexity:.2f}"
        steps = "-" if r.mean_steps is None else f"{r.mean_steps:.2f}"
        inv = "-" if r.mean_invalid_steps is None else f"{r.mean_invalid_steps:.2f}"
        cells.append((r.exam_id, r.model, r.configuration, str(r.responses), steps, comp, inv))
    figures = ("n", "steps", "complexity", "invalid/resp")
    return Rows(headers=("exam", "model", "config", *figures), rows=tuple(cells), right=frozenset(figures))
