"""Speed of `mathlens import` (with the summary it prints) and of `mathlens show` on the imported run.

Writes N (default 10,000) samples over a set of 500 questions (20 repeats each), in two formats:

- `jsonl`: plain JSONL (`id`, `question`, `response`, `model`), matched by id;
- `lm-eval`: an lm-evaluation-harness samples file (doc, arguments with a chat prompt, resps,
  the `exact_match` verdict kept as the source's), matched by question text inside the prompt
  template, as a real lm-eval import is;
- `no-items`: the JSONL file imported without an items file (the questions built from the rows).

For each it times the whole import (read, check, match, build the records, write the run) and the
baseline: `json.loads` of every line of the same file. Prints seconds, records/s and the ratio of
import time to baseline time (how many times the bare parse the import costs).

Then, as a user sees them, fresh processes of the command line (interleaved, median of the repeats):
`mathlens import ... --json` (the import and the summary it prints after it; goal >= 5,000 rows/s)
and `mathlens show RUN` on the imported run (the first one after the import, and again; goal
<= 0.5 s at any run size), beside `mathlens --help` measured in the same run as the cost of
starting Python and the command line at all. Asserts nothing; the machine is shared, so read the
ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTIONS = 500


def _question(i: int) -> str:
    return f"A shop sells {i + 3} boxes of {i % 7 + 2} pencils each. How many pencils does it sell in total?"


def write_items(path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(QUESTIONS):
            fh.write(json.dumps({"id": f"q{i}", "text": _question(i), "answers": [str((i + 3) * (i % 7 + 2))]}) + "\n")


def _answer(i: int) -> str:
    steps = "\n".join(f"Step {k}: multiply and add, {k} * {i % 7 + 2} = {k * (i % 7 + 2)}." for k in range(1, 6))
    return f"<think>Count boxes times pencils.</think>{steps}\nFinal answer: {(i + 3) * (i % 7 + 2)}"


def write_jsonl(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for s in range(n):
            i = s % QUESTIONS
            fh.write(json.dumps({"id": f"q{i}", "question": _question(i), "response": _answer(i),
                                 "model": "bench-model"}) + "\n")


def write_lm_eval(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for s in range(n):
            i = s % QUESTIONS
            prompt = json.dumps([{"role": "user", "content": f"Question: {_question(i)}\nAnswer:"}])
            fh.write(json.dumps({
                "doc_id": s, "doc": {"question": _question(i), "answer": f"#### {(i + 3) * (i % 7 + 2)}"},
                "target": str((i + 3) * (i % 7 + 2)),
                "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["Question:"], "max_gen_toks": 256}}},
                "resps": [[_answer(i)]], "filtered_resps": [str((i + 3) * (i % 7 + 2))], "filter": "none",
                "metrics": ["exact_match"], "exact_match": 1.0}) + "\n")


def baseline(path: Path) -> float:
    t = time.perf_counter()
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
    return time.perf_counter() - t


def run_import(source: Path, items: Path | None, out: Path, model: str | None) -> tuple[float, int]:
    from mathlens.runs.importing.importer import ImportRequest, import_run
    from mathlens.runs.records import ItemSource

    t = time.perf_counter()
    result = import_run(ImportRequest(source=source, items=[ItemSource(source=str(items))] if items else [], out=out,
                                      model=model))
    return time.perf_counter() - t, result.imported.records


def _timed(args: list[str]) -> float:
    """Wall seconds of one fresh `mathlens` process (its output discarded; it must succeed)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={**os.environ, "MATHLENS_CACHE_DIR": os.devnull})
    return time.perf_counter() - start


def command_line(root: Path, source: Path, items: Path, n: int, repeat: int) -> None:
    """`mathlens import` (with its summary) and `mathlens show`, each beside `mathlens --help`."""
    imports, shows_first, shows_again, helps = [], [], [], []
    for k in range(repeat):
        out = root / f"cli-run-{k}"
        helps.append(_timed(["--help"]))
        imports.append(_timed(["import", str(source), "--items", str(items), "--out", str(out), "--json"]))
        shows_first.append(_timed(["show", str(out)]))
        shows_again.append(_timed(["show", str(out)]))
    base, imp = statistics.median(helps), statistics.median(imports)
    first, again = statistics.median(shows_first), statistics.median(shows_again)
    print(f"\ncommand line, {n:,} rows (median of {repeat}, fresh processes, interleaved)")
    print(f"  mathlens --help (start-up)      {base:7.2f} s")
    print(f"  mathlens import --json          {imp:7.2f} s  {n / imp:>9,.0f} rows/s  (goal >= 5,000 rows/s; "
          f"{n / max(imp - base, 1e-9):,.0f} rows/s after start-up)")
    print(f"  mathlens show (first)           {first:7.2f} s  {first / base:5.2f}x start-up  (goal <= 0.5 s)")
    print(f"  mathlens show (again)           {again:7.2f} s  {again / base:5.2f}x start-up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="samples in each file")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (the median is printed)")
    parser.add_argument("--cli-rows", type=int, default=20_000, help="rows of the command-line measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        items = root / "items.jsonl"
        write_items(items)
        files = {"jsonl": root / "outputs.jsonl", "lm-eval": root / "samples_bench_2026-01-01T00-00-00.jsonl",
                 "no-items": root / "outputs.jsonl"}
        write_jsonl(files["jsonl"], args.n)
        write_lm_eval(files["lm-eval"], args.n)
        print(f"{args.n:,} samples over {QUESTIONS} questions; median of {args.repeat} runs")
        print(f"{'format':<9} {'MB':>6} {'json.loads s':>13} {'import s':>9} {'records/s':>10} {'import/baseline':>16}")
        for name, path in files.items():
            base = statistics.median(baseline(path) for _ in range(args.repeat))
            times = []
            count = 0
            model = "bench-model" if name == "lm-eval" else None  # lm-eval samples do not name the model
            for k in range(args.repeat):
                s, count = run_import(path, None if name == "no-items" else items, root / f"run-{name}-{k}", model)
                times.append(s)
            took = statistics.median(times)
            print(f"{name:<9} {path.stat().st_size / 1e6:>6.1f} {base:>13.3f} {took:>9.2f} {count / took:>10,.0f} "
                  f"{took / base:>15.1f}x")
        cli_source = root / "cli-outputs.jsonl"
        write_jsonl(cli_source, args.cli_rows)
        command_line(root, cli_source, items, args.cli_rows, args.repeat)


if __name__ == "__main__":
    main()
