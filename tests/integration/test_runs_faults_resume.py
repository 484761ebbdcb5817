"""A run survives a failing server, and a run killed with SIGKILL resumes to exactly the records an
uninterrupted run writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mathlens.testing.standin import StandinServer
from support.cli import killed_after, records, spawn
from support.runs import run_on_standin

FAULTS = {
    "MARK-500x2": ["500", "500"],
    "MARK-429": ["429"],
    "MARK-TIMEOUT": ["timeout"],
    "MARK-DROP": ["drop", "drop"],
    "MARK-400": ["400"],
    "MARK-DEAD": ["500"] * 20,
}


def _dataset(path: Path, n_plain: int) -> Path:
    rows = [{"id": f"f{i}", "text": f"Question with {m}: compute 1+1."} for i, m in enumerate(FAULTS)]
    rows += [{"id": f"p{i}", "text": f"Plain question {i}: compute {i}+1."} for i in range(n_plain)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.server
async def test_run_completes_under_faults(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 6)
    with StandinServer(faults={k: list(v) for k, v in FAULTS.items()}, timeout_sleep_s=3) as srv:
        store, result = await run_on_standin(srv.url, data, tmp_path / "run", timeout_s=1.0)
        attempts = dict(srv.state.attempts)
    recs = {r.question_id: r for r in store.records()}
    assert len(recs) == 12 and result.written == 12
    ok = {q for q, r in recs.items() if r.status == "ok"}
    assert ok == {"f0", "f1", "f2", "f3"} | {f"p{i}" for i in range(6)}
    assert recs["f4"].status == "error" and "HTTP 400" in (recs["f4"].error or "")
    assert recs["f5"].status == "error" and "gave up after 3 attempts" in (recs["f5"].error or "")
    # retries are bounded: never more than max_attempts per request, and none for the 400
    assert attempts == {"MARK-500x2": 3, "MARK-429": 2, "MARK-TIMEOUT": 2, "MARK-DROP": 3, "MARK-400": 1,
                        "MARK-DEAD": 3}


@pytest.mark.server
def test_sigkill_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", 30)
    data.write_text("".join(line for line in data.read_text().splitlines(True) if "MARK" not in line))
    with StandinServer(delay_s=0.05) as srv:
        base = ["run", str(data), "--model", "openai/standin", "--base-url", srv.url + "/v1",
                "--concurrency", "2", "--runs", "2", "-q"]
        env_a = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache_a")}
        env_b = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache_b")}
        killed = tmp_path / "killed"
        killed_after(base, killed, 12, env=env_a)
        partial = (killed / "records.jsonl").read_text().count("\n")
        assert 12 <= partial < 60, "the run must be killed mid-way"
        before = len(srv.state.requests)
        resumed = spawn("run", "--resume", str(killed), "-q", env=env_a)
        assert resumed.wait(timeout=120) == 0, resumed.stderr.read() if resumed.stderr else ""
        resumed_calls = len(srv.state.requests) - before
        full = tmp_path / "full"
        straight = spawn(*base, "--out", str(full), env=env_b)
        assert straight.wait(timeout=120) == 0
    got, want = records(killed), records(full)
    keys = [r["key"] for r in got]
    assert len(keys) == len(set(keys)) == 60, "no duplicates, no gaps"
    assert {r["key"]: r["response"] for r in got} == {r["key"]: r["response"] for r in want}
    # the resume repeated no finished request: at most the few in flight at the kill were redone
    assert resumed_calls <= 60 - partial + 2
