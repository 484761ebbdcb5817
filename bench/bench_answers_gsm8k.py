"""Final-answer checking against human labels: GSM8K model solutions (goal: >= 99 % agreement).

Each of the 1,319 questions in `gsm8k_model_solutions.jsonl` carries four model solutions with a
human-checked `is_correct`. The reference answer is the final answer of the reference solution
(`ground_truth`); a solution counts as correct for mathlens when `check_answer` says `correct`.
Prints the agreement, the confusion counts, the time per check and the first disagreements.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from mathlens.analyze.grading.equivalence import check_answer
from mathlens.analyze.readers.answers import extract_final_answer
from mathlens.items.schema import Question

SHARED = Path(os.environ.get("MATHLENS_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
DATA = SHARED / "gsm8k_model_solutions.jsonl"
SOLVERS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def main() -> int:
    if not DATA.exists():
        print(f"skipped: {DATA} not found (third-party data lives in ../shared/data or $MATHLENS_SHARED_DATA)")
        return 0
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    agree = total = 0
    confusion = {"tp": 0, "tn": 0, "fp": 0, "fn": 0}
    misses: list[str] = []
    start = time.perf_counter()
    for n, row in enumerate(rows):
        reference = extract_final_answer(row["ground_truth"]).text
        question = Question(id=f"q{n}", text=row["question"], answers=[reference] if reference else [])
        for solver in SOLVERS:
            sol = row[solver]
            ours = check_answer(sol["solution"], question).status == "correct"
            human = bool(sol["is_correct"])
            total += 1
            agree += ours == human
            confusion[("t" if ours == human else "f") + ("p" if ours else "n")] += 1
            if ours != human and len(misses) < 15:
                misses.append(f"  q{n} {solver}: human={human} ours={ours} ref={reference!r} "
                              f"tail={sol['solution'].strip()[-60:]!r}")
    elapsed = time.perf_counter() - start
    print(f"GSM8K model solutions: {agree}/{total} agree with human is_correct = {100 * agree / total:.2f}% "
          f"(goal >= 99%)")
    print(f"confusion: {confusion}")
    print(f"time: {elapsed:.1f} s total, {1000 * elapsed / total:.2f} ms per solution")
    if misses:
        print("disagreements (first 15):")
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
