"""The scorer audit on real data: mathlens's answer check against people, through `mathlens import`.

Imports the GSM8K model solutions of `../shared/data/gsm8k_model_solutions.jsonl` (four models,
1,319 questions, each solution labelled `is_correct` by a person), one run per model, with the
label as the source's verdict (`-F score=MODEL.is_correct`) and the GSM8K test set as the items;
runs the `answers` and `source-agreement` analyses and prints, per model, the records compared,
agreement and Cohen's kappa with their 95% intervals, and the 2x2 counts (people say correct and
mathlens not, and the reverse), with the time of each step. The answer checker was developed
against this file: the figures are in-sample.

    .venv/bin/python bench/bench_scorer_audit.py [--rows N] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def main() -> None:
    from mathlens.analyze.registry import run_analyzers
    from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT
    from mathlens.runs.importing.importer import ImportRequest, import_run
    from mathlens.runs.records import ItemSource
    from mathlens.runs.store import RunStore

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=0, help="first N questions (default: all)")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = parser.parse_args()
    lines = (args.data / "gsm8k_model_solutions.jsonl").read_text(encoding="utf-8").splitlines()
    tests = (args.data / "gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines()
    if args.rows:
        lines, tests = lines[:args.rows], tests[:args.rows]
    print(f"{len(lines)} questions x {len(MODELS)} models; human is_correct labels as the source's verdicts "
          "(in-sample for the answer checker)")
    print(f"{'model':<18} {'n':>5} {'agreement [95% CI]':>26} {'kappa [95% CI]':>26} {'people only':>11} "
          f"{'mathlens only':>13} {'import s':>8} {'analyse s':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source, items = root / "solutions.jsonl", root / "gsm8k.jsonl"
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        items.write_text("\n".join(tests) + "\n", encoding="utf-8")
        for model in MODELS:
            t0 = time.perf_counter()
            result = import_run(ImportRequest(
                source=source, items=[ItemSource(source=str(items), format="gsm8k")], out=root / model, fmt="jsonl",
                mapping={"question": "question", "response": f"{model}.solution", "score": f"{model}.is_correct"},
                model=model))
            t1 = time.perf_counter()
            run_analyzers(RunStore(result.root), ["answers", "source-agreement"])
            t2 = time.perf_counter()
            doc = SOURCE_AGREEMENT.read(result.root)
            assert doc is not None
            (row,) = doc.summary.rows
            print(f"{model:<18} {row.compared:>5} {row.agreement.format(3):>26} {row.kappa.format(3):>26} "
                  f"{row.source_only:>11} {row.mathlens_only:>13} {t1 - t0:>8.1f} {t2 - t1:>9.1f}")
            print("  " + json.dumps({"both_correct": row.both_correct, "both_incorrect": row.both_incorrect,
                                     "left_out": row.left_out}))


if __name__ == "__main__":
    main()
