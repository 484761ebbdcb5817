"""Start-up of the step checker: the caller never imports SymPy, networkx or the LaTeX grammar
(the worker does), and `prestart` starts the worker once, in the background."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from mathlens.analyze.verify.budget import PoolConfig, WorkerPool

_CODE = """
import json, sys
from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.verify.checker import prestart
prestart()
result = analyze_solution("Step 1: Let A = 2 + 3 = 5.\\nStep 2: Then A * 4 = 21.", "Let f(x) = x^2.")
heavy = sorted(m for m in ("sympy", "networkx", "latex2sympy2_extended") if m in sys.modules)
print(json.dumps({"heavy": heavy, "verdicts": [s.verdict for s in result.steps],
                  "kinds": [c.kind for s in result.steps for c in s.claims if c.status == "invalid"]}))
"""


def test_flow_analysis_checks_steps_without_sympy_in_the_caller() -> None:
    proc = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, timeout=180, check=True)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["heavy"] == []
    assert got["verdicts"] == ["valid", "invalid"]
    assert got["kinds"] == ["arithmetic"]


def test_prestart_starts_one_worker_in_the_background() -> None:
    pool = WorkerPool(PoolConfig(max_workers=2))
    try:
        assert pool.prestart() is True
        assert pool.prestart() is False  # already has one: nothing more is started
        assert pool._count == 1
        got = pool.call(pow, (2, 10), timeout_s=30)
        assert got.ok and got.value == 1024
        assert pool._count == 1  # the call used the worker started ahead of time
    finally:
        pool.shutdown()


def test_waiting_for_a_starting_worker_is_bounded_by_the_caller() -> None:
    pool = WorkerPool(PoolConfig(max_workers=1))
    try:
        first = pool.call(pow, (2, 2), timeout_s=30, ready_s=0.001)  # start-up is always waited for
        assert first.ok and first.value == 4
        assert pool.call(time.sleep, (60,), timeout_s=0.2).status == "timeout"  # killed; a spare starts
        got = pool.call(pow, (2, 3), timeout_s=5, ready_s=0.001)
        assert got.status == "timeout" and "ready" in got.error
        later = pool.call(pow, (2, 3), timeout_s=30)  # the worker was kept and serves the next call
        assert later.ok and later.value == 8
        assert pool._count == 1
    finally:
        pool.shutdown()
