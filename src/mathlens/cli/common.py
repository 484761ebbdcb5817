"""Helpers shared by CLI commands: JSON output, error reporting, the consoles everything is printed
through (`mathlens.cli.consoles` says how they keep model text from steering the terminal).
"""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import typer
from pydantic import BaseModel

from mathlens.errors import UserError, sanitize

if TYPE_CHECKING:
    from mathlens.cli.consoles import SafeConsole


def escape(text: object) -> str:
    """Outside text (a path, an id, a response) made safe to put inside a markup message."""
    from rich.markup import escape as escape_markup

    return escape_markup(sanitize(str(text)))


class _MadeOnFirstUse:
    """A `SafeConsole` built (and Rich imported) the first time something is printed through it,
    so that a command that prints nothing but JSON, or nothing at all (`-q`), never loads Rich."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: SafeConsole | None = None

    def made(self) -> SafeConsole:
        if self._console is None:
            from mathlens.cli.consoles import SafeConsole

            self._console = SafeConsole(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)


def made(console: SafeConsole) -> SafeConsole:
    """The console itself, for code that needs the object (Rich's live displays enter it with `with`)."""
    return console.made() if isinstance(console, _MadeOnFirstUse) else console


#: mathlens's messages, warnings and progress (stderr); tables and results (stdout)
console = cast("SafeConsole", _MadeOnFirstUse(stderr=True, markup=False))
out_console = cast("SafeConsole", _MadeOnFirstUse(markup=False))

P = ParamSpec("P")
R = TypeVar("R")

JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document on stdout instead of tables.")
#: `-q` means the same on every command that has it: no progress, no tables; warnings and errors still print
QUIET_OPTION = typer.Option(False, "--quiet", "-q", help="Print only warnings and errors (no progress, no tables).")


def emit_json(data: Any) -> None:
    """Print one machine-readable document on stdout."""
    if isinstance(data, BaseModel):
        text = data.model_dump_json(indent=2)
    else:
        text = json.dumps(data, indent=2, default=_default, ensure_ascii=False)
    # Inside JSON strings these characters may be written as \\uXXXX escapes: same document, safe terminal.
    sys.stdout.write(sanitize(text) + "\n")
    sys.stdout.flush()


def _default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if hasattr(obj, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(obj)
    return str(obj)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` (outside text escaped) and return the `typer.Exit` to raise."""
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code)


def describe_os_error(exc: OSError) -> str:
    """One line for a file-system failure: what, where, and what to do about the usual ones."""
    where = f" {exc.filename}" if exc.filename else ""
    what = exc.strerror or str(exc)
    hints = {errno.ENOSPC: " (free some space and run the command again)",
             errno.EROFS: " (the folder is read-only: choose a writable one)",
             errno.EACCES: " (permission denied: choose a folder you can write)",
             errno.EISDIR: " (a directory was given where a file is needed)",
             errno.EEXIST: " (a file stands where a folder is needed: choose another path)",
             errno.ENOTDIR: " (a file stands where a folder is needed: choose another path)"}
    return f"cannot use{where}: {what}{hints.get(exc.errno or 0, '')}"


def user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Report a `UserError` (and a file-system failure) as one red line and exit 2, never as a traceback."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:  # a full disk, a read-only folder: the environment, not a bug
            raise fail(describe_os_error(exc)) from None
        except RecursionError:
            raise fail("the input nests too deeply to process") from None

    return wrapper
