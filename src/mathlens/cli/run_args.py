"""Checks of `mathlens run`'s arguments, made before anything is written.

Each check raises `UserError` with the option's name, so a bad argument is one clear line (exit
2), never a traceback and never a half-made run directory.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.models.options import http_url
from mathlens.solve.prompts import DEFAULT_SYSTEM_ROLE, SYSTEM_ROLES, named_system_role
from mathlens.textfile import TextFileError, read_small_text

#: Largest system-role file read (it is sent with every request).
MAX_SYSTEM_ROLE_BYTES = 64 * 1024
#: Model options that would put a credential into the manifest.
_SECRET_OPTION = re.compile(r"(?i)(api_?key|token|secret|password|passwd|authorization)$")


def check_url(name: str, value: str) -> str:
    """An http(s) URL with a host, else `UserError`.

    >>> check_url("--base-url", "http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    try:
        return http_url(value, name)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def check_model_options(options: dict[str, Any]) -> None:
    """Refuse credentials (they would be written to manifest.json) and malformed common options."""
    for key, value in options.items():
        if _SECRET_OPTION.search(key):
            raise UserError(f"-M {key}=... is refused: credentials are never written to a run. Put the key in "
                            "$OPENAI_API_KEY, or in a variable named with -M api_key_env=NAME")
        if key in ("base_url", "host") and isinstance(value, str) and "://" in value:
            check_url(f"-M {key}", value)
    if "timeout_s" in options:
        value = options["timeout_s"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise UserError(f"-M timeout_s must be a number of seconds > 0 (not {value!r})")


def check_out_dir(out: Path | None) -> None:
    if out is not None and out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory")


def check_resume_dir(resume: Path) -> None:
    if not resume.is_dir():
        raise UserError(f"--resume {resume}: no such run directory")


def read_system_role(path: Path) -> str:
    """The text of a `--system-role` file, with a clear error when it cannot be used."""
    if not path.exists():
        raise UserError(f"--system-role {path}: no such file")
    if not path.is_file():
        raise UserError(f"--system-role {path}: not a file")
    try:
        text = read_small_text(path, MAX_SYSTEM_ROLE_BYTES)
    except TextFileError as exc:
        raise UserError(f"--system-role {path}: {exc}") from None
    if not text.strip():
        raise UserError(f"--system-role {path}: the file is empty")
    return text


def resolve_system_role(value: str | None) -> tuple[str, str | None]:
    """(text, name) of the `--system-role` given: a named role (`SYSTEM_ROLES`), else a text file
    (name None); the default role when none is given. A name wins over a file of the same name
    (write `./calculus-study` for the file). A value that is no known name, names no file and looks
    like a name (no path separator, no dot) is an error listing the named roles."""
    if value is None:
        return named_system_role(DEFAULT_SYSTEM_ROLE), DEFAULT_SYSTEM_ROLE
    if value in SYSTEM_ROLES:
        return SYSTEM_ROLES[value], value
    path = Path(value)
    if not path.exists() and "/" not in value and "\\" not in value and "." not in value:
        try:
            named_system_role(value)
        except UnknownNameError as exc:
            raise UserError(f"--system-role: {exc} (or give the path of a text file)") from None
    return read_system_role(path), None
