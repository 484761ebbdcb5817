"""Hostile responses through the reasoning-flow analysis: worst time per response and peak memory.

Each response runs in a fresh child process (so its peak resident memory is its own), through
`analyze_solution` and then through the JSON and HTML renderings the report uses. Goals: under
2 s beyond a normal response and under 500 MB per response. ``--issue32`` runs only issue 32's
hostile responses and the baseline; ``--repeats=N`` interleaves N rounds and reports medians.
Prints one line per response, then the worst of each and the
ratio to the goal; `--json` prints the same as one document. A baseline (a normal 7-step
solution) is measured in the same run, so its numbers show what the machine gives a plain answer.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

GOAL_S = 2.0
GOAL_MB = 500.0


def _normal() -> str:
    return ("Step 1: Let f(x) = x^2 + 3x.\nStep 2: Then f'(x) = 2x + 3.\nStep 3: Set 2x + 3 = 0.\n"
            "Step 4: So x = -3/2.\nStep 5: f(-3/2) = 9/4 - 9/2 = -9/4.\nStep 6: The minimum is -9/4.\n"
            "Step 7: Final answer: -9/4")


def _claims(n: int) -> str:
    return "\n".join(f"Step {i}: a_{i} = {i} + b_{i - 1}" for i in range(1, n + 1))


#: name -> builder of the response text
CASES: dict[str, Callable[[], str]] = {
    "baseline 7 steps": _normal,
    "nested parentheses 5k": lambda: "Step 1: " + "(" * 2500 + "x" + ")" * 2500,
    "nested parentheses 20k": lambda: "Step 1: we get " + "(" * 10000 + "x+1" + ")" * 10000 + " so done.",
    "nested parentheses prose 20k": lambda: "Then " + "(see (a) " * 2000 + ")" * 2000 + ".",
    "power tower 9^9^9^9": lambda: "Step 1: x = 9^9^9^9\nStep 2: so x^2 = 9^9^9^9^2\nFinal answer: 9^9^9^9",
    "1 MB of prose": lambda: "We note that the value is 2 and so it holds. " * 23000,
    "1 MB one line": lambda: "x" * 1_000_000,
    "1 MB of math lines": lambda: "\n".join(f"{i}*x + {i} = {2 * i}" for i in range(70000)),
    "RTL overrides and NUL": lambda: ("Step 1: \u202ex = 2\u202c\x00 and \u2067y\u2069 = 3\x00\n" * 2000),
    "2,000 short claims": lambda: _claims(2000),
    "4,000 short claims": lambda: _claims(4000),
    "deep LaTeX fractions": lambda: "$$" + "\\frac{1}{" * 3000 + "x" + "}" * 3000 + "$$",
    "\\frac x3000 in a row": lambda: "Step 1: $" + " + ".join(["\\frac{1}{2}"] * 3000) + " = 1500$",
    "unclosed \\boxed{": lambda: "Step 1: x = 2\nSo the answer is \\boxed{" + "x + 1, " * 3000,
    "zero-width characters": lambda: "Step 1: 2\u200b+\u200b2 = 4\u200d\ufeff and " * 3000,
    "10^6-digit integer": lambda: "Step 1: x = " + "7" * 1_000_000 + "\nStep 2: x + 1 = 8",
    "20k-char step, one line": lambda: "Step 1: " + "((" * 5000 + "1" + "))" * 5000 + " = 1",
}


def _worker_peaks_mb() -> list[float]:
    """Peak resident memory of this process's live children (the SymPy workers), from /proc."""
    me = str(os.getpid())
    peaks = []
    for stat in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in stat.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == me and "VmHWM" in fields:
            peaks.append(int(fields["VmHWM"].split()[0]) / 1024)
    return peaks


def _child(name: str, queue: mp.Queue) -> None:  # type: ignore[type-arg]
    from mathlens.analyze.flow import analyze_solution
    from mathlens.analyze.flow.report import render_text

    text = CASES[name]()
    # Warm the imports (spaCy included: a long paragraph), the SymPy worker and the lexicon outside the timing.
    analyze_solution("Step 1: x = 1\n\n" + "We note that it holds. " * 40)
    start = time.perf_counter()
    result = analyze_solution(text, "Find the value.")
    result.model_dump_json()
    render_text(result)
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children_mb = max([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, *_worker_peaks_mb()])
    queue.put({"case": name, "chars": len(text), "seconds": round(elapsed, 3), "peak_mb": round(peak_mb, 1),
               "worker_peak_mb": round(children_mb, 1), "steps": len(result.steps), "status": result.status,
               "notes": sorted({n for s in result.steps for n in s.notes})[:3]})


def measure(name: str, timeout_s: float = 600.0) -> dict[str, object]:
    queue: mp.Queue = mp.get_context("spawn").Queue()  # type: ignore[type-arg]
    proc = mp.get_context("spawn").Process(target=_child, args=(name, queue))
    proc.start()
    proc.join(timeout_s)
    if proc.is_alive():
        proc.kill()
        return {"case": name, "seconds": None, "error": f"over {timeout_s} s"}
    return queue.get() if not queue.empty() else {"case": name, "seconds": None, "error": f"exit {proc.exitcode}"}


#: the hostile responses of issue 32's table (``--issue32``)
ISSUE_32 = ("unclosed \\boxed{", "zero-width characters", "nested parentheses 20k", "\\frac x3000 in a row",
            "10^6-digit integer", "power tower 9^9^9^9")


def _median_row(runs: list[dict[str, object]]) -> dict[str, object]:
    """The run with the median time among repeats of one case (its other figures kept)."""
    done = sorted((r for r in runs if r.get("seconds") is not None), key=lambda r: float(r["seconds"]))  # type: ignore[arg-type]
    if not done:
        return runs[0]
    row = dict(done[len(done) // 2])
    row["seconds_all"] = [r["seconds"] for r in runs]
    return row


def main() -> None:
    as_json = "--json" in sys.argv
    repeats = int(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--repeats=")), "1"))
    names = ["baseline 7 steps", *ISSUE_32] if "--issue32" in sys.argv else list(CASES)
    # Repeats interleave the cases (the baseline among them), so load from other work on a shared
    # machine falls on all of them alike; each case's median run is reported.
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:
            runs[name].append(measure(name))
    rows = [_median_row(r) for r in runs.values()]
    hostile = [r for r in rows if r["case"] != "baseline 7 steps"]
    times = [float(r["seconds"]) for r in hostile if r.get("seconds") is not None]  # type: ignore[arg-type]
    peaks = [max(float(r.get("peak_mb", 0)), float(r.get("worker_peak_mb", 0))) for r in hostile]  # type: ignore[arg-type]
    failed = [r["case"] for r in hostile if r.get("seconds") is None]
    summary = {"worst_seconds": max(times) if times else None, "worst_peak_mb": max(peaks) if peaks else None,
               "goal_seconds": GOAL_S, "goal_mb": GOAL_MB, "failed": failed}
    if as_json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return
    for r in rows:
        print(f"{r['case']:<30} {r.get('chars', ''):>9} chars  {r.get('seconds')} s  "
              f"peak {r.get('peak_mb')} MB (worker {r.get('worker_peak_mb')} MB)  {r.get('steps', '')} steps "
              f"{r.get('error', '')}")
    base = next((float(r["seconds"]) for r in rows if r["case"] == "baseline 7 steps" and r.get("seconds")), None)
    if times and base is not None:
        print(f"worst time beyond the normal response: {max(times) - base:.2f} s (goal < {GOAL_S} s)")
    if times:
        print(f"worst time per response: {max(times):.2f} s (goal {GOAL_S} s, ratio {max(times) / GOAL_S:.2f})")
        print(f"worst peak memory: {max(peaks):.0f} MB (goal {GOAL_MB:.0f} MB, ratio {max(peaks) / GOAL_MB:.2f})")
    if failed:
        print(f"did not finish: {', '.join(failed)}")


if __name__ == "__main__":
    main()
