"""Embedding replies of the stand-in server: Ollama's `/api/embed` and OpenAI's `/v1/embeddings`.

The vectors are feature-hashed bags of words: each lower-case word adds ±1 to one of `DIM`
coordinates chosen by its sha256. Texts that share words therefore get similar vectors, so a
retrieval test through the stand-in can check a ranking (a query ranks the chunk it shares words
with first) and not only that a request was sent. They are not a language model's embeddings.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

DIM = 256
_WORD = re.compile(r"[a-z0-9]+")


def hashed_embedding(text: str, dim: int = DIM) -> list[float]:
    """A deterministic vector of `text` (not normalised: the client normalises).

    >>> a, b = hashed_embedding("chain rule"), hashed_embedding("the chain rule")
    >>> sum(x * y for x, y in zip(a, b)) > 0
    True
    """
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        h = int(hashlib.sha256(word.encode()).hexdigest()[:8], 16)
        vec[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    if not any(vec):
        vec[0] = 1.0  # an empty or symbol-only text still gets a usable vector
    return vec


def _inputs(body: dict[str, Any]) -> list[str] | None:
    raw = body.get("input")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and all(isinstance(t, str) for t in raw):
        return raw
    return None


def embedding_reply(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """(status, body) for an embeddings request, or None when `path` is not an embeddings route."""
    route = path.rstrip("/")
    if route not in ("/api/embed", "/v1/embeddings", "/embeddings"):
        return None
    texts = _inputs(body)
    if texts is None:
        return 400, {"error": "'input' must be a string or a list of strings"}
    vectors = [hashed_embedding(t) for t in texts]
    model = body.get("model", "standin")
    if route == "/api/embed":
        return 200, {"model": model, "embeddings": vectors}
    return 200, {"object": "list", "model": model,
                 "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                 "usage": {"prompt_tokens": sum(len(t.split()) for t in texts),
                           "total_tokens": sum(len(t.split()) for t in texts)}}
