"""Time the ablation divergence metrics on 1,000 real response pairs (goal: under 5 s on 2 cores).

Two workloads, both from ../shared/data:
* GSM8K: the four model solutions of each test question, the first as the "original" and the other
  three as its "variants" (334 questions, 1,002 pairs; ~60 words a response);
* MATH: ProcessBench solutions (steps joined), grouped five to a "question" (one original, four
  variants; 250 overlapping groups, 1,000 pairs; ~270 words a response, the length of a worked calculus answer).

Per pair: TF-IDF cosine (vectoriser fitted per group, as in the analysis), normalised token
Levenshtein, and the edit distance between two word-category sequences standing in for
reasoning patterns. Prints seconds per 1,000 pairs and the ratio to the 5 s goal.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mathlens.analyze.ablation.divergence import divergences, sequence_distance

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GOAL_S = 5.0
SOLVERS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def gsm8k_groups() -> list[list[str]]:
    groups = []
    for line in (DATA / "gsm8k_model_solutions.jsonl").read_text(encoding="utf-8").splitlines()[:334]:
        row = json.loads(line)
        groups.append([row[s]["solution"] for s in SOLVERS])
    return groups


def math_groups() -> list[list[str]]:
    rows = json.loads((DATA / "processbench_math.json").read_text(encoding="utf-8"))
    texts = ["\n\n".join(r["steps"]) for r in rows]
    # Windows of five advancing by four: 250 groups, 1,000 pairs out of 1,000 solutions.
    return [[texts[(4 * g + k) % len(texts)] for k in range(5)] for g in range(250)]


def _pattern(text: str) -> list[str]:
    # A cheap stand-in for an operation sequence: one label per line.
    return ["eq" if "=" in line else "text" for line in text.splitlines() if line.strip()]


def run(groups: list[list[str]]) -> tuple[int, float]:
    started = time.perf_counter()
    pairs = 0
    for original, *variants in groups:
        # The same call the analysis makes per question: cosines and Levenshtein together.
        measures = divergences(original, variants)
        pattern = _pattern(original)
        for variant in variants:
            sequence_distance(pattern, _pattern(variant))
        pairs += len(measures.cosines)
    return pairs, time.perf_counter() - started


def main() -> int:
    if not DATA.is_dir():
        print(f"bench_ablation_metrics: third-party data not found at {DATA}; nothing measured")
        return 0
    run(gsm8k_groups()[:5])  # warm imports and scikit-learn before timing
    for name, groups in (("gsm8k", gsm8k_groups()), ("math", math_groups())):
        pairs, seconds = run(groups)
        words = sum(len(t.split()) for g in groups for t in g) / sum(len(g) for g in groups)
        per_1000 = seconds * 1000 / pairs
        print(f"{name}: {pairs} pairs, {words:.0f} words/response, {seconds:.2f} s "
              f"({per_1000:.2f} s per 1,000 pairs; {per_1000 / GOAL_S:.2f} of the {GOAL_S:g} s goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
