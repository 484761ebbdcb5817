"""Output that is not a terminal is never wrapped at 80 columns: tables print at their natural width."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.table import Table

from mathlens.cli.consoles import UNWRAPPED_WIDTH, SafeConsole

LONG_MODEL = "embedded/qwen2.5-coder-1.5b?n_threads=1&temperature=0"
FLAGS = "empty, echo, repetition_loop, wrong_script, truncated, no_final_answer"


def _table() -> Table:
    t = Table(title="Records per model")
    for col in ("model", "configuration", "records", "flags", "note"):
        t.add_column(col)
    t.add_row(LONG_MODEL, "baseline", "22", FLAGS, "the token cap cut fifteen of the twenty-two responses short")
    return t


def _print(env: dict[str, str], **kwargs: object) -> str:
    buf = io.StringIO()
    console = SafeConsole(file=buf, markup=False, _environ=env, **kwargs)  # type: ignore[arg-type]
    console.print(_table())
    return buf.getvalue()


def test_a_file_gets_the_table_at_its_natural_width() -> None:
    out = _print({})
    rows = [line for line in out.splitlines() if LONG_MODEL in line]
    assert len(rows) == 1 and FLAGS in rows[0]  # one line: nothing cut to "embe…", no flag list over lines
    assert max(len(line) for line in out.splitlines()) > 80
    assert all(len(line) < 300 for line in out.splitlines())  # natural width, not padded to the bound


def test_a_terminal_still_wraps_at_its_width() -> None:
    out = _print({}, force_terminal=True, color_system=None, width=80)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert not any(LONG_MODEL in line for line in out.splitlines())


def test_columns_in_the_environment_still_choose_the_width() -> None:
    out = _print({"COLUMNS": "60"})
    assert max(len(line) for line in out.splitlines()) <= 60
    assert SafeConsole(file=io.StringIO(), _environ={}).width == UNWRAPPED_WIDTH


def test_the_command_line_piped_to_a_file_does_not_wrap(tmp_path: Path) -> None:
    """A real `mathlens list models` with stdout a file (as in a run log): the models table unwrapped."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    log = tmp_path / "out.txt"
    with log.open("w") as fh:
        subprocess.run([sys.executable, "-m", "mathlens.cli.main", "list", "models"], stdout=fh,
                       stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, check=True, timeout=120)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert max(len(line) for line in lines) > 80
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "gemma3-270m"):
        assert any(name in line for line in lines) and not any("…" in line for line in lines)
