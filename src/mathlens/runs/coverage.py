"""Which records an analysis read, and whether the run still holds exactly those.

Every analysis document records the records it read (`RecordsSnapshot`: how many, their byte
length in `records.jsonl` and the sha256 of those bytes). Records are only ever appended to a run
(a resume, a run still being written when the analysis ran); the one rewrite is `--retry-errors`,
which removes error records. So a document is, against the run as it is now:

- `current`: it read every record the run holds;
- `fewer`: it read a prefix of today's records (the bytes it read are unchanged, more came after):
  it covers N of M records;
- `other`: the records it read are no longer the run's first records (rewritten, removed, or
  another run's file);
- `unknown`: written before documents recorded their byte length, and the records changed since.

`Coverage.note` words this for people; `show`, `report`, `compare` and `analyze` print it beside
the figures that come from the document.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

CoverageStatus = Literal["current", "fewer", "other", "unknown"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class RecordsSnapshot:
    """The complete records of a run at one moment."""

    count: int
    bytes: int
    sha256: str


def _complete_length(fh: BinaryIO, size: int) -> int:
    """Byte length of `size` bytes of an open binary file up to and including its last newline."""
    pos = size
    while pos > 0:
        step = min(1 << 16, pos)
        fh.seek(pos - step)
        chunk = fh.read(step)
        idx = chunk.rfind(b"\n")
        if idx >= 0:
            return pos - step + idx + 1
        pos -= step
    return 0


def records_snapshot(path: Path) -> RecordsSnapshot:
    """Count, byte length and sha256 of the complete lines of `path` (empty when it is absent).

    A partial last line (a record a writer has not finished) is not part of the snapshot."""
    if not Path(path).is_file():
        return RecordsSnapshot(0, 0, hashlib.sha256().hexdigest())
    with Path(path).open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        length = _complete_length(fh, size)
        fh.seek(0)
        digest = hashlib.sha256()
        count = 0
        left = length
        while left > 0:
            chunk = fh.read(min(_CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            digest.update(chunk)
            count += chunk.count(b"\n")
    return RecordsSnapshot(count, length, digest.hexdigest())


def prefix_digests(path: Path, lengths: Iterable[int]) -> dict[int, str]:
    """sha256 of the first `n` bytes of `path` for every `n` in `lengths`, in one pass (a length
    past the end of the file gets no entry)."""
    wanted = sorted({n for n in lengths if n >= 0})
    out: dict[int, str] = {}
    if not wanted:
        return out
    digest = hashlib.sha256()
    pos = 0
    if not Path(path).is_file():
        return out
    with Path(path).open("rb") as fh:
        for n in wanted:
            while pos < n:
                chunk = fh.read(min(_CHUNK, n - pos))
                if not chunk:
                    return out
                digest.update(chunk)
                pos += len(chunk)
            out[n] = digest.copy().hexdigest()
    return out


@dataclass(frozen=True)
class Coverage:
    """How the records one document read compare with the run's records now."""

    status: CoverageStatus
    #: records the document read (None for documents that did not record it)
    covered: int | None
    #: complete records the run holds now
    now: int

    @property
    def stale(self) -> bool:
        """True when the document does not describe every record the run holds now."""
        return self.status != "current"

    def note(self, rerun: str = "") -> str:
        """One line for people: what the document covers, and the command that brings it up to date
        (empty for a current document)."""
        again = f": re-run `{rerun}`" if rerun else ""
        if self.status == "current":
            return ""
        if self.status == "fewer":
            return (f"covers {self.covered} of the {self.now} records the run holds now "
                    f"({self.now - (self.covered or 0)} written since){again}")
        if self.status == "other":
            read = f"{self.covered} " if self.covered is not None else ""
            return (f"computed from {read}records that are no longer the run's (records were rewritten or "
                    f"removed since; the run holds {self.now}){again}")
        return f"the run's records changed since this analysis ran (the run holds {self.now}){again}"


def coverage(read_sha256: str, read_bytes: int | None, read_count: int | None, now: RecordsSnapshot,
             path: Path, prefixes: dict[int, str] | None = None) -> Coverage:
    """The coverage of a document that read records `read_*` against the run's records `now`
    (`path` is the records file, read again only when the document read fewer bytes than it now
    holds; `prefixes` may carry digests `prefix_digests` already computed)."""
    if read_bytes is None:  # a document from before byte lengths were recorded: only the digest says
        status: CoverageStatus = "current" if read_sha256 == now.sha256 else "unknown"
        return Coverage(status, read_count, now.count)
    if read_bytes == now.bytes:
        return Coverage("current" if read_sha256 == now.sha256 else "other", read_count, now.count)
    if read_bytes < now.bytes:
        found = (prefixes or {}).get(read_bytes)
        if found is None:
            found = prefix_digests(path, [read_bytes]).get(read_bytes)
        if found == read_sha256:
            return Coverage("fewer", read_count, now.count)
    return Coverage("other", read_count, now.count)
