"""A full or read-only disk stops a run with a clear message and no torn or lost record; once there is
space again, `--resume` completes it to exactly the records of an uninterrupted run."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs import store as store_module
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore, RunStoreWriteError
from support import smallfs


def _dataset(path: Path, n: int, width: int = 40) -> Path:
    rows = [{"id": f"q{i}", "text": f"Question {i}: " + "compute 1+1 " * width} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _manifest(data: Path):  # type: ignore[no-untyped-def]
    return base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec="mock/echo")],
                         generate=GenerateConfig(max_tokens=4000), system_role="S")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_enospc_at_the_store_write_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _dataset(tmp_path / "q.jsonl", 20)
    manifest = _manifest(data)
    straight = RunStore(tmp_path / "straight")
    straight.write_manifest(manifest)
    await execute(straight, manifest, build_models(manifest, None, RetryPolicy(), None))

    run = RunStore(tmp_path / "run")
    run.write_manifest(manifest)
    real_write = os.write
    calls = {"n": 0}

    def failing_write(fd: int, data: bytes) -> int:  # 7 records fit, then half of one, then the disk is full
        if calls["n"] >= 8:
            raise OSError(errno.ENOSPC, "No space left on device")
        if not bytes(data[:8]).startswith(b'{"key"'):
            return real_write(fd, data)  # the lock's PID note
        calls["n"] += 1
        if calls["n"] == 8:
            return real_write(fd, bytes(data)[: len(data) // 2])
        return real_write(fd, data)

    monkeypatch.setattr(store_module.os, "write", failing_write)
    with pytest.raises(RunStoreWriteError, match=r"No space left on device.*--resume"):
        await execute(run, manifest, build_models(manifest, None, RetryPolicy(), None))
    monkeypatch.setattr(store_module.os, "write", real_write)
    text = run.records_path.read_text()
    assert text.endswith("\n") and text.count("\n") == 7, "the torn half record was cut off at once"
    assert run.writer_pid() is None, "the lock is released"
    await execute(run, manifest, build_models(manifest, None, RetryPolicy(), None))
    got, want = _lines(run.records_path), _lines(straight.records_path)
    assert len({r["key"] for r in got}) == len(got) == 20
    assert {r["key"]: r["response"] for r in got} == {r["key"]: r["response"] for r in want}


def test_full_tmpfs_then_resume_after_growing_it(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 60, width=60)
    runner = CliRunner()
    full = tmp_path / "straight"
    res = runner.invoke(app, ["run", str(data), "--model", "mock/echo", "--max-tokens", "4000", "--out", str(full),
                              "-q"])
    assert res.exit_code == 0, res.output
    # 128 KB: the run's copy of its questions (~56 KB) fits, the 60 records (~170 KB) do not
    with smallfs.small_fs(tmp_path, size_kb=128) as fs:
        out = fs / "run"
        res = runner.invoke(app, ["run", str(data), "--model", "mock/echo", "--max-tokens", "4000", "--out", str(out),
                                  "-q"])
        text = " ".join(res.output.split())
        assert res.exit_code == 2, text
        assert isinstance(res.exception, SystemExit) and "No space left on device" in text
        assert f"mathlens run --resume {out}" in text
        partial = (out / "records.jsonl").read_text()
        assert partial.endswith("\n") and 0 < partial.count("\n") < 60
        grown = subprocess.run(["mount", "-o", "remount,size=8m", str(fs)], capture_output=True, text=True)
        if grown.returncode != 0:
            pytest.skip(f"cannot grow the tmpfs: {grown.stderr.strip()}")
        res = runner.invoke(app, ["run", "--resume", str(out), "-q"])
        assert res.exit_code == 0, res.output
        got = _lines(out / "records.jsonl")
    want = _lines(full / "records.jsonl")
    assert len({r["key"] for r in got}) == len(got) == 60
    assert {r["key"]: r["response"] for r in got} == {r["key"]: r["response"] for r in want}


def test_read_only_run_folder(tmp_path: Path) -> None:
    with smallfs.small_fs(tmp_path, read_only=True) as ro:
        res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/echo", "--limit", "1",
                                       "--out", str(ro / "run"), "-q"])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), text
    assert "Read-only file system" in text and "Traceback" not in text
