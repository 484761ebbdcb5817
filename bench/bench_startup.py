"""Start-up: what a fresh process pays before its first answer.

Each case runs in a fresh interpreter, the cases interleaved and repeated (`--repeats`, default 5),
so that load from other work spreads over all of them; the machine is shared and noisy, so the
figures to read are the medians beside the bare interpreter (`python -c pass`) and `import sympy`
measured in the same run, and the goals as ratios (issue 33: ``mathlens flow`` on a one-step text
<= 1 s on an idle machine, ``import mathlens`` <= 0.3 s, the first step check <= 0.5 s after import).

* ``flow one step``: ``mathlens flow --json -- "Step 1: x = 2"``, the whole command.
* ``first verify_steps``: in a fresh process, the import of the step checker with `prestart`, then
  (timed apart) the first `verify_steps` call; ``first check_answer`` the same for the public
  `mathlens.check_answer` on a response with a fraction against a decimal, ``..., expression``
  on an expression in one letter (both decided without SymPy in the calling process, which the
  script asserts), ``..., SymPy`` on an integral, which the worker compares (that call waits
  for the worker started in the background by the first use of `mathlens.check_answer`).

The three answer cases are chosen by hand. ``--sample K`` adds a measurement that does not depend on
that choice. It takes K MATH500 items at random (seeded; ../shared/data/math500_test.jsonl) and, in
one fresh process each, checks the reference solution against its answer. It then prints how the
first calls are spread and what share of them stays within the 0.5 s goal.

    .venv/bin/python bench/bench_startup.py [--repeats N] [--sample K] [--seed S] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable
MATHLENS = str(Path(PY).with_name("mathlens"))

_FIRST_STEPS = """
import time
t0 = time.perf_counter()
from mathlens.analyze.verify.checker import prestart, verify_steps
prestart()
t1 = time.perf_counter()
out = verify_steps(["So 2 + 3 = 5 and 4 * 6 = 24."])
t2 = time.perf_counter()
assert out[0].verdict == "valid", out
print(t1 - t0, t2 - t1)
"""
# the public answer check: `import mathlens` and the attribute (which starts the worker in the
# background), then, timed apart, the first call; SymPy must stay out of the calling process
_FIRST_ANSWER = """
import sys, time
t0 = time.perf_counter()
import mathlens
check = mathlens.check_answer
t1 = time.perf_counter()
got = check(%r, %r)
t2 = time.perf_counter()
assert got.status == "correct", got
assert "sympy" not in sys.modules
print(t1 - t0, t2 - t1)
"""
_ANSWER_NUMBER = _FIRST_ANSWER % ("Of the 8 outcomes, 3 have two heads, so the answer is $\\frac{3}{8}$.", "0.375")
_ANSWER_EXPRESSION = _FIRST_ANSWER % ("$\\boxed{\\frac{x^2 - 1}{x - 1}}$", "x + 1")
# an integral is compared by SymPy in the worker: the call waits for the worker's start-up
_ANSWER_WORKER = _FIRST_ANSWER % ("$\\boxed{\\int_0^1 x\\,dx}$", "1/2")

#: name -> command; a command printing two numbers reports (import, first call) itself
CASES: dict[str, list[str]] = {
    "python -c pass": [PY, "-c", "pass"],
    "import sympy": [PY, "-c", "import sympy"],
    "import mathlens": [PY, "-c", "import mathlens"],
    "mathlens --help": [MATHLENS, "--help"],
    "flow one step": [MATHLENS, "flow", "--json", "--", "Step 1: x = 2"],
    "first verify_steps": [PY, "-c", _FIRST_STEPS],
    "first check_answer": [PY, "-c", _ANSWER_NUMBER],
    "first check_answer, expression": [PY, "-c", _ANSWER_EXPRESSION],
    "first check_answer, SymPy": [PY, "-c", _ANSWER_WORKER],
}
GOALS = {"import mathlens": 0.3, "flow one step": 1.0, "first verify_steps (call)": 0.5,
         "first check_answer (call)": 0.5, "first check_answer, expression (call)": 0.5}


MATH500 = Path(__file__).resolve().parents[2] / "shared" / "data" / "math500_test.jsonl"
# one sampled item: the first call's seconds, its status, and whether SymPy ran in the caller
_FIRST_SAMPLED = """
import json, sys, time
import mathlens
check = mathlens.check_answer
row = json.loads(sys.stdin.read())
t = time.perf_counter()
got = check(row["solution"], row["answer"])
print(json.dumps({"s": time.perf_counter() - t, "status": got.status, "sympy_here": "sympy" in sys.modules}))
"""


def sampled_first_calls(k: int, seed: int) -> dict[str, object] | None:
    """The first `check_answer` call on K random MATH500 solutions, one fresh process each."""
    if not MATH500.is_file():
        return None
    import random

    rows = [json.loads(line) for line in MATH500.read_text().splitlines() if line.strip()]
    picked = random.Random(seed).sample(rows, min(k, len(rows)))
    seconds, statuses = [], {}
    for row in picked:
        out = subprocess.run([PY, "-c", _FIRST_SAMPLED], input=json.dumps(row), capture_output=True,
                             text=True, timeout=120, check=True)
        got = json.loads(out.stdout)
        assert not got["sympy_here"], "SymPy was imported in the calling process"
        seconds.append(got["s"])
        statuses[got["status"]] = statuses.get(got["status"], 0) + 1
    seconds.sort()
    return {"items": len(seconds), "seed": seed, "median_s": round(statistics.median(seconds), 3),
            "p90_s": round(seconds[int(0.9 * (len(seconds) - 1))], 3), "max_s": round(seconds[-1], 3),
            "within_goal": sum(s <= 0.5 for s in seconds), "statuses": statuses}


def _run(cmd: list[str]) -> dict[str, float]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr[-800:]}")
    out: dict[str, float] = {"": wall}
    parts = proc.stdout.split()
    if cmd[1:2] == ["-c"] and len(parts) == 2:
        out[" (import)"], out[" (call)"] = float(parts[0]), float(parts[1])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sample", type=int, default=0, help="MATH500 items for the sampled first calls")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    times: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for name, cmd in CASES.items():
            for suffix, value in _run(cmd).items():
                times.setdefault(name + suffix, []).append(value)
    floor = statistics.median(times["python -c pass"])
    rows = {name: {"median_s": round(statistics.median(v), 3), "min_s": round(min(v), 3),
                   "max_s": round(max(v), 3), "over_interpreter": round(statistics.median(v) / floor, 2),
                   "goal_s": GOALS.get(name)} for name, v in times.items()}
    sampled = sampled_first_calls(args.sample, args.seed) if args.sample > 0 else None
    if args.json:
        print(json.dumps({"cases": rows, "sampled_first_calls": sampled}, indent=2))
        return 0
    print(f"start-up, {args.repeats} interleaved repeats (fresh processes; shared machine, so read the ratios)")
    print(f"{'case':<30} {'median s':>9} {'min s':>7} {'max s':>7} {'× python':>9} {'goal s':>7}")
    for name, row in rows.items():
        goal = "" if row["goal_s"] is None else f"{row['goal_s']:g}"
        print(f"{name:<30} {row['median_s']:>9.3f} {row['min_s']:>7.3f} {row['max_s']:>7.3f} "
              f"{row['over_interpreter']:>9.2f} {goal:>7}")
    if args.sample > 0 and sampled is None:
        print(f"sampled first calls: {MATH500} is missing")
    elif sampled is not None:
        print(f"first check_answer on {sampled['items']} random MATH500 solutions (seed {sampled['seed']}), "
              f"a fresh process each: median {sampled['median_s']} s, p90 {sampled['p90_s']} s, "
              f"max {sampled['max_s']} s; {sampled['within_goal']} of {sampled['items']} within 0.5 s "
              f"(statuses {sampled['statuses']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
