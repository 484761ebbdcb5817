"""Exceptions shared across mathlens.

`UserError` is anything a user can fix (a bad file, an unknown name); the CLI prints it without a
traceback and exits with status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class MathlensError(Exception):
    """Base class for every error mathlens raises on purpose."""


class UserError(MathlensError):
    """A problem with the user's input: the CLI reports it and exits 2."""


class UnknownNameError(UserError, KeyError):
    """A registry lookup failed; the message suggests the closest known names."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        super().__init__(f"unknown {kind} {name!r}.{hint} Known: {', '.join(known) or 'none'}.")
        self.kind = kind
        self.name = name

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class ModelError(MathlensError):
    """A model call failed."""


class TransientModelError(ModelError):
    """A failure worth retrying: timeout, dropped connection, 429, 5xx."""


class PermanentModelError(ModelError):
    """A failure that a retry cannot fix: bad request, unknown model, auth failure."""
