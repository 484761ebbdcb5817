"""The small-file reader behind `--system-role FILE` and replica files: each failure is one reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.cli.run_args import read_system_role
from mathlens.errors import UserError
from mathlens.textfile import TextFileError, read_small_text


def test_a_bom_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "role.txt"
    path.write_bytes(b"\xef\xbb\xbfYou are a tutor.")
    assert read_small_text(path, 100) == "You are a tutor."


@pytest.mark.parametrize("content, limit, reason", [
    (b"x" * 101, 100, r"^101 bytes, more than the limit of 100 bytes$"),
    (b"caf\xe9 au lait", 100, r"^not UTF-8 text \(invalid continuation byte\)$"),
    (None, 100, r"^cannot read it \("),
])
def test_each_failure_is_one_reason(tmp_path: Path, content: bytes | None, limit: int, reason: str) -> None:
    path = tmp_path / "f.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TextFileError, match=reason):
        read_small_text(path, limit)


def test_a_system_role_file_error_names_the_option_and_the_file(tmp_path: Path) -> None:
    path = tmp_path / "role.txt"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(UserError, match=r"^--system-role .*role\.txt: not UTF-8 text"):
        read_system_role(path)
