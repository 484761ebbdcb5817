"""One writer at a time: exclusive `flock`s that carry the holder's PID, and leftover temporaries.

A `WriterLock` is a small file (`RUN/.lock` for a run's records, `RUN/analysis/.<name>.lock` for
one analysis document) locked with `flock(LOCK_EX)`. The lock ends with its process however the
process ends (a SIGKILL included), so a lock is never left stale; the file only carries the PID,
so that a second writer can be told who holds it. Locks are re-entrant within one process: a
lock this process already holds is taken again at no cost and released by its last holder.

Writers write through temporaries in the same folder named after their PID
(`.<file>.<pid>.tmp`), so two processes can never write into one temporary, and `sweep_temporaries`
lets the next holder of a lock remove what a killed writer left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mathlens.errors import RunInUseError

#: Lock files held by this process (resolved path -> [fd, holders]).
_HELD: dict[Path, list[int]] = {}


def held(path: Path) -> bool:
    """Whether this process holds the lock file at `path`."""
    return _key(path) in _HELD


def _key(path: Path) -> Path:
    return Path(os.path.abspath(path))


@dataclass
class WriterLock:
    """An exclusive, re-entrant `flock` on `path` that records the holder's PID.

    `what` names the thing protected in the refusal ("run runs/a", "analysis/flow.jsonl of run
    runs/a"); `advice` says what to do about it.
    """

    path: Path
    what: str
    advice: str = "wait for it to finish"
    _taken: bool = False

    def acquire(self) -> None:
        """Take the lock, or raise `RunInUseError` naming the holder's PID."""
        if self._taken:
            return
        key = _key(self.path)
        if key in _HELD:
            _HELD[key][1] += 1
            self._taken = True
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_after_wait(fd)
            os.close(fd)
            who = f"PID {pid}" if pid else "another process"
            raise RunInUseError(f"{self.what} is in use by {who}: {self.advice}") from None
        try:
            note = f"{os.getpid()}\n".encode()
            os.pwrite(fd, note, 0)  # replaced in place: a reader never sees an empty note
            os.ftruncate(fd, len(note))
        except OSError:
            pass  # the lock holds without the note (a full disk); a refusal then says "another process"
        _HELD[key] = [fd, 1]
        self._taken = True

    def release(self) -> None:
        """Give the lock up (the last holder in this process unlocks the file)."""
        if not self._taken:
            return
        self._taken = False
        key = _key(self.path)
        entry = _HELD.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _HELD[key]
        with contextlib.suppress(OSError):
            fcntl.flock(entry[0], fcntl.LOCK_UN)
        os.close(entry[0])

    @property
    def taken(self) -> bool:
        return self._taken

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder_pid(path: Path) -> int | None:
    """The PID of another process holding the lock at `path` right now (0 if it left no note),
    else None (free, absent, or held by this process)."""
    if held(path):
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


@contextlib.contextmanager
def holding(*locks: WriterLock) -> Iterator[None]:
    """Hold every lock (taken in the order given) for the body; all are released on leaving."""
    taken: list[WriterLock] = []
    try:
        for lock in locks:
            lock.acquire()
            taken.append(lock)
        yield
    finally:
        for lock in reversed(taken):
            lock.release()


def temporary(path: Path) -> Path:
    """This process's temporary for writing `path`: `.<name>.<pid>.tmp` in the same folder (so the
    rename that publishes it stays on one file system)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def sweep_temporaries(path: Path, *legacy: str) -> list[Path]:
    """Remove the temporaries other processes left for `path` (call it while holding the lock that
    guards `path`, so none of them is being written), and the fixed-name temporaries of older
    releases (`legacy` names in the same folder). Returns what was removed."""
    removed: list[Path] = []
    mine = temporary(path).name
    candidates = list(path.parent.glob(f".{path.name}.*.tmp")) if path.parent.is_dir() else []
    candidates += [path.with_name(n) for n in legacy]
    for p in candidates:
        if p.name == mine or not p.is_file():
            continue
        if p.name.startswith(f".{path.name}.") and not _dead_writer(p, path.name):
            continue
        with contextlib.suppress(OSError):
            p.unlink()
            removed.append(p)
    return removed


def _dead_writer(tmp: Path, name: str) -> bool:
    """A `.<name>.<pid>[...].tmp` whose PID is not a live process (a killed writer's)."""
    middle = tmp.name[len(name) + 2 : -len(".tmp")]
    pid_text = middle.split(".", 1)[0]
    return not (pid_text.isdigit() and alive(int(pid_text)))


def alive(pid: int) -> bool:
    """Whether a process with this PID exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_after_wait(fd: int, tries: int = 25, pause_s: float = 0.02) -> int | None:
    """The PID of the process holding the lock. The holder writes its PID just after taking the
    lock, so a note that is missing or names a dead process (an earlier, killed writer) is read
    again for up to half a second before giving up."""
    pid = None
    for _ in range(tries):
        pid = _read_pid(fd)
        if pid and alive(pid):
            return pid
        time.sleep(pause_s)
    return None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
