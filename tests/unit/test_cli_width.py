"""Output that is not a terminal is never wrapped at 80 columns: tables print at their natural width.
A terminal narrower than a table gets it laid out again (`mathlens.cli.fit`), with no cell cut."""

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


def test_a_terminal_narrower_than_the_table_gets_every_cell_whole_within_its_width() -> None:
    out = _print({}, force_terminal=True, color_system=None, width=80)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in out
    assert any(line.split() == ["model", LONG_MODEL] for line in lines)  # a "header  value" line
    assert any(line.split()[:2] == ["configuration", "baseline"] for line in lines)


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


def _render(table: Table, width: int) -> list[str]:
    buf = io.StringIO()
    SafeConsole(file=buf, markup=False, force_terminal=True, color_system=None, width=width,
                _environ={}).print(table)  # type: ignore[arg-type]
    return buf.getvalue().splitlines()


def _scores(rows: list[tuple[str, ...]]) -> Table:
    t = Table(title="Exam scores")
    for col in ("exam", "model", "configuration", "grader", "score", "judge vs checker"):
        t.add_column(col)
    for row in rows:
        t.add_row(*row)
    return t


GRADER = "judge:embedded/qwen2.5-coder-1.5b?temperature=0"


def test_columns_alike_in_every_row_are_said_once_above_the_table_of_the_rest() -> None:
    table = _scores([("Calculus I — Exam 1", LONG_MODEL, "baseline", GRADER, "8/8", "1/1 agree"),
                     ("Calculus III — Exam 1", LONG_MODEL, "baseline", GRADER, "9/10", "0/1 agree")])
    lines = _render(table, 80)
    assert max(len(line) for line in lines) <= 80 and not any("…" in line for line in lines)
    assert lines[0].strip() == "Exam scores"
    said_once = {"model": LONG_MODEL, "configuration": "baseline", "grader": GRADER}
    for header, value in said_once.items():
        assert [line.split() for line in lines if value in line] == [[header, value]]
    header_row = next(line for line in lines if "exam" in line.split())
    assert header_row.split("┃")[1:-1] and [c.strip() for c in header_row.split("┃")[1:-1]] == [
        "exam", "score", "judge vs checker"]
    row = next(line for line in lines if "Calculus III" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == ["Calculus III — Exam 1", "9/10", "0/1 agree"]


def test_rows_that_cannot_fit_become_blocks_of_header_value_lines() -> None:
    table = _scores([("Calculus I — Exam 1", LONG_MODEL, "baseline", GRADER, "8/8", "1/1 agree"),
                     ("Calculus I — Exam 1", "openai/Qwen2.5-7B-Instruct-AWQ", "rag", "", "7/8", "")])
    lines = _render(table, 80)
    assert max(len(line) for line in lines) <= 80 and not any("…" in line for line in lines)
    blocks = [b.strip().splitlines() for b in "\n".join(lines).split("\n\n")[1:]]
    first = {line.split("  ")[0]: line.split("  ", 1)[1].strip() for line in blocks[0]}
    second = {line.split("  ")[0]: line.split("  ", 1)[1].strip() for line in blocks[1]}
    assert first["model"] == LONG_MODEL and first["grader"] == GRADER and first["score"] == "8/8"
    assert second == {"model": "openai/Qwen2.5-7B-Instruct-AWQ", "configuration": "rag", "score": "7/8"}
    assert any(line.split() == ["exam", "Calculus", "I", "—", "Exam", "1"] for line in lines[:3])  # alike: once


def test_a_table_that_fits_with_its_cells_wrapped_between_words_is_printed_as_rich_prints_it() -> None:
    from rich.console import Console

    narrow = Table("name", "course", "exam")
    narrow.add_row("calc1-exam1", "Calculus I", "Calculus I — Exam 1")
    narrow.add_row("calc3-exam1", "Calculus III", "Calculus III — Exam 1 (a long title that wraps)")
    for width in (120, 50):
        buf = io.StringIO()
        Console(file=buf, force_terminal=True, color_system=None, width=width, _environ={}).print(narrow)
        assert "…" not in buf.getvalue()
        assert _render(narrow, width) == buf.getvalue().splitlines()


def test_analyzer_rows_are_checked_and_printed_under_their_headers() -> None:
    import pytest

    from mathlens.analyze.protocol import Rows
    from mathlens.cli.analyze import print_lines

    with pytest.raises(ValueError, match="2 cells under 3 headers"):
        Rows(headers=("a", "b", "c"), rows=(("1", "2"),))
    rows = Rows(headers=("exam", "model", "n"), rows=(("calc1", LONG_MODEL, "3"), ("calc2", LONG_MODEL, "12")),
                right=frozenset({"n"}))
    for width in (200, 62):
        buf = io.StringIO()
        console = SafeConsole(file=buf, markup=False, force_terminal=True, color_system=None, width=width,
                              _environ={})  # type: ignore[arg-type]
        print_lines(console, ["a line", rows], indent=2)
        lines = buf.getvalue().splitlines()
        assert lines[0] == "  a line" and max(len(line.rstrip()) for line in lines) <= width
        assert all(line.startswith("  ") for line in lines if line.strip())
        body = [line for line in lines if "calc" in line]
        assert [line.split()[0] for line in body] == ["calc1", "calc2"]
        assert body[0].rstrip().endswith(" 3") and body[1].rstrip().endswith("12")  # figures aligned right
        assert sum(LONG_MODEL in line for line in lines) == (2 if width == 200 else 1), lines
