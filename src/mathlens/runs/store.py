"""A run directory: `manifest.json`, an append-only `records.jsonl`, and `analysis/`.

Each record is written as one line and flushed with fsync, so a process killed at any moment
leaves at most one partial last line. Opening a store for appending cuts such a line off (it is a
request that did not finish and will be redone), which is what makes `--resume` exact. A write
that fails (a full disk) is cut off the same way at once, and `RunStoreWriteError` says so.

One process at a time writes a run: `acquire_lock` takes an exclusive `flock` on `RUN/.lock`
(which holds the writer's PID); readers are told when they read a run that is being written.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from mathlens.errors import RunInUseError, UserError, warn
from mathlens.items.schema import Exam, Question
from mathlens.runs.coverage import RecordsSnapshot, records_snapshot
from mathlens.runs.locks import WriterLock, holder_pid, sweep_temporaries, temporary
from mathlens.runs.records import Manifest, RunRecord
from mathlens.runs.snapshot import SNAPSHOT_NAME, ItemsSnapshot, question_map, read_snapshot, reload_from_sources


class RunStoreWriteError(UserError):
    """Writing to a run directory failed (disk full, read-only); what was written before is intact."""


def write_failure(root: Path, path: Path, exc: OSError, again: str | None = None) -> RunStoreWriteError:
    """A clear message for an OSError met while writing `path` of the run at `root`.

    The hint names a command that works in the state left behind: `again` when the caller knows
    it (an analysis: the command that writes its document); else, for a full disk, `--resume`
    when the run has a manifest to resume from, and running the same command again when it has
    not (nothing was recorded yet)."""
    reason = exc.strerror or str(exc)
    hint = ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        if again is not None:
            hint = f" Free some space, then run `{again}`."
        elif (Path(root) / "manifest.json").is_file():
            hint = f" Free some space, then run `mathlens run --resume {root}`: every finished record is kept."
        else:
            hint = " Free some space, then run the same command again (nothing was recorded yet)."
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = f" The folder {path.parent} must be writable."
    return RunStoreWriteError(f"cannot write {path}: {reason}.{hint}")


class RunStore:
    """Read and append the records of one run directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._fd: int | None = None
        self._lock: WriterLock | None = None
        self._frozen: RecordsSnapshot | None = None
        self._warned = False
        self._exams: list[Exam] | None = None

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    @property
    def records_path(self) -> Path:
        return self.root / "records.jsonl"

    @property
    def analysis_dir(self) -> Path:
        return self.root / "analysis"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    # -- lock -----------------------------------------------------------------------------------
    def _writer_lock(self) -> WriterLock:
        if self._lock is None:
            self._lock = WriterLock(self.lock_path, f"run {self.root}",
                                    "wait for it to finish (one process at a time may write a run)")
        return self._lock

    def acquire_lock(self) -> None:
        """Become the only writer of this run, or raise `RunInUseError` naming the writer's PID.

        The lock is an `flock`, so it ends with the process however the process ends. Temporaries
        a killed writer left in the run directory are removed once the lock is held.
        """
        lock = self._writer_lock()
        if lock.taken:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except RunInUseError:
            raise
        except OSError as exc:
            raise write_failure(self.root, self.lock_path, exc) from None
        for name in ("manifest.json", SNAPSHOT_NAME, "records.jsonl"):
            sweep_temporaries(self.root / name, f"{name}.tmp")

    @property
    def locked(self) -> bool:
        """Whether this store holds the run's lock."""
        return self._lock is not None and self._lock.taken

    def release_lock(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def writer_pid(self) -> int | None:
        """The PID of another process writing this run right now (0 if unknown), else None."""
        return holder_pid(self.lock_path)

    def _warn_if_busy(self) -> None:
        if self._warned or self.locked:
            return
        self._warned = True
        pid = self.writer_pid()
        if pid is not None:
            who = f"PID {pid}" if pid else "another process"
            warn(f"run {self.root} is being written by {who}: only the records finished so far are read")

    # -- manifest -------------------------------------------------------------------------------
    def write_manifest(self, manifest: Manifest) -> None:
        _atomic_write(self.root, self.manifest_path, manifest.model_dump_json(indent=2))

    # -- items --------------------------------------------------------------------------------
    @property
    def items_path(self) -> Path:
        return self.root / SNAPSHOT_NAME

    def write_items(self, exams: list[Exam]) -> None:
        """Keep the run's item sets inside the run (see `mathlens.runs.snapshot`)."""
        _atomic_write(self.root, self.items_path, ItemsSnapshot(exams=exams).model_dump_json())
        self._exams = list(exams)

    def exams(self) -> list[Exam]:
        """The run's item sets: from its snapshot, else (older runs) from the manifest's paths."""
        if self._exams is None:
            self._exams = (read_snapshot(self.items_path) if self.items_path.is_file()
                           else reload_from_sources(self.manifest()))
        return self._exams

    def questions(self) -> dict[tuple[str, str], Question]:
        """(exam id, question id) -> question, for every item set of the run."""
        return question_map(self.exams())

    def manifest(self) -> Manifest:
        if not self.manifest_path.is_file():
            raise UserError(f"{self.root} is not a run directory (no manifest.json)")
        try:
            return Manifest.model_validate_json(self.manifest_path.read_bytes())
        except OSError as exc:
            raise UserError(f"cannot read {self.manifest_path}: {exc.strerror or exc}") from None
        except ValidationError as exc:
            raise UserError(f"{self.manifest_path}: not a valid manifest ({exc.errors()[0]['msg']})") from None

    # -- records --------------------------------------------------------------------------------
    def records(self) -> Iterator[RunRecord]:
        """Every complete record, in the order written. A partial last line is skipped; after
        `freeze`, records written past the frozen snapshot are not read either."""
        if not self.records_path.exists():
            return
        self._warn_if_busy()
        until = self._frozen.bytes if self._frozen is not None else None
        with self.records_path.open("rb") as fh:
            pos = 0
            for n, line in enumerate(fh, start=1):
                if not line.endswith(b"\n"):
                    break  # torn write of a killed process
                pos += len(line)
                if until is not None and pos > until:
                    break
                try:
                    yield RunRecord.model_validate_json(line)
                except ValidationError as exc:
                    raise UserError(f"{self.records_path}:{n}: not a valid record "
                                    f"({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})") from None

    def snapshot(self) -> RecordsSnapshot:
        """The complete records as they are now: their count, byte length and digest (a partial
        last line of a writer still at work is left out). With `freeze`, the snapshot frozen."""
        if self._frozen is not None:
            return self._frozen
        return records_snapshot(self.records_path)

    def freeze(self, snapshot: RecordsSnapshot | None = None) -> RecordsSnapshot:
        """Read only the records of `snapshot` (default: those complete now) from here on, so that
        everything computed from this store describes exactly the records its digest names, even
        while a run is still appending to the file."""
        self._frozen = snapshot or records_snapshot(self.records_path)
        return self._frozen

    @property
    def is_frozen(self) -> bool:
        """Whether `freeze` fixed the records this store reads."""
        return self._frozen is not None

    @contextlib.contextmanager
    def frozen(self) -> Iterator[RecordsSnapshot]:
        """`freeze` for the body (an already frozen store stays as it is), then read freely again."""
        if self._frozen is not None:
            yield self._frozen
            return
        try:
            yield self.freeze()
        finally:
            self._frozen = None

    def done_keys(self) -> set[str]:
        return {r.key for r in self.records()}

    def _repair_tail(self) -> None:
        """Drop a partial last line left by a killed writer."""
        path = self.records_path
        if not path.exists() or path.stat().st_size == 0:
            return
        with path.open("rb+") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            pos = size - 1
            while pos > 0:
                step = min(4096, pos)
                fh.seek(pos - step)
                chunk = fh.read(step)
                idx = chunk.rfind(b"\n")
                if idx >= 0:
                    fh.truncate(pos - step + idx + 1)
                    return
                pos -= step
            fh.truncate(0)

    def append(self, record: RunRecord, sync: bool = True) -> int:
        """Append one record and fsync it; on failure the file is cut back to its last whole record.
        Returns the length of the line written, in bytes.

        With `sync=False` the record is written (a killed process keeps it: it is in the file) but
        not yet forced to disk; the caller calls `sync()` soon after (the runner does, in the
        background, for the records written meanwhile), so a slow disk does not hold up the run."""
        path = self.records_path
        try:
            if self._fd is None:
                self.root.mkdir(parents=True, exist_ok=True)
                self._repair_tail()
                self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            data = (record.model_dump_json() + "\n").encode("utf-8")
        except OSError as exc:
            raise write_failure(self.root, path, exc) from None
        fd = self._fd
        pos = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, pos)  # no torn record; a later open would also cut it off
            raise write_failure(self.root, path, exc) from None
        return len(data)

    def sync(self) -> None:
        """Force the records written so far to disk (`RunStoreWriteError` if the disk refuses)."""
        fd = self._fd
        if fd is None:
            return
        try:
            os.fsync(fd)
        except OSError as exc:
            raise write_failure(self.root, self.records_path, exc) from None

    def drop_error_records(self) -> int:
        """Remove `error` records so that a resume sends those requests again; returns how many."""
        if not self.records_path.exists():
            return 0
        self._repair_tail()
        kept: list[str] = []
        dropped = 0
        with self.records_path.open("r", encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                try:
                    status = RunRecord.model_validate_json(line).status
                except ValidationError:
                    raise UserError(f"{self.records_path}:{n}: not a valid record") from None
                if status == "error":
                    dropped += 1
                else:
                    kept.append(line)
        if dropped:
            _atomic_write(self.root, self.records_path, "".join(kept))
        return dropped

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _atomic_write(root: Path, path: Path, text: str) -> None:
    """Write `path` through a temporary file and a rename; an OSError becomes `RunStoreWriteError`."""
    tmp = temporary(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise write_failure(root, path, exc) from None
