"""Pools of replicas over real HTTP: stand-in servers on 127.0.0.1, one slow, one failing, one killed.

Every check counts records and server-side requests, never time: a run must end with exactly one
record per task, the healthy servers must have been sent each request once, and the cache must
not care which replica answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from mathlens.errors import PermanentModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.cache import ResponseCache
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.models.providers.openai import OpenAIProvider
from mathlens.models.registry import get_model
from mathlens.runs.plan import plan_tasks
from mathlens.runs.records import ItemSource, Manifest, ModelEntry
from mathlens.runs.runner import RunResult, base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer, default_trace

pytestmark = pytest.mark.server

RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05, timeout_s=60)


def _dataset(path: Path, n: int) -> Path:
    rows = [{"id": f"q{i}", "text": f"Question {i}: compute {i} + 1."} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _manifest(data: Path, urls: list[str], **options: object) -> Manifest:
    opts: dict[str, object] = {"base_urls": urls, "probe_s": 0.2, **options}
    return base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec="openai/standin", options=opts)],
                         generate=GenerateConfig(max_tokens=32), system_role="S")


async def _run(root: Path, manifest: Manifest, cache: ResponseCache | None = None, concurrency: int = 2
               ) -> tuple[RunStore, RunResult]:
    store = RunStore(root)
    store.write_manifest(manifest)
    models = build_models(manifest, cache, RETRY, concurrency=concurrency)
    result = await closing_all(execute(store, manifest, models), models.values())
    return store, result


def _chat_requests(srv: StandinServer) -> int:
    return sum(r["path"].endswith("/chat/completions") for r in srv.state.requests)


async def test_pool_run_routes_around_a_failing_replica_and_the_cache_ignores_replicas(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 60)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with StandinServer(delay_s=0.02) as fast, StandinServer(delay_s=0.25) as slow, \
            StandinServer(fail="500") as failing:
        urls = [failing.url + "/v1", fast.url + "/v1", slow.url + "/v1"]
        manifest = _manifest(data, urls)
        store, result = await _run(tmp_path / "run", manifest, cache)
        served = {fast.url + "/v1": _chat_requests(fast), slow.url + "/v1": _chat_requests(slow)}
        failing_sent = _chat_requests(failing)
    planned = {t.key for t in plan_tasks(manifest, store.exams())}
    recs = list(store.records())
    assert len(planned) == 60 and len(recs) == 60 and {r.key for r in recs} == planned  # none lost, none twice
    assert all(r.status == "ok" for r in recs)
    answered = Counter(r.replica for r in recs)
    assert set(answered) == set(served)  # every record names the replica that answered, never the failing one
    assert answered == Counter(served)  # and the healthy servers were sent each request exactly once
    assert answered[fast.url + "/v1"] > answered[slow.url + "/v1"]  # fewest outstanding favours the fast one
    stats = {s.url: s for s in result.replicas["openai/standin"]}
    assert stats[failing.url + "/v1"].state == "out"
    assert failing_sent == stats[failing.url + "/v1"].requests <= 3 + 2  # threshold, plus those already in flight
    # a second run against another set of replicas is answered from the cache entirely
    with StandinServer() as other:
        manifest2 = _manifest(data, [other.url + "/v1", "http://127.0.0.1:9/v1"])
        store2, result2 = await _run(tmp_path / "run2", manifest2, cache)
        assert _chat_requests(other) == 0
    cache.close()
    recs2 = {r.key: r for r in store2.records()}
    assert result2.cache_hits == 60 and result2.model_calls == 0
    assert all(r.cached and r.replica is None for r in recs2.values())
    assert {r.key: r.request_hash for r in recs} == {k: r.request_hash for k, r in recs2.items()}


async def test_killing_a_replica_mid_run_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 60)
    with StandinServer(delay_s=0.05) as a, StandinServer(delay_s=0.05) as b, StandinServer(delay_s=0.05) as victim:
        manifest = _manifest(data, [a.url + "/v1", b.url + "/v1", victim.url + "/v1"])
        running = asyncio.ensure_future(_run(tmp_path / "run", manifest))
        while _chat_requests(victim) < 6 and not running.done():
            await asyncio.sleep(0.01)
        await asyncio.to_thread(victim.kill)
        before_kill = _chat_requests(victim)
        store, result = await running
        sent_to_healthy = _chat_requests(a) + _chat_requests(b)
    recs = list(store.records())
    assert before_kill >= 6
    assert len(recs) == 60 and len({r.key for r in recs}) == 60 and all(r.status == "ok" for r in recs)
    by_replica = Counter(r.replica for r in recs)
    assert by_replica[victim.url + "/v1"] <= before_kill  # nothing answered after its death
    # each record came from one request to a healthy server, or from the victim before it died
    assert sent_to_healthy == 60 - by_replica[victim.url + "/v1"]
    victim_stats = next(s for s in result.replicas["openai/standin"] if s.url == victim.url + "/v1")
    assert victim_stats.state == "out"


@pytest.mark.parametrize(("concurrency", "limit_after"), [("auto", 2), (4, 4)])
async def test_429_with_retry_after_lowers_the_limit_and_rests_the_replica(concurrency: object,
                                                                           limit_after: int) -> None:
    """Adaptive: the 429 halves the busy replica's limit (4 -> 2); fixed: the limit stays. Both rest it."""
    with StandinServer(capacity=0, retry_after_s=30) as busy, StandinServer() as calm:
        model = get_model("openai/standin", {"base_urls": [busy.url + "/v1", calm.url + "/v1"], "max_concurrency": 4},
                          retry=RETRY, concurrency=concurrency)  # type: ignore[arg-type]
        outs = [await model.generate([Message(role="user", content=f"q{i}")], GenerateConfig(max_tokens=8))
                for i in range(5)]
        stats = {s.url: s for s in model.provider.pool.stats()}  # type: ignore[attr-defined]
        await model.aclose()
        calm_sent = _chat_requests(calm)
    busy_stats = stats[busy.url + "/v1"]
    # the first request met the 429 and went on to the other replica; the busy one rests, so no more went there
    assert busy_stats.requests == 1 and busy_stats.overloaded == 1
    assert busy_stats.limit == limit_after and busy_stats.state == "resting"
    assert all(o.replica == calm.url + "/v1" for o in outs) and calm_sent == 5
    assert model.stats.retries == 0  # failing over is not a retry of the call


async def test_context_length_400_is_one_clear_error_without_retries(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 1)
    with StandinServer(max_model_len=40) as srv:
        manifest = base_manifest(items=[ItemSource(source=str(data))],
                                 models=[ModelEntry(spec="openai/standin", options={"base_url": srv.url + "/v1"})],
                                 generate=GenerateConfig(max_tokens=64), system_role="S")
        store, _ = await _run(tmp_path / "run", manifest)
        sent = _chat_requests(srv)
    (rec,) = list(store.records())
    assert rec.status == "error" and sent == 1
    assert "exceed the server's context length" in (rec.error or "") and "--max-tokens" in (rec.error or "")
    assert "maximum context length is 40 tokens" in (rec.error or "")  # the server's own words kept


async def test_a_short_enough_request_passes_the_context_check() -> None:
    with StandinServer(max_model_len=4000) as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1"}, retry=RETRY)
        out = await model.generate([Message(role="user", content="1+1?")], GenerateConfig(max_tokens=64))
        with pytest.raises(PermanentModelError, match="context length"):
            await model.generate([Message(role="user", content="1+1?")], GenerateConfig(max_tokens=4000))
        await model.aclose()
    assert out.text.startswith("Step 1")


@pytest.mark.parametrize(("form", "key", "expected"), [
    ("guided_json", "guided_json", lambda s: s),
    ("json_schema", "response_format",
     lambda s: {"type": "json_schema", "json_schema": {"name": "reply", "schema": s}}),
    ("json_object", "response_format", lambda s: {"type": "json_object", "schema": s}),
])
async def test_structured_output_payload_shapes(form: str, key: str, expected) -> None:  # type: ignore[no-untyped-def]
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    with StandinServer(reply=lambda m: '{"score": 2}') as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1", "response_format": form}, retry=RETRY)
        await model.generate([Message(role="user", content="grade")], GenerateConfig(max_tokens=8), schema)
        await model.aclose()
        body = srv.state.requests[-1]["body"]
    assert body[key] == expected(schema)
    others = {"guided_json", "response_format"} - {key}
    assert not others & set(body)


async def test_reasoning_content_reaches_the_record(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 2)
    with StandinServer(think="field") as srv:
        manifest = base_manifest(items=[ItemSource(source=str(data))],
                                 models=[ModelEntry(spec="openai/standin", options={"base_url": srv.url + "/v1"})],
                                 generate=GenerateConfig(max_tokens=32), system_role="S")
        store, _ = await _run(tmp_path / "run", manifest)
        sent = {json.dumps(r["body"]["messages"]): r["body"]["messages"] for r in srv.state.requests}
    recs = list(store.records())
    assert len(recs) == 2
    for rec in recs:
        messages = sent[json.dumps([{"role": m.role, "content": m.content} for m in rec.messages])]
        assert rec.reasoning == default_trace(messages)
        assert rec.response and rec.response.startswith("Step 1") and "<think>" not in rec.response
        assert rec.replica is None  # a single server is no pool


def test_reasoning_fields_and_null_content_in_a_reply() -> None:
    provider = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1")

    def reply(message: dict[str, object]) -> dict[str, object]:
        return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"completion_tokens": 3}}

    only_trace = provider._output(reply({"content": None, "reasoning_content": "think hard"}), 0.1)
    assert (only_trace.text, only_trace.reasoning) == ("", "think hard")
    newer = provider._output(reply({"content": "4", "reasoning": "2+2"}), 0.1)
    assert (newer.text, newer.reasoning) == ("4", "2+2")
    plain = provider._output(reply({"content": "4"}), 0.1)
    assert plain.reasoning is None


def test_cli_pool_run_show_and_resume_with_other_servers(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 12)
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "run"
    with StandinServer(delay_s=0.01) as a, StandinServer(delay_s=0.01) as b:
        pool_file = tmp_path / "replicas.txt"
        pool_file.write_text(f"# two replicas\n{a.url}/v1\n\n{b.url}/v1   # the second\n")
        proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", str(data), "--model",
                               "openai/standin", "-M", f"base_urls=@{pool_file}", "--out", str(out), "--json", "-q"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["models"]
    assert entry["options"]["base_urls"] == [a.url + "/v1", b.url + "/v1"]  # the file's URLs, not '@FILE'
    assert entry["identity"] == {"provider": "openai", "model": "standin"}
    rows = {r["replica"]: r for r in doc["replicas"]}
    assert set(rows) == {a.url + "/v1", b.url + "/v1"} and sum(r["records"] for r in rows.values()) == 12
    live = doc["this_invocation"]["replicas"]["openai/standin"]
    assert sum(r["requests"] for r in live) == 12 and all(r["state"] == "in" for r in live)
    show = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "show", str(out)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert show.returncode == 0 and "records by replica" in show.stderr + show.stdout
    # resume with new servers: the manifest takes them, nothing is re-sent (the run is complete)
    with StandinServer() as c:
        again = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", "--resume", str(out),
                                "--base-url", c.url + "/v1", "--json", "-q"], env=env, capture_output=True,
                               text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert _chat_requests(c) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"][0]["options"]["base_url"] == c.url + "/v1"
    assert "base_urls" not in manifest["models"][0]["options"]


def test_several_base_urls_are_refused_for_ollama(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", "calc1-exam1", "--model", "ollama/m",
                           "--base-url", "http://127.0.0.1:1", "--base-url", "http://127.0.0.1:2", "--out",
                           str(tmp_path / "run")], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "pools of replicas are for openai/ models" in proc.stderr


async def test_a_replica_that_never_answers_is_taken_out_by_the_callers_timeouts(tmp_path: Path) -> None:
    """A replica that accepts requests and sits on them is seen only through the run's timeout: two
    requests given up on after `hang_s` take it out, and every task still ends with one good record."""
    data = _dataset(tmp_path / "q.jsonl", 12)
    hasty = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05, timeout_s=1.5)
    with StandinServer(delay_s=0.02) as fast, StandinServer(delay_s=6.0) as hung:
        manifest = _manifest(data, [hung.url + "/v1", fast.url + "/v1"], hang_s=1.0, failure_threshold=2,
                             probe_s=60)
        store = RunStore(tmp_path / "run")
        store.write_manifest(manifest)
        models = build_models(manifest, None, hasty, concurrency=2)
        await execute(store, manifest, models)
        (model,) = models.values()
        pool = model.provider.pool  # type: ignore[attr-defined]
        states = {s.url: s.state for s in pool.stats()}
        await model.aclose()
        sent_to_hung = _chat_requests(hung)
        hung.kill()
    recs = list(store.records())
    assert len(recs) == 12 and len({r.key for r in recs}) == 12
    assert all(r.status == "ok" and r.replica == fast.url + "/v1" for r in recs)
    assert states[hung.url + "/v1"] == "out"
    assert sent_to_hung <= 4  # its first requests only: no task kept landing on it
