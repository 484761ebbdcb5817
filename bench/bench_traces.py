"""Cost of the flow analysis on long reasoning traces: 1k, 10k and 40k tokens, against the 1k case.

A reasoning model thinks aloud for tens of thousands of tokens before it answers; the flow
analysis and the step checks read that trace (`RunRecord.worked_text`). This bench builds
synthetic traces from real worked solutions (MATH500 reference solutions from ``../shared/data``,
joined the way a reasoning trace revisits its work: "Wait, let me check that again."), at about
1k, 10k and 40k tokens (4 characters per token, the usual rate for English and LaTeX under BPE
tokenisers), and measures `analyze_solution` on each:

- wall time per response (median of ``--repeats`` runs, after a warm-up),
- peak traced Python memory in the calling process (``tracemalloc``, a separate pass: tracing
  slows the code down), SymPy workers excluded (each is a separate, bounded process),
- the steps analysed and the bounds that cut the analysis (`FlowResult.capped`).

Ratios are against the 1k-token case measured in the same run (these machines are noisy). The
bounds (docs/traces.md) should keep the 40k case within a small multiple of the 10k case.

    .venv/bin/python bench/bench_traces.py [--repeats 3] [--sizes 1000,10000,40000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CHARS_PER_TOKEN = 4
_FALLBACK = [
    "We need $f'(x)$ for $f(x) = x^3 - 3x$.\n\nStep 1: $f'(x) = 3x^2 - 3$.\n\n"
    "Step 2: Setting $3x^2 - 3 = 0$ gives $x^2 = 1$, so $x = 1$ or $x = -1$.\n\n"
    "Step 3: $f(1) = 1 - 3 = -2$ and $f(-1) = -1 + 3 = 2$.",
    "Janet has 16 eggs. She eats 3 and bakes with 4, so 16 - 3 - 4 = 9 are left.\n"
    "She sells them at $2 each: 9 * 2 = 18 dollars.",
]


def solutions() -> list[tuple[str, str]]:
    """(problem, worked solution) pairs: MATH500's references, or two built-in ones without data."""
    path = DATA / "math500_test.jsonl"
    if not path.exists():
        print(f"{path} not found: using two built-in solutions")
        return [("", s) for s in _FALLBACK]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["problem"], r["solution"]) for r in rows]


def trace_of(tokens: int, pool: list[tuple[str, str]]) -> tuple[str, str]:
    """A trace of about `tokens` tokens: the first problem's solution, then others, re-checked."""
    target = tokens * CHARS_PER_TOKEN
    problem = pool[0][0]
    parts: list[str] = []
    size = 0
    i = 0
    while size < target:
        text = pool[i % len(pool)][1]
        lead = "Okay, let me work through this.\n\n" if i == 0 else "\n\nWait, let me check that again another way.\n\n"
        parts.append(lead + text)
        size += len(parts[-1])
        i += 1
    return problem, "".join(parts)[:target]


def measure(text: str, problem: str, repeats: int) -> tuple[float, float, int, list[str]]:
    """(median seconds, peak traced MiB, steps, caps) of `analyze_solution` on one trace."""
    from mathlens.analyze.flow import analyze_solution

    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = analyze_solution(text, problem)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    analyze_solution(text, problem)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result is not None
    caps = [f"{c.limit}={c.bound:g}" for c in result.capped]
    return statistics.median(times), peak / 2**20, len(result.steps), caps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="1000,10000,40000", help="trace sizes in tokens, the first is the baseline")
    args = parser.parse_args()
    from mathlens.analyze.flow import analyze_solution
    from mathlens.analyze.verify.budget import get_pool

    pool = solutions()
    get_pool().warm(1)
    analyze_solution(pool[0][1], pool[0][0])  # load spaCy, the lexicon and the worker outside the timing
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for tokens in sizes:
        problem, text = trace_of(tokens, pool)
        seconds, mib, steps, caps = measure(text, problem, args.repeats)
        rows.append((tokens, len(text), seconds, mib, steps, caps))
    base_s, base_mib = rows[0][2], rows[0][3]
    print(f"{'tokens':>7} {'chars':>8} {'time s':>8} {'x 1k':>6} {'peak MiB':>9} {'x 1k':>6} {'steps':>6}  capped")
    for tokens, chars, seconds, mib, steps, caps in rows:
        print(f"{tokens:>7} {chars:>8} {seconds:>8.2f} {seconds / base_s:>6.1f} {mib:>9.1f} {mib / base_mib:>6.1f} "
              f"{steps:>6}  {', '.join(caps) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
