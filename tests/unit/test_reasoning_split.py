"""The `Model` wrapper keeps a reasoning trace apart from the visible answer, for every backend.

Each provider path is exercised with a real component where one can run here: the mock provider
(inline tags and the token cap), llama.cpp's provider over a stand-in for the loaded weights
(llama.cpp itself is not started in unit tests), the OpenAI-compatible and Ollama providers over
the local stand-in HTTP server (inline tags, ``reasoning_content``, ``thinking``), and the response
cache (a hit keeps the split; an output cached before the split is split when read).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathlens.models.base import GenerateConfig, Message, ModelOutput
from mathlens.models.cache import ResponseCache
from mathlens.models.model import RetryPolicy, with_reasoning
from mathlens.models.registry import get_model
from mathlens.testing.standin import StandinServer

MSGS = [Message(role="user", content="What is 6 times 7?")]
TRACE = "6 times 7: 6*7 = 42. Draft answer 41? No, 42."
ANSWER = "The answer is 42."
FAST = RetryPolicy(max_attempts=1, timeout_s=10)


async def test_inline_trace_is_split_off_the_mock_reply(mock_model) -> None:  # type: ignore[no-untyped-def]
    model = mock_model(responses=[f"<think>\n{TRACE}\n</think>\n\n{ANSWER}"])
    out = await model.generate(MSGS, GenerateConfig())
    assert out.reasoning == TRACE
    assert out.text == ANSWER
    assert "<think>" not in out.text and "Draft" not in out.text


async def test_reply_without_trace_is_left_whole(mock_model) -> None:  # type: ignore[no-untyped-def]
    text = "Step 1: 6*7 = 42.\nA tag mentioned later: <think> stays text."
    out = await (mock_model(responses=[text])).generate(MSGS, GenerateConfig())
    assert out.reasoning is None and out.text == text


async def test_trace_cut_by_the_cap_keeps_the_trace_and_no_answer(mock_model) -> None:  # type: ignore[no-untyped-def]
    long_trace = " ".join(f"step{i}" for i in range(50))
    model = mock_model(responses=[f"<think>{long_trace}</think>{ANSWER}"])
    out = await model.generate(MSGS, GenerateConfig(max_tokens=20))  # the mock caps at 20 words
    assert out.finish_reason == "length"
    assert out.text == ""
    assert out.reasoning is not None and out.reasoning.startswith("step0") and "step18" in out.reasoning
    assert "answer" not in out.reasoning


def test_provider_trace_wins_over_inline_tags() -> None:
    out = with_reasoning(ModelOutput(text="<think>inline</think>rest", reasoning="from the field"))
    assert (out.reasoning, out.text) == ("from the field", "<think>inline</think>rest")


def test_empty_inline_trace_is_no_trace() -> None:
    out = with_reasoning(ModelOutput(text="<think>  </think>Just 42."))
    assert (out.reasoning, out.text) == (None, "Just 42.")


async def test_cache_hit_keeps_the_split(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = get_model("mock/t", {"responses": [f"<think>{TRACE}</think>{ANSWER}"]}, cache=cache, retry=FAST)
    first = await model.generate(MSGS, GenerateConfig())
    again = get_model("mock/t", {"responses": [f"<think>{TRACE}</think>{ANSWER}"]},
                      cache=ResponseCache(tmp_path / "c.sqlite"), retry=FAST)
    hit = await again.generate(MSGS, GenerateConfig())
    assert hit.cached and again.stats.calls == 0
    assert (hit.reasoning, hit.text) == (first.reasoning, first.text) == (TRACE, ANSWER)


async def test_output_cached_before_the_split_is_split_on_read(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = get_model("mock/old", {"responses": ["never called"]}, cache=cache, retry=FAST)
    # an entry written by an earlier release: the trace still inline in the text
    cache.put(model.key(MSGS, GenerateConfig()), ModelOutput(text=f"<think>{TRACE}</think>\n{ANSWER}",
                                                             finish_reason="stop"))
    hit = await model.generate(MSGS, GenerateConfig())
    assert model.stats.calls == 0
    assert (hit.reasoning, hit.text) == (TRACE, ANSWER)


class _FakeLlama:
    """What `llama_cpp.Llama.create_chat_completion` returns, for a reasoning model's inline trace."""

    def __init__(self, content: str, finish: str = "stop") -> None:
        self.content, self.finish = content, finish

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        return {"choices": [{"message": {"role": "assistant", "content": self.content},
                             "finish_reason": self.finish}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 9}}


@pytest.mark.parametrize(("content", "finish", "reasoning", "text"), [
    (f"<think>{TRACE}</think>\n{ANSWER}", "stop", TRACE, ANSWER),
    (f"<think>{TRACE}", "length", TRACE, ""),
])
async def test_llamacpp_inline_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, finish: str,
                                     reasoning: str, text: str) -> None:
    from mathlens.models.providers import llamacpp

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF stand-in weights")
    model = get_model(f"llamacpp/{gguf}", {"chat_format": "chatml", "n_threads": 1}, retry=FAST)
    provider = model.provider
    assert isinstance(provider, llamacpp.LlamaCppProvider)
    monkeypatch.setitem(llamacpp._LOADED, provider.load_key, _FakeLlama(content, finish))
    out = await model.generate(MSGS, GenerateConfig())
    assert (out.reasoning, out.text) == (reasoning, text)
    assert out.finish_reason == finish


@pytest.mark.server
@pytest.mark.parametrize(("spec", "think", "options"), [
    ("openai/standin", "inline", {}),
    ("openai/standin", "field", {}),
    ("ollama/standin", "inline", {}),
    ("ollama/standin", "field", {}),
    ("ollama/standin", "field", {"api": "generate"}),
])
async def test_http_providers_keep_the_trace_apart(spec: str, think: str, options: dict[str, Any]) -> None:
    with StandinServer(think=think, reply=lambda m: ANSWER, trace=lambda m: TRACE) as srv:
        url = {"base_url": f"{srv.url}/v1"} if spec.startswith("openai") else {"host": srv.url}
        async with get_model(spec, {**url, **options}, retry=FAST) as model:
            out = await model.generate(MSGS, GenerateConfig())
    assert out.reasoning == TRACE
    assert out.text == ANSWER
    assert out.finish_reason == "stop"


@pytest.mark.server
@pytest.mark.parametrize("spec", ["openai/standin", "ollama/standin"])
async def test_http_trace_cut_by_the_cap(spec: str) -> None:
    with StandinServer(think="cut", reply=lambda m: ANSWER, trace=lambda m: TRACE) as srv:
        url = {"base_url": f"{srv.url}/v1"} if spec.startswith("openai") else {"host": srv.url}
        async with get_model(spec, url, retry=FAST) as model:
            out = await model.generate(MSGS, GenerateConfig())
    assert (out.reasoning, out.text, out.finish_reason) == (TRACE, "", "length")


@pytest.mark.server
async def test_ollama_think_option_is_sent_and_keys_the_cache() -> None:
    with StandinServer(think="field", reply=lambda m: ANSWER, trace=lambda m: TRACE) as srv:
        async with get_model("ollama/standin", {"host": srv.url, "think": "true"}, retry=FAST) as thinking, \
                get_model("ollama/standin", {"host": srv.url}, retry=FAST) as plain:
            await thinking.generate(MSGS, GenerateConfig())
            await plain.generate(MSGS, GenerateConfig())
            sent = [r["body"] for r in srv.state.requests]
            assert sent[0]["think"] is True and "think" not in sent[1]
            assert thinking.key(MSGS, GenerateConfig()) != plain.key(MSGS, GenerateConfig())
