"""`llamacpp/` with a vision projector (`-M mmproj=PATH`): the wiring to llama-cpp-python's real
multimodal chat handlers.

No vision projector GGUF small enough is shipped on the package registries, so no image is turned
into embeddings here: the tests check that the real handler class is built with the projector
path, that messages carry the images as data-URL parts, and that a projector llama.cpp cannot load
is one clear error naming it. Generation from an image with a real projector is not run.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from mathlens.errors import PermanentModelError, UserError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.providers.llamacpp import CHAT_HANDLERS, LlamaCppProvider
from support.embedded import TEST_EMBEDDED

llama_chat_format = pytest.importorskip("llama_cpp.llama_chat_format", reason="llama-cpp-python is not installed")


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    """A stand-in weights path (only its bytes are hashed until the model is loaded)."""
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + bytes(64))
    return path


@pytest.mark.parametrize("name", sorted(CHAT_HANDLERS))
def test_each_handler_name_builds_the_real_llama_cpp_class_with_the_projector(gguf: Path, tmp_path: Path,
                                                                              name: str) -> None:
    mmproj = tmp_path / "mmproj.gguf"
    mmproj.write_bytes(b"not a projector")
    provider = LlamaCppProvider(str(gguf), mmproj=str(mmproj), chat_handler=name)
    handler = provider.handler()
    assert type(handler) is getattr(llama_chat_format, CHAT_HANDLERS[name])
    assert handler.clip_model_path == str(mmproj)
    assert provider.accepts_images is True
    assert provider.identity()["chat_handler"] == name and provider.identity()["mmproj"]


def test_images_go_as_data_url_parts_and_a_text_only_model_refuses_them(gguf: Path, tmp_path: Path) -> None:
    image = tmp_path / "d.png"
    image.write_bytes(b"\x89PNG-bytes")
    mmproj = tmp_path / "mmproj.gguf"
    mmproj.write_bytes(b"x")
    msgs = [Message(role="system", content="S"), Message(role="user", content="Area?", images=(str(image),))]
    vision = LlamaCppProvider(str(gguf), mmproj=str(mmproj))
    assert vision.chat_messages(msgs) == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": [
            {"type": "text", "text": "Area?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,"
                                                + base64.b64encode(b"\x89PNG-bytes").decode()}}]}]
    text_only = LlamaCppProvider(str(gguf), chat_format="chatml")
    assert text_only.accepts_images is False and "mmproj" not in text_only.identity()
    with pytest.raises(PermanentModelError, match="-M mmproj=PATH"):
        text_only.chat_messages(msgs)


def test_a_missing_projector_file_is_a_user_error(gguf: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no vision projector file"):
        LlamaCppProvider(str(gguf), mmproj=str(tmp_path / "absent.gguf"))


@pytest.mark.embedded
async def test_a_projector_llama_cpp_cannot_load_is_one_clear_error(tmp_path: Path) -> None:
    """The embedded model's real weights with a file that is no projector: llama.cpp's mtmd loader
    refuses it when the first image request is made, and the request fails naming the file."""
    from mathlens.models.providers.llamacpp import embedded_model_path

    try:
        weights = embedded_model_path(TEST_EMBEDDED)
    except Exception as exc:  # weights not assembled on this machine
        pytest.skip(f"embedded weights unavailable: {exc}")
    mmproj = tmp_path / "mmproj.gguf"
    mmproj.write_bytes(b"GGUF" + bytes(256))
    image = tmp_path / "d.png"
    image.write_bytes(b"\x89PNG")
    provider = LlamaCppProvider(str(weights), mmproj=str(mmproj), n_ctx=512, n_threads=1)
    with pytest.raises(PermanentModelError, match=r"mmproj\.gguf"):
        await provider.generate([Message(role="user", content="Q", images=(str(image),))], GenerateConfig(max_tokens=4))
