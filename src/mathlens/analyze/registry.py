"""The analyzers `mathlens analyze RUN` runs, by name, in order.

Each entry maps a name to ``"module:function"``; the function has the signature
``(store: RunStore, options: dict) -> dict``: it reads the run, writes its results with
``store.write_analysis(name, ...)`` and returns a short summary. Analyzers never call the
evaluated model, so re-running one over the same run gives the same files. To add one, write the
module and add one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.runs.store import RunStore

Analyzer = Callable[[RunStore, dict[str, Any]], dict[str, Any]]

ANALYZERS: dict[str, str] = {
    "flow": "mathlens.analyze.flow.analyzer:analyze_run",
    "answers": "mathlens.analyze.grading.analyzer:analyze_answers",
    "sensitivity": "mathlens.analyze.ablation.analyzer:run_sensitivity",
}


def get_analyzer(name: str) -> Analyzer:
    """The analyzer function registered under `name` (a "did you mean" error otherwise)."""
    target = ANALYZERS.get(name)
    if target is None:
        raise UnknownNameError("analyzer", name, ANALYZERS)
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"analyzer {name!r} cannot be loaded ({module_name}: {exc})") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise UserError(f"analyzer {name!r}: {target} is not a function")
    return fn


def select(only: Iterable[str] | None = None) -> list[str]:
    """Names to run, in registry order; `only` restricts them (unknown names are an error)."""
    if only is None:
        return list(ANALYZERS)
    wanted = [n.strip() for n in only if n.strip()]
    for name in wanted:
        if name not in ANALYZERS:
            raise UnknownNameError("analyzer", name, ANALYZERS)
    return [n for n in ANALYZERS if n in wanted]


def run_analyzers(store: RunStore, only: Iterable[str] | None = None,
                  options: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Run the selected analyzers over one run; returns each analyzer's summary by name.

    An analyzer that raises is recorded as ``{"status": "error", "error": ...}`` and the others
    still run; a `UserError` (for example a run directory that does not exist) is raised.
    """
    store.manifest()  # fail early, with a clear message, when this is not a run
    summaries: dict[str, dict[str, Any]] = {}
    for name in select(only):
        fn = get_analyzer(name)
        try:
            summary = fn(store, dict((options or {}).get(name, {})))
        except UserError:
            raise
        except Exception as exc:
            summary = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        summaries[name] = summary
    return summaries
