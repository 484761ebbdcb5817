"""Every analysis of a run, by name, and the one function that runs them.

Each entry maps a name to ``"module:ATTRIBUTE"``, an `Analyzer` (`protocol.py`); modules are
imported only when their analyzer runs. To add an analysis, write the module and add one line.
Order here is the order of a bare `mathlens analyze RUN`; `reads` can only move an analyzer later.
Judge-based analyzers (`judge` set) are not run by a bare `mathlens analyze`; their own commands
(`grade`, `maple`, `tutor score`) or `mathlens analyze --only NAME --judge MODEL` run them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from mathlens.analyze.executor import Executor, ExecutorOptions, open_executor
from mathlens.analyze.protocol import AnalysisJob, Analyzer, Outcome
from mathlens.errors import UnknownNameError, UserError
from mathlens.runs.judge import resolve_judge
from mathlens.runs.locks import holding
from mathlens.runs.records import ModelEntry
from mathlens.runs.store import RunStore

ANALYZERS: dict[str, str] = {
    "flow": "mathlens.analyze.flow.analyzer:ANALYZER",
    "answers": "mathlens.analyze.grading.analyzer:ANALYZER",
    "sensitivity": "mathlens.analyze.ablation.analyzer:ANALYZER",
    "breakdown": "mathlens.analyze.breakdown.analyzer:ANALYZER",
    "source-agreement": "mathlens.analyze.source_agreement.analyzer:ANALYZER",
    "maple": "mathlens.analyze.maple.analyzer:ANALYZER",
    "grades": "mathlens.analyze.grading.grades:ANALYZER",
    "tutor_scores": "mathlens.analyze.adaptivity.analyzer:ANALYZER",
    "tutor_stats": "mathlens.analyze.adaptivity.statistics:ANALYZER",
}


def get_analyzer(name: str) -> Analyzer[Any, Any]:
    """The analyzer registered under `name` (a "did you mean" error otherwise)."""
    target = ANALYZERS.get(name)
    if target is None:
        raise UnknownNameError("analyzer", name, ANALYZERS)
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"analyzer {name!r} cannot be loaded ({module_name}: {exc})") from None
    found = getattr(module, attr, None)
    if not isinstance(found, Analyzer) or found.name != name:
        raise UserError(f"analyzer {name!r}: {target} is not the Analyzer named {name!r}")
    return found


def select(only: Iterable[str] | None = None) -> list[str]:
    """Names to run, in registry order. Without `only`: every analyzer that calls no model."""
    if only is None:
        return [n for n in ANALYZERS if get_analyzer(n).default]
    wanted = [n.strip() for n in only if n.strip()]
    for name in wanted:
        if name not in ANALYZERS:
            raise UnknownNameError("analyzer", name, ANALYZERS)
    return [n for n in ANALYZERS if n in wanted]


def plan(names: Iterable[str]) -> list[str]:
    """`names` in dependency order: an analyzer runs after those it `reads` that are also selected.
    (One whose dependency is not selected reads that dependency's document if present; each says
    what it does without it.)"""
    wanted = list(names)
    ordered: list[str] = []

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in ordered:
            return
        if name in stack:
            raise UserError(f"analyzers read each other in a cycle: {' -> '.join((*stack, name))}")
        for dep in get_analyzer(name).reads:
            if dep in wanted:
                visit(dep, (*stack, name))
        ordered.append(name)

    for name in wanted:
        visit(name, ())
    return ordered


def run_analyzers(store: RunStore, only: Iterable[str] | None = None,
                  options: Mapping[str, Mapping[str, Any]] | None = None, *,
                  judge: str | None = None, judge_options: Mapping[str, Any] | None = None,
                  no_cache: bool = False, executor: ExecutorOptions | None = None) -> dict[str, Outcome[Any]]:
    """Run the selected analyzers over one run (in dependency order); each one's `Outcome` by name.

    `executor` says where per-record work runs (a local thread pool by default; Ray tasks with
    `kind="ray"`, joined or started once for every analyzer and closed at the end).

    Options are validated for every analyzer before any runs. An analyzer that declares a judge gets
    the one `resolve_judge` picks (`judge` / `judge_options` from the command line, else the run's).
    An analyzer that raises is recorded as `Outcome.failed` (status `error`) and the others
    still run; a `UserError` (a bad option, no judge, a run directory that does not exist) is raised.

    One process at a time writes an analysis document: the locks of every document the selected
    analyzers write are taken before any of them starts (a `RunInUseError` names the holder's
    PID), and the run's records are frozen at what is complete now, so every analyzer of the call
    reads the same records and each document names them (count, bytes, digest).
    """
    manifest = store.manifest()  # fail early, with a clear message, when this is not a run
    names = plan(select(only))
    given = dict(options or {})
    for name in given:
        if name not in names:
            raise UserError(f"options for {name!r} given, but it is not among the analyzers run ({', '.join(names)})")
    executor = executor or ExecutorOptions()
    jobs: list[tuple[Analyzer[Any, Any], AnalysisJob[Any]]] = []
    for name in names:
        analyzer = get_analyzer(name)
        chosen: ModelEntry | None = None
        if analyzer.judge is not None:
            chosen = resolve_judge(manifest, judge, dict(judge_options or {}))
        jobs.append((analyzer, AnalysisJob(store, analyzer.parse_options(dict(given.get(name, {}))),
                                           judge=chosen, no_cache=no_cache, executor_options=executor)))
    locks = {spec.lock_path(store.root): spec.lock(store.root) for a, _ in jobs for spec in a.writes}
    with store.frozen(), holding(*(locks[p] for p in sorted(locks))):
        return _run_jobs(jobs, executor)


def _run_jobs(jobs: list[tuple[Analyzer[Any, Any], AnalysisJob[Any]]],
              executor: ExecutorOptions) -> dict[str, Outcome[Any]]:
    """Run the prepared jobs in order (see `run_analyzers`)."""
    shared: Executor | None = open_executor(executor) if executor.kind == "ray" else None
    outcomes: dict[str, Outcome[Any]] = {}
    try:
        for analyzer, job in jobs:
            try:
                outcome = analyzer.run(replace(job, shared_executor=shared))
            except UserError:
                raise
            except Exception as exc:
                outcome = Outcome.failed(f"{type(exc).__name__}: {exc}")
            outcomes[analyzer.name] = outcome
    finally:
        if shared is not None:
            shared.close()
    return outcomes


def run_one(store: RunStore, name: str, options: Mapping[str, Any] | None = None, *,
            judge: str | None = None, judge_options: Mapping[str, Any] | None = None,
            no_cache: bool = False) -> Outcome[Any]:
    """Run one analyzer; its outcome. An unexpected failure becomes a `UserError` naming it."""
    outcome = run_analyzers(store, [name], {name: dict(options or {})}, judge=judge,
                            judge_options=judge_options, no_cache=no_cache)[name]
    if outcome.error is not None:
        raise UserError(f"{name}: {outcome.error}")
    return outcome
