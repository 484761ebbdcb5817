"""The response cache is only a cache: damaged, unreadable, read-only or full storage never stops a run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.models.base import GenerateConfig, Message, ModelOutput
from mathlens.models.cache import ResponseCache
from mathlens.models.registry import get_model
from support import smallfs


def _filled_cache(path: Path, n: int = 400) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(f"k{i}", ModelOutput(text=f"answer {i} " * 20, finish_reason="stop"))
    cache.close()


def _asides(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm")))


def _damage_garbage(path: Path) -> bytes:
    data = os.urandom(8192)
    path.write_bytes(data)
    return data


def _damage_truncate(path: Path) -> bytes:
    _filled_cache(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    for side in ("-wal", "-shm"):
        path.with_name(path.name + side).unlink(missing_ok=True)
    return data[: len(data) // 3]


def _damage_pages(path: Path) -> bytes:
    _filled_cache(path)
    data = bytearray(path.read_bytes())
    for off in range(4096, len(data), 4096):  # keep page 1 (the schema), scribble over every later page header
        data[off:off + 64] = os.urandom(64)
    path.write_bytes(bytes(data))
    return bytes(data)


@pytest.mark.parametrize("damage", [_damage_garbage, _damage_truncate, _damage_pages],
                         ids=["garbage", "truncated", "scribbled"])
def test_damaged_file_is_moved_aside(tmp_path: Path, damage, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "responses.sqlite"
    damaged = damage(path)
    cache = ResponseCache(path)
    for i in range(5):  # the old entries are gone with the damaged file
        assert cache.get(f"k{i}") is None
    cache.put("fresh", ModelOutput(text="new", finish_reason="stop"))
    hit = cache.get("fresh")
    assert hit is not None and hit.text == "new" and hit.cached
    cache.close()
    asides = _asides(tmp_path)
    err = capsys.readouterr().err
    assert len(asides) == 1 and asides[0].read_bytes() == damaged
    assert str(path) in err and str(asides[0]) in err and "damaged" in err


def test_row_that_no_longer_validates_is_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    cache.put("good", ModelOutput(text="fine", finish_reason="stop"))
    cache.close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO responses VALUES (?, ?)", ("bad-json", "{not json"))
    db.execute("INSERT INTO responses VALUES (?, ?)", ("bad-type", json.dumps({"text": 5, "finish_reason": "x"})))
    db.commit()
    db.close()
    cache = ResponseCache(path)
    assert cache.get("bad-json") is None and cache.get("bad-type") is None
    good = cache.get("good")
    assert good is not None and good.text == "fine"
    assert len(cache) == 1  # the bad rows were removed
    cache.close()
    assert "no longer validate" in capsys.readouterr().err


def test_unwritable_folder_turns_the_cache_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    cache = ResponseCache(blocker / "responses.sqlite")
    cache.put("k", ModelOutput(text="t"))
    assert cache.get("k") is None and len(cache) == 0 and cache.disabled_reason
    assert "is off" in capsys.readouterr().err


def test_read_only_folder_turns_the_cache_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with smallfs.small_fs(tmp_path, read_only=True) as ro:
        cache = ResponseCache(ro / "responses.sqlite")
        cache.put("k", ModelOutput(text="t"))
        assert cache.get("k") is None and cache.disabled_reason
        cache.close()
    err = capsys.readouterr().err
    assert "is off" in err and "responses.sqlite" in err


def test_full_disk_under_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with smallfs.small_fs(tmp_path, size_kb=256) as fs:
        cache = ResponseCache(fs / "responses.sqlite")
        smallfs.fill(fs, leave_bytes=0)
        for i in range(200):  # no exception however full the disk is
            cache.put(f"k{i}", ModelOutput(text="x" * 4000))
        assert cache.disabled_reason is not None
        cache.close()
    assert "is off" in capsys.readouterr().err


async def test_model_calls_through_a_damaged_cache(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    _damage_garbage(path)
    model = get_model("mock/x", {"responses": ["one"]}, cache=ResponseCache(path))
    out = await model.generate([Message(role="user", content="q")], GenerateConfig())
    again = await model.generate([Message(role="user", content="q")], GenerateConfig())
    assert out.text == again.text == "one" and again.cached


@pytest.mark.parametrize("damage", [_damage_garbage, _damage_truncate], ids=["garbage", "truncated"])
def test_run_completes_with_a_damaged_cache(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    damage(cache_dir / "responses.sqlite")
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", "calc1-exam1", "--model", "mock/echo",
                           "--limit", "2", "--out", str(out), "-q"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MATHLENS_CACHE_DIR": str(cache_dir)})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "damaged" in proc.stderr
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and all(r["status"] == "ok" for r in recs)
