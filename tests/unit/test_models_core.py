"""Cache keys, the retry policy, structured output and the run store."""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from mathlens.errors import PermanentModelError, TransientModelError, UnknownNameError, UserError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.cache import RequestText, ResponseCache, content_hash, request_hash
from mathlens.models.registry import get_model, parse_options, split_spec
from mathlens.models.structured import generate_structured
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

MSGS = [Message(role="system", content="be brief"), Message(role="user", content="2+2?")]
IDENT = {"provider": "openai", "model": "m", "deployment": "a"}


@pytest.mark.parametrize("change", [
    lambda i, m, c: ({**i, "provider": "ollama"}, m, c),
    lambda i, m, c: ({**i, "model": "m2"}, m, c),
    lambda i, m, c: ({**i, "deployment": "b"}, m, c),
    lambda i, m, c: (i, [m[0], Message(role="user", content="2+3?")], c),
    lambda i, m, c: (i, [Message(role="user", content="be brief"), m[1]], c),
    lambda i, m, c: (i, m, c.with_(temperature=0.7)),
    lambda i, m, c: (i, m, c.with_(seed=1)),
    lambda i, m, c: (i, m, c.with_(max_tokens=9)),
    lambda i, m, c: (i, m, c.with_(stop=("x",))),
])
def test_cache_key_depends_on_every_part(change) -> None:  # type: ignore[no-untyped-def]
    base = request_hash(IDENT, MSGS, GenerateConfig())
    assert request_hash(IDENT, MSGS, GenerateConfig()) == base
    assert request_hash(*change(IDENT, MSGS, GenerateConfig())) != base


def test_cache_key_ignores_dict_order_and_includes_schema() -> None:
    a = request_hash({"model": "m", "provider": "p"}, MSGS, GenerateConfig())
    b = request_hash({"provider": "p", "model": "m"}, MSGS, GenerateConfig())
    assert a == b
    assert request_hash({"provider": "p", "model": "m"}, MSGS, GenerateConfig(), {"type": "object"}) != a


@pytest.mark.parametrize(("identity", "messages", "config", "schema"), [
    ({}, MSGS, GenerateConfig(), None),
    ({"provider": "p", "model": "m", "base_url": "http://h/v1"}, MSGS, GenerateConfig().with_(stop=("x", "y")), None),
    ({"model": "\u00e9t\u00e9"}, [Message(role="user", content="\u222b x\u00b2 dx = \"?\"\n\\frac{1}{2}",
                                          images=("a.png",))], GenerateConfig().with_(temperature=0.5),
     {"type": "object", "properties": {"z": {"type": "number"}, "a": {"type": "string"}}, "required": ["z"]}),
])
def test_cache_key_is_the_sha256_of_the_whole_request_as_json(identity, messages, config, schema) -> None:  # type: ignore[no-untyped-def]
    """Keys of caches and runs written before stay valid: one serialisation shared by the cache key
    and the content hash gives the same digest as serialising the whole request at once."""
    whole = json.dumps({"identity": identity, "messages": [m.model_dump(mode="json") for m in messages],
                        "config": config.model_dump(mode="json"), "schema": schema},
                       sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(whole.encode("utf-8")).hexdigest()
    assert request_hash(identity, messages, config, schema) == expected
    text = RequestText.of(messages, config, schema)
    assert text.hash(identity) == expected
    assert text.hash({}) == content_hash(messages, config, schema)


def test_cache_persists(tmp_path: Path) -> None:
    from mathlens.models.base import ModelOutput

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", ModelOutput(text="hello", finish_reason="length"))
    cache.close()
    again = ResponseCache(tmp_path / "c.sqlite")
    hit = again.get("k")
    assert hit is not None and hit.text == "hello" and hit.finish_reason == "length" and hit.cached
    assert again.get("other") is None


async def test_transient_failures_are_retried_then_succeed(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["ok"], errors=["transient", "transient"])
    out = await model.generate(MSGS, GenerateConfig())
    assert out.text == "ok"
    assert model.stats.retries == 2 and model.stats.calls == 3


async def test_retries_are_bounded(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["ok"], errors=["transient"] * 10)
    with pytest.raises(TransientModelError, match="gave up after 3 attempts"):
        await model.generate(MSGS, GenerateConfig())
    assert model.stats.calls == 3


async def test_permanent_failures_are_not_retried(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["ok"], errors=["permanent"])
    with pytest.raises(PermanentModelError):
        await model.generate(MSGS, GenerateConfig())
    assert model.stats.calls == 1 and model.stats.retries == 0


async def test_timeout_is_transient(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["ok"])
    inner = model.provider.generate
    calls = {"n": 0}

    async def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            await asyncio.sleep(10)
        return await inner(*args, **kwargs)

    model.provider.generate = slow  # type: ignore[method-assign]
    model.retry = type(model.retry)(max_attempts=2, base_delay=0.001, timeout_s=0.05)
    out = await model.generate(MSGS, GenerateConfig())
    assert out.text == "ok" and calls["n"] == 2


async def test_cached_rerun_makes_no_call(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["first", "second"], cache=True)
    a = await model.generate(MSGS, GenerateConfig())
    b = await model.generate(MSGS, GenerateConfig())
    assert (a.text, b.text) == ("first", "first")
    assert model.stats.calls == 1 and model.stats.cache_hits == 1 and b.cached


class Verdict(BaseModel):
    score: int = Field(ge=0, le=10)
    reason: str


async def test_structured_ok_after_repair(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=['{"score": 42, "reason": "x"}', 'Sure: {"score": 7, "reason": "fine"}'])
    res = await generate_structured(model, MSGS, Verdict)
    assert res.status == "ok" and res.value == Verdict(score=7, reason="fine") and res.attempts == 2
    repair_prompt = model.provider.requests[1][0][-1].content
    assert "score" in repair_prompt and "less than or equal to 10" in repair_prompt
    assert model.provider.requests[0][2]["properties"]["score"]["maximum"] == 10


async def test_structured_invalid_twice_is_invalid_not_error(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["no json here", "{still not"])
    res = await generate_structured(model, MSGS, Verdict)
    assert res.status == "invalid" and res.value is None and res.raw == ("no json here", "{still not")


async def test_structured_model_failure_is_error(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=["{}"], errors=["permanent"])
    res = await generate_structured(model, MSGS, Verdict)
    assert res.status == "error" and "permanent" in res.error


def test_registry_names_and_options() -> None:
    assert split_spec("ollama/gemma3:4b") == ("ollama", "gemma3:4b")
    assert split_spec("embedded") == ("embedded", "qwen2.5-coder-1.5b")  # the default since the 1.5B finishes answers
    assert split_spec("embedded/gemma3-270m") == ("embedded", "gemma3-270m")
    with pytest.raises(UnknownNameError, match="Did you mean 'ollama'"):
        get_model("olama/x")
    # a colon where the slash goes names the spelling that works
    with pytest.raises(UserError, match=r"with a slash, embedded/qwen2\.5-coder-0\.5b"):
        split_spec("embedded:qwen2.5-coder-0.5b")
    with pytest.raises(UnknownNameError):
        split_spec("gemma3:4b")  # no provider at all: the usual message
    assert parse_options(["num_ctx=4096", "host=http://h:1", "flag=true"]) == {
        "num_ctx": 4096, "host": "http://h:1", "flag": True}


def _rec(key: str) -> RunRecord:
    return RunRecord(key=key, model="m", configuration="baseline", exam_id="e", question_id=key,
                     messages=MSGS, config=GenerateConfig(), request_hash="h", content_hash="c",
                     response=f"resp {key}", created_at=datetime.now(UTC))


def test_store_appends_and_repairs_torn_tail(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append(_rec("a"))
    store.append(_rec("b"))
    store.close()
    with store.records_path.open("a") as fh:  # a killed writer's half line
        fh.write(_rec("c").model_dump_json()[:40])
    assert [r.key for r in store.records()] == ["a", "b"]
    store.append(_rec("d"))
    store.close()
    assert [r.key for r in store.records()] == ["a", "b", "d"]
    lines = store.records_path.read_text().splitlines()
    assert len(lines) == 3 and all(line.startswith("{") and line.endswith("}") for line in lines)


def test_store_bad_record_names_line(tmp_path: Path) -> None:
    from mathlens.errors import UserError

    store = RunStore(tmp_path)
    store.append(_rec("a"))
    store.close()
    with store.records_path.open("a") as fh:
        fh.write('{"key": "x"}\n')
    with pytest.raises(UserError, match=r"records.jsonl:2"):
        list(store.records())
