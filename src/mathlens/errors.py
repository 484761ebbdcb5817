"""Exceptions shared across mathlens.

`UserError` is anything a user can fix (a bad file, an unknown name); the CLI prints it without a
traceback and exits with status 2.
"""

from __future__ import annotations

import difflib
import re
import sys
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
    """A failure worth retrying: timeout, dropped connection, 429, 5xx.

    `retry_after` is the wait in seconds the server asked for (a `Retry-After` header), if any.
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentModelError(ModelError):
    """A failure that a retry cannot fix: bad request, unknown model, auth failure."""


class MalformedReplyError(PermanentModelError):
    """The server answered, but not in the shape its protocol promises (wrong types, no text)."""


class RunInUseError(UserError):
    """Another process holds the lock of a run directory."""


#: C0/C1 controls (but tab and newline), and the Unicode marks that reorder or hide text.
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def sanitize(text: str) -> str:
    r"""`text` with terminal controls and direction overrides written as visible escapes.

    >>> sanitize("ok\x1b[31m red\u202e")
    'ok\\u001b[31m red\\u202e'
    """
    return _UNSAFE_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def warn(message: str) -> None:
    """Print one warning line on stderr (plain text: never console markup, controls made visible)."""
    sys.stderr.write(f"warning: {sanitize(message)}\n")
    sys.stderr.flush()


#: Shapes of common API credentials, replaced in any error text mathlens stores.
SECRET_SHAPES = re.compile(
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
)


def redact_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every given secret (of 6 characters or more) and every key-shaped token redacted.

    >>> redact_secrets("auth: Bearer sk-abcdefghijklmnopqrstu ok")
    'auth: [REDACTED] ok'
    """
    for secret in sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True):
        text = text.replace(secret, "[REDACTED]")
    return SECRET_SHAPES.sub("[REDACTED]", text)
