"""Runs for tests: one question answered by given responses, written straight through `RunStore`
(`one_question_run`), and an item file sent to the stand-in server (`run_on_standin`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord
from mathlens.runs.runner import RunResult, base_manifest, build_models, execute
from mathlens.runs.store import RunStore


def one_question_run(root: Path, responses: Sequence[str], *, exam: str = "calc3-exam1",
                     question: str = "q1") -> RunStore:
    """`root` holding a run of `mock/x` whose repeats 0, 1, ... of `question` answered `responses`,
    and a last repeat whose request failed."""
    store = RunStore(root)
    gen = GenerateConfig()
    now = datetime.now(UTC)
    store.write_manifest(Manifest(run_id="t", mathlens_version="0", created_at=now, items=[ItemSource(source=exam)],
                                  models=[ModelEntry(spec="mock/x")], generate=gen, system_role="tutor"))
    for i, text in enumerate([*responses, None]):
        failed = {} if text is not None else {"status": "error", "error": "boom"}
        store.append(RunRecord(key=f"k{i}", model="mock/x", configuration="baseline", exam_id=exam,
                               question_id=question, repeat=i, messages=[Message(role="user", content="q")],
                               config=gen, request_hash="h", content_hash="c", response=text, created_at=now,
                               **failed))
    store.close()
    return store


async def run_on_standin(url: str, data: Path, root: Path, timeout_s: float) -> tuple[RunStore, RunResult]:
    """The questions of item file `data` sent to the stand-in server at `url` (`openai/standin`,
    32 tokens, up to 3 attempts each, 4 at once) and recorded in a run at `root`."""
    manifest = base_manifest(items=[ItemSource(source=str(data))],
                             models=[ModelEntry(spec="openai/standin", options={"base_url": url + "/v1"})],
                             generate=GenerateConfig(max_tokens=32), system_role="S")
    store = RunStore(root)
    store.write_manifest(manifest)
    retry = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05, timeout_s=timeout_s)
    models = build_models(manifest, None, retry, concurrency=4)
    result = await closing_all(execute(store, manifest, models), models.values())
    return store, result
