"""Entry point of the `mathlens` command.

Commands live in modules of this package, each with a `register(app)` function. `COMMANDS` maps
every top-level command to its module and a one-line description, so the command tree can be shown
(`mathlens --help`) without importing any command module, and running a command imports only the
module that defines it: `mathlens show` never pays for SymPy, scikit-learn or torch. Adding a command
is one module plus one line here; a test checks that the table and the modules agree.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

#: command -> (module in mathlens.cli, one-line description)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "Run questions against models; record every response."),
    "import": ("importing", "Import another tool's outputs as a run (no model calls)."),
    "show": ("info", "Summarise a run: records, errors, analyses present."),
    "list": ("info", "List providers, exams, dataset formats or analyzers."),
    "schema": ("info", "Print the JSON Schema of an item file or a study file."),
    "analyze": ("analyze", "Run analyzers over a finished run."),
    "flow": ("analyze", "Print the reasoning-flow analysis of one solution."),
    "check": ("checks", "Check a response's final answer against a reference."),
    "steps": ("checks", "Check every step of one solution, claim by claim."),
    "sensitivity": ("sensitivity", "Prompt-ablation sensitivity of a run (no model calls)."),
    "grade": ("grade", "Grade a run with the rubric: by a judge, or by people."),
    "agreement": ("grade", "Agreement of the judge with human graders and itself."),
    "kb": ("kb", "Build, list and query knowledge bases (rag, contextual)."),
    "maple": ("maple", "MAPLE: error labels, step judging and the score of a run."),
    "maple-audit": ("maple", "Audit a judge's first wrong step against human labels."),
    "maple-agreement": ("maple", "Agreement of the MAPLE step judge with human step labels."),
    "tutor": ("tutor", "Does a model adapt its tutoring to the learner?"),
    "compare": ("compare", "Did a change help? Paired tests between runs or groups."),
    "report": ("report", "Write one self-contained HTML report of runs."),
    "view": ("report", "Serve the runs and their reports on 127.0.0.1."),
}


def load_module_commands(module: str) -> dict[str, Any]:
    """The commands that `mathlens.cli.<module>.register` defines, by name."""
    sub = typer.Typer()
    importlib.import_module(f"mathlens.cli.{module}").register(sub)
    group = typer.main.get_group(sub)
    return dict(getattr(group, "commands", {}))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, and back on after it if it was on. Loading a
    command builds long-lived objects (modules, classes, their schemas) that each pass of the
    collector would walk again for nothing; reference counting still frees what is dropped."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class LazyGroup(TyperGroup):
    """Lists commands from `COMMANDS`; imports a command's module only when that command runs."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in COMMANDS:  # a stand-in carrying the description, for the help listing
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name][1], short_help=COMMANDS[cmd_name][1])
        return None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        """As Typer's, but a usage error (an option's value refused, an option missing) is one line
        on stderr, `error: ...`, naming the option and, for a number, the range it allows; exit 2."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, windows_expand_args, **extra)
        from typer._click.exceptions import ClickException
        from typer.exceptions import Abort

        argv = list(sys.argv[1:] if args is None else args)
        try:
            rv = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except ClickException as exc:
            if type(exc).__name__ != "NoArgsIsHelpError":  # the help is already printed
                _usage_error(exc, argv)
            sys.exit(exc.exit_code)
        except Abort:
            sys.stderr.write("Aborted!\n")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) and not isinstance(rv, bool) else 0)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else None
        if name in COMMANDS and name not in self.commands:
            with collector_paused():
                self.commands.update(load_module_commands(COMMANDS[name][0]))
        return super().resolve_command(ctx, args)


def _given_value(param: Any, argv: list[str]) -> str | None:
    """The value `argv` gave the option `param` (its last occurrence), as typed."""
    value = None
    for i, arg in enumerate(argv):
        for name in getattr(param, "opts", ()):
            if arg == name and i + 1 < len(argv):
                value = argv[i + 1]
            elif arg.startswith(name + "="):
                value = arg[len(name) + 1:]
    return value


def _usage_error(exc: Any, argv: list[str]) -> None:
    """One line for a usage error: a number refused names the option, the value and what the option
    allows (its range, or a whole number); anything else keeps the parser's words and says where the
    options are listed."""
    from mathlens.cli.common import fail
    from mathlens.flags import describe_range

    param = getattr(exc, "param", None)
    ctx = getattr(exc, "ctx", None)
    opts = getattr(param, "opts", None) or []
    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if type(exc).__name__ == "BadParameter" and opts and kind in (int, float):
        allowed = describe_range(ge=getattr(param, "min", None), le=getattr(param, "max", None))
        what = "a whole number" if kind is int else "a finite number"
        given = _given_value(param, argv)
        try:
            number = kind(given) if given is not None else None
        except ValueError:
            number = None
        problem = "out of range" if number is not None and number == number else f"not {what}"
        name = max(opts, key=len)
        fail(f"{name} {given if given is not None else ''}".rstrip()
             + f": {problem} (allowed: {what}{' ' + allowed if allowed else ''})")
        return
    message = exc.format_message().rstrip(".")
    names = []
    while ctx is not None and ctx.parent is not None:  # the command as a user types it, however it was started
        names.append(ctx.info_name)
        ctx = ctx.parent
    where = f" ({' '.join(['mathlens', *reversed(names)])} --help lists the options)"
    fail(message[:1].lower() + message[1:] + where)


def _switches_show_no_type() -> None:
    """Typer labels every option with its type in help (`<int>`); a switch takes no value, so a
    `<bool>` beside it reads as if it wanted one. Switches get no label."""
    labelled = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else labelled(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_switches_show_no_type()

app = typer.Typer(
    name="mathlens",
    cls=LazyGroup,
    help="See how language models reason through math problems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """See how language models reason through math problems."""


def _normalise_argv(argv: list[str]) -> list[str]:
    """Let `--ablate` stand alone (meaning all element types) or take a list: `--ablate coordinates,keywords`."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg != "--ablate":
            continue
        nxt = out[i + 1] if i + 1 < len(out) else None
        if nxt is None or not re.fullmatch(r"[a-z_]+(,[a-z_]+)*", nxt) or _is_source(nxt):
            out[i] = "--ablate=all"
    return out


def _is_source(token: str) -> bool:
    from mathlens.items.loaders import builtin_exams

    return token in builtin_exams() or Path(token).exists()


def main() -> None:
    sys.argv[1:] = _normalise_argv(sys.argv[1:])
    try:
        app()
    finally:
        # The process ends here: its objects go with it, so the collector need not walk all of them
        # again while the interpreter shuts down (a tenth of a second after a run). Exit handlers
        # (worker pools, the embedded model) still run; they are registered with atexit.
        gc.freeze()


if __name__ == "__main__":
    main()
