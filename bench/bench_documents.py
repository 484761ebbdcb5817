"""Memory and time of reading a large analysis document, streamed, against loading it whole.

Writes a flow document of N entries (one real flow analysis reused, default N = 20,000) through
`FLOW.write`, then measures, each in a fresh process so peaks do not mix:

- `stream`: validating every entry one at a time (`FLOW.entries`), as an analysis reading it does;
- `one`: building the key -> offset index and fetching one record's entry, as a report section does;
- `whole` (the baseline): the same entries as one JSON document loaded and validated at once, the
  layout analyses used before documents.

Prints peak traced memory (tracemalloc) and wall time of each, and the ratios to the baseline.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time, tracemalloc
from pathlib import Path
from pydantic import TypeAdapter
from mathlens.analyze.flow.models import FLOW, FlowRecord
root, mode = Path(sys.argv[1]), sys.argv[2]
tracemalloc.start()
t = time.perf_counter()
if mode == "stream":
    n = sum(1 for _ in FLOW.entries(root))
elif mode == "one":
    index = FLOW.index(root)
    n = len(index)
    FLOW.entry_at(root, index[next(iter(index))][0])
else:
    data = json.loads((root / "whole.json").read_text(encoding="utf-8"))
    n = len(TypeAdapter(list[FlowRecord]).validate_python(data["records"]))
elapsed = time.perf_counter() - t
print(json.dumps({"n": n, "peak_mb": tracemalloc.get_traced_memory()[1] / 1e6, "s": elapsed}))
"""


def build(root: Path, n: int) -> None:
    from mathlens.analyze.flow.models import FLOW, FlowRecord, FlowSummary
    from mathlens.analyze.flow.solution import analyze_solution
    from mathlens.runs.documents import RecordRef

    text = "\n".join(f"{i}. f_x = 2xy so at (-1, 4) the value is {i * 3 - 8}." for i in range(1, 8))
    result = analyze_solution(text, "Find the gradient of f(x,y) = x^2 y at (-1, 4).")
    refs = (RecordRef(key=f"m|baseline|e|q{i}|original|r0", model="m", configuration="baseline", exam_id="e",
                      question_id=f"q{i}") for i in range(n))
    entries = (FlowRecord(record=r, status="ok", result=result) for r in refs)
    FLOW.write(root, run_id="bench", records_sha256="", entries=entries,
               summary=FlowSummary(lexicon_version=result.lexicon_version, records=n, analysed=n))
    with (root / "whole.json").open("w", encoding="utf-8") as fh:
        fh.write('{"records": [')
        for i, e in enumerate(FLOW.entries(root)):
            fh.write(("," if i else "") + e.model_dump_json())
        fh.write("]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.n)
        size = (root / "analysis" / "flow.jsonl").stat().st_size / 1e6
        out = {}
        for mode in ("whole", "stream", "one"):
            proc = subprocess.run([sys.executable, "-c", CHILD, str(root), mode], capture_output=True, text=True,
                                  check=True)
            out[mode] = json.loads(proc.stdout)
    base = out["whole"]
    print(f"flow document: {args.n} entries, {size:.1f} MB on disk")
    for mode, label in (("whole", "load whole (baseline)"), ("stream", "stream every entry"),
                        ("one", "index + one entry")):
        r = out[mode]
        print(f"{label:24s} peak {r['peak_mb']:8.1f} MB ({r['peak_mb'] / base['peak_mb']:.3f}x)   "
              f"time {r['s']:6.2f} s ({r['s'] / base['s']:.2f}x)")


if __name__ == "__main__":
    main()
