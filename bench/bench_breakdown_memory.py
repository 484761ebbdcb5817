"""Breakdown's peak memory and time as the run grows: is it flat?

Synthetic runs of each size in `--sizes` (default 2,000 and 20,000 records) are built from the same
60 real GSM8K model solutions (`mathlens.testing.synthetic`, ../shared/data) and given their answers
analysis; then the breakdown alone analyses each run in a fresh process, which prints its seconds
and its own peak resident memory (ru_maxrss). Rounds are interleaved (small, large, small, ...) and
medians are printed side by side with the ratio to the smallest run: flat memory means a ratio near
1 while the records grow 10x. Asserts nothing; the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

BUILD = """
import sys
from pathlib import Path
from mathlens.analyze.registry import run_analyzers
from mathlens.testing.synthetic import write_synthetic_run
n, root, data = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
store = write_synthetic_run(root, n, data, solutions=60, seed=n, sources=("gsm8k",))
assert run_analyzers(store, ["answers"], {})["answers"].status == "ok"
"""

MEASURE = """
import json, resource, sys, time
from pathlib import Path
from mathlens.analyze.registry import run_analyzers
from mathlens.runs.store import RunStore
start = time.perf_counter()
done = run_analyzers(RunStore(Path(sys.argv[1])), ["breakdown"], {"breakdown": {"resamples": 50}})
print(json.dumps({"status": done["breakdown"].status, "seconds": time.perf_counter() - start,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000", help="comma-separated run sizes (records)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (medians are printed)")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {n: Path(tmp) / f"run-{n}" for n in sizes}
        for n, root in runs.items():
            subprocess.run([sys.executable, "-c", BUILD, str(n), str(root), str(args.data)], check=True)
        seen: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
        for _ in range(args.repeats):
            for n, root in runs.items():
                out = subprocess.run([sys.executable, "-c", MEASURE, str(root)], check=True, capture_output=True,
                                     text=True)
                seen[n].append(json.loads(out.stdout.strip().splitlines()[-1]))
    first = sizes[0]
    mb0 = statistics.median(r["peak_mb"] for r in seen[first])
    print(f"breakdown alone, fresh process per run, median of {args.repeats} interleaved rounds")
    print(f"{'records':>8}  {'seconds':>8}  {'peak MB':>8}  {'MB ratio':>8}  {'records ratio':>13}")
    for n in sizes:
        s = statistics.median(r["seconds"] for r in seen[n])
        mb = statistics.median(r["peak_mb"] for r in seen[n])
        print(f"{n:>8,}  {s:>8.2f}  {mb:>8.1f}  {mb / mb0:>8.2f}x  {n / first:>12.0f}x")


if __name__ == "__main__":
    main()
