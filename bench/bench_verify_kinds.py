"""How precise the step checker's flags are, by how each was reached (its kind).

Two kinds of data:

* **Perturbed reference solutions (made here, not tuned on).** The GSM8K test solutions (calculator
  notes removed) and the MATH500 reference solutions are correct; each is checked as it is (every
  flag is a false flag on an error-free solution) and once more with one stated result changed (a
  seeded choice of a step that ends a relation with a number, the number replaced by n + 1, n - 1,
  n + 10 or 2n): the changed step is the first error. These stand in for the held-out "perturbed
  numbers" sets; nothing in the checker was written while looking at them.
* **ProcessBench MATH and GSM8K, BIG-Bench Mistake (in sample).** The checker's rules were written
  with these sets in view: their figures are in-sample.

A flag is the first step with an invalid claim; it is right when it is the labelled (or changed)
step. For each kind of the flagged step's invalid claims (`results.CLAIM_KINDS`): flags and
precision; overall: the flag rate on error-free solutions, precision, and recall (share of
erroneous solutions whose first flag is the labelled step).

    .venv/bin/python bench/bench_verify_kinds.py [--limit N] [--seed S] [--sets perturbed,inside] [--json]

Shared third-party data: ../shared/data or $MATHLENS_SHARED_DATA; the bench says so and exits 0
when it is absent. Step budgets are raised (`--step-timeout`) so that load from other work on the
machine does not turn checks into timeouts and change the verdicts being counted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
#: "= 42." / "= 3.5 pounds" / "= 36$": a plain number that ends a statement (not "= 6 \\mathbf{b}")
_RESULT = re.compile(r"(=\s*\$?\s*)(-?\d+(?:\.\d+)?)(?=\s*(?:[.,;:$)]\s|[.,;:$)]?$|\\\\|\\\]|\\\)|\\end"
                     r"|\s[A-Za-z]{2,}))", re.M)
_CALCULATOR = re.compile(r"<<[^<>]*>>")


@dataclass
class Sample:
    """One solution to check: its steps, question, and the first wrong step (-1: none)."""

    set_name: str
    steps: list[str]
    question: str
    label: int


@dataclass
class Tally:
    """Flags of one set, by kind."""

    solutions: int = 0
    erroneous: int = 0
    flagged_clean: int = 0
    hits: int = 0  # first flag at the labelled step
    flags: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    right_by_kind: Counter[str] = field(default_factory=Counter)


def _perturb(value: str, rng: random.Random) -> str:
    number = float(value)
    choice = rng.choice(("plus", "minus", "ten", "double"))
    new = {"plus": number + 1, "minus": number - 1, "ten": number + 10, "double": number * 2}[choice]
    if new == number:
        new = number + 1
    text = f"{new:g}" if "." in value else str(int(new))
    return text


def perturbed(steps: list[str], rng: random.Random) -> tuple[list[str], int] | None:
    """The solution with one stated result changed, and the changed step; None when no step ends
    a relation with a plain number."""
    candidates = [(i, m) for i, s in enumerate(steps) for m in _RESULT.finditer(s)]
    if not candidates:
        return None
    i, m = rng.choice(candidates)
    new = _perturb(m.group(2), rng)
    step = steps[i][:m.start(2)] + new + steps[i][m.end(2):]
    return [*steps[:i], step, *steps[i + 1:]], i


def _gsm8k(limit: int, rng: random.Random) -> list[Sample]:
    rows = [json.loads(x) for x in (DATA / "gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = rng.sample(rows, min(limit, len(rows)))
    out = []
    for r in rows:
        body, _, final = r["answer"].partition("####")
        steps = [_CALCULATOR.sub("", line).strip() for line in body.splitlines() if line.strip()]
        steps.append(f"The answer is {final.strip()}.")
        out.append(Sample("gsm8k reference", steps, r["question"], -1))
        changed = perturbed(steps, rng)
        if changed is not None:
            out.append(Sample("gsm8k perturbed", changed[0], r["question"], changed[1]))
    return out


def _math500(limit: int, rng: random.Random) -> list[Sample]:
    from mathlens.analyze.flow.segment import segment_steps

    rows = [json.loads(x) for x in (DATA / "math500_test.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = rng.sample(rows, min(limit, len(rows)))
    out = []
    for r in rows:
        steps = [s.text for s in segment_steps(r["solution"])]
        out.append(Sample("math500 reference", steps, r["problem"], -1))
        changed = perturbed(steps, rng)
        if changed is not None:
            out.append(Sample("math500 perturbed", changed[0], r["problem"], changed[1]))
    return out


def _inside(limit: int, rng: random.Random) -> list[Sample]:
    out = []
    for name in ("math", "gsm8k"):
        rows = json.loads((DATA / f"processbench_{name}.json").read_text(encoding="utf-8"))
        for r in rng.sample(rows, min(limit, len(rows))):
            out.append(Sample(f"ProcessBench {name} (in sample)", r["steps"], r["problem"], r["label"]))
    rows = [json.loads(x) for x in (DATA / "bigbench_mistake_arithmetic.jsonl").read_text(encoding="utf-8").splitlines()
            if x.strip()]
    for r in rng.sample(rows, min(limit, len(rows))):
        label = -1 if r["mistake_index"] is None else r["mistake_index"]
        out.append(Sample("BIG-Bench Mistake (in sample)", r["steps"], r["input"], label))
    return out


def _check(sample: Sample, step_timeout: float) -> tuple[int, list[str]]:
    """The first flagged step (-1: none) and the kinds of its invalid claims."""
    from mathlens.analyze.verify.steps import VerifyConfig, verify_steps

    config = VerifyConfig(step_timeout_s=step_timeout, solution_budget_s=step_timeout * 10)
    for i, step in enumerate(verify_steps(sample.steps, sample.question, config)):
        if step.verdict == "invalid":
            return i, sorted({getattr(c, "kind", "") or "(no kind)" for c in step.claims if c.status == "invalid"})
    return -1, []


def run(samples: list[Sample], threads: int, step_timeout: float) -> dict[str, Tally]:
    """Check every sample and count its flag by set and kind."""
    with ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(lambda s: _check(s, step_timeout), samples))
    tallies: dict[str, Tally] = {}
    for sample, (flag, kinds) in zip(samples, results, strict=True):
        t = tallies.setdefault(sample.set_name, Tally())
        t.solutions += 1
        t.erroneous += sample.label != -1
        if flag == -1:
            continue
        t.flags += 1
        right = flag == sample.label
        t.hits += right
        t.flagged_clean += sample.label == -1
        for kind in kinds:
            t.by_kind[kind] += 1
            t.right_by_kind[kind] += right
    return tallies


def _rows(tallies: dict[str, Tally]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, t in tallies.items():
        clean = t.solutions - t.erroneous
        out[name] = {
            "solutions": t.solutions, "erroneous": t.erroneous, "flags": t.flags,
            "flag_rate_error_free": round(t.flagged_clean / clean, 4) if clean else None,
            "precision": round(t.hits / t.flags, 4) if t.flags else None,
            "recall": round(t.hits / t.erroneous, 4) if t.erroneous else None,
            "by_kind": {k: {"flags": n, "precision": round(t.right_by_kind[k] / n, 4)}
                        for k, n in sorted(t.by_kind.items())}}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=400, help="solutions drawn per source file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--step-timeout", type=float, default=6.0)
    parser.add_argument("--sets", default="perturbed,inside")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    needed = ["gsm8k_test.jsonl", "math500_test.jsonl", "processbench_math.json"]
    if any(not (DATA / n).exists() for n in needed):
        print(f"third-party data not found in {DATA}: nothing to measure")
        return 0
    rng = random.Random(args.seed)
    samples: list[Sample] = []
    if "perturbed" in args.sets:
        samples += _gsm8k(args.limit, rng) + _math500(args.limit, rng)
    if "inside" in args.sets:
        samples += _inside(args.limit, rng)
    rows = _rows(run(samples, args.threads, args.step_timeout))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for name, r in rows.items():
        rate = "-" if r["flag_rate_error_free"] is None else f"{r['flag_rate_error_free']:.1%}"
        print(f"{name}: {r['solutions']} solutions ({r['erroneous']} erroneous), {r['flags']} flagged; "
              f"flags on error-free {rate}; precision {r['precision']}; recall {r['recall']}")
        for kind, k in r["by_kind"].items():
            print(f"    {kind:<20} {k['flags']:>4} flags  precision {k['precision']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
