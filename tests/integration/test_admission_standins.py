"""The concurrency controller against real HTTP stand-ins on 127.0.0.1: healthy, saturating, throttling.

Each check counts what the server saw (its own in-flight peak, 429s) and what the run wrote (one
ok record per task); none asserts a time.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mathlens.models.admission import Concurrency
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import RunResult, base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer

pytestmark = pytest.mark.server

RETRY = RetryPolicy(max_attempts=8, base_delay=0.01, max_delay=0.1, timeout_s=60)


async def _run(tmp: Path, url: str, n: int, concurrency: Concurrency, **options: object
               ) -> tuple[RunStore, RunResult]:
    data = tmp / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "text": f"Question {i}: {i} + 1?"}) + "\n" for i in range(n)))
    manifest = base_manifest(items=[ItemSource(source=str(data))],
                             models=[ModelEntry(spec="openai/standin", options={"base_url": url, **options})],
                             generate=GenerateConfig(max_tokens=16), system_role="S")
    store = RunStore(tmp / "run")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RETRY, concurrency)
    try:
        result = await execute(store, manifest, models)
    finally:
        for model in models.values():
            await model.aclose()
    return store, result


def _all_ok(store: RunStore, n: int) -> None:
    recs = list(store.records())
    assert len(recs) == n and len({r.key for r in recs}) == n
    assert all(r.status == "ok" for r in recs), [r.error for r in recs if r.status != "ok"][:3]


@pytest.mark.parametrize("limit", [1, 5, 24])
async def test_a_fixed_limit_is_exactly_the_number_in_flight(tmp_path: Path, limit: int) -> None:
    """`--concurrency N`: the server never sees more than N at once, and with work waiting it sees N."""
    with StandinServer(delay_s=0.15) as srv:
        store, _ = await _run(tmp_path, srv.url + "/v1", 4 * limit, limit)
        peak = srv.state.peak_in_flight
    _all_ok(store, 4 * limit)
    assert peak == limit


async def test_adaptive_on_a_healthy_server_climbs_to_its_ceiling(tmp_path: Path) -> None:
    with StandinServer(delay_s=0.15) as srv:
        store, _ = await _run(tmp_path, srv.url + "/v1", 300, "auto", max_concurrency=48)
        peak = srv.state.peak_in_flight
    _all_ok(store, 300)
    assert 44 <= peak <= 48  # from 16, doubling while the server answers well, up to the ceiling (never past it)


async def test_adaptive_on_a_saturating_server_keeps_it_full_without_errors(tmp_path: Path) -> None:
    """A server that works on 6 at once and queues the rest: the limit must not fall below 6 (the
    server would idle) and every request must succeed."""
    with StandinServer(delay_s=0.1, serve_at_once=6) as srv:
        model_store, result = await _run(tmp_path, srv.url + "/v1", 240, "auto")
        peak = srv.state.peak_in_flight
    _all_ok(model_store, 240)
    assert peak >= 6
    assert result.errors == 0


async def test_adaptive_on_a_throttling_server_backs_off_and_loses_nothing(tmp_path: Path) -> None:
    """A server that answers 429 (Retry-After 0.05 s) past 5 in flight: the limit comes down to what
    it takes, every task ends with one ok record, and most requests were not refused."""
    with StandinServer(delay_s=0.05, capacity=5, retry_after_s=0.05) as srv:
        store, result = await _run(tmp_path, srv.url + "/v1", 200, "auto")
        refused = srv.state.throttled
    _all_ok(store, 200)
    assert result.errors == 0
    assert 0 < refused < 100
