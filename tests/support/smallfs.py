"""A small tmpfs folder for disk-full and read-only tests, where this machine lets a test mount one."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_fs(parent: Path, size_kb: int = 512, read_only: bool = False) -> Iterator[Path]:
    """Mount a tmpfs of `size_kb` under `parent` (skips the test when mounting is not allowed)."""
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    where = parent / f"fs-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    opts = f"size={size_kb}k" + (",ro" if read_only else "")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path, leave_bytes: int = 0) -> None:
    """Fill the file system holding `folder` until (about) `leave_bytes` remain."""
    stat = os.statvfs(folder)
    free = stat.f_bavail * stat.f_frsize - leave_bytes
    with contextlib.suppress(OSError), (folder / "filler").open("wb") as fh:
        while free > 0:
            chunk = min(free, 64 * 1024)
            fh.write(b"\0" * chunk)
            free -= chunk
        fh.flush()
