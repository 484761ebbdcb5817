"""A persistent response cache in SQLite, keyed by everything that determines a response."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mathlens.errors import warn
from mathlens.models.base import GenerateConfig, Message, ModelOutput


def default_cache_path() -> Path:
    """`$MATHLENS_CACHE_DIR/responses.sqlite`, else `~/.cache/mathlens/responses.sqlite`."""
    root = os.environ.get("MATHLENS_CACHE_DIR") or os.path.join(Path.home(), ".cache", "mathlens")
    return Path(root) / "responses.sqlite"


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class RequestText:
    """A request's messages, config and schema serialised once, so that its cache key and its
    identity-free content hash (two per record) share one serialisation. `hash(identity)` is the
    sha256 of the JSON object {"config", "identity", "messages", "schema"} with sorted keys and no
    spaces: the keys' sorted order lets the identity be spliced in between the two fixed parts."""

    head: str
    tail: str

    @classmethod
    def of(cls, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None) -> RequestText:
        return cls(head='{"config":' + _json(config.model_dump(mode="json")) + ',"identity":',
                   tail=',"messages":' + _json([m.model_dump(mode="json") for m in messages])
                   + ',"schema":' + _json(schema) + "}")

    def hash(self, identity: dict[str, Any]) -> str:
        return hashlib.sha256((self.head + _json(identity) + self.tail).encode("utf-8")).hexdigest()


def request_hash(
    identity: dict[str, Any],
    messages: list[Message],
    config: GenerateConfig,
    schema: dict[str, Any] | None = None,
) -> str:
    """A stable sha256 over provider identity (provider, model, base URL...), messages, config, schema.

    >>> h = request_hash({"provider": "mock", "model": "m"}, [Message(role="user", content="hi")],
    ...                  GenerateConfig())
    >>> len(h)
    64
    """
    return RequestText.of(messages, config, schema).hash(identity)


def content_hash(messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None) -> str:
    """The identity-free hash stored on run records as `content_hash` (what `replay/` matches on)."""
    return request_hash({}, messages, config, schema)


class ResponseCache:
    """Maps request hashes to `ModelOutput`s. Safe to share between threads of one process.

    It is only a cache, so no failure of it stops a run: a file that is not a database or is
    damaged is moved aside (`<name>.corrupt-<time>`, with a warning naming both paths) and a new
    one started; a row that no longer validates is dropped; a folder that cannot be written, a
    full disk or an I/O error turn the cache off for the rest of the process, with one warning.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._warned: set[str] = set()
        self.disabled_reason: str | None = None
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
        except OSError as exc:
            self._disable(f"cannot create {self.path.parent} ({exc.strerror or exc})")

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # WAL with synchronous=NORMAL: a commit survives the process being killed; only a power
            # loss can lose the last few, which a cache can afford (they are asked again). FULL would
            # fsync on every response, milliseconds each on a busy disk.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, output TEXT NOT NULL)")
            db.execute("SELECT COUNT(*) FROM responses").fetchone()
            db.commit()
        except sqlite3.DatabaseError:
            db.close()
            raise
        self._db = db

    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            warn(message)

    def _disable(self, reason: str) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        self.disabled_reason = reason
        self._warn_once("disabled", f"response cache {self.path} is off for this run: {reason}")

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        """Corrupt file: move it aside and start afresh; anything else (read-only, full disk): turn off."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        if not _is_corruption(exc):
            self._disable(str(exc))
            return
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        try:
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, aside.with_name(aside.name + suffix))
        except OSError as move_exc:
            self._disable(f"it is damaged ({exc}) and could not be moved aside ({move_exc.strerror or move_exc})")
            return
        warn(f"response cache {self.path} was damaged ({exc}); moved it to {aside} and started an empty cache")
        try:
            self._open()
        except (sqlite3.DatabaseError, OSError) as again:
            self._disable(str(again))

    def get(self, key: str) -> ModelOutput | None:
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return None
            if row is None:
                return None
            try:
                out = ModelOutput.model_validate_json(row[0])
            except (ValidationError, ValueError, TypeError):
                self._warn_once("row", f"response cache {self.path} held entries that no longer validate; "
                                       "they are dropped and the requests sent again")
                self._drop(key)
                return None
        return out.model_copy(update={"cached": True, "replica": None})  # no replica answered a hit

    def _drop(self, key: str) -> None:
        assert self._db is not None
        try:
            self._db.execute("DELETE FROM responses WHERE key = ?", (key,))
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            self._recover(exc)

    def put(self, key: str, output: ModelOutput) -> None:
        data = output.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, data))
                self._db.commit()
            except sqlite3.DatabaseError as exc:
                self._recover(exc)

    def __len__(self) -> int:
        with self._lock:
            if self._db is None:
                return 0
            try:
                return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return 0

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """Whether an sqlite error says the file itself is bad (as opposed to unwritable or full)."""
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "corrupt" in text
