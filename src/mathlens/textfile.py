"""The whole text of a small file a user names on the command line or in an option (a system role,
a replica list): UTF-8 with an optional BOM, within a size limit, every failure one reason in words."""

from __future__ import annotations

from pathlib import Path


class TextFileError(ValueError):
    """Why a small text file cannot be used, in words that follow the file's name."""


def read_small_text(path: Path, limit_bytes: int) -> str:
    """The text of `path`; `TextFileError` when it is larger than `limit_bytes`, not UTF-8 or unreadable."""
    try:
        size = path.stat().st_size
        if size > limit_bytes:
            raise TextFileError(f"{size:,} bytes, more than the limit of {limit_bytes:,} bytes")
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TextFileError(f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise TextFileError(f"cannot read it ({exc.strerror or exc})") from None
