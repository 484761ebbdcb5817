"""The embedded models side by side on the same seeded GSM8K and MATH500 questions.

    .venv/bin/python bench/bench_embedded_models.py [--n 50] [--seed 1] [--max-tokens 512]
        [--models embedded/qwen2.5-coder-0.5b,embedded/qwen2.5-coder-1.5b] [--sets gsm8k,math500,exams]
        [--out DIR] [-M n_threads=1]

For each model and data set (`exams`: the first question of each built-in exam), runs `mathlens run`
(a fresh response cache, so every answer is really generated), then `mathlens analyze --only
answers`, and prints: accuracy by the answers analyzer, the share of responses cut by the token cap,
the share that state a final answer, the share flagged degenerate by the output-quality checks, and
generation speed (completion tokens over model seconds). On a busy machine pass
`-M n_threads=1`: llama.cpp's threads wait for each other, and with another process on the same
cores a two-thread generation can slow down tenfold. Reads the data from
../shared/data (or $MATHLENS_SHARED_DATA); prints a note and exits 0 when it is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mathlens.analyze.grading.analyzer import ANSWERS

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MATHLENS_SHARED_DATA") or ROOT.parent / "shared" / "data")
EXAMS = "exams"
SETS = {"gsm8k": ("gsm8k_test.jsonl", "gsm8k"), "math500": ("math500_test.jsonl", "math"), "exams": (EXAMS, "exam")}
ML = str(Path(sys.executable).with_name("mathlens"))
#: the stored quality flags that make a response degenerate (see mathlens.analyze.quality)
DEGENERATE = ("empty", "echo", "repetition_loop", "wrong_script")


def _run(model: str, data: str, fmt: str, args: argparse.Namespace, out: Path, env: dict[str, str]) -> float:
    if data == EXAMS:  # the first question of each built-in exam
        from mathlens.items.loaders import builtin_exams

        cmd = [ML, "run", *builtin_exams(), "--limit", "1"]
    else:
        cmd = [ML, "run", str(DATA / data), "--format", fmt, "--sample", str(args.n), "--seed", str(args.seed)]
    cmd += ["--model", model, "--max-tokens", str(args.max_tokens), "--out", str(out), "--quiet", "--json"]
    if args.system_role:
        cmd += ["--system-role", args.system_role]
    for option in args.M:
        cmd += ["-M", option]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    subprocess.run([ML, "analyze", str(out), "--only", "answers", "--json"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return elapsed


def _measure(out: Path) -> dict[str, Any]:
    records = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    entries = [e.model_dump(mode="json") for e in ANSWERS.entries(out)]
    ok = [r for r in records if r["status"] == "ok"]
    counts = {s: sum(e["status"] == s for e in entries) for s in ("correct", "incorrect", "unparseable")}
    checkable = sum(counts.values()) + sum(e["status"] == "no_response" for e in entries)
    degenerate = [e for e in entries if any((e.get("quality") or {}).get(f) for f in DEGENERATE)]
    flags: dict[str, int] = {}
    for e in entries:
        for name, value in (e.get("quality") or {}).items():
            if value is True:
                flags[name] = flags.get(name, 0) + 1
    fresh = [r for r in ok if not r.get("cached")]  # a cached record's latency is that of an earlier run
    tokens = sum(r["usage"]["completion_tokens"] for r in fresh)
    model_s = sum(r["latency_s"] for r in fresh)
    return {
        "records": len(records), "errors": len(records) - len(ok),
        "accuracy": counts["correct"] / checkable if checkable else None, "counts": counts,
        "truncated_share": sum(r["finish_reason"] == "length" for r in ok) / len(ok) if ok else None,
        # a response states a final answer unless the quality checks flag it (a failed request has none)
        "final_answer_share": (sum(e.get("quality") is not None and not e["quality"].get("no_final_answer")
                                   for e in entries) / len(entries)) if entries else None,
        "degenerate_share": len(degenerate) / len(entries) if entries else None,
        "quality_flags": flags,
        "mean_completion_tokens": sum(r["usage"]["completion_tokens"] for r in ok) / len(ok) if ok else None,
        "tokens_per_s": tokens / model_s if model_s else None,
    }


def summarize(base: Path) -> list[dict[str, Any]]:
    """The figures of every finished run under `base` (to re-read a bench's runs later)."""
    rows = []
    for out in sorted(p for p in base.iterdir() if ANSWERS.exists(p)):
        rows.append({"run": out.name, **_measure(out)})
    return rows


def main() -> int:
    """Run both models over both data sets and print one table (and JSON with --json)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--models", default="embedded/qwen2.5-coder-0.5b,embedded/qwen2.5-coder-1.5b")
    ap.add_argument("--sets", default="gsm8k,math500,exams",
                    help="gsm8k, math500 (--n seeded questions each) and exams (the first question of each built-in "
                         "exam)")
    ap.add_argument("--system-role", default=None, help="a named system role or a file (default: the run's)")
    ap.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary folder)")
    ap.add_argument("-M", action="append", default=[], help="model option key=value, e.g. n_threads=1")
    ap.add_argument("--cache", type=Path, default=None,
                    help="response cache folder (default: a new one under --out, so every answer is generated)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (DATA / "gsm8k_test.jsonl").exists():
        print(f"third-party data not found at {DATA}; nothing to measure.")
        return 0
    base = args.out or Path(tempfile.mkdtemp(prefix="mathlens-bench-models-"))
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(args.cache or base / "cache")}
    results = []
    for model in args.models.split(","):
        for set_name in args.sets.split(","):
            data, fmt = SETS[set_name]
            out = base / f"{model.replace('/', '_')}-{set_name}"
            wall = _run(model, data, fmt, args, out, env)
            row = {"model": model, "set": set_name, "wall_s": round(wall, 1), **_measure(out)}
            results.append(row)
            print(f"{model:32s} {set_name:8s} acc {row['accuracy']:.2f}  truncated {row['truncated_share']:.2f}  "
                  f"with a final answer {row['final_answer_share']:.2f}  "
                  f"degenerate {row['degenerate_share'] if row['degenerate_share'] is not None else float('nan'):.2f}"
                  f"  {row['tokens_per_s']:.1f} tok/s  {row['mean_completion_tokens']:.0f} tok/answer  "
                  f"wall {row['wall_s']} s  flags {row['quality_flags']}", flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    print(f"runs kept in {base}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
