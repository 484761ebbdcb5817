"""The step checker on real model solutions it was not written against: GSM8K, four GPT-3 solutions
per test question (6B and 175B, fine-tuned and with a verifier), each graded by people on its final
answer (`is_correct`, ../shared/data/gsm8k_model_solutions.jsonl).

A solution's steps are its lines, with the calculator notes (`<<16-3=13>>`) removed: what is left
is the text as a reader sees it. Nothing labels the steps themselves, so the figures are:

* the share of solutions with a correct final answer that get a flagged step. Such a flag is not
  always false (a solution can reach the right number through a wrong line: "4S = 70, so S = 15"
  in a solution whose answer key was matched), so `--show N` prints N flags, seeded, to read by
  hand and sort into slips of the solution and misreadings of the checker;
* the same share for solutions with a wrong final answer, whose flags are more often real slips;
* the kinds of the flagged claims (`results.CLAIM_KINDS`).

The rules for currency before a decimal point, times of day and operands in words were written
after reading this set's flags (December 2026): figures measured since are in-sample for those
three phenomena. Before them, 19 of 2,001 correct-answer solutions had a flagged step (0.95 %),
3 of them misreadings (0.15 %), the other 16 real slips in lines of the solution.

    .venv/bin/python bench/bench_verify_model_solutions.py [--limit N] [--show N] [--seed S] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

DATA = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
SOLVERS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
_CALCULATOR = re.compile(r"<<[^<>]*>>")


@dataclass(frozen=True)
class Solution:
    question: str
    steps: tuple[str, ...]
    correct: bool
    where: str


@dataclass(frozen=True)
class Flag:
    """The first step with an invalid claim, and those claims."""

    step: int
    text: str
    claims: tuple[tuple[str, str, str], ...]  # (claim, what the left side is, kind)


def solutions(limit: int | None) -> list[Solution]:
    out = []
    with (DATA / "gsm8k_model_solutions.jsonl").open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            row = json.loads(line)
            for solver in SOLVERS:
                s = row[solver]
                steps = tuple(_CALCULATOR.sub("", t).strip() for t in s["solution"].splitlines() if t.strip())
                out.append(Solution(row["question"], steps, bool(s["is_correct"]), f"question {n}, {solver}"))
            if limit is not None and n + 1 >= limit:
                break
    return out


def first_flag(sol: Solution, step_timeout: float) -> Flag | None:
    from mathlens.analyze.verify.steps import VerifyConfig, verify_steps

    config = VerifyConfig(step_timeout_s=step_timeout, solution_budget_s=step_timeout * 10)
    for i, step in enumerate(verify_steps(list(sol.steps), sol.question, config)):
        if step.verdict == "invalid":
            return Flag(i, sol.steps[i], tuple((c.text, c.expected, c.kind or "(no kind)")
                                                for c in step.claims if c.status == "invalid"))
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="questions read (4 solutions each); default all")
    parser.add_argument("--show", type=int, default=0, help="flags on correct-answer solutions to print")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--step-timeout", type=float, default=6.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (DATA / "gsm8k_model_solutions.jsonl").is_file():
        print(f"third-party data not found in {DATA}: nothing to measure")
        return 0
    sols = solutions(args.limit)
    start = time.perf_counter()
    with ThreadPoolExecutor(args.threads) as pool:
        flags = list(pool.map(lambda s: first_flag(s, args.step_timeout), sols))
    seconds = time.perf_counter() - start
    rows = {}
    for correct in (True, False):
        picked = [(s, f) for s, f in zip(sols, flags, strict=True) if s.correct is correct]
        flagged = [(s, f) for s, f in picked if f is not None]
        kinds = Counter(k for _, f in flagged if f is not None for k in {c[2] for c in f.claims})
        rows["correct final answer" if correct else "wrong final answer"] = {
            "solutions": len(picked), "flagged": len(flagged),
            "share": round(len(flagged) / len(picked), 4) if picked else None, "kinds": dict(kinds.most_common())}
    if args.json:
        print(json.dumps({"seconds": round(seconds, 1), "sets": rows}, indent=2))
    else:
        print(f"{len(sols)} GSM8K model solutions checked in {seconds:.0f} s ({args.threads} threads)")
        for name, r in rows.items():
            share = "-" if r["share"] is None else f"{r['share']:.2%}"
            kinds = ", ".join(f"{k} {n}" for k, n in r["kinds"].items()) or "none"
            print(f"  {name}: {r['flagged']} of {r['solutions']} with a flagged step ({share}); kinds: {kinds}")
    if args.show:
        shown = [(s, f) for s, f in zip(sols, flags, strict=True) if s.correct and f is not None]
        for sol, flag in random.Random(args.seed).sample(shown, min(args.show, len(shown))):
            assert flag is not None
            print(f"\n{sol.where}, step {flag.step + 1}: {flag.text}")
            for claim, expected, kind in flag.claims:
                print(f"    {claim}   (left side is {expected}; {kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
