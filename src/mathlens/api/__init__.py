"""mathlens as a library: the answer check, the step checks, the flow analysis and runs as data.

    >>> import mathlens
    >>> mathlens.check_answer("The answer is 12.0", "12").status
    'correct'

The functions here are the ones the command line uses (`mathlens check`, `mathlens steps`,
`mathlens flow`, and every analysis of a run), with the same bounds; docs/api.md has a worked
example. Everything is also reachable as `mathlens.<name>`, loaded on first use, so
`import mathlens` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mathlens.api.checks import StepCheck, check_answer, flow, verify_steps
from mathlens.api.run import DOCUMENTS, Analysis, Run, document_spec, open_run

if TYPE_CHECKING:  # the result types, importable from here without loading them at import time
    from mathlens.analyze.flow.models import FlowResult as Flow
    from mathlens.analyze.flow.solution import FlowConfig
    from mathlens.analyze.grading.equivalence import EquivalenceConfig as AnswerConfig
    from mathlens.analyze.grading.verdicts import AnswerVerdict
    from mathlens.analyze.verify.results import ClaimCheck, VerifyConfig

#: result and option types, loaded on first use: name -> "module:attribute"
LAZY_TYPES: dict[str, str] = {
    "AnswerVerdict": "mathlens.analyze.grading.verdicts:AnswerVerdict",
    "AnswerConfig": "mathlens.analyze.grading.equivalence:EquivalenceConfig",
    "Flow": "mathlens.analyze.flow.models:FlowResult",
    "FlowConfig": "mathlens.analyze.flow.solution:FlowConfig",
    "ClaimCheck": "mathlens.analyze.verify.results:ClaimCheck",
    "VerifyConfig": "mathlens.analyze.verify.results:VerifyConfig",
}

__all__ = ["DOCUMENTS", "Analysis", "AnswerConfig", "AnswerVerdict", "ClaimCheck", "Flow", "FlowConfig", "Run",
           "StepCheck", "VerifyConfig", "check_answer", "document_spec", "flow", "open_run", "verify_steps"]


def __getattr__(name: str) -> object:
    target = LAZY_TYPES.get(name)
    if target is None:
        raise AttributeError(f"module 'mathlens.api' has no attribute {name!r}")
    import importlib

    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
