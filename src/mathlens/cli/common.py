"""Helpers shared by CLI commands: JSON output, error reporting, consoles that model text cannot steer.

Text from users and models is printed, never obeyed: the consoles interpret Rich markup only in a
plain string handed straight to `print` (mathlens's own messages, which pass any outside text
through `escape`); table cells and every other renderable are taken literally; and control
characters and bidirectional overrides are shown as `\\uXXXX` escapes, so no response can move
the cursor, recolour the terminal or reorder what is shown.

Width: on a terminal the consoles wrap at its width, as Rich does. Written to a file or a pipe (a
run log, `show > out.txt`) they do not wrap at all: tables print at their natural width, so a model
name or a flag list stays on one line and a log can be read and searched. `COLUMNS` set in the
environment still chooses a width; `--json` is unaffected (it never goes through a console).
"""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console, ConsoleDimensions
from rich.errors import MarkupError
from rich.markup import escape as _escape_markup
from rich.text import Text

from mathlens.errors import UserError, sanitize


def escape(text: object) -> str:
    """Outside text (a path, an id, a response) made safe to put inside a markup message."""
    return _escape_markup(sanitize(str(text)))


#: the width of a console that is not a terminal: wide enough that no table or message wraps
UNWRAPPED_WIDTH = 100_000


class SafeConsole(Console):
    """A Rich console for untrusted text (see the module notes)."""

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size; no wrapping (`UNWRAPPED_WIDTH` columns) when the output is not a terminal."""
        size = super().size
        if self._width is None and not self.is_terminal and not self._environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(UNWRAPPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def print(self, *objects: Any, markup: bool | None = None, **kwargs: Any) -> None:
        if markup is None and objects and all(isinstance(o, str) for o in objects):
            markup = True  # a message mathlens wrote; any outside text in it went through `escape`
        super().print(*objects, markup=markup, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        text = sanitize(text)
        try:
            return super().render_str(text, **kwargs)
        except MarkupError:  # never let a stray bracket end a command; show the text as it is
            return super().render_str(text, **{**kwargs, "markup": False})


console = SafeConsole(stderr=True, markup=False)
out_console = SafeConsole(markup=False)

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
