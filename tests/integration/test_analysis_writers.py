"""One writer per analysis document: a second `analyze` of the same run is refused with the holder's
PID while the first writes; what is left is one readable document equal to a single analysis's; a
killed writer's temporaries are removed by the next writer."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mathlens.analyze.grading.answer_records import ANSWERS

N = 600


def _import_run(tmp: Path, name: str = "run") -> Path:
    items = tmp / "items.jsonl"
    outputs = tmp / "outputs.jsonl"
    if not items.exists():
        with items.open("w") as fh:
            for i in range(50):
                fh.write(json.dumps({"id": f"q{i}", "text": f"What is {i} + {i}?", "answers": [str(2 * i)]}) + "\n")
        with outputs.open("w") as fh:
            for s in range(N):
                i = s % 50
                right = 2 * i if s % 3 else 2 * i + 1
                fh.write(json.dumps({"id": f"q{i}", "question": f"What is {i} + {i}?", "model": "m",
                                     "response": f"Step 1: {i} + {i} = {2 * i}.\nFinal answer: {right}"}) + "\n")
    run = tmp / name
    proc = _cli("import", str(outputs), "--items", str(items), "--out", str(run), "-q")
    assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    return run


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mathlens.cli.main", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MATHLENS_CACHE_DIR": "/nonexistent-cache"})


def _wait_for_lock_holder(lock: Path, pid: int, timeout_s: float = 120.0) -> None:
    """Until the document's lock file names `pid` (the writer has taken the lock)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if lock.exists() and lock.read_text().strip() == str(pid):
            return
        time.sleep(0.01)
    raise AssertionError(f"{lock} never named PID {pid}")


def _body(path: Path) -> list[str]:
    return _body_of(path.read_bytes())


@pytest.mark.slow
def test_two_analyses_at_once_one_is_refused_and_the_document_is_whole(tmp_path: Path) -> None:
    run = _import_run(tmp_path)
    single = tmp_path / "single"
    shutil.copytree(run, single)
    alone = _cli("analyze", str(single), "--only", "answers")
    assert alone.wait(timeout=600) == 0, alone.stderr.read() if alone.stderr else ""

    # The first also runs the (slower) flow analysis: it holds both documents' locks from its start
    first = _cli("analyze", str(run), "--only", "flow,answers")
    _wait_for_lock_holder(run / "analysis" / ".answers.lock", first.pid)
    second = _cli("analyze", str(run), "--only", "answers")
    second_rc = second.wait(timeout=600)
    second_err = second.stderr.read() if second.stderr else ""
    assert first.wait(timeout=600) == 0, first.stderr.read() if first.stderr else ""
    assert second_rc == 2, second_err
    assert f"in use by PID {first.pid}" in second_err and "answers.jsonl" in second_err
    assert "Traceback" not in second_err and len(second_err.strip().splitlines()) == 1

    doc = run / "analysis" / "answers.jsonl"
    assert b"\0" not in doc.read_bytes()
    read = ANSWERS.read(run)
    assert read is not None and read.envelope.entries == N == read.envelope.records
    assert len(list(ANSWERS.entries(run))) == N
    assert _body(doc) == _body(single / "analysis" / "answers.jsonl")
    assert not [p.name for p in (run / "analysis").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_a_killed_writer_leaves_the_old_document_and_its_temporaries_go_with_the_next_writer(
        tmp_path: Path) -> None:
    run = _import_run(tmp_path)
    first = _cli("analyze", str(run), "--only", "answers")
    assert first.wait(timeout=600) == 0
    before = (run / "analysis" / "answers.jsonl").read_bytes()

    writer = _cli("analyze", str(run), "--only", "answers")
    folder = run / "analysis"
    deadline = time.time() + 300
    temps: list[Path] = []
    while time.time() < deadline and not temps:  # kill it while it streams its entries
        temps = [p for p in folder.iterdir() if p.name.endswith(".tmp") and p.stat().st_size > 0]
        time.sleep(0.005)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert temps, "the writer never wrote a temporary"
    assert (folder / "answers.jsonl").read_bytes() == before  # untouched: the old document still reads
    assert any(p.exists() for p in temps)  # left by the killed process ...

    again = _cli("analyze", str(run), "--only", "answers")
    assert again.wait(timeout=600) == 0
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]  # ... and removed by the next
    assert _body(folder / "answers.jsonl") == _body_of(before)


def _body_of(data: bytes) -> list[str]:
    """A document's lines with the envelope's version stamp left out (same code, same bytes)."""
    lines = data.decode("utf-8").splitlines()
    env = json.loads(lines[0])
    env.pop("mathlens_version")
    return [json.dumps(env, sort_keys=True), *lines[1:]]
