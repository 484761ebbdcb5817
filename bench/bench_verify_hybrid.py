"""The hybrid step check (symbolic first, a judge for the rest) against ProcessBench labels.

For a seeded sample of ProcessBench solutions (their own steps, as labelled), each step is checked
symbolically; the judge (`--step-judge`, any provider; the embedded model by default) is asked
about the steps SymPy left undecided, with the symbolic verdicts as evidence. Printed for the
symbolic check alone and for the hybrid check: accuracy on erroneous solutions (first flagged
step == labelled first error), on error-free ones (nothing flagged), F1, the flag rate on
error-free solutions; and the share of steps decided by each source, the judge's disagreements
with SymPy, judge failures and time per solution. Judge calls are cached, so a second run with the
same judge and sample makes no calls.

    .venv/bin/python bench/bench_verify_hybrid.py [--step-judge SPEC] [-J KEY=VALUE] \\
        [--split math|gsm8k] [--limit N] [--seed S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _flow(steps: list[str], question: str) -> Any:
    """A `FlowResult` over the labelled steps as given (no re-segmentation)."""
    from mathlens.analyze.flow.models import ClaimReport, FlowMetrics, FlowResult, StepReport
    from mathlens.analyze.verify.steps import verify_steps

    maths = verify_steps(steps, question)
    reports, pos = [], 0
    for i, (text, m) in enumerate(zip(steps, maths, strict=True)):
        reports.append(StepReport(index=i, text=text, start=pos, end=pos + len(text), verdict=m.verdict,
                                  claims=[ClaimReport(text=c.text, status=c.status, expected=c.expected,
                                                      method=c.method, reason=c.reason) for c in m.claims]))
        pos += len(text) + 2
    first = next((r.index for r in reports if r.verdict == "invalid"), None)
    metrics = FlowMetrics(total_steps=len(reports), total_operations=0, unique_operations=0, unique_concepts=0,
                          mean_complexity_level=None, mean_depth=None, complexity_score=0.0, valid_steps=0,
                          invalid_steps=0, unverifiable_steps=0, unchecked_steps=0, first_invalid_step=first,
                          redundant_steps=[], reasoning_pattern=[])
    return FlowResult(question=question, steps=reports, metrics=metrics, lexicon_version="bench")


def _scores(labels: list[int], preds: list[int]) -> dict[str, float]:
    err = [(lab, p) for lab, p in zip(labels, preds, strict=True) if lab != -1]
    ok = [p for lab, p in zip(labels, preds, strict=True) if lab == -1]
    acc_err = sum(lab == p for lab, p in err) / max(len(err), 1)
    acc_ok = sum(p == -1 for p in ok) / max(len(ok), 1)
    f1 = 2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok else 0.0
    return {"erroneous": acc_err, "error_free": acc_ok, "f1": f1, "flag_rate_error_free": 1 - acc_ok,
            "n_erroneous": len(err), "n_error_free": len(ok)}


async def _run(rows: list[dict[str, Any]], spec: str, options: dict[str, Any], no_cache: bool) -> dict[str, Any]:
    from mathlens.analyze.flow.hybrid import hybrid_check
    from mathlens.models.cache import ResponseCache
    from mathlens.models.model import closing_all
    from mathlens.models.registry import get_model

    judge = get_model(spec, options, cache=None if no_cache else ResponseCache())
    labels, symbolic, hybrid, times = [], [], [], []
    provenance: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    disagreements = 0

    async def all_rows() -> None:
        nonlocal disagreements
        for k, row in enumerate(rows, 1):
            start = time.perf_counter()
            flow = _flow(row["steps"], row["problem"])
            result = await hybrid_check(flow, row["problem"], judge)
            times.append(time.perf_counter() - start)
            labels.append(row["label"])
            symbolic.append(-1 if flow.metrics.first_invalid_step is None else flow.metrics.first_invalid_step)
            hybrid.append(-1 if result.first_invalid_step is None else result.first_invalid_step)
            provenance.update(s.provenance for s in result.steps)
            statuses[result.status] += 1
            disagreements += result.disagreements
            print(f"  {k}/{len(rows)} {row['id']}: label {row['label']}, symbolic {symbolic[-1]}, "
                  f"hybrid {hybrid[-1]} ({result.status}, {times[-1]:.1f} s)", flush=True)

    await closing_all(all_rows(), [judge])
    return {"symbolic": _scores(labels, symbolic), "hybrid": _scores(labels, hybrid),
            "provenance": dict(provenance), "judge_status": dict(statuses), "disagreements": disagreements,
            "seconds_per_solution": sum(times) / max(len(times), 1)}


def main() -> int:
    from mathlens.models.registry import parse_options

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step-judge", default="embedded", help="judge model spec (any provider)")
    parser.add_argument("-J", "--judge-option", action="append", default=[], help="judge option KEY=VALUE")
    parser.add_argument("--split", choices=("math", "gsm8k"), default="math")
    parser.add_argument("--limit", type=int, default=15, help="solutions in the seeded sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args()
    path = DATA / f"processbench_{args.split}.json"
    if not path.exists():
        print(f"{path} not found: nothing to measure")
        return 0
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows = random.Random(args.seed).sample(rows, min(args.limit, len(rows)))
    print(f"ProcessBench {args.split}: {len(rows)} solutions (seed {args.seed}), step judge {args.step_judge}")
    out = asyncio.run(_run(rows, args.step_judge, parse_options(args.judge_option), args.no_cache))
    for name in ("symbolic", "hybrid"):
        s = out[name]
        print(f"{name:>9}: erroneous {s['erroneous']:.3f} (n={s['n_erroneous']})   error-free {s['error_free']:.3f} "
              f"(n={s['n_error_free']})   F1 {s['f1']:.3f}   flag rate on error-free {s['flag_rate_error_free']:.1%}")
    total = sum(out["provenance"].values())
    shares = ", ".join(f"{k} {v} ({v / max(total, 1):.0%})" for k, v in sorted(out["provenance"].items()))
    print(f"steps by provenance: {shares}; judge disagreements with SymPy: {out['disagreements']}")
    print(f"judge status per solution: {out['judge_status']}; {out['seconds_per_solution']:.1f} s per solution")
    return 0


if __name__ == "__main__":
    sys.exit(main())
