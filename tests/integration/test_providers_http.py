"""HTTP providers against real local servers: llama.cpp's OpenAI-compatible server, and a stand-in
speaking Ollama's /api/chat and /api/generate protocol (no Ollama binary installs here)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from mathlens.errors import PermanentModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.registry import get_model
from mathlens.models.structured import generate_structured
from mathlens.testing.standin import StandinServer
from support.embedded import TEST_EMBEDDED

MSGS = [Message(role="system", content="You answer briefly."), Message(role="user", content="What is 2+2?")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        import llama_cpp.server  # noqa: F401

        from mathlens.models.providers.llamacpp import embedded_model_path
        path = embedded_model_path(TEST_EMBEDDED)
    except Exception as exc:  # the embedded extra is not installed
        pytest.skip(f"llama.cpp server or embedded model unavailable: {exc}")
    port = _free_port()
    log = tmp_path_factory.mktemp("srv") / "server.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(path),  # chat template from the GGUF
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024", "--n_threads", "2"],
            stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("llama.cpp server did not start within 90 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


class Answer(BaseModel):
    answer: int
    explanation: str


@pytest.mark.server
@pytest.mark.embedded
async def test_openai_provider_against_llama_server(llama_server: str) -> None:
    model = get_model("openai/gemma3-270m", {"base_url": llama_server, "response_format": "json_object"})
    out = await model.generate(MSGS, GenerateConfig(max_tokens=16))
    assert isinstance(out.text, str) and out.usage.completion_tokens > 0
    assert out.finish_reason in ("stop", "length")
    capped = await model.generate([Message(role="user", content="Count from one to fifty in words.")],
                                  GenerateConfig(max_tokens=5, repeat_penalty=1.0))
    assert capped.finish_reason == "length" and capped.usage.completion_tokens == 5
    # The JSON-schema constraint reaches llama.cpp: the reply parses against the schema.
    res = await generate_structured(model, MSGS, Answer, GenerateConfig(max_tokens=48))
    assert res.status == "ok", res.raw
    assert isinstance(res.value, Answer)
    await model.aclose()


@pytest.mark.server
async def test_ollama_chat_passes_options_and_schema() -> None:
    with StandinServer() as srv:
        model = get_model("ollama/gemma3:270m", {"host": srv.url, "num_ctx": 2048})
        cfg = GenerateConfig(temperature=0.3, seed=7, max_tokens=33, stop=("\n\n",))
        out = await model.generate(MSGS, cfg, schema={"type": "object"})
        body = srv.state.requests[-1]["body"]
        assert srv.state.requests[-1]["path"] == "/api/chat"
        assert body["model"] == "gemma3:270m" and body["stream"] is False
        assert body["options"] == {"temperature": 0.3, "seed": 7, "num_predict": 33, "top_p": 1.0,
                                   "repeat_penalty": 1.15, "stop": ["\n\n"], "num_ctx": 2048}
        assert body["format"] == {"type": "object"}
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert out.text.startswith("Step 1") and out.usage.prompt_tokens == 7
        await model.aclose()


@pytest.mark.server
async def test_ollama_generate_endpoint_and_host_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with StandinServer() as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url.removeprefix("http://"))
        model = get_model("ollama/gemma3:270m", {"api": "generate"})
        out = await model.generate(MSGS, GenerateConfig(max_tokens=10))
        req = srv.state.requests[-1]
        assert req["path"] == "/api/generate"
        assert req["body"]["system"] == "You answer briefly." and req["body"]["prompt"] == "What is 2+2?"
        assert "Final answer" in out.text
        await model.aclose()


@pytest.mark.server
async def test_openai_key_sent_but_not_in_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sekret-123")
    with StandinServer() as srv:
        model = get_model("openai/x", {"base_url": srv.url + "/v1", "api_key_env": "MY_KEY"})
        await model.generate(MSGS, GenerateConfig(max_tokens=8))
        assert "sekret-123" not in str(model.identity())
        assert "sekret-123" not in model.key(MSGS, GenerateConfig(max_tokens=8))
        await model.aclose()


@pytest.mark.server
async def test_http_400_is_permanent() -> None:
    with StandinServer(faults={"2+2": ["400"]}) as srv:
        model = get_model("openai/x", {"base_url": srv.url + "/v1"})
        with pytest.raises(PermanentModelError, match="HTTP 400"):
            await model.generate(MSGS, GenerateConfig())
        assert srv.state.attempts["2+2"] == 1
        await model.aclose()
