"""The flow segmenter's sentence rule against spaCy's sentencizer, on real prose, side by side.

Every text of ../shared/data (MATH500 problems and solutions, GSM8K questions and model solutions,
ProcessBench problems and steps, BIG-Bench Mistake traces, MRBench dialogues) is cut into the blocks
the segmenter makes (math masked, long runs as filler: `segment._prose`), and each block is split
twice: by `mathlens.analyze.flow.sentences.sentence_spans` and by spaCy's blank English pipeline
with its `sentencizer` (the `dev` extra). Printed: the share of blocks split into exactly the same
spans, the share whose groups of sentences up to 600 characters (what the segmenter keeps) are the
same, the first differing blocks, and the time of each splitter with spaCy's start-up apart.

    .venv/bin/python bench/bench_sentences.py [--show 5] [--min-chars 0]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path

from mathlens.analyze.flow import segment
from mathlens.analyze.flow.sentences import sentence_spans

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _texts() -> Iterator[str]:
    def jsonl(name: str) -> Iterator[dict]:
        path = DATA / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    yield json.loads(line)

    for row in jsonl("math500_test.jsonl"):
        yield row["problem"]
        yield row["solution"]
    for row in jsonl("gsm8k_test.jsonl"):
        yield row["question"]
        yield row["answer"]
    for row in jsonl("gsm8k_model_solutions.jsonl"):
        for value in row.values():
            if isinstance(value, dict):
                yield from (v for v in value.values() if isinstance(v, str) and len(v) > 40)
    for row in jsonl("bigbench_mistake_arithmetic.jsonl"):
        yield from (v for v in row.values() if isinstance(v, str) and len(v) > 40)
    for name in ("processbench_gsm8k.json", "processbench_math.json"):
        path = DATA / name
        if path.is_file():
            for row in json.loads(path.read_text(encoding="utf-8")):
                yield row["problem"]
                yield "\n\n".join(row["steps"])
                yield " ".join(row["steps"])  # the same steps as one paragraph: long blocks


def _blocks(min_chars: int) -> list[str]:
    out = []
    for text in _texts():
        masked = segment._mask(text)
        for start, end, _ in segment._blocks(text, masked):
            if end - start >= min_chars:
                out.append(segment._prose(masked[start:end]))
    return out


def _groups(spans: list[tuple[int, int]], max_chars: int = segment.MAX_STEP_CHARS) -> list[tuple[int, int]]:
    groups: list[tuple[int, int]] = []
    for a, b in spans:
        if groups and b - groups[-1][0] <= max_chars:
            groups[-1] = (groups[-1][0], b)
        else:
            groups.append((a, b))
    return groups


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=5, help="differing blocks to print")
    ap.add_argument("--min-chars", type=int, default=0, help="only blocks at least this long")
    args = ap.parse_args()
    blocks = _blocks(args.min_chars)
    t = time.perf_counter()
    ours = [sentence_spans(b) for b in blocks]
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    start_s = time.perf_counter() - t
    t = time.perf_counter()
    theirs = [[(s.start_char, s.end_char) for s in nlp(b).sents] for b in blocks]
    theirs_s = time.perf_counter() - t
    same = [a == b for a, b in zip(ours, theirs, strict=True)]
    same_groups = [_groups(a) == _groups(b) for a, b in zip(ours, theirs, strict=True)]
    long = [i for i, b in enumerate(blocks) if len(b) > segment.MAX_STEP_CHARS]
    n = len(blocks)
    print(f"blocks: {n} ({len(long)} longer than {segment.MAX_STEP_CHARS} characters, which the segmenter splits)")
    print(f"same sentence spans: {sum(same)}/{n} ({sum(same) / n:.2%})")
    print(f"same groups of sentences up to {segment.MAX_STEP_CHARS} characters: {sum(same_groups)}/{n}; "
          f"of the long blocks {sum(same_groups[i] for i in long)}/{len(long)}")
    print(f"time: rule {ours_s:.2f} s; spaCy {theirs_s:.2f} s after a start-up of {start_s:.2f} s")
    shown = 0
    for block, a, b, ok in zip(blocks, ours, theirs, same, strict=True):
        if ok or shown >= args.show:
            continue
        shown += 1
        sa, sb = set(a), set(b)
        print("---")
        print("rule only: ", [block[x:y][:60] for x, y in sorted(sa - sb)][:3])
        print("spaCy only:", [block[x:y][:60] for x, y in sorted(sb - sa)][:3])


if __name__ == "__main__":
    main()
