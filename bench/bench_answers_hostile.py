"""Hostile responses through the answers analysis: time and peak memory of each against a normal one.

Every response of `tests/cases/answers/hostile.yaml` (an unclosed `\\boxed{`, zero-width and RTL
text, 20,000 parentheses, `\\frac` nested 3,000 deep, a million-digit integer, power towers, and
more) goes, in a fresh child process, through what the `answers` analyzer runs per record
(`analyzer.check_record`: the verdict, the format counts and the quality flags) with a reference
of `-9/4`. The SymPy worker is started and used once before timing, so each case pays only for
its own work. Printed per case: the time of the check, the extra time over the normal response
measured in the same run (the goal is < 2 s), the peak resident memory of the child process and
of its workers (the goal is < 500 MB each), and the verdict. The machine is shared and noisy:
compare the `extra` column, not absolute times.

    .venv/bin/python bench/bench_answers_hostile.py [--json]
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

CASES = Path(__file__).resolve().parents[1] / "tests" / "cases" / "answers" / "hostile.yaml"
GOAL_EXTRA_S = 2.0
GOAL_MB = 500.0


def _response(spec: dict[str, Any]) -> str:
    return "".join(text * times for text, times in spec["parts"])


def _worker_peaks_mb() -> float:
    """The largest peak resident memory among this process's live children (the SymPy workers)."""
    me, peak = str(os.getpid()), 0.0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == me and "VmHWM" in fields:
            peak = max(peak, int(fields["VmHWM"].split()[0]) / 1024)
    return peak


def _one(name: str, out: Any) -> None:
    import logging

    from mathlens.analyze.grading.analyzer import check_record
    from mathlens.analyze.grading.compliance import FormatRules
    from mathlens.analyze.grading.equivalence import DEFAULT_CONFIG, check_answer
    from mathlens.items.schema import Question
    from mathlens.models.base import GenerateConfig, Message
    from mathlens.runs.records import RunRecord

    logging.disable(logging.WARNING)
    specs = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    question = Question(id="q", text="Find the minimum of x^2 + 3x.", answers=["-9/4"])
    check_answer("Final answer: \\sin x \\cos x", Question(id="w", text="t", answers=["\\frac{1}{2}\\sin 2x"]))
    record = RunRecord(key="k", model="m", configuration="baseline", exam_id="e", question_id="q",
                       messages=[Message(role="user", content=question.text)], config=GenerateConfig(),
                       request_hash="r", content_hash="c", response=_response(specs[name]), finish_reason="stop",
                       created_at=datetime.now(UTC))
    start = time.perf_counter()
    entry = check_record(record, question, FormatRules(latex=False, markup=False), DEFAULT_CONFIG)
    elapsed = time.perf_counter() - start
    verdict = entry.verdict
    out.put({"case": name, "seconds": elapsed, "chars": len(record.response or ""),
             "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "worker_mb": _worker_peaks_mb(),
             "status": entry.status, "how": verdict.how if verdict else None,
             "error": verdict.comparison.error if verdict and verdict.comparison else ""})


def main() -> int:
    names = list(yaml.safe_load(CASES.read_text(encoding="utf-8")))
    ctx = mp.get_context("spawn")
    rows = []
    for name in names:
        queue = ctx.Queue()
        child = ctx.Process(target=_one, args=(name, queue))
        child.start()
        child.join(600)
        if child.is_alive():
            child.kill()
            rows.append({"case": name, "seconds": None})
            continue
        rows.append(queue.get())
    base = next(r["seconds"] for r in rows if r["case"] == "normal")
    for r in rows:
        r["extra_s"] = None if r["seconds"] is None else r["seconds"] - base
    if "--json" in sys.argv:
        print(json.dumps({"goal_extra_s": GOAL_EXTRA_S, "goal_mb": GOAL_MB, "cases": rows}, indent=1))
        return 0
    print(f"{'case':32s} {'chars':>9s} {'time':>8s} {'extra':>8s} {'RSS':>7s} {'worker':>7s}  verdict")
    for r in rows:
        if r["seconds"] is None:
            print(f"{r['case']:32s} did not finish in 600 s")
            continue
        print(f"{r['case']:32s} {r['chars']:9,d} {r['seconds']:7.3f}s {r['extra_s']:+7.3f}s {r['rss_mb']:6.0f}M "
              f"{r['worker_mb']:6.0f}M  {r['status']} ({r['how']}) {r['error'][:50]}")
    timed = [r for r in rows if r["seconds"] is not None]
    worst_t = max(timed, key=lambda r: r["extra_s"])
    worst_m = max(timed, key=lambda r: max(r["rss_mb"], r["worker_mb"]))
    print(f"\nworst extra time: {worst_t['extra_s']:.3f} s ({worst_t['case']}); goal < {GOAL_EXTRA_S:.0f} s, "
          f"ratio {worst_t['extra_s'] / GOAL_EXTRA_S:.2f}")
    peak = max(worst_m["rss_mb"], worst_m["worker_mb"])
    print(f"worst peak memory: {peak:.0f} MB ({worst_m['case']}); goal < {GOAL_MB:.0f} MB, ratio {peak / GOAL_MB:.2f}")
    return 0 if len(timed) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
