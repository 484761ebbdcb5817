"""Modules a worker imports before it reports ready, and the warm-up it does after.

Importing them on the first call instead would charge that call's time budget with their import.
Only what a plain step check needs is loaded before the worker says it is ready (SymPy and the
step checker); the LaTeX grammar and the answer comparisons warm up in a thread right after, while
the worker already serves calls (a call that needs them first waits on the import lock, as any
import would).
"""

from __future__ import annotations

import importlib
import threading

import sympy
import sympy.parsing.sympy_parser  # noqa: F401

import mathlens.analyze.verify.steps  # noqa: F401


def _warm_plain() -> None:
    from mathlens.analyze.verify.parse import parse_math_unbounded

    parse_math_unbounded("x^2 + 1 = 2")


def warm_rest(warm_ups: tuple[tuple[str, str], ...] = ()) -> None:
    """Load and run the slower readers once: their first use fills caches (compiled grammars).
    `warm_ups` are the (module, function) names added by the modules whose work the workers run
    (`budget.warm_up_in_workers`): the answer comparisons' (the LaTeX grammar's prediction cache,
    SymPy's first use)."""
    try:
        from mathlens.analyze.verify.parse import parse_math_unbounded

        parse_math_unbounded(r"\int_0^1 x \, dx")  # through latex2sympy2, not the fast rewrite
        for module, function in warm_ups:
            getattr(importlib.import_module(module), function)()
    except Exception:  # a warm-up is an optimisation: the calls themselves report their errors
        pass


def warm_in_background(warm_ups: tuple[tuple[str, str], ...] = ()) -> threading.Thread:
    """Start `warm_rest` in a daemon thread."""
    thread = threading.Thread(target=warm_rest, args=(warm_ups,), name="mathlens-warm", daemon=True)
    thread.start()
    return thread


_warm_plain()
