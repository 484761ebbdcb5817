"""Large synthetic runs built from real solutions, for scaling tests and benches.

`write_synthetic_run(root, n_records, data_dir)` writes a finished run directory (manifest, the
run's own `items.json`, `records.jsonl`) whose responses are real worked solutions: MATH500's
reference solutions and the four model solutions per GSM8K test question (`../shared/data`, see
its README). Each solution is answered to the original prompt and to one ablation variant (the
same solution without its first sentence, so that the sensitivity analysis has pairs to compare),
and repeated as often as `n_records` needs. Records are shuffled within windows of a thousand,
the way a concurrent run appends them in completion order, so a question's records are scattered
through the file. Records are written in one buffered stream (no fsync per record, unlike
`RunStore.append`): this is a fixture, not a run.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from mathlens.items.loaders import load_items
from mathlens.items.schema import Exam
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord, Variant
from mathlens.runs.store import RunStore

MODEL = "replay/synthetic"
ABLATION = Variant(name="number-1", kind="ablation", element_type="number", element_text="1")
#: records shuffled together (a window of concurrent requests)
WINDOW = 1000


Source = Literal["math500", "gsm8k"]


def real_solutions(data_dir: Path, limit: int | None = None, sources: tuple[Source, ...] = ("math500", "gsm8k")
                   ) -> tuple[list[Exam], list[tuple[str, str, str]]]:
    """The MATH500 and GSM8K item sets and their real solutions as (exam id, question id, text),
    interleaved (MATH, then GSM8K, in turn) from `sources` and cut to `limit` when given."""
    math = load_items(data_dir / "math500_test.jsonl", "math")
    gsm = load_items(data_dir / "gsm8k_test.jsonl", "gsm8k")
    math_sols = [(math.id, q.id, q.solution) for q in math.questions if q.solution and "math500" in sources]
    gsm_sols: list[tuple[str, str, str]] = []
    with (data_dir / "gsm8k_model_solutions.jsonl").open(encoding="utf-8") as fh:
        for q, line in zip(gsm.questions, fh, strict=True):
            row = json.loads(line)
            gsm_sols += [(gsm.id, q.id, v["solution"]) for v in row.values()
                         if isinstance(v, dict) and v.get("solution") and "gsm8k" in sources]
    mixed: list[tuple[str, str, str]] = []
    for i in range(max(len(math_sols), len(gsm_sols))):
        mixed += [s for s in (math_sols[i] if i < len(math_sols) else None,
                              gsm_sols[i] if i < len(gsm_sols) else None) if s is not None]
    return [math, gsm], mixed[:limit] if limit else mixed


def _variant_text(text: str) -> str:
    _, dot, rest = text.partition(". ")
    return rest if dot and rest.strip() else text


def write_synthetic_run(root: Path, n_records: int, data_dir: Path, *, solutions: int | None = None,
                        seed: int = 0, sources: tuple[Source, ...] = ("math500", "gsm8k"),
                        configurations: int = 1) -> RunStore:
    """A run of `n_records` records at `root` from the first `solutions` real solutions (all when None),
    spread over `configurations` configurations (``c0``, ``c1``, ...; ``baseline`` when there is one)
    in turn, so that a question's records per configuration stay as many as the run grows."""
    names = ["baseline"] if configurations == 1 else [f"c{j}" for j in range(configurations)]
    exams, sols = real_solutions(data_dir, solutions, sources)
    store = RunStore(root)
    root.mkdir(parents=True, exist_ok=True)
    now = datetime(2025, 1, 1, tzinfo=UTC)
    store.write_manifest(Manifest(
        run_id=f"synthetic-{n_records}", mathlens_version="synthetic", created_at=now, finished_at=now,
        items=[ItemSource(source=str(data_dir / "math500_test.jsonl")),
               ItemSource(source=str(data_dir / "gsm8k_test.jsonl"))],
        models=[ModelEntry(spec=MODEL)], configurations=names, generate=GenerateConfig(),
        system_role="Solve the problem.",
        ablation={"elements": ["number"], "synthetic": True}, total_tasks=n_records))
    store.write_items(exams)
    rng = random.Random(seed)
    config = GenerateConfig()
    # several solutions of one GSM8K question are told apart by the repeat number
    ordinal: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for exam_id, question_id, _ in sols:
        ordinal.append(seen.get((exam_id, question_id), 0))
        seen[(exam_id, question_id)] = ordinal[-1] + 1
    per_question = max(seen.values())
    with store.records_path.open("w", encoding="utf-8") as out:
        window: list[str] = []
        for i in range(n_records):
            conf_slot, conf = divmod(i, len(names))
            slot, variant_side = divmod(conf_slot, 2)
            exam_id, question_id, text = sols[slot % len(sols)]
            repeat = (slot // len(sols)) * per_question + ordinal[slot % len(sols)]
            variant = ABLATION if variant_side else Variant()
            record = RunRecord(
                key=f"{MODEL}|{names[conf]}|{exam_id}|{question_id}|{variant.name}|r{repeat}", model=MODEL,
                configuration=names[conf], exam_id=exam_id, question_id=question_id, variant=variant,
                repeat=repeat, messages=[Message(role="user", content=question_id)], config=config,
                request_hash=f"h{i}", content_hash=f"c{i}",
                response=_variant_text(text) if variant_side else text, finish_reason="stop", created_at=now)
            window.append(record.model_dump_json())
            if len(window) == WINDOW or i == n_records - 1:
                rng.shuffle(window)
                out.write("".join(line + "\n" for line in window))
                window = []
    return store
