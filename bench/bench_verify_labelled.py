"""The step verifier against human labels; segmentation against ProcessBench steps.

* BIG-Bench Mistake (multistep arithmetic): first-error-step accuracy. Each step of a chain is
  checked in order; the predicted mistake index is the first step with an invalid claim (None when
  there is none). Accuracy = share of chains where it equals `mistake_index`.
* ProcessBench (gsm8k, math): the earliest wrong step `label` (-1 = no error). The verifier's
  prediction is its first invalid step, else -1, "counting only what the verifier claims":
  accuracy on erroneous solutions (prediction == label), on error-free ones (prediction == -1),
  and F1 = their harmonic mean (the ProcessBench definition). Also reported: how often the
  verifier flags a step at all, the flag rate on error-free solutions, flags before the labelled
  first error (false alarms on erroneous solutions), and the precision of its flags (flag at the
  labelled step). `--show-flags N` prints a seeded random sample of N flags (step text and the
  invalid claims) for checking by hand. For erroneous solutions whose first error is missed, the
  verdict the labelled step got is counted (valid: every claim held, unverifiable, none: nothing
  to check); `--undecided N` prints a seeded sample of N such steps, to group by phenomenon.
* Segmentation: each ProcessBench solution's steps joined with blank lines and segmented again;
  precision / recall of step boundaries (a boundary is the end offset of a step's text).

    .venv/bin/python bench/bench_verify_labelled.py [--limit N] [--seed S] [--show-flags N] [--undecided N]
        [--step-timeout S]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


SEED = 0
#: step budget of the checks (--step-timeout): raise it on a loaded machine, where the default 2 s
#: turns checks into timeouts and changes the verdicts being counted
STEP_TIMEOUT_S = 2.0
FLAGS: list[dict[str, Any]] = []  # every flag of the ProcessBench runs, for --show-flags
MISSED: list[dict[str, Any]] = []  # labelled first errors left undecided, for --undecided


def _sample(rows: list[Any], limit: int | None) -> list[Any]:
    """All rows, or `limit` of them drawn with the seed (the files are sorted by label)."""
    if limit is None or limit >= len(rows):
        return rows
    return random.Random(SEED).sample(rows, limit)


def _first_invalid(steps: list[str], question: str | None) -> int | None:
    return _first_flag(steps, question)[0]


def _first_flag(steps: list[str], question: str | None) -> tuple[int | None, list[str]]:
    """The first invalid step and its invalid claims."""
    first, claims, _ = _checked(steps, question)
    return first, claims


def _checked(steps: list[str], question: str | None) -> tuple[int | None, list[str], list[Any]]:
    """The first invalid step, its invalid claims, and every step's reading."""
    from mathlens.analyze.verify.steps import VerifyConfig, verify_steps

    checked = verify_steps(steps, question, VerifyConfig(step_timeout_s=STEP_TIMEOUT_S,
                                                         solution_budget_s=STEP_TIMEOUT_S * 5))
    for i, step in enumerate(checked):
        if step.verdict == "invalid":
            return i, [f"{c.text} (expected {c.expected or '?'}; {c.method} {c.reason})".strip()
                       for c in step.claims if c.status == "invalid"], checked
    return None, [], checked


def bigbench(limit: int | None, threads: int) -> None:
    path = DATA / "bigbench_mistake_arithmetic.jsonl"
    rows = _sample([json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()], limit)
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        preds = list(pool.map(lambda r: _first_invalid(r["steps"], r["input"]), rows))
    hits = sum(1 for r, p in zip(rows, preds, strict=True) if p == r["mistake_index"])
    wrong = [r for r in rows if r["mistake_index"] is not None]
    hits_wrong = sum(1 for r, p in zip(rows, preds, strict=True) if r["mistake_index"] is not None
                     and p == r["mistake_index"])
    clean_ok = sum(1 for r, p in zip(rows, preds, strict=True) if r["mistake_index"] is None and p is None)
    print(f"BIG-Bench Mistake arithmetic: {len(rows)} chains ({len(wrong)} with a mistake), "
          f"{time.perf_counter() - start:.1f} s")
    print(f"  first-error-step accuracy (all): {hits / len(rows):.3f}")
    print(f"  on chains with a mistake: {hits_wrong / max(len(wrong), 1):.3f}   "
          f"on chains without: {clean_ok / max(len(rows) - len(wrong), 1):.3f}")


def processbench(name: str, limit: int | None, threads: int) -> None:
    rows: list[dict[str, Any]] = _sample(json.loads((DATA / f"processbench_{name}.json").read_text(encoding="utf-8")),
                                         limit)
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        got = list(pool.map(lambda r: _checked(r["steps"], r["problem"]), rows))
    preds = [g[0] for g in got]
    preds_i = [-1 if p is None else p for p in preds]
    missed: dict[str, int] = {}
    for r, (p, claims, checked) in zip(rows, got, strict=True):
        if p is not None:
            FLAGS.append({"id": r["id"], "label": r["label"], "flag": p, "step": r["steps"][p], "claims": claims})
        if r["label"] != -1 and (p is None or p > r["label"]):
            step = checked[r["label"]]
            missed[step.verdict] = missed.get(step.verdict, 0) + 1
            MISSED.append({"id": r["id"], "label": r["label"], "verdict": step.verdict, "step": r["steps"][r["label"]],
                           "claims": [f"{c.status}: {c.text} {c.reason}".strip() for c in step.claims]})
    err = [(r["label"], p) for r, p in zip(rows, preds_i, strict=True) if r["label"] != -1]
    ok = [p for r, p in zip(rows, preds_i, strict=True) if r["label"] == -1]
    acc_err = sum(1 for lab, p in err if lab == p) / max(len(err), 1)
    acc_ok = sum(1 for p in ok if p == -1) / max(len(ok), 1)
    f1 = 2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok else 0.0
    flags = [(r["label"], p) for r, p in zip(rows, preds_i, strict=True) if p != -1]
    precise = sum(1 for lab, p in flags if lab == p) / max(len(flags), 1)
    print(f"ProcessBench {name}: {len(rows)} solutions ({len(err)} erroneous, {len(ok)} error-free), "
          f"{time.perf_counter() - start:.1f} s")
    print(f"  accuracy erroneous: {acc_err:.3f}   error-free: {acc_ok:.3f}   F1: {f1:.3f}")
    flagged_ok = sum(1 for p in ok if p != -1)
    early = sum(1 for lab, p in err if p != -1 and p < lab)
    print(f"  solutions flagged: {len(flags)} ({len(flags) / max(len(rows), 1):.1%}); flags at the labelled "
          f"step: {precise:.3f}")
    print(f"  flag rate on error-free solutions: {flagged_ok}/{len(ok)} = {flagged_ok / max(len(ok), 1):.1%};  "
          f"flags before the labelled first error: {early}/{len(err)} = {early / max(len(err), 1):.1%}")
    print("  labelled first errors missed, by the verdict of that step: "
          + ", ".join(f"{k} {v}" for k, v in sorted(missed.items())))


def segmentation(limit: int | None) -> None:
    from mathlens.analyze.flow.segment import segment_steps

    tp = fp = fn = 0
    exact = total = 0
    for name in ("gsm8k", "math"):
        rows = _sample(json.loads((DATA / f"processbench_{name}.json").read_text(encoding="utf-8")), limit)
        for row in rows:
            parts = row["steps"]
            gold: set[int] = set()
            pos = 0
            for s in parts[:-1]:
                gold.add(pos + len(s.rstrip()))
                pos += len(s) + 2
            steps = segment_steps("\n\n".join(parts))
            pred = {s.end for s in steps[:-1]}
            tp += len(pred & gold)
            fp += len(pred - gold)
            fn += len(gold - pred)
            exact += int(pred == gold)
            total += 1
    print(f"Segmentation vs ProcessBench steps joined by blank lines ({total} solutions): "
          f"precision {tp / max(tp + fp, 1):.3f}, recall {tp / max(tp + fn, 1):.3f}, "
          f"identical segmentation {exact / max(total, 1):.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="rows per file (a seeded sample)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="seed of the row samples and of --show-flags")
    parser.add_argument("--show-flags", type=int, default=0, metavar="N",
                        help="print N flags drawn at random from the ProcessBench runs, to check by hand")
    parser.add_argument("--undecided", type=int, default=0, metavar="N",
                        help="print N labelled first-error steps the check missed, to group by phenomenon")
    parser.add_argument("--step-timeout", type=float, default=2.0,
                        help="seconds per step check (the solution gets 5x); raise it on a loaded machine")
    args = parser.parse_args()
    global SEED, STEP_TIMEOUT_S
    SEED = args.seed
    STEP_TIMEOUT_S = args.step_timeout
    needed = ["bigbench_mistake_arithmetic.jsonl", "processbench_gsm8k.json", "processbench_math.json"]
    missing = [n for n in needed if not (DATA / n).exists()]
    if missing:
        print(f"third-party data not found in {DATA} ({', '.join(missing)}): nothing to measure")
        return 0
    from mathlens.analyze.verify.budget import get_pool

    get_pool().warm(args.threads)
    segmentation(args.limit)
    bigbench(args.limit, args.threads)
    processbench("gsm8k", args.limit, args.threads)
    processbench("math", args.limit, args.threads)
    if args.show_flags:
        _show_flags(args.show_flags, args.seed)
    if args.undecided:
        _show_undecided(args.undecided, args.seed)
    return 0


def _show_undecided(n: int, seed: int) -> None:
    sample = random.Random(seed).sample(MISSED, min(n, len(MISSED)))
    print(f"\n{len(sample)} of {len(MISSED)} missed first errors, drawn with seed {seed}:")
    for k, m in enumerate(sample, 1):
        print(f"--- {k}. {m['id']}  label {m['label']}  verdict {m['verdict']}")
        print("    step: " + " ".join(m["step"].split())[:600])
        for c in m["claims"][:8]:
            print(f"    {c[:200]}")


def _show_flags(n: int, seed: int) -> None:
    sample = random.Random(seed).sample(FLAGS, min(n, len(FLAGS)))
    print(f"\n{len(sample)} of {len(FLAGS)} flags, drawn with seed {seed} "
          "(label: the labelled first error, -1 = none; flag: the flagged step):")
    for k, f in enumerate(sample, 1):
        print(f"--- {k}. {f['id']}  label {f['label']}  flag {f['flag']}")
        print("    step: " + " ".join(f["step"].split())[:600])
        for c in f["claims"]:
            print(f"    invalid: {c[:300]}")


if __name__ == "__main__":
    sys.exit(main())
