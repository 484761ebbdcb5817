"""A persistent response cache in SQLite, keyed by everything that determines a response."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from mathlens.models.base import GenerateConfig, Message, ModelOutput


def default_cache_path() -> Path:
    """`$MATHLENS_CACHE_DIR/responses.sqlite`, else `~/.cache/mathlens/responses.sqlite`."""
    root = os.environ.get("MATHLENS_CACHE_DIR") or os.path.join(Path.home(), ".cache", "mathlens")
    return Path(root) / "responses.sqlite"


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
    payload = {
        "identity": identity,
        "messages": [m.model_dump(mode="json") for m in messages],
        "config": config.model_dump(mode="json"),
        "schema": schema,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Maps request hashes to `ModelOutput`s. Safe to share between threads of one process."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, output TEXT NOT NULL)"
        )
        self._db.commit()

    def get(self, key: str) -> ModelOutput | None:
        with self._lock:
            row = self._db.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        out = ModelOutput.model_validate_json(row[0])
        return out.model_copy(update={"cached": True})

    def put(self, key: str, output: ModelOutput) -> None:
        data = output.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, data))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
