"""Reasoning-flow analysis: steps, operations, concepts, complexity, reasoning graph, checks.

    >>> result = analyze_solution("f_x = 2xy\\nSo at (-1, 4), 2(-1)(4) = -8.", question="f(x, y) = x^2 y")
    >>> result.metrics.total_steps
    2
"""

from mathlens.analyze.flow.models import FlowResult, StepReport
from mathlens.analyze.flow.segment import Step, segment_steps
from mathlens.analyze.flow.solution import FlowConfig, analyze_solution, complexity_score

__all__ = ["FlowConfig", "FlowResult", "Step", "StepReport", "analyze_solution", "complexity_score", "segment_steps"]
