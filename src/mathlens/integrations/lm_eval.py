"""mathlens's answer and step checks as lm-evaluation-harness metrics for a task's YAML.

lm-eval loads a `!function` metric from a Python file beside the task's YAML, so the file is one
line; the YAML names the functions as metrics:

    # mathlens_metrics.py, beside the task YAML
    from mathlens.integrations.lm_eval import mathlens_answer, mathlens_steps  # noqa: F401

    # the task YAML
    metric_list:
      - metric: !function mathlens_metrics.mathlens_answer
        aggregation: mean
        higher_is_better: true
      - metric: !function mathlens_metrics.mathlens_steps
        aggregation: mean
        higher_is_better: true

lm-eval calls a metric once per document with `references=[target]` and `predictions=[answer]`
(the answer after the task's filters). `mathlens_answer` is 1.0 when mathlens's answer check
(`mathlens.check_answer`) finds the answer equal to the target, else 0.0; a target that is a worked
solution is read down to its answer first (what follows `####`, else the last `\\boxed{}`), as
`mathlens import` does. `mathlens_steps` is 1.0 when no step of the answer states something false
(`mathlens.verify_steps`), else 0.0. Several references are several accepted answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mathlens.api import check_answer, verify_steps
from mathlens.runs.importing.source_items import reference_answer


def _text(values: Sequence[Any] | Any) -> list[str]:
    items = values if isinstance(values, list | tuple) else [values]
    out: list[str] = []
    for item in items:
        if isinstance(item, list | tuple):
            out.extend(str(x) for x in item)
        elif item is not None:
            out.append(str(item))
    return out


def mathlens_answer(references: Sequence[Any], predictions: Sequence[Any], **kwargs: Any) -> float:
    """1.0 when the prediction's final answer equals a reference (mathlens's check), else 0.0."""
    refs = [r for r in (reference_answer(t) for t in _text(references)) if r]
    answers = _text(predictions)
    if not refs or not answers:
        return 0.0
    return 1.0 if check_answer(answers[0], refs).status == "correct" else 0.0


def mathlens_steps(references: Sequence[Any], predictions: Sequence[Any], **kwargs: Any) -> float:
    """1.0 when no step of the prediction states something false (mathlens's step checks), else 0.0."""
    answers = _text(predictions)
    if not answers:
        return 0.0
    return 0.0 if any(s.invalid for s in verify_steps(answers[0])) else 1.0
