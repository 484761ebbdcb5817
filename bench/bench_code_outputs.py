"""The code-output check against Python itself, on the responses of runs given on the command line.

Models trained with an interpreter write a ```python block and then an ```output block. For every
such pair in the runs' responses (each distinct response once):

* **Semantics.** When the step checker works the code out (straight-line arithmetic, see
  analyze/verify/code.py), the same code is also run for real by Python (`python -I`, a fresh
  process, 10 s and 512 MiB, only for code the checker accepted: assignments, arithmetic and
  print). The lines it prints must be those the checker worked out, character for character.
* **Verdicts.** What the code really prints decides whether the written output is right. Against
  that: the flags the checker gives (precision), the wrong outputs it finds (recall), and the
  outputs it leaves undecided, by reason.

Responses come from real runs (e.g. `mathlens run DATA --format gsm8k --sample 60 --model embedded`);
nothing here was written against them unless the run is named in docs/flow.md as in-sample.

    .venv/bin/python bench/bench_code_outputs.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))


def run_for_real(code: str) -> list[str] | None:
    """What Python prints for `code` (None when it fails or runs out of time)."""
    try:
        done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=10,
                              preexec_fn=_limits, cwd="/tmp", env={})
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.splitlines() if done.returncode == 0 else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    args = ap.parse_args()
    from mathlens.analyze.flow.segment import segment_steps
    from mathlens.analyze.verify.code import KIND, Undecided, code_blocks, printed_lines, read_code, same_output

    seen: set[str] = set()
    blocks = decided = semantics_ok = 0
    undecided: Counter[str] = Counter()
    verdicts: Counter[tuple[str, str]] = Counter()  # (truth, checker verdict)
    for run in args.runs:
        for line in (run / "records.jsonl").open():
            rec = json.loads(line)
            text = rec.get("response") or ""
            if rec.get("status") != "ok" or "```" not in text or text in seen:
                continue
            seen.add(text)
            steps = [s.text for s in segment_steps(text)]
            claims = [c for _, code in sorted(read_code(steps).steps.items()) for c in code.claims if c.kind == KIND]
            pairs = [b for b in code_blocks("\n".join(steps)) if b.output is not None]
            blocks += len(pairs)
            by_block = iter(claims)
            for block in pairs:
                assert block.output is not None
                mine = [next(by_block, None) for _ in block.output]
                try:
                    worked = printed_lines(block.code)
                except Undecided as exc:
                    undecided[str(exc).split(" (")[0]] += 1
                    continue
                real = run_for_real(block.code)
                decided += 1
                semantics_ok += real == worked
                if real is None or len(real) != len(block.output):
                    undecided["python stopped, or printed another number of lines"] += 1
                    continue
                for got, said, claim in zip(real, block.output, mine, strict=True):
                    truth = {True: "right", False: "wrong", None: "worded otherwise"}[same_output(got, said)]
                    verdicts[(truth, claim.status if claim is not None else "no claim")] += 1
    flags = sum(n for (_, v), n in verdicts.items() if v == "invalid")
    true_flags = verdicts[("wrong", "invalid")]
    wrong = sum(n for (t, _), n in verdicts.items() if t == "wrong")
    print(f"{len(seen)} distinct responses with a code fence; {blocks} code blocks with an output block")
    print(f"worked out by the checker: {decided}; Python prints the same lines for {semantics_ok} of them")
    print(f"left undecided: {sum(undecided.values())} " + ", ".join(f"{k}: {n}" for k, n in undecided.most_common()))
    print("output lines, by what Python prints (truth) and the checker's verdict:")
    for (truth, verdict), n in sorted(verdicts.items()):
        print(f"  {truth:17} {verdict:13} {n}")
    print(f"flags: {flags}, right {true_flags} (precision {true_flags / flags:.2f})" if flags else "flags: 0")
    print(f"wrong outputs: {wrong}, flagged {true_flags} (recall {true_flags / wrong:.2f})" if wrong else
          "wrong outputs: 0")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
