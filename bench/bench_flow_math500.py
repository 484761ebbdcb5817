"""Speed of the flow analysis on the 500 MATH500 reference solutions.

Prints the wall time for the whole set (two threads, each with its own SymPy worker, as
`mathlens analyze` runs), time per solution (mean, median, p95, max), the share of time spent in
bounded SymPy calls, how many steps ran over their budget, and the claims by verdict. Reference
solutions are correct, so every claim flagged invalid is a false alarm or a slip in the
reference; `--show-invalid` prints them. Goal: whole set under 30 s on 2 cores, no solution over
its time budget. The share of steps found redundant is printed too: a reference solution rarely
holds a step nothing uses, so most are dependencies the reasoning graph did not see.

    .venv/bin/python bench/bench_flow_math500.py [--limit N] [--threads T] [--show-invalid]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DATA = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--show-invalid", action="store_true", help="print every claim flagged invalid")
    args = parser.parse_args()
    path = DATA / "math500_test.jsonl"
    if not path.exists():
        print(f"{path} not found: nothing to measure")
        return 0
    from mathlens.analyze.flow import FlowResult, analyze_solution
    from mathlens.analyze.flow.segment import segment_steps
    from mathlens.analyze.verify.budget import get_pool
    from mathlens.analyze.verify.steps import SOLUTION_BUDGET_S

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    segment_steps("warm up. " * 200, max_chars=50)  # load spaCy outside the timing
    get_pool().warm(args.threads)

    def one(row: dict[str, str]) -> FlowResult:
        return analyze_solution(row["solution"], row["problem"])

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        results = list(pool.map(one, rows))
    wall = time.perf_counter() - start
    per = [r.elapsed_s or 0.0 for r in results]
    sympy_s = sum(r.sympy_s or 0.0 for r in results)
    statuses = [s.check_status for r in results for s in r.steps]
    steps = sum(len(r.steps) for r in results)
    claims = [c.status for r in results for s in r.steps for c in s.claims]
    print(f"solutions: {len(results)}   steps: {steps}   claims: {len(claims)}   threads: {args.threads}")
    print(f"whole set: {wall:.2f} s wall   ({wall / max(len(results), 1) * 1000:.1f} ms per solution, wall)")
    p95 = statistics.quantiles(per, n=20)[-1] if len(per) > 1 else max(per)
    print(f"per solution (own clock): mean {statistics.fmean(per) * 1000:.1f} ms, median "
          f"{statistics.median(per) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {max(per):.2f} s "
          f"(budget {SOLUTION_BUDGET_S:g} s)")
    print(f"share of solution time in bounded SymPy calls: {sympy_s / max(sum(per), 1e-9):.1%}")
    print(f"steps over their budget: {statuses.count('timeout')}   skipped after the solution budget: "
          f"{statuses.count('skipped')}   worker errors: {statuses.count('error')}")
    print(f"solutions over the solution budget: {sum(1 for p in per if p > SOLUTION_BUDGET_S)}")
    for status in ("valid", "invalid", "unverifiable", "definition"):
        print(f"  claims {status}: {claims.count(status)}")
    redundant = sum(len(r.metrics.redundant_steps) for r in results)
    with_redundant = sum(1 for r in results if r.metrics.redundant_steps)
    # reference solutions rarely hold a step nothing uses: most of these are links the graph missed
    print(f"redundant steps: {redundant} of {steps} ({redundant / max(steps, 1):.1%}); solutions with one: "
          f"{with_redundant} of {len(results)} ({with_redundant / max(len(results), 1):.1%})")
    print(f"goal (< 30 s for the set): {'met' if wall < 30 else 'not met'}")
    if args.show_invalid:
        for row, r in zip(rows, results, strict=True):
            for s in r.steps:
                for c in s.claims:
                    if c.status == "invalid":
                        print(f"--- {row.get('unique_id', '?')} step {s.index}: {c.text[:200]} "
                              f"(expected {c.expected[:80]}; {c.method} {c.reason})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
