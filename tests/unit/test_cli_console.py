"""Text from users and models is printed literally: no Rich markup, no terminal control, no reordering."""

from __future__ import annotations

import io
import json

from rich.table import Table
from typer.testing import CliRunner

from mathlens.cli.common import escape
from mathlens.cli.consoles import SafeConsole
from mathlens.cli.main import app

HOSTILE = "[/] [bold red]loud[/bold red] \x1b[2J\x1b[31mred\r over \u202egnp.exe \x00nul"


def _render(*objects: object, **kwargs: object) -> str:
    buf = io.StringIO()
    console = SafeConsole(file=buf, markup=False, force_terminal=True, color_system="truecolor", width=200)
    console.print(*objects, **kwargs)  # type: ignore[arg-type]
    return buf.getvalue()


def test_table_cells_are_literal() -> None:
    table = Table(title="t")
    table.add_column("id")
    table.add_row(HOSTILE)
    out = _render(table)
    assert "[/]" in out and "[bold red]loud[/bold red]" in out
    assert "\x1b[2J" not in out and "\r" not in out and "\u202e" not in out and "\x00" not in out
    assert "\\u001b[2J" in out and "\\u202e" in out


def test_escaped_text_inside_a_message_is_literal() -> None:
    out = _render(f"[bold]id:[/] {escape(HOSTILE)}", highlight=False)
    assert "[/] [bold red]loud[/bold red]" in out
    assert "\x1b[31m" not in out and "\\u001b[31m" in out


def test_a_broken_message_prints_instead_of_raising() -> None:
    out = _render("[bold]unescaped: [/] [/]")
    assert "unescaped:" in out


def test_flow_of_a_hostile_response_prints_it_literally() -> None:
    res = CliRunner().invoke(app, ["flow", "Step 1: x = 2 " + HOSTILE + "\nStep 2: so x + 1 = 3"])
    assert res.exit_code == 0, res.output
    assert "[/]" in res.output and "\x1b[2J" not in res.output and "\u202e" not in res.output


def test_json_output_escapes_controls_and_stays_valid() -> None:
    res = CliRunner().invoke(app, ["flow", "--json", "Step 1: x = 2 " + HOSTILE])
    assert res.exit_code == 0, res.output
    assert "\u202e" not in res.output and "\x1b" not in res.output
    doc = json.loads(res.output)
    assert "\u202egnp.exe" in json.dumps(doc, ensure_ascii=False)  # the same text, escaped on the wire


def test_error_message_with_markup_and_controls(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "[red]x[").mkdir()
    bad = tmp_path / "[red]x[" / "]\x1b[31m.yaml"  # the path reads "[red]x[/]..."
    bad.write_text("id: x\nname: X\nquestions: []\n")
    res = CliRunner().invoke(app, ["run", str(bad), "--model", "mock/echo", "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    assert "[red]x[/]" in res.output and "\x1b[31m" not in res.output


def test_outside_names_in_messages_print_literally(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json as _json

    from typer.testing import CliRunner

    from mathlens.cli.main import app

    out = tmp_path / "[red]run[/red]"
    res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/[bold]m[/bold]", "-M",
                                   "responses=" + _json.dumps(["Final answer: 1"]), "--limit", "1",
                                   "--out", str(out)], env={"MATHLENS_CACHE_DIR": str(tmp_path / "cache")})
    assert res.exit_code == 0, res.output
    flat = "".join(res.output.split())
    assert "[red]run[/red]" in flat  # the run directory is shown as given, not styled
