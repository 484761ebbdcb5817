"""mathlens: see how language models reason through math problems.

The library's functions and types (`check_answer`, `verify_steps`, `flow`, `open_run`, ...; see
`mathlens.api` and docs/api.md) are attributes of this package, loaded on first use: `import
mathlens` itself imports nothing else. The first use of a checking function also starts the
step-check worker in the background, so that its first check does not wait for it. The types of
these attributes are declared in `__init__.pyi`; they are loaded here by name (`importlib`), so
that every module may read `mathlens.__version__` without depending on the library's layer.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: what `mathlens.<name>` loads from `mathlens.api`
_API = ("DOCUMENTS", "Analysis", "AnswerConfig", "AnswerVerdict", "ClaimCheck", "Flow", "FlowConfig", "Run",
        "StepCheck", "VerifyConfig", "check_answer", "document_spec", "flow", "open_run", "verify_steps")
#: loading one of these starts the step-check worker in the background
_CHECKS = ("check_answer", "verify_steps", "flow")

__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'mathlens' has no attribute {name!r}")
    value = getattr(importlib.import_module("mathlens.api"), name)
    if name in _CHECKS:
        importlib.import_module("mathlens.analyze.verify.budget").prestart()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names only (what a notebook's completion offers), not this module's own imports."""
    return sorted(__all__)
