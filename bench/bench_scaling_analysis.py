"""Analysis on the local pool vs Ray: flow throughput, Ray overhead, and peak memory by run size.

Runs are synthetic, built from real solutions (`mathlens.testing.synthetic`: MATH500 reference
solutions and GSM8K model solutions from ../shared/data, each answered to the original prompt and
one ablation variant). Every case runs in a fresh process so peaks and warm caches do not mix.

- `throughput`: the flow analysis of a run of `--solutions` records with the local pool (2 threads,
  the default: the baseline), and with Ray at 1 and 2 workers (a private local cluster of that many
  CPUs, 200 MB object store). Timed from the analysis start, so Ray's cluster start is reported
  apart (`start_s`); the time of the Ray workers' first imports is inside the analysis time.
- `overhead`: a no-op Ray task's round trip (median of 200, ms) and the cost per batch of
  `RayExecutor.map` over 2,000 trivial items in batches of 1 and 50, against the local pool.
- `memory`: peak RSS of the process tree (the analysing process, its SymPy workers and, for Ray,
  the raylet and its workers; sampled every 0.2 s with psutil) and the process's own ru_maxrss,
  for runs of `--sizes` records analysed by the cheap analyses: answers, sensitivity (without the
  flow step analysis) and breakdown; with `--big-only-sensitivity` (the default) the largest run is
  analysed by sensitivity and breakdown only, to keep it within minutes on two cores.

Prints the numbers and their ratios to the local pool side by side. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

CHILD = r"""
import json, resource, sys, threading, time
from pathlib import Path
import psutil
from mathlens.analyze.executor import ExecutorOptions, open_executor
from mathlens.analyze.protocol import AnalysisJob
from mathlens.analyze.registry import get_analyzer, plan

mode, run, kind, workers = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
names = sys.argv[5].split(",") if len(sys.argv) > 5 else ["flow"]
peak = [0]
stop = threading.Event()

def sample():
    me = psutil.Process()
    while not stop.is_set():
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        peak[0] = max(peak[0], total)
        stop.wait(0.2)

threading.Thread(target=sample, daemon=True).start()
opts = ExecutorOptions(kind=kind, workers=workers, object_store_mb=200)
t0 = time.perf_counter()
ex = open_executor(opts, default_workers=workers)
start_s = time.perf_counter() - t0
out = {"start_s": round(start_s, 2)}
if mode == "overhead":
    if kind == "ray":
        import ray
        noop = ray.remote(lambda: None)
        ray.get(noop.remote())
        times = []
        for _ in range(200):
            t = time.perf_counter(); ray.get(noop.remote()); times.append(time.perf_counter() - t)
        times.sort()
        out["noop_ms"] = round(1000 * times[len(times) // 2], 3)
    for b in (1, 50):
        list(ex.map(abs, range(200), batch=b))  # warm
        t = time.perf_counter()
        list(ex.map(abs, range(2000), batch=b))
        out[f"per_batch_ms_b{b}"] = round(1000 * (time.perf_counter() - t) / (2000 / b), 3)
else:
    from mathlens.runs.store import RunStore
    store = RunStore(run)
    opt = {"sensitivity": {"flow": False}}
    t = time.perf_counter()
    for name in plan(names):
        a = get_analyzer(name)
        a.run(AnalysisJob(store, a.parse_options(opt.get(name, {})), executor_options=opts, shared_executor=ex))
    out["analysis_s"] = round(time.perf_counter() - t, 2)
ex.close()
stop.set()
out["peak_tree_mb"] = round(peak[0] / 2**20, 1)
out["maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


def child(mode: str, run: Path, kind: str, workers: int, names: str = "flow") -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(run), kind, str(workers), names],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} {kind} {workers}: {done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _ratio(x: float, base: float) -> str:
    return f"{x / base:.2f}x" if base else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--solutions", type=int, default=300, help="records of the throughput run")
    parser.add_argument("--sizes", default="10000,100000", help="run sizes of the memory cases")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: throughput,overhead,memory")
    parser.add_argument("--all-analyses-big", action="store_true",
                        help="analyse the largest run with answers too (hours on two cores)")
    args = parser.parse_args()
    if not (DATA / "math500_test.jsonl").is_file():
        raise SystemExit(f"{DATA} is absent (see ../shared/data/README.md)")
    from mathlens.testing.synthetic import write_synthetic_run

    skip = set(args.skip.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if "throughput" not in skip:
            print(f"== flow throughput, {args.solutions} records (real MATH500/GSM8K solutions)")
            rows = []
            for label, kind, workers in (("local pool, 2 threads", "local", 2), ("ray, 1 worker", "ray", 1),
                                         ("ray, 2 workers", "ray", 2)):
                run = write_synthetic_run(base / f"t-{kind}-{workers}", args.solutions, DATA,
                                          solutions=args.solutions // 2).root
                r = child("flow", run, kind, workers)
                rows.append((label, args.solutions / r["analysis_s"], r))
            local = rows[0][1]
            for label, rate, r in rows:
                print(f"{label:24} {rate:7.2f} solutions/s  ({_ratio(rate, local)} of local)  "
                      f"start {r['start_s']:.1f} s, peak tree RSS {r['peak_tree_mb']:.0f} MB")
        if "overhead" not in skip:
            print("== overhead (2,000 trivial items)")
            lo = child("overhead", base, "local", 2)
            ra = child("overhead", base, "ray", 2)
            print(f"ray no-op task round trip: {ra['noop_ms']:.2f} ms")
            for b in (1, 50):
                key = f"per_batch_ms_b{b}"
                print(f"per batch of {b:2}: local {lo[key]:.3f} ms, ray {ra[key]:.3f} ms "
                      f"({_ratio(ra[key], lo[key])} of local)")
        if "memory" not in skip:
            sizes = [int(s) for s in args.sizes.split(",") if s]
            print("== peak memory by run size (cheap analyses; RSS of the process tree and of the process)")
            for n in sizes:
                run = write_synthetic_run(base / f"m-{n}", n, DATA).root
                big = n == max(sizes) and len(sizes) > 1 and not args.all_analyses_big
                names = "sensitivity,breakdown" if big else "answers,sensitivity,breakdown"
                for kind in ("local", "ray"):
                    if big and kind == "ray":
                        continue
                    r = child("memory", run, kind, 2, names)
                    print(f"{n:7} records, {kind:5} [{names}]: tree {r['peak_tree_mb']:.0f} MB, "
                          f"process {r['maxrss_mb']:.0f} MB, {r['analysis_s']:.0f} s")


if __name__ == "__main__":
    main()
