"""The Ollama and OpenAI-compatible embedders against a small local server that speaks both
protocols (`/api/embed`, `/v1/embeddings`), and the on-disk embedding cache."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from mathlens.errors import UnknownNameError, UserError
from mathlens.solve.retrieval.embed import CachedEmbedder, EmbeddingCache, get_embedder


def _vector(text: str) -> list[float]:
    """A deterministic, unnormalised 3-vector: length, vowel count, 1."""
    return [float(len(text)), float(sum(ch in "aeiou" for ch in text)), 1.0]


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, Any]]] = []

    def log_message(self, *args: Any) -> None:  # keep test output clean
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append((self.path, body))
        if self.path == "/api/embed":
            reply: dict[str, Any] = {"model": body["model"], "embeddings": [_vector(t) for t in body["input"]]}
        elif self.path == "/v1/embeddings":
            rows = [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(body["input"])]
            reply = {"object": "list", "data": list(reversed(rows))}  # order must come from "index"
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    _Handler.seen = []
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _unit(v: list[float]) -> list[float]:
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


@pytest.mark.server
@pytest.mark.parametrize(("spec", "key", "path"), [("ollama/nomic-embed-text", "host", "/api/embed"),
                                                   ("openai/text-embed", "base_url", "/v1/embeddings")])
def test_http_embedders_normalise_and_keep_order(server: str, spec: str, key: str, path: str) -> None:
    url = server + ("/v1" if key == "base_url" else "")
    emb = get_embedder(spec, {key: url}, cached=False)
    texts = ["chain rule", "integral", "a"]
    got = emb.embed(texts)
    assert got == [pytest.approx(_unit(_vector(t))) for t in texts]
    assert _Handler.seen[0][0] == path and _Handler.seen[0][1]["input"] == texts


@pytest.mark.server
def test_unreachable_server_is_a_user_error() -> None:
    emb = get_embedder("ollama/nomic-embed-text", {"host": "http://127.0.0.1:9", "timeout_s": 2}, cached=False)
    with pytest.raises(UserError, match="cannot reach"):
        emb.embed(["x"])


@pytest.mark.server
def test_cache_embeds_each_text_once(server: str, tmp_path: Any) -> None:
    inner = get_embedder("ollama/m", {"host": server}, cached=False)
    emb = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
    first = emb.embed(["a", "b", "a"])
    second = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite")).embed(["b", "a"])
    assert [body["input"] for _, body in _Handler.seen] == [["a", "b"]]  # one request, duplicates merged
    assert second == [pytest.approx(first[1], abs=1e-6), pytest.approx(first[0], abs=1e-6)]
    assert (emb.hits, emb.misses) == (1, 2)


def test_embedder_spec_errors() -> None:
    with pytest.raises(UnknownNameError):
        get_embedder("huggingface/x")
    with pytest.raises(UserError):
        get_embedder("ollama/")
    with pytest.raises(UnknownNameError):
        get_embedder("local/bge-small")
    assert get_embedder(None).identity == "local/all-MiniLM-L6-v2"
    assert get_embedder("openai/m", {"base_url": "http://h/v1"}).identity == "openai/m@http://h/v1"
