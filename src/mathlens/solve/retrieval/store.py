"""Knowledge bases on disk: `$MATHLENS_HOME/kb/<name>/` (default `~/.mathlens/kb/<name>/`).

A knowledge base folder holds `kb.json` (what it was built from and with which embedder),
`chunks.jsonl` (every chunk with its offsets, topics and generated context) and `chroma/`, an
embedded Chroma database with the collection `raw` (vectors of the chunk texts) and, for contextual
knowledge bases, `contextual` (vectors of context + chunk). BM25 indexes are rebuilt in memory from
`chunks.jsonl` when a knowledge base is opened; they are small.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from mathlens.errors import UnknownNameError, UserError
from mathlens.solve.retrieval.bm25 import BM25Index
from mathlens.solve.retrieval.chunking import Chunk
from mathlens.solve.retrieval.embed import Embedder, get_embedder
from mathlens.solve.retrieval.fusion import reciprocal_rank_fusion

Mode = Literal["embedding", "bm25", "hybrid"]
MODES: tuple[str, ...] = ("embedding", "bm25", "hybrid")
KB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}[A-Za-z0-9]$")
FORMAT_VERSION = 1


class ChunkRecord(Chunk):
    """One stored chunk; `context` is the generated situating text (contextual knowledge bases)."""

    context: str | None = None

    def indexed_text(self, contextual: bool) -> str:
        """What is embedded and BM25-indexed: the chunk, with its context in front when contextual."""
        if contextual and self.context:
            return f"{self.context}\n\n{self.text}"
        return self.text


class SourceInfo(BaseModel):
    path: str
    doc_id: str
    title: str
    chars: int
    digest: str
    chunks: int


class ContextCost(BaseModel):
    """What contextualisation cost: model calls made now, reused answers, and wall time."""

    model: str
    prompt_version: str
    chunks: int = 0
    calls: int = 0
    cache_hits: int = 0
    shipped: int = Field(default=0, description="contexts taken from the shipped data file")
    fallbacks: int = Field(default=0, description="chunks whose generated context was empty; given their titles")
    structural: int = Field(default=0, description="chunks given their document and title as context, by design "
                                                   "(no model asked: the built-in knowledge base)")
    seconds: float = 0.0


class KBInfo(BaseModel):
    """`kb.json`: enough to know what a knowledge base holds and how to query it."""

    format_version: int = FORMAT_VERSION
    name: str
    embedder: str
    embedder_identity: str
    embedder_options: dict[str, Any] = Field(default_factory=dict)
    chunk_size: int
    overlap: int
    topics: list[str] = Field(default_factory=list)
    contextual: bool = False
    context: ContextCost | None = None
    sources: list[SourceInfo] = Field(default_factory=list)
    n_chunks: int = 0
    builtin: bool = False
    created_at: datetime
    mathlens_version: str = ""
    build_seconds: float = 0.0


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: `score` is cosine similarity, BM25 score or fused RRF score by mode."""

    id: str
    rank: int
    score: float
    text: str
    source: str
    doc_id: str
    title: str
    context: str | None = None
    parts: dict[str, float] = field(default_factory=dict)


def mathlens_home() -> Path:
    """`$MATHLENS_HOME`, else `~/.mathlens`."""
    env = os.environ.get("MATHLENS_HOME")
    return Path(env).expanduser() if env else Path.home() / ".mathlens"


def kb_root() -> Path:
    return mathlens_home() / "kb"


def check_name(name: str) -> str:
    """Knowledge base names: 2-64 letters, digits, `.`, `_`, `-`, starting and ending alphanumeric."""
    if not KB_NAME.match(name):
        raise UserError(f"knowledge base name {name!r} must be 2-64 letters, digits, '.', '_' or '-', "
                        "starting and ending with a letter or digit")
    return name


def chroma_client(path: Path) -> Any:
    """An embedded Chroma client for `path` (telemetry off: nothing leaves the machine)."""
    try:
        import chromadb
    except ImportError as exc:
        raise UserError("Chroma is not installed: pip install 'mathlens[retrieval]'") from exc
    return chromadb.PersistentClient(path=str(path), settings=chromadb.Settings(anonymized_telemetry=False))


def release_clients() -> None:
    """Forget cached Chroma clients (after a knowledge base folder was replaced or removed)."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    with _OPEN_LOCK:
        _OPEN.clear()


def list_kbs() -> list[KBInfo]:
    """Every knowledge base under `kb_root()`, by name."""
    root = kb_root()
    out = []
    for p in sorted(root.glob("*/kb.json")) if root.is_dir() else []:
        try:
            out.append(KBInfo.model_validate_json(p.read_text(encoding="utf-8")))
        except ValueError:
            continue  # a half-written or foreign folder is not a knowledge base
    return out


def read_info(path: Path) -> KBInfo:
    """The `kb.json` of the knowledge base at `path`, refused by name when it was written in another
    format than this version of mathlens reads (its chunks and collections may not match)."""
    info = KBInfo.model_validate_json((path / "kb.json").read_text(encoding="utf-8"))
    if info.format_version != FORMAT_VERSION:
        raise UserError(f"knowledge base {info.name!r} ({path}) is in format {info.format_version}; this "
                        f"version of mathlens reads format {FORMAT_VERSION}. Rebuild it: mathlens kb build "
                        f"SOURCES... --name {info.name} --overwrite (a built-in one is rebuilt when next used)")
    return info


class KnowledgeBase:
    """An opened knowledge base. Use `open_kb(name)`; `search` is the one query entry point."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.info = read_info(path)
        self.chunks = [ChunkRecord.model_validate_json(line) for line in
                       (path / "chunks.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
        self.by_id = {c.id: c for c in self.chunks}
        self._bm25: dict[bool, BM25Index] = {}
        self._client: Any = None
        self._embedder: Embedder | None = None

    @property
    def name(self) -> str:
        return self.info.name

    def embedder(self, spec: str | None = None) -> Embedder:
        """The knowledge base's embedder; another spec is refused (its vectors would not compare)."""
        if spec is not None and spec != self.info.embedder:
            other = get_embedder(spec, self.info.embedder_options)
            if other.identity != self.info.embedder_identity:
                raise UserError(f"knowledge base {self.name!r} was embedded with "
                                f"{self.info.embedder_identity}; it cannot be queried with "
                                f"{other.identity}. Rebuild it with --embedder {spec}")
        if self._embedder is None:
            self._embedder = get_embedder(self.info.embedder, self.info.embedder_options)
        return self._embedder

    def collection(self, contextual: bool) -> Any:
        if contextual and not self.info.contextual:
            raise UserError(f"knowledge base {self.name!r} has no chunk contexts: rebuild it with "
                            "`mathlens kb build ... --contextual`")
        if self._client is None:
            self._client = chroma_client(self.path / "chroma")
        return self._client.get_collection("contextual" if contextual else "raw")

    def bm25(self, contextual: bool) -> BM25Index:
        if contextual not in self._bm25:
            self._bm25[contextual] = BM25Index.from_texts(
                [c.id for c in self.chunks], [c.indexed_text(contextual) for c in self.chunks])
        return self._bm25[contextual]

    def _embedding_ranking(self, query: str, n: int, contextual: bool,
                           embedder: str | None) -> list[tuple[str, float]]:
        vec = self.embedder(embedder).embed([query])[0]
        col = self.collection(contextual)
        n = min(n, col.count())
        if n <= 0:
            return []
        res = col.query(query_embeddings=[vec], n_results=n, include=["distances"])
        # Chroma's cosine space returns 1 - cosine similarity.
        pairs = [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0], strict=True)]
        pairs.sort(key=lambda p: (-round(p[1], 6), p[0]))
        return pairs

    def search(self, query: str, k: int = 4, mode: str = "embedding", contextual: bool = False,
               embedder: str | None = None, candidates: int = 20) -> list[Hit]:
        """The `k` best chunks for `query`.

        `embedding`: cosine similarity; `bm25`: BM25; `hybrid`: both rankings of the best
        `candidates` each fused by reciprocal rank fusion. `contextual` searches the vectors and
        BM25 index of context + chunk instead of the bare chunk.
        """
        if mode not in MODES:
            raise UnknownNameError("retrieval mode", mode, MODES)
        if k < 1:
            raise UserError(f"top-k must be at least 1, not {k}")
        if not query.strip():
            raise UserError("the query is empty")
        if contextual:
            self.collection(True)  # refuses early when the knowledge base has no contexts
        pool = max(candidates, k)
        parts: dict[str, dict[str, float]] = {}
        if mode == "embedding":
            ranked = self._embedding_ranking(query, k, contextual, embedder)
        elif mode == "bm25":
            ranked = self.bm25(contextual).search(query, k)
        else:
            emb = self._embedding_ranking(query, pool, contextual, embedder)
            lex = self.bm25(contextual).search(query, pool)
            for name, ranking in (("embedding", emb), ("bm25", lex)):
                for i, s in ranking:
                    parts.setdefault(i, {})[name] = round(s, 6)
            ranked = reciprocal_rank_fusion([[i for i, _ in emb], [i for i, _ in lex]])[:k]
        return [self._hit(i, r, s, parts.get(i, {})) for r, (i, s) in enumerate(ranked[:k], start=1)]

    def _hit(self, cid: str, rank: int, score: float, parts: dict[str, float]) -> Hit:
        c = self.by_id[cid]
        return Hit(id=cid, rank=rank, score=round(score, 6), text=c.text, source=c.source, doc_id=c.doc_id,
                   title=c.title, context=c.context, parts=parts)


_OPEN: dict[str, tuple[float, KnowledgeBase]] = {}
_OPEN_LOCK = threading.Lock()


def kb_path(name: str) -> Path:
    return kb_root() / check_name(name)


def open_kb(name: str) -> KnowledgeBase:
    """Open a knowledge base by name (reused within a process until its `kb.json` changes)."""
    path = kb_path(name)
    meta = path / "kb.json"
    if not meta.is_file():
        known = [i.name for i in list_kbs()]
        raise UnknownNameError("knowledge base", name, known)
    stamp = meta.stat().st_mtime
    with _OPEN_LOCK:
        hit = _OPEN.get(str(path))
        if hit is not None and hit[0] == stamp:
            return hit[1]
        kb = KnowledgeBase(path)
        _OPEN[str(path)] = (stamp, kb)
        return kb


def remove_kb(name: str) -> None:
    """Delete a knowledge base folder."""
    path = kb_path(name)
    if not (path / "kb.json").is_file():
        raise UnknownNameError("knowledge base", name, [i.name for i in list_kbs()])
    release_clients()
    shutil.rmtree(path)
