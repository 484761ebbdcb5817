"""Whole model solutions from ProcessBench against their `final_answer_correct` labels.

ProcessBench (`../shared/data/processbench_{gsm8k,math}.json`) holds real solutions by several
open models, split into steps, each labelled with whether its final answer is correct; it carries
no reference answers. Its GSM8K problems are GSM8K test questions and some of its MATH problems are
MATH500 problems, so the reference is taken from `gsm8k_test.jsonl` (after `####`) and
`math500_test.jsonl` (`answer`) by the problem text; solutions whose problem is in neither are
left out (counted). Each solution (its steps joined by blank lines) goes through `check_answer`;
the verdict `correct` is compared with the label. Prints agreement per source and generator, the
confusion counts, the time per solution and (with `--show-misses`) every disagreement with the
answer read and the reference.

    .venv/bin/python bench/bench_answers_processbench.py [--show-misses]
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from mathlens.analyze.grading.equivalence import check_answer
from mathlens.items.schema import Question

SHARED = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


def _references() -> dict[str, str]:
    refs: dict[str, str] = {}
    for line in (SHARED / "gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        refs[row["question"].strip()] = row["answer"].split("####")[-1].strip()
    for line in (SHARED / "math500_test.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        refs[row["problem"].strip()] = str(row["answer"])
    return refs


def main() -> int:
    if not (SHARED / "processbench_gsm8k.json").exists():
        print(f"skipped: {SHARED} has no ProcessBench data (third-party data lives in ../shared/data)")
        return 0
    logging.disable(logging.WARNING)
    refs = _references()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[str] = []
    left_out = total = 0
    start = time.perf_counter()
    for source in ("gsm8k", "math"):
        for row in json.loads((SHARED / f"processbench_{source}.json").read_text(encoding="utf-8")):
            reference = refs.get(row["problem"].strip())
            if reference is None:
                left_out += 1
                continue
            total += 1
            steps = row["steps"] if isinstance(row["steps"], list) else json.loads(row["steps"])
            verdict = check_answer("\n\n".join(steps), Question(id=row["id"], text=row["problem"], answers=[reference]))
            label = bool(row["final_answer_correct"]) if not isinstance(row["final_answer_correct"], str) \
                else row["final_answer_correct"] == "True"
            ours = verdict.status == "correct"
            cell = ("t" if ours == label else "f") + ("p" if ours else "n")
            for key in (source, f"{source}/{row['generator']}", "all"):
                counts[key][cell] += 1
            if ours != label:
                misses.append(f"  {row['id']}: label={label} ours={verdict.status} read={verdict.predicted!r} "
                              f"({verdict.how}) ref={reference!r}")
    elapsed = time.perf_counter() - start
    print(f"{total} solutions with a reference ({left_out} left out: problem in neither GSM8K test nor MATH500)\n")
    print(f"{'set':40s} {'n':>5s} {'agree':>7s}   tp   tn   fp   fn")
    for key in sorted(counts, key=lambda k: (k != "all", k)):
        c = counts[key]
        n = sum(c.values())
        agree = c["tp"] + c["tn"]
        print(f"{key:40s} {n:5d} {100 * agree / n:6.1f}% {c['tp']:4d} {c['tn']:4d} {c['fp']:4d} {c['fn']:4d}")
    print(f"\ntime: {elapsed:.1f} s, {1000 * elapsed / max(total, 1):.1f} ms per solution")
    if "--show-misses" in sys.argv:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
