"""One writer per run directory: a second process is refused with the writer's PID, readers are warned,
and two resumes started together give exactly the records of an uninterrupted run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.errors import RunInUseError
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer
from support.cli import killed_after, records, spawn

HOLD = "import sys, time; from mathlens.runs.store import RunStore; RunStore(sys.argv[1]).acquire_lock(); " \
       "print('locked', flush=True); time.sleep(60)"


def _holder(run: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_second_store_is_refused_with_pid(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = _holder(run)
    try:
        with pytest.raises(RunInUseError, match=f"in use by PID {proc.pid}"):
            RunStore(run).acquire_lock()
        assert RunStore(run).writer_pid() == proc.pid
    finally:
        proc.kill()
        proc.wait()
    store = RunStore(run)  # the lock ends with its process, however it ends
    assert store.writer_pid() is None
    store.acquire_lock()
    assert store.locked
    store.release_lock()


def test_reader_is_warned_about_a_run_being_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "records.jsonl").write_text("")
    proc = _holder(run)
    try:
        assert list(RunStore(run).records()) == []
        err = capsys.readouterr().err
        assert "being written by PID" in err and str(proc.pid) in err
    finally:
        proc.kill()
        proc.wait()
    assert list(RunStore(run).records()) == []
    assert "being written" not in capsys.readouterr().err


def _dataset(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"p{i}", "text": f"Question {i}: {i}+1?"}) + "\n" for i in range(n)))
    return path


@pytest.mark.server
def test_two_resumes_at_once_one_proceeds(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 40)
    with StandinServer(delay_s=0.1) as srv:  # the remaining requests keep the winner busy for ~2 s
        base = ["run", str(data), "--model", "openai/standin", "--base-url", srv.url + "/v1", "--concurrency", "2",
                "-q"]
        env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache_a")}
        killed = tmp_path / "killed"
        killed_after(base, killed, 6, env=env)
        assert (killed / "records.jsonl").read_text().count("\n") < 40
        first = spawn("run", "--resume", str(killed), "-q", env=env)
        second = spawn("run", "--resume", str(killed), "-q", env=env)
        outcomes = sorted([(first.wait(timeout=120), first.stderr.read() if first.stderr else ""),
                           (second.wait(timeout=120), second.stderr.read() if second.stderr else "")])
        full = tmp_path / "full"
        env_b = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache_b")}
        straight = spawn(*base, "--out", str(full), env=env_b)
        assert straight.wait(timeout=120) == 0
    (ok_rc, _), (refused_rc, refused_err) = outcomes
    assert ok_rc == 0 and refused_rc == 2
    assert "in use by PID" in refused_err and "Traceback" not in refused_err
    got, want = records(killed), records(full)
    keys = [r["key"] for r in got]
    assert len(keys) == len(set(keys)) == 40
    assert {r["key"]: r["response"] for r in got} == {r["key"]: r["response"] for r in want}
