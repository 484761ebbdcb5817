"""A knowledge base written in another format than this version reads is refused by name."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mathlens.errors import UserError
from mathlens.solve.retrieval import store


def _write_kb(home: Path, name: str, version: int) -> None:
    folder = home / "kb" / name
    folder.mkdir(parents=True)
    info = store.KBInfo(name=name, embedder="hash", embedder_identity="hash-test", chunk_size=200, overlap=20,
                        created_at=datetime(2026, 1, 1, tzinfo=UTC))
    doc = json.loads(info.model_dump_json())
    doc["format_version"] = version
    (folder / "kb.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "chunks.jsonl").write_text("", encoding="utf-8")


@pytest.mark.parametrize("version", [0, store.FORMAT_VERSION + 1])
def test_another_format_is_refused_with_its_version_and_the_command_to_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int) -> None:
    monkeypatch.setenv("MATHLENS_HOME", str(tmp_path))
    _write_kb(tmp_path, "old-notes", version)
    with pytest.raises(UserError) as err:
        store.open_kb("old-notes")
    message = str(err.value)
    assert f"format {version}" in message and f"reads format {store.FORMAT_VERSION}" in message
    assert "--name old-notes --overwrite" in message


def test_the_current_format_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_HOME", str(tmp_path))
    _write_kb(tmp_path, "notes", store.FORMAT_VERSION)
    assert store.open_kb("notes").info.name == "notes"
