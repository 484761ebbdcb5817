"""Options the same on every command: `-q` is always `--quiet`, and a switch shows no `<bool>`."""

from __future__ import annotations

import click
from typer.testing import CliRunner

from mathlens.cli.main import COMMANDS, app, load_module_commands


def _commands() -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for module in sorted({m for m, _ in COMMANDS.values()}):
        for name, cmd in load_module_commands(module).items():
            subs = getattr(cmd, "commands", None)
            out.extend((f"{name} {sub}", c) for sub, c in subs.items()) if subs else out.append((name, cmd))
    return out


def test_q_means_quiet_everywhere() -> None:
    for name, cmd in _commands():
        for param in cmd.params:
            if "-q" in getattr(param, "opts", []):
                assert "--quiet" in param.opts, f"mathlens {name}: -q is {param.opts}"


def test_switches_show_no_type_in_help() -> None:
    for top, cmd in _commands():
        for name, _ in _leaves(top, cmd):
            res = CliRunner().invoke(app, [*name.split(), "--help"], env={"COLUMNS": "200"})
            assert res.exit_code == 0, (name, res.output)
            assert "<bool>" not in res.output and "--help" in res.output, name


def test_help_text_survives_rich_markup() -> None:
    """Typer renders help as Rich markup: `[the run's judge]` would vanish from the page as a style
    tag. Every option's help must read the same once rendered."""
    from rich.text import Text

    lost = []
    for name, cmd in _commands():
        for param in cmd.params:
            text = getattr(param, "help", None) or ""
            if Text.from_markup(text).plain != text:
                lost.append(f"mathlens {name} {'/'.join(getattr(param, 'opts', [param.name]))}: {text!r}")
    assert not lost, "\n".join(lost)


def _leaves(name: str, cmd: click.Command) -> list[tuple[str, click.Command]]:
    subs = getattr(cmd, "commands", None)
    return [leaf for sub, c in subs.items() for leaf in _leaves(f"{name} {sub}", c)] if subs else [(name, cmd)]


def test_every_command_that_prints_results_takes_json() -> None:
    """`schema` prints a JSON Schema, which is JSON already."""
    missing = [name for top, cmd in _commands() for name, leaf in _leaves(top, cmd)
               if name != "schema" and not any("--json" in getattr(p, "opts", []) for p in leaf.params)]
    assert not missing, missing
