"""Counts of a run's records per model and configuration, read cheaply and kept up to date.

What `mathlens run`, `import` and `show` print about a run's records (requests, errors,
truncations, tokens, traces, replicas) is counted from the record fields alone: each line is
parsed into a model that names only those fields, never into a full `RunRecord`, and nothing about
the response text is computed here.

Counting is incremental. The counts and where they stop (the byte length read, the file's inode
and a digest of the last 4 KiB before that point) are kept in `RUN/.counts.json`; since records
are only ever appended, a later count reads only the records written since. A file that was
rewritten (`--retry-errors`) or replaced has another inode or tail and is counted from the start.
The cache is only a cache: it is written when the run folder is writable and ignored when it is
absent, damaged or from another version. The writer of a run keeps it as it appends (`Tally`), so
the count after `mathlens run` reads no record again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mathlens.errors import UserError
from mathlens.runs.locks import temporary

if TYPE_CHECKING:
    from mathlens.runs.records import RunRecord

CACHE_NAME = ".counts.json"
_VERSION = 2
_TAIL = 4096


#: Failed requests listed one by one (the rest are counted).
MAX_ERRORS_LISTED = 50


class _Variant(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: str = "original"


class _Usage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Counted(BaseModel):
    """The fields of a record that are counted (the rest of the line is parsed and dropped)."""

    model_config = ConfigDict(extra="ignore")

    key: str
    model: str
    configuration: str
    variant: _Variant = Field(default_factory=_Variant)
    status: str = "ok"
    error: str | None = None
    finish_reason: str = "unknown"
    cached: bool = False
    latency_s: float = 0.0
    usage: _Usage = Field(default_factory=_Usage)
    replica: str | None = None
    reasoning: str | None = None
    response: str | None = None


class Counts(BaseModel):
    """A row of counts (unknown fields refused)."""

    model_config = ConfigDict(extra="forbid")


class Outcomes(Counts):
    """A model's records counted by outcome: what every row of record counts holds."""

    model: str
    records: int = 0
    ok: int = 0
    error: int = 0

    def add(self, rec: _Counted | RunRecord) -> None:
        """Count one record."""
        self.records += 1
        self.ok += rec.status == "ok"
        self.error += rec.status == "error"


class RecordCounts(Outcomes):
    """The records of one model under one configuration."""

    configuration: str
    #: records of ablation variants and paraphrases (the rest answer the original prompts)
    variants: int = 0
    truncated: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    #: records with a reasoning trace, and those whose trace the token cap cut before a visible answer
    with_trace: int = 0
    trace_truncated: int = 0

    def add(self, rec: _Counted | RunRecord) -> None:
        """Count one record of this model and configuration."""
        super().add(rec)
        truncated = rec.finish_reason == "length"
        self.variants += rec.variant.kind != "original"
        self.truncated += truncated
        self.cached += rec.cached
        self.prompt_tokens += rec.usage.prompt_tokens
        self.completion_tokens += rec.usage.completion_tokens
        self.latency_s = round(self.latency_s + rec.latency_s, 3)
        self.with_trace += bool(rec.reasoning)
        self.trace_truncated += truncated and bool(rec.reasoning) and not (rec.response or "").strip()


class ReplicaCounts(Outcomes):
    """The records one replica of a pool answered (cache hits name no replica)."""

    replica: str
    completion_tokens: int = 0
    #: of the model's records answered by a replica
    share: float = 0.0

    def add(self, rec: _Counted | RunRecord) -> None:
        """Count one record this replica answered."""
        super().add(rec)
        self.completion_tokens += rec.usage.completion_tokens


class FailedRequest(Counts):
    """One record whose request failed."""

    key: str
    error: str


class RunCounts(BaseModel):
    """Counts over the first `bytes` bytes (`records` complete records) of `records.jsonl`."""

    records: int = 0
    bytes: int = 0
    groups: list[RecordCounts] = Field(default_factory=list)
    replicas: list[ReplicaCounts] = Field(default_factory=list)
    errors_total: int = 0
    #: the first `MAX_ERRORS_LISTED` failed requests
    errors: list[FailedRequest] = Field(default_factory=list)

    @property
    def ok(self) -> int:
        return sum(g.ok for g in self.groups)

    def add(self, rec: _Counted | RunRecord, replicas: dict[tuple[str, str], ReplicaCounts]) -> None:
        """Count one record (its group is counted by the caller): the total, its failure (listed while
        fewer than `MAX_ERRORS_LISTED` are) and the replica that answered it (`replicas` by model and
        replica, kept in step with `self.replicas`)."""
        self.records += 1
        if rec.status == "error":
            self.errors_total += 1
            if len(self.errors) < MAX_ERRORS_LISTED:
                self.errors.append(FailedRequest(key=rec.key, error=rec.error or ""))
        if rec.replica is not None:
            r = replicas.get((rec.model, rec.replica))
            if r is None:
                r = replicas[(rec.model, rec.replica)] = ReplicaCounts(model=rec.model, replica=rec.replica)
                self.replicas.append(r)
            r.add(rec)


class _Cache(BaseModel):
    version: int
    inode: int
    tail_sha256: str
    counts: RunCounts


def _tail_digest(fh: BinaryIO, end: int) -> str:
    start = max(0, end - _TAIL)
    fh.seek(start)
    return hashlib.sha256(fh.read(end - start)).hexdigest()


def _add(counts: RunCounts, groups: dict[tuple[str, str], RecordCounts],
         replicas: dict[tuple[str, str], ReplicaCounts], rec: _Counted | RunRecord) -> None:
    g = groups.get((rec.model, rec.configuration))
    if g is None:
        g = groups[(rec.model, rec.configuration)] = RecordCounts(model=rec.model, configuration=rec.configuration)
        counts.groups.append(g)
    g.add(rec)
    counts.add(rec, replicas)


def _load_cache(root: Path, inode: int, size: int, fh: BinaryIO) -> RunCounts | None:
    path = root / CACHE_NAME
    try:
        cache = _Cache.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    counts = cache.counts
    if cache.version != _VERSION or cache.inode != inode or counts.bytes > size:
        return None
    if _tail_digest(fh, counts.bytes) != cache.tail_sha256:
        return None
    return counts


def _save_cache(root: Path, inode: int, tail: str, counts: RunCounts) -> None:
    path = root / CACHE_NAME
    tmp = temporary(path)
    try:
        tmp.write_text(_Cache(version=_VERSION, inode=inode, tail_sha256=tail, counts=counts).model_dump_json(),
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only run folder, a full disk: counting works without the cache
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def count_records(root: Path, *, until: int | None = None, cache: bool = True) -> RunCounts:
    """Counts of the complete records of the run at `root` (up to byte `until` when given).

    Reads only what was appended since the last count when `RUN/.counts.json` still describes the
    start of the file (see the module notes)."""
    root = Path(root)
    path = root / "records.jsonl"
    if not path.is_file():
        return RunCounts()
    with path.open("rb") as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size if until is None else min(until, st.st_size)
        counts = (_load_cache(root, st.st_ino, size, fh) if cache else None) or RunCounts()
        start = counts.bytes
        groups = {(g.model, g.configuration): g for g in counts.groups}
        replicas = {(r.model, r.replica): r for r in counts.replicas}
        fh.seek(start)
        pos = start
        for n, line in enumerate(fh, start=counts.records + 1):
            if not line.endswith(b"\n") or pos + len(line) > size:
                break  # a record still being written, or past `until`
            try:
                rec = _Counted.model_validate_json(line)
            except ValidationError as exc:
                raise UserError(f"{path}:{n}: not a valid record ({exc.errors()[0]['loc']}: "
                                f"{exc.errors()[0]['msg']})") from None
            _add(counts, groups, replicas, rec)
            pos += len(line)
        counts.bytes = pos
        if cache and pos > start:
            _save_cache(root, st.st_ino, _tail_digest(fh, pos), counts)
    return counts


class Tally:
    """The counts of a run kept by its writer while it appends records, saved as the count cache
    at the end, so the count that follows reads nothing again. Start it before the first record is
    appended; the lock the writer holds keeps anyone else from appending meanwhile."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.counts = count_records(self.root)
        self._groups = {(g.model, g.configuration): g for g in self.counts.groups}
        self._replicas = {(r.model, r.replica): r for r in self.counts.replicas}

    def add(self, rec: RunRecord, size: int) -> None:
        """Count `rec`, appended as a line of `size` bytes."""
        _add(self.counts, self._groups, self._replicas, rec)
        self.counts.bytes += size

    def save(self) -> None:
        """Write the counts as the cache, when the file still ends where the tally does (otherwise the
        next count reads on from the last cache)."""
        path = self.root / "records.jsonl"
        try:
            with path.open("rb") as fh:
                st = os.fstat(fh.fileno())
                if st.st_size != self.counts.bytes:
                    return
                tail = _tail_digest(fh, self.counts.bytes)
        except OSError:
            return
        _save_cache(self.root, st.st_ino, tail, self.counts)
