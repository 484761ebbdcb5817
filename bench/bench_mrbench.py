"""Judge vs human agreement on MRBench v2 for the rubric items it labels (Q2, Q9, Q16).

    .venv/bin/python bench/bench_mrbench.py --limit 20 --judge embedded

Draws a seeded sample of tutor replies, asks the judge the mapped rubric items one by one, and
prints, per item, percent agreement, Cohen's kappa and Krippendorff's alpha (bootstrap 95% CIs)
against the human labels, with lenient and strict treatment of "To some extent", beside the
agreement of always answering the humans' most common score. Also prints judge seconds per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path

from mathlens.analyze.adaptivity.agreement import pair_agreement
from mathlens.analyze.adaptivity.judge import judge_config, judge_item
from mathlens.analyze.adaptivity.mrbench import MAPPINGS, human_score, judge_context, load_mrbench, sample_replies
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.models.cache import ResponseCache
from mathlens.models.registry import get_model, parse_options

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


async def _judge_all(model, replies, items, max_tokens):  # type: ignore[no-untyped-def]
    """Every reply x item verdict, keyed (reply key, item id); the judge is closed afterwards."""
    out = {}
    async with model:
        for reply in replies:
            ctx = judge_context(reply)
            for item in items:
                out[(reply.key, item.id)] = await judge_item(model, item, ctx, judge_config(max_tokens))
    return out


def main() -> int:
    """Run the benchmark and print one table (and, with --json, one JSON document)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="embedded")
    ap.add_argument("-J", action="append", default=[], help="judge option key=value")
    ap.add_argument("--limit", type=int, default=20, help="replies to judge (seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-tokens", type=int, default=120)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    path = DATA / "mrbench_v2.json"
    if not path.exists():
        print(f"MRBench data not found at {path}; nothing to measure.")
        return 0
    rubric = load_rubric()
    replies = sample_replies(load_mrbench(path), args.limit, args.seed)
    items = [rubric.item(m.item_id) for m in MAPPINGS]
    cache = ResponseCache()
    model = get_model(args.judge, parse_options(args.J), cache=cache)
    start = time.perf_counter()
    try:
        scores = asyncio.run(_judge_all(model, replies, items, args.max_tokens))
    finally:
        cache.close()
    elapsed = time.perf_counter() - start
    report = {"judge": args.judge, "replies": len(replies), "judge_calls": model.stats.calls,
              "cache_hits": model.stats.cache_hits,
              "seconds_per_call": round(elapsed / max(model.stats.calls, 1), 2), "items": []}
    for m in MAPPINGS:
        item = rubric.item(m.item_id)
        judged = [(r, scores[(r.key, item.id)]) for r in replies]
        unscored = sum(s.status != "ok" for _, s in judged)
        row = {"item": item.id, "dimension": m.dimension, "unscored": unscored,
               "judge_scores": dict(Counter(s.value for _, s in judged if s.status == "ok"))}
        for mode in ("lenient", "strict"):
            pairs = [(human_score(r, m, strict=mode == "strict"), s.value) for r, s in judged
                     if s.status == "ok" and s.value is not None]
            pairs = [(h, j) for h, j in pairs if h is not None]
            humans = Counter(h for h, _ in pairs)
            majority = humans.most_common(1)[0][0] if humans else None
            stats = pair_agreement(pairs, scale=item.values, weighted=len(item.values) > 2, seed=args.seed)
            row[mode] = {"n": stats.n, "percent": stats.percent.format(3), "kappa": stats.kappa.format(3),
                         "alpha": stats.alpha.format(3), "human_scores": dict(humans),
                         "majority_baseline_percent": round(humans[majority] / len(pairs), 3) if pairs else None}
            if m.partial_label is None:
                break
        report["items"].append(row)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    print(f"judge {args.judge}: {len(replies)} replies, {report['judge_calls']} calls "
          f"({report['cache_hits']} cached), {report['seconds_per_call']} s per call")
    for row in report["items"]:
        print(f"{row['item']} <- {row['dimension']}: unscored {row['unscored']}, judge scores {row['judge_scores']}")
        for mode in ("lenient", "strict"):
            if mode in row:
                r = row[mode]
                print(f"  {mode:8s} n={r['n']} agree={r['percent']} kappa={r['kappa']} alpha={r['alpha']} "
                      f"majority-baseline={r['majority_baseline_percent']} humans={r['human_scores']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
