"""The embedded models as rubric judges, side by side on the same answers.

    .venv/bin/python bench/bench_embedded_judges.py [--exam calc1-exam1] [--run RUN_DIR]
        [--judges embedded/qwen2.5-coder-0.5b,embedded/gemma3-270m] [--max-tokens 400] [-M n_threads=1]

Answers come from `--run` (a run directory) or, without it, from a fresh run of `--exam` with the
default embedded model. Each judge grades the run's original answers with the built-in calculus
rubric (in its own copy of the run). Printed per judge: the share of answers graded (a usable,
in-bounds reply), seconds per grade, and how often the judge's final-answer criterion agrees with
mathlens's own symbolic answer verdict (judge "correct" = at least half of that criterion's
points; only records the answers analysis marked correct or incorrect are compared), with
Cohen's kappa and the agreement of always answering the majority verdict. The judge is shown
mathlens' checks as evidence (the default of `mathlens grade`) and scores the final answer alone
(`--final-answer judge`), so the agreement measured is the judge's own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mathlens.analyze.grading.analyzer import ANSWERS
from mathlens.analyze.grading.grades import grade_run
from mathlens.analyze.grading.judge import JudgeOptions
from mathlens.analyze.grading.rubric import builtin_rubric
from mathlens.models.cache import ResponseCache
from mathlens.models.registry import get_model, parse_options
from mathlens.runs.store import RunStore

ML = str(Path(sys.executable).with_name("mathlens"))


def _kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    if not n:
        return None
    po = sum(a == b for a, b in pairs) / n
    pa, pb = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe == 1 else (po - pe) / (1 - pe)


async def _grade(run: Path, judge: str, max_tokens: int, options: dict[str, Any]) -> tuple[list[Any], float]:
    model = get_model(judge, options, cache=ResponseCache())
    try:
        start = time.perf_counter()
        # The judge alone scores the final answer here: what is measured is its own agreement with the checker.
        graded = await grade_run(RunStore(run), model, builtin_rubric(), JudgeOptions(max_tokens=max_tokens),
                                 final_answer="judge")
        return graded.grades, time.perf_counter() - start
    finally:
        await model.aclose()


def _measure(run: Path, judge: str, max_tokens: int, options: dict[str, Any]) -> dict[str, Any]:
    grades, elapsed = asyncio.run(_grade(run, judge, max_tokens, options))
    verdict = {e.record.key: e.status for e in ANSWERS.entries(run)}
    pairs = []
    for g in grades:
        crit = next((c for c in g.scores if c.unit == "final_answer"), None)
        if g.status != "graded" or crit is None or verdict.get(g.record.key) not in ("correct", "incorrect"):
            continue
        pairs.append(((crit.value or 0) >= (crit.max or 0) / 2, verdict[g.record.key] == "correct"))
    majority = max(sum(b for _, b in pairs), sum(not b for _, b in pairs)) / len(pairs) if pairs else None
    graded = sum(g.status == "graded" for g in grades)
    return {"judge": judge, "answers": len(grades), "graded": graded,
            "graded_share": graded / len(grades) if grades else None,
            "s_per_grade": elapsed / len(grades) if grades else None,
            "compared": len(pairs),
            "final_answer_agreement": sum(a == b for a, b in pairs) / len(pairs) if pairs else None,
            "kappa": _kappa(pairs), "majority_baseline": majority,
            "ungraded_reasons": sorted({g.error[:80] for g in grades if g.status != "graded"})[:5]}


def main() -> int:
    """Grade one set of answers with each judge and print one line per judge."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exam", default="calc1-exam1")
    ap.add_argument("--run", type=Path, default=None)
    ap.add_argument("--judges", default="embedded/qwen2.5-coder-0.5b,embedded/gemma3-270m")
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("-M", action="append", default=[], help="model option key=value for every model (n_threads=1)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="mathlens-bench-judges-"))
    run = args.run
    if run is None:
        run = base / "answers"
        cmd = [ML, "run", args.exam, "--model", "embedded", "--out", str(run), "--quiet", "--json"]
        for option in args.M:
            cmd += ["-M", option]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=os.environ)
    subprocess.run([ML, "analyze", str(run), "--only", "answers", "--json"], check=True, stdout=subprocess.DEVNULL)
    rows = []
    for judge in args.judges.split(","):
        copy = base / judge.replace("/", "_")
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns(".lock"))
        row = _measure(copy, judge, args.max_tokens, parse_options(args.M))
        rows.append(row)

        def f(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f}"

        print(f"{judge:32s} graded {row['graded']}/{row['answers']} ({f(row['graded_share'])})  "
              f"{f(row['s_per_grade'])} s/grade  final-answer agreement {f(row['final_answer_agreement'])} "
              f"on {row['compared']} (kappa {f(row['kappa'])}, majority baseline {f(row['majority_baseline'])})",
              flush=True)
        if row["ungraded_reasons"]:
            print(f"    ungraded because: {row['ungraded_reasons']}")
    if args.json:
        print(json.dumps(rows, indent=2))
    print(f"answers from {run}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
