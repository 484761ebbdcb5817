"""The command line from a test: in process (`cli_ok`), or as a process of its own (`spawn`, and
`killed_after` for a run interrupted part-way) for tests that kill it or run two at once; and a
run's records as JSON (`records`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mathlens.cli.main import app


def cli_ok(*args: str) -> str:
    """`mathlens ARGS` in process; its output, after checking it exited 0."""
    res = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def spawn(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """`python -m mathlens.cli.main ARGS` started (not waited for), its output piped."""
    return subprocess.Popen([sys.executable, "-m", "mathlens.cli.main", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def records(run: Path) -> list[dict[str, Any]]:
    """Every record of the run at `run`, as written."""
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def killed_after(args: list[str], run: Path, records_at_least: int, env: dict[str, str],
                 wait_s: float = 60.0) -> None:
    """Start `mathlens ARGS --out RUN` and SIGKILL it once RUN holds `records_at_least` records (or
    after `wait_s` seconds): an interrupted run to resume."""
    proc = spawn(*args, "--out", str(run), env=env)
    deadline = time.time() + wait_s
    path = run / "records.jsonl"
    while time.time() < deadline:
        if path.exists() and path.read_text().count("\n") >= records_at_least:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
