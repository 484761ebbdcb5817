"""`mathlens run` off a terminal: plain progress lines on stderr, so a log shows the run is alive."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "mathlens.cli.main", "run", "calc3-exam1", "--model", "mock/steady",
            "-M", "responses=" + json.dumps(["1. 2 + 2 = 4\nFinal answer: 4"]), "--ablate", "keywords",
            "--out", str(tmp_path / "run")]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    total = sum(1 for _ in (tmp_path / "run" / "records.jsonl").open())
    lines = re.findall(r"^\[run\] (\d+)/(\d+) requests", proc.stderr, re.M)
    assert total > 5 and lines, proc.stderr
    assert {int(t) for _, t in lines} == {total}
    done = [int(d) for d, _ in lines]
    assert done == sorted(done) and done[-1] == total  # every few records, ending on the last one
    assert len(lines) >= total // 5


def test_quiet_run_prints_no_progress_lines(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "mathlens.cli.main", "run", "calc3-exam1", "--model", "mock/steady",
            "-M", "responses=" + json.dumps(["Final answer: 4"]), "--limit", "2", "--quiet",
            "--out", str(tmp_path / "run")]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "[run]" not in proc.stderr
