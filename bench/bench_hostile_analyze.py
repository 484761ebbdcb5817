"""Hostile responses through the whole analysis path, beside a normal response, side by side.

For every response of tests/cases/limits/hostile_responses.yaml (and its normal response), a run of
one record is made (a scripted model answers the one question with that text, through the real
runner), then `mathlens analyze RUN` (flow, answers, sensitivity, breakdown) runs in a fresh
process. Measured per response: wall seconds of that process and the peak resident memory of it
and of everything it started (its SymPy worker included), read by a driver process from
`RUSAGE_CHILDREN`. Rounds are interleaved (normal, case 1, case 2, ..., then again), and the median
of the rounds is printed beside the normal response's median, measured in the same rounds.

Goals (issue 32): each hostile response costs under 2 s more than the normal one, and no process
goes over 500 MB. The machine is shared: the extra seconds are the figure to read, not the
absolute ones. Asserts nothing; `--json` prints one document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

CASES = Path(__file__).resolve().parents[1] / "tests" / "cases" / "limits" / "hostile_responses.yaml"
GOAL_EXTRA_S = 2.0
GOAL_MB = 500.0

DRIVER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "analyze", sys.argv[1]],
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"rc": proc.returncode, "seconds": took, "peak_mb": peak, "stderr": proc.stderr[-300:]}))
"""


def build_text(case: dict[str, Any]) -> str:
    """A case's response: its parts, each `text` repeated `times` (default 1)."""
    return "".join(str(p["text"]) * int(p.get("times", 1)) for p in case["parts"])


def load_cases(path: Path = CASES) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the table's header: question, reference, normal case; the hostile cases)."""
    table = yaml.safe_load(path.read_text(encoding="utf-8"))
    return table, list(table["cases"])


async def _make_run(root: Path, question: str, reference: str, text: str) -> Path:
    from mathlens.models.base import GenerateConfig
    from mathlens.models.model import RetryPolicy
    from mathlens.runs.records import ItemSource, ModelEntry
    from mathlens.runs.runner import base_manifest, build_models, execute
    from mathlens.runs.store import RunStore

    root.mkdir(parents=True)
    items = root / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "text": question, "answers": [reference]}) + "\n", encoding="utf-8")
    manifest = base_manifest(items=[ItemSource(source=str(items))], models=[ModelEntry(spec="mock/hostile")],
                             generate=GenerateConfig(max_tokens=10**7), system_role="Solve the problem.")
    store = RunStore(root / "run")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RetryPolicy(), None)
    models["mock/hostile"].provider.func = lambda _messages: text  # type: ignore[attr-defined]
    result = await execute(store, manifest, models)
    if result.written != 1 or result.errors:
        raise RuntimeError(f"the one-record run was not made ({result})")
    return store.root


def make_run(root: Path, question: str, reference: str, text: str) -> Path:
    """A finished run of one record answering `question` with `text`."""
    return asyncio.run(_make_run(root, question, reference, text))


def measure(run: Path) -> dict[str, Any]:
    """One `mathlens analyze RUN` in a fresh process: seconds, exit code, peak MB of it and its children."""
    out = subprocess.run([sys.executable, "-c", DRIVER, str(run)], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (medians are printed)")
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    header, cases = load_cases()
    if args.only:
        wanted = {c.strip() for c in args.only.split(",")}
        cases = [c for c in cases if c["id"] in wanted]
    everything = [header["normal"], *cases]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {c["id"]: make_run(Path(tmp) / c["id"], header["question"], header["reference"], build_text(c))
                for c in everything}
        samples: dict[str, list[dict[str, Any]]] = {c["id"]: [] for c in everything}
        for _ in range(args.repeats):
            for c in everything:
                samples[c["id"]].append(measure(runs[c["id"]]))
    normal_s = statistics.median(s["seconds"] for s in samples["normal"])
    rows = []
    for c in everything:
        got = samples[c["id"]]
        seconds = statistics.median(s["seconds"] for s in got)
        peak = max(s["peak_mb"] for s in got)
        rows.append({"case": c["id"], "chars": len(build_text(c)), "issue": c.get("issue"),
                     "seconds": round(seconds, 2), "extra_s": round(seconds - normal_s, 2),
                     "peak_mb": round(peak, 1), "exit": sorted({s["rc"] for s in got}),
                     "meets_goal": seconds - normal_s < GOAL_EXTRA_S and peak < GOAL_MB and all(
                         s["rc"] == 0 for s in got),
                     "stderr": next((s["stderr"] for s in got if s["rc"]), "")})
    hostile = [r for r in rows if r["case"] != "normal"]
    summary = {"normal_seconds": round(normal_s, 2),
               "worst_extra_s": max((r["extra_s"] for r in hostile), default=None),
               "worst_peak_mb": max((r["peak_mb"] for r in rows), default=None), "goal_extra_s": GOAL_EXTRA_S,
               "goal_mb": GOAL_MB, "repeats": args.repeats, "missing_goal": [r["case"] for r in hostile
                                                                             if not r["meets_goal"]]}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return
    print(f"mathlens analyze of one record, median of {args.repeats} interleaved rounds")
    print(f"{'case':<24} {'chars':>9} {'seconds':>8} {'extra s':>8} {'peak MB':>8}  goal")
    for r in rows:
        mark = "" if r["case"] == "normal" else ("ok" if r["meets_goal"] else "MISSED")
        print(f"{r['case']:<24} {r['chars']:>9,} {r['seconds']:>8.2f} {r['extra_s']:>8.2f} {r['peak_mb']:>8.0f}  {mark}"
              + (f"  exit {r['exit']}: {r['stderr'][-120:]}" if r["stderr"] else ""))
    print(f"worst: {summary['worst_extra_s']} s more than the normal response (goal < {GOAL_EXTRA_S} s), "
          f"{summary['worst_peak_mb']} MB (goal < {GOAL_MB:.0f} MB)")


if __name__ == "__main__":
    main()
