"""The counts a run's writer keeps as it appends (`runs.counts.Tally`) are the counts of the file
it wrote: saved as the count cache at the end of a run, equal to counting the file afresh, on a
new run and on a resumed one (after a torn last line), so `show` and the summary read nothing again."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model, RetryPolicy
from mathlens.models.registry import get_model
from mathlens.runs.counts import CACHE_NAME, count_records
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, execute
from mathlens.runs.store import RunStore

SPEC = "mock/tally"


def _reply(messages: list[Message]) -> str:
    """Replies unlike each other: a short answer, one the token cap cuts, an inline trace."""
    n = int(re.search(r"Question (\d+)", messages[-1].content).group(1))  # type: ignore[union-attr]
    if n % 3 == 0:
        return "The answer is " + str(2 * n)
    if n % 3 == 1:
        return " ".join(["step"] * 40)
    return f"<think>{n} plus {n}</think>It is {2 * n}."


def _run(root: Path, n: int, errors: list[str]) -> Any:
    data = root.parent / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "text": f"Question {i}: double it."}) + "\n"
                            for i in range(n)))
    manifest = base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec=SPEC)],
                             generate=GenerateConfig(max_tokens=16), system_role="", runs=2)
    store = RunStore(root)
    if not store.manifest_path.exists():
        store.write_manifest(manifest)
    model: Model = get_model(SPEC, {"func": _reply, "errors": errors}, cache=None,
                             retry=RetryPolicy(max_attempts=1))

    async def go() -> Any:
        async with model:
            return await execute(store, manifest, {SPEC: model})

    return asyncio.run(go())


def _cached_counts(root: Path) -> dict[str, Any]:
    cache = json.loads((root / CACHE_NAME).read_text())
    assert cache["counts"]["bytes"] == (root / "records.jsonl").stat().st_size
    return cache["counts"]


def test_the_writer_saves_the_counts_of_what_it_wrote(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = _run(run, 7, errors=["permanent", "transient"])
    assert result.written == 14 and result.errors == 2
    kept = _cached_counts(run)  # written by the run itself: nothing has counted the file yet
    afresh = count_records(run, cache=False)
    assert kept == afresh.model_dump(mode="json")
    g = afresh.groups[0]
    assert (g.records, g.error, g.truncated, g.with_trace) == (14, 2, 4, 4)
    assert afresh.errors_total == 2 and len(afresh.errors) == 2


def test_a_resumed_run_counts_on_from_the_records_before_a_torn_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _run(run, 5, errors=[])
    path = run / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]) + lines[4][:30])  # killed while writing the fifth record
    result = _run(run, 5, errors=["permanent"])
    assert result.skipped == 4 and result.written == 6
    assert _cached_counts(run) == count_records(run, cache=False).model_dump(mode="json")
    assert count_records(run, cache=False).records == 10


def test_the_counts_are_left_to_the_next_count_when_the_file_moved_on(tmp_path: Path) -> None:
    from mathlens.runs.counts import Tally
    from mathlens.runs.records import RunRecord

    run = tmp_path / "run"
    _run(run, 3, errors=[])
    tally = Tally(run)
    assert tally.counts.records == 6
    before = (run / CACHE_NAME).read_bytes()
    rec = next(RunStore(run).records())
    with (run / "records.jsonl").open("ab") as fh:  # a line the tally never saw
        fh.write((rec.model_dump_json() + "\n").encode())
    tally.add(RunRecord.model_validate(rec.model_dump()), 1)
    tally.save()
    assert (run / CACHE_NAME).read_bytes() == before
    assert count_records(run).records == 7
