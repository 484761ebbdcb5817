"""The consoles of the CLI: Rich consoles that text from users and models cannot steer.

Text from users and models is printed, never obeyed: the consoles interpret Rich markup only in a
plain string handed straight to `print` (mathlens's own messages, which pass any outside text
through `mathlens.cli.common.escape`); table cells and every other renderable are taken literally;
and control characters and bidirectional overrides are shown as `\\uXXXX` escapes, so no response
can move the cursor, recolour the terminal or reorder what is shown.

Width: on a terminal the consoles wrap at its width, as Rich does. Written to a file or a pipe (a
run log, `show > out.txt`) they do not wrap at all: tables print at their natural width, so a model
name or a flag list stays on one line and a log can be read and searched. `COLUMNS` set in the
environment still chooses a width; `--json` is unaffected (it never goes through a console). A
table wider than a terminal is laid out again to fit it (`mathlens.cli.fit`) rather than having
its words cut.

Commands print through `mathlens.cli.common.console` and `out_console`, which build their console
here on first use: this module is the only one of the CLI's start-up that imports Rich.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.errors import MarkupError
from rich.table import Table
from rich.text import Text

from mathlens.errors import sanitize

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
        if any(isinstance(o, Table) for o in objects):
            from mathlens.cli.fit import fitted

            objects = tuple(fitted(self, o) if isinstance(o, Table) else o for o in objects)
        super().print(*objects, markup=markup, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        text = sanitize(text)
        try:
            return super().render_str(text, **kwargs)
        except MarkupError:  # never let a stray bracket end a command; show the text as it is
            return super().render_str(text, **{**kwargs, "markup": False})
