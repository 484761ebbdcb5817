"""Model capabilities over real HTTP stand-ins: image parts as sent, text-only models, reasoning models.

The expected image parts are built here from the bytes of a file the test writes (base64 by
hand), not taken from the code under test.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mathlens.errors import PermanentModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import RetryPolicy
from mathlens.models.registry import get_model
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute, with_learned
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer

pytestmark = pytest.mark.server

RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02, timeout_s=30)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))


def _image(tmp: Path) -> tuple[str, str]:
    path = tmp / "diagram.png"
    path.write_bytes(PNG)
    return str(path), base64.b64encode(PNG).decode("ascii")


async def test_openai_image_parts_are_sent_exactly_for_a_vision_model(tmp_path: Path) -> None:
    path, b64 = _image(tmp_path)
    with StandinServer() as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1", "vision": True}, retry=RETRY)
        await model.generate([Message(role="system", content="S"),
                              Message(role="user", content="What is the area?", images=(path,))],
                             GenerateConfig(max_tokens=8))
        await model.aclose()
        sent = srv.state.requests[-1]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "S"}
    assert sent[1] == {"role": "user", "content": [
        {"type": "text", "text": "What is the area?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64}}]}


async def test_ollama_images_are_sent_exactly_for_a_vision_model(tmp_path: Path) -> None:
    path, b64 = _image(tmp_path)
    with StandinServer() as srv:
        model = get_model("ollama/standin", {"host": srv.url, "vision": True}, retry=RETRY)
        await model.generate([Message(role="user", content="What is the area?", images=(path,))],
                             GenerateConfig(max_tokens=8))
        await model.aclose()
        sent = srv.state.requests[-1]["body"]["messages"]
    assert sent == [{"role": "user", "content": "What is the area?", "images": [b64]}]


@pytest.mark.parametrize(("spec", "where"), [("openai/standin", "base_url"), ("ollama/standin", "host")])
async def test_a_text_only_model_never_sends_images_and_names_the_flag(tmp_path: Path, spec: str, where: str) -> None:
    path, _ = _image(tmp_path)
    with StandinServer() as srv:
        url = srv.url + "/v1" if where == "base_url" else srv.url
        model = get_model(spec, {where: url}, retry=RETRY)
        assert model.accepts_images is False  # the default: declared text-only
        with pytest.raises(PermanentModelError, match="-M vision=true"):
            await model.generate([Message(role="user", content="Q", images=(path,))], GenerateConfig(max_tokens=8))
        await model.aclose()
        assert not srv.state.requests  # nothing was sent


async def test_a_server_that_refuses_image_parts_gets_an_error_naming_the_flag(tmp_path: Path) -> None:
    path, _ = _image(tmp_path)
    with StandinServer(refuse=("image_url",)) as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1", "vision": True}, retry=RETRY)
        with pytest.raises(PermanentModelError, match="-M vision=false"):
            await model.generate([Message(role="user", content="Q", images=(path,))], GenerateConfig(max_tokens=8))
        await model.aclose()


async def test_reasoning_option_sends_max_completion_tokens_and_no_sampling_or_stop() -> None:
    config = GenerateConfig(max_tokens=77, temperature=0.0, stop=("Question:",))
    with StandinServer(refuse=("max_tokens", "temperature", "stop", "top_p")) as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1", "reasoning": True}, retry=RETRY)
        out = await model.generate([Message(role="user", content="Q")], config)
        await model.aclose()
        body = srv.state.requests[-1]["body"]
    assert out.text.startswith("Step 1")
    assert body["max_completion_tokens"] == 77
    assert not {"max_tokens", "temperature", "top_p", "stop"} & set(body)
    assert model.identity()["reasoning"] is True  # part of the cache key


async def test_a_reasoning_400_switches_the_form_and_the_manifest_records_it(tmp_path: Path) -> None:
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "text": f"Question {i}"}) + "\n" for i in range(3)))
    with StandinServer(refuse=("max_tokens", "temperature")) as srv:
        manifest = base_manifest(items=[ItemSource(source=str(data))],
                                 models=[ModelEntry(spec="openai/standin", options={"base_url": srv.url + "/v1"})],
                                 generate=GenerateConfig(max_tokens=16), system_role="S")
        store = RunStore(tmp_path / "run")
        store.write_manifest(manifest)
        models = build_models(manifest, None, RETRY, 1)  # one at a time: the order sent is the order seen
        result = await execute(store, manifest, models)
        for m in models.values():
            await m.aclose()
        bodies = [r["body"] for r in srv.state.requests]
    recs = list(store.records())
    assert len(recs) == 3 and all(r.status == "ok" for r in recs)
    usual = [i for i, b in enumerate(bodies) if "max_tokens" in b]
    switched = [i for i, b in enumerate(bodies) if "max_completion_tokens" in b and "temperature" not in b]
    assert usual and len(usual) + len(switched) == len(bodies)
    assert usual == [0]  # the first request in the usual form met the 400; once switched, never again
    assert len(switched) == 3  # each request went through once in the switched form
    recorded = with_learned(manifest, result)
    assert recorded.models[0].options["reasoning"] is True
    assert models["openai/standin"].stats.retries == 0  # switching the form is not a retry


async def test_reasoning_false_never_switches() -> None:
    with StandinServer(refuse=("max_tokens",)) as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1", "reasoning": False}, retry=RETRY)
        with pytest.raises(PermanentModelError, match="max_completion_tokens"):
            await model.generate([Message(role="user", content="Q")], GenerateConfig(max_tokens=8))
        await model.aclose()
