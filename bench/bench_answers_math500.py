"""MATH500: the boxed answer of every reference solution must equal its `answer` (goal >= 99 %).

For each of the 500 problems the final answer is extracted from `solution` (its last `\\boxed{}`)
and compared with the `answer` field by `equivalent`. Prints the rate, the time, each miss, and
how many pairs each comparison method decided. Because most boxed answers are the `answer` string
itself, a second pass sends every pair through the symbolic comparison alone (parsers and
Math-Verify in the bounded worker, no exact-match shortcut) to measure that path too.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from pathlib import Path

from mathlens.analyze.grading.equivalence import equivalent
from mathlens.analyze.grading.symbolic import compare_answers
from mathlens.analyze.readers.answers import extract_final_answer
from mathlens.analyze.verify.budget import run_bounded

SHARED = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
DATA = SHARED / "math500_test.jsonl"


def main() -> int:
    if not DATA.exists():
        print(f"skipped: {DATA} not found (third-party data lives in ../shared/data or $MATHLENS_SHARED_DATA)")
        return 0
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    methods: collections.Counter[str] = collections.Counter()
    misses: list[str] = []
    start = time.perf_counter()
    for row in rows:
        found = extract_final_answer(row["solution"])
        result = equivalent(found.text or "", str(row["answer"]))
        methods[result.method] += 1
        if not result.equal:
            misses.append(f"  {row['unique_id']}: boxed={found.text!r} answer={row['answer']!r} "
                          f"-> {result.status} {result.error}")
    elapsed = time.perf_counter() - start
    ok = len(rows) - len(misses)
    print(f"MATH500 reference boxed answer == answer: {ok}/{len(rows)} = {100 * ok / len(rows):.2f}% (goal >= 99%)")
    print(f"decided by: {dict(methods)}")
    print(f"time: {elapsed:.1f} s total, {1000 * elapsed / len(rows):.1f} ms per pair")
    print(f"misses ({len(misses)}):" if misses else "misses: none")
    if misses:
        print("\n".join(misses))
    sym_misses: list[str] = []
    start = time.perf_counter()
    for row in rows:
        text = extract_final_answer(row["solution"]).text or ""
        out = run_bounded(compare_answers, text, str(row["answer"]), 1e-6, timeout_s=5.0)
        status = out.value[0] if out.ok else out.status
        if status != "equal":
            sym_misses.append(f"  {row['unique_id']}: {row['answer']!r} -> {status} "
                              f"{out.value[4] if out.ok else out.error}")
    elapsed = time.perf_counter() - start
    ok = len(rows) - len(sym_misses)
    print(f"symbolic path only: {ok}/{len(rows)} = {100 * ok / len(rows):.2f}%, {elapsed:.1f} s")
    if sym_misses:
        print("\n".join(sym_misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
