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
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from mathlens.errors import RunInUseError, UserError, warn
from mathlens.items.schema import Exam, Question
from mathlens.runs.records import Manifest, RunRecord
from mathlens.runs.snapshot import SNAPSHOT_NAME, ItemsSnapshot, question_map, read_snapshot, reload_from_sources

#: Lock files this process holds (resolved paths), so its own reads never warn about itself.
_HELD: set[Path] = set()


class RunStoreWriteError(UserError):
    """Writing to a run directory failed (disk full, read-only); what was written before is intact."""


def write_failure(root: Path, path: Path, exc: OSError) -> RunStoreWriteError:
    """A clear message for an OSError met while writing `path` of the run at `root`."""
    reason = exc.strerror or str(exc)
    hint = ""
    if exc.errno == errno.ENOSPC:
        hint = " Free some space, then run `mathlens run --resume {root}`: every finished record is kept."
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = " The run directory must be writable."
    return RunStoreWriteError(f"cannot write {path}: {reason}.{hint.format(root=root)}")


class RunStore:
    """Read and append the records of one run directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._fd: int | None = None
        self._lock_fd: int | None = None
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
    def acquire_lock(self) -> None:
        """Become the only writer of this run, or raise `RunInUseError` naming the writer's PID.

        The lock is an `flock`, so it ends with the process however the process ends.
        """
        if self._lock_fd is not None:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise write_failure(self.root, self.lock_path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _writer_pid_after_wait(fd)
            os.close(fd)
            who = f"PID {pid}" if pid else "another process"
            raise RunInUseError(f"run {self.root} is in use by {who}: wait for it to finish (one process at a "
                                "time may write a run)") from None
        try:
            note = f"{os.getpid()}\n".encode()
            os.pwrite(fd, note, 0)  # replace the PID note in place: a reader never sees an empty file
            os.ftruncate(fd, len(note))
        except OSError:
            pass  # the lock holds without the PID note (a full disk); readers then say "another process"
        self._lock_fd = fd
        _HELD.add(self.lock_path.resolve())

    @property
    def locked(self) -> bool:
        """Whether this store holds the run's lock."""
        return self._lock_fd is not None

    def release_lock(self) -> None:
        if self._lock_fd is None:
            return
        _HELD.discard(self.lock_path.resolve())
        fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)
        self._lock_fd = None

    def writer_pid(self) -> int | None:
        """The PID of another process writing this run right now (0 if unknown), else None."""
        path = self.lock_path
        if path.resolve() in _HELD:
            return None
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd) or 0
        except OSError:
            return None
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def _warn_if_busy(self) -> None:
        if self._warned or self._lock_fd is not None:
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
        """Every complete record, in the order written. A partial last line is skipped."""
        if not self.records_path.exists():
            return
        self._warn_if_busy()
        with self.records_path.open("r", encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if not line.endswith("\n"):
                    break  # torn write of a killed process
                try:
                    yield RunRecord.model_validate_json(line)
                except ValidationError as exc:
                    raise UserError(f"{self.records_path}:{n}: not a valid record "
                                    f"({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})") from None

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

    def append(self, record: RunRecord, sync: bool = True) -> None:
        """Append one record and fsync it; on failure the file is cut back to its last whole record.

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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _writer_pid_after_wait(fd: int, tries: int = 25, pause_s: float = 0.02) -> int | None:
    """The PID of the process holding the lock. The holder writes its PID just after taking the
    lock, so a note that is missing or names a dead process (an earlier, killed writer) is read
    again for up to half a second before giving up."""
    pid = None
    for _ in range(tries):
        pid = _read_pid(fd)
        if pid and _alive(pid):
            return pid
        time.sleep(pause_s)
    return None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _atomic_write(root: Path, path: Path, text: str) -> None:
    """Write `path` through a temporary file and a rename; an OSError becomes `RunStoreWriteError`."""
    tmp = path.with_name(path.name + ".tmp")
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
