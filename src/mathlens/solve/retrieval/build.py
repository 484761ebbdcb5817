"""Build a knowledge base: load sources, filter and chunk, contextualise (optionally), embed, store.

The folder is written beside its final place and moved there when complete, so a build that fails
half-way leaves the previous knowledge base (if any) untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from mathlens import __version__
from mathlens.errors import UserError
from mathlens.flags import Flag
from mathlens.models.cache import ResponseCache
from mathlens.models.registry import DEFAULT_MODEL, get_model
from mathlens.solve.retrieval.chunking import Chunk, ChunkSettings, chunk_documents
from mathlens.solve.retrieval.contextualize import (
    PROMPT_VERSION,
    ContextReport,
    ContextSettings,
    context_messages,
    contextualize_sync,
    fallback_context,
)
from mathlens.solve.retrieval.documents import Document, load_sources
from mathlens.solve.retrieval.embed import get_embedder
from mathlens.solve.retrieval.store import (
    ChunkRecord,
    ContextCost,
    KBInfo,
    SourceInfo,
    check_name,
    chroma_client,
    kb_path,
    release_clients,
)
from mathlens.solve.retrieval.topics import TOPIC_KEYWORDS, check_topics


@dataclass(frozen=True)
class BuildOptions:
    """How to build: embedder, chunking and topic filter, and contextualisation."""

    embedder: str | None = None
    embedder_options: dict[str, Any] = field(default_factory=dict)
    chunks: ChunkSettings = field(default_factory=ChunkSettings)
    contextual: bool = False
    context_model: str = DEFAULT_MODEL
    context_model_options: dict[str, Any] = field(default_factory=dict)
    context_settings: ContextSettings = field(default_factory=ContextSettings)
    #: contexts generated earlier (see `context_key`), used where the request is the same
    shipped_contexts: dict[str, str] | None = None
    #: False: chunks without a shipped context get the structural `fallback_context` (document and
    #: title) instead of a model call
    generate_missing: bool = True
    builtin: bool = False
    overwrite: bool = False


T = TypeVar("T")


def _chunker_says(check: Callable[[], T]) -> T:
    """Run one of the chunker's own checks inside a field validator (its error becomes the field's)."""
    try:
        return check()
    except UserError as exc:
        raise ValueError(str(exc)) from None


class EmbedderChoice(BaseModel):
    """Which embedder and where it is served (the `--embedder` options of `kb build` and `kb query`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: Annotated[str | None, Flag("--embedder")] = Field(
        None, description="local/all-MiniLM-L6-v2 (default), ollama/MODEL or openai/MODEL")
    url: Annotated[str | None, Flag("--embedder-url")] = Field(
        None, description="the embedder's base URL (openai) or host (ollama)")

    def options(self) -> dict[str, Any]:
        """The embedder's options: the URL under the key its backend reads."""
        if not self.url:
            return {}
        return {"host" if (self.spec or "").startswith("ollama/") else "base_url": self.url}


class BuildSettings(BaseModel):
    """What `mathlens kb build` is asked to do; its options are generated from the flagged fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    embedder: EmbedderChoice = Field(default_factory=EmbedderChoice)
    contextual: Annotated[bool, Flag("--contextual")] = Field(False, description="generate chunk contexts with a model")
    context_model: Annotated[str, Flag("--model")] = Field(
        DEFAULT_MODEL, min_length=1, description="the model that writes the chunk contexts")
    context_model_options: Annotated[dict[str, Any], Flag("-M", merge=True, metavar="KEY=VALUE")] = Field(
        default_factory=dict, description="context model option key=value")
    topics: Annotated[list[str], Flag("--topics", split=True)] = Field(
        default_factory=list, description="keep only segments on these topics (comma separated): "
                                          + ", ".join(TOPIC_KEYWORDS))
    chunk_size: Annotated[int, Flag("--chunk-size")] = Field(ChunkSettings.size, ge=1, le=1_000_000,
                                                         description="chunk size in characters")
    overlap: Annotated[int, Flag("--overlap")] = Field(ChunkSettings.overlap, ge=0, le=1_000_000,
                                                       description="overlap between chunks in characters")
    builtin: Annotated[bool, Flag("--builtin")] = Field(
        False, description="use the built-in notes as the sources (as the built-in knowledge base of that --name "
                           "when there is one)")
    overwrite: Annotated[bool, Flag("--overwrite")] = Field(False, description="replace an existing knowledge base")

    @field_validator("topics")
    @classmethod
    def _topics(cls, value: list[str]) -> list[str]:
        return list(_chunker_says(lambda: check_topics(value)))

    @field_validator("chunk_size")
    @classmethod
    def _size(cls, value: int) -> int:
        _chunker_says(lambda: ChunkSettings(size=value, overlap=0))
        return value

    @field_validator("overlap")
    @classmethod
    def _overlap(cls, value: int, info: ValidationInfo) -> int:
        _chunker_says(lambda: ChunkSettings(size=info.data.get("chunk_size", ChunkSettings.size), overlap=value))
        return value

    @property
    def chunking_given(self) -> bool:
        """Whether the chunk size or overlap was asked for (else a built-in keeps its own)."""
        return bool({"chunk_size", "overlap"} & self.model_fields_set)

    def chunks(self) -> ChunkSettings:
        """The chunking asked for."""
        return ChunkSettings(size=self.chunk_size, overlap=self.overlap, topics=tuple(self.topics))

    def options(self) -> BuildOptions:
        """The build's options."""
        return BuildOptions(embedder=self.embedder.spec, embedder_options=self.embedder.options(),
                            chunks=self.chunks(), contextual=self.contextual, context_model=self.context_model,
                            context_model_options=dict(self.context_model_options), overwrite=self.overwrite)


def context_key(doc: Document, chunk: Chunk, settings: ContextSettings) -> str:
    """Identifies one context request: prompt version, document block and chunk text."""
    content = context_messages(doc, chunk, settings)[0].content
    return hashlib.sha256(f"{PROMPT_VERSION}\0{content}".encode()).hexdigest()


def _contexts(chunks: list[Chunk], docs: dict[str, Document],
              opts: BuildOptions) -> tuple[dict[str, str], ContextCost]:
    cost = ContextCost(model=opts.context_model, prompt_version=PROMPT_VERSION, chunks=len(chunks))
    found: dict[str, str] = {}
    shipped = opts.shipped_contexts or {}
    todo = []
    for c in chunks:
        key = context_key(docs[c.doc_id], c, opts.context_settings)
        if key in shipped:
            found[c.id] = shipped[key]
        else:
            todo.append(c)
    cost.shipped = len(found)
    if todo and not opts.generate_missing:
        for c in todo:
            found[c.id] = fallback_context(docs[c.doc_id], c)
        cost.structural = len(todo)
    elif todo:
        model = get_model(opts.context_model, opts.context_model_options, cache=ResponseCache())
        report: ContextReport = contextualize_sync(todo, docs, model, opts.context_settings, close=True)
        found.update(report.contexts)
        cost.calls, cost.cache_hits = report.calls, report.cache_hits
        cost.fallbacks, cost.seconds = report.fallbacks, report.seconds
    return found, cost


def _write_collection(client: Any, name: str, ids: list[str], vectors: list[list[float]],
                      records: list[ChunkRecord], identity: str) -> None:
    col = client.create_collection(name, embedding_function=None,
                                   metadata={"hnsw:space": "cosine", "embedder": identity})
    for i in range(0, len(ids), 1000):
        col.add(ids=ids[i:i + 1000], embeddings=vectors[i:i + 1000],
                metadatas=[{"doc_id": r.doc_id, "source": r.source, "index": r.index}
                           for r in records[i:i + 1000]])


def build_from_documents(name: str, docs: list[Document], opts: BuildOptions,
                         paths: dict[str, str] | None = None) -> KBInfo:
    """Build knowledge base `name` from loaded documents (see `build_kb` for files)."""
    started = time.perf_counter()
    final = kb_path(check_name(name))
    if (final / "kb.json").exists() and not opts.overwrite:
        raise UserError(f"knowledge base {name!r} exists: pass --overwrite to rebuild it")
    chunks = chunk_documents(docs, opts.chunks)
    if not chunks:
        raise UserError("no chunks left to index: the sources are empty or no segment matched the topics")
    by_doc = {d.id: d for d in docs}
    contexts: dict[str, str] = {}
    cost = None
    if opts.contextual:
        contexts, cost = _contexts(chunks, by_doc, opts)
    records = [ChunkRecord(**dict(c), context=contexts.get(c.id)) for c in chunks]
    embedder = get_embedder(opts.embedder, opts.embedder_options)
    tmp = final.parent / f".{final.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        client = chroma_client(tmp / "chroma")
        ids = [r.id for r in records]
        _write_collection(client, "raw", ids, embedder.embed([r.indexed_text(False) for r in records]),
                          records, embedder.identity)
        if opts.contextual:
            vectors = embedder.embed([r.indexed_text(True) for r in records])
            _write_collection(client, "contextual", ids, vectors, records, embedder.identity)
        del client
        with (tmp / "chunks.jsonl").open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(r.model_dump_json() + "\n")
        counts: dict[str, int] = {}
        for c in chunks:
            counts[c.doc_id] = counts.get(c.doc_id, 0) + 1
        info = KBInfo(
            name=name, embedder=embedder.spec, embedder_identity=embedder.identity,
            embedder_options=opts.embedder_options, chunk_size=opts.chunks.size, overlap=opts.chunks.overlap,
            topics=list(opts.chunks.topics), contextual=opts.contextual, context=cost,
            sources=[SourceInfo(path=(paths or {}).get(d.id, d.source), doc_id=d.id, title=d.title,
                                chars=len(d.text), digest=d.digest, chunks=counts.get(d.id, 0))
                     for d in docs],
            n_chunks=len(records), builtin=opts.builtin, created_at=datetime.now(UTC),
            mathlens_version=__version__, build_seconds=round(time.perf_counter() - started, 3),
        )
        (tmp / "kb.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")
        release_clients()
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    release_clients()
    return info


def build_kb(name: str, sources: list[Path], opts: BuildOptions) -> KBInfo:
    """Build knowledge base `name` from files and folders (Markdown, text, PDF, note YAML)."""
    docs = load_sources(sources)
    paths = {d.id: str(p) for d, p in zip(docs, _source_files(sources), strict=False)}
    return build_from_documents(name, docs, opts, paths)


def _source_files(paths: list[Path]) -> list[Path]:
    # The same expansion as `load_sources`, so that each document can be given its path.
    from mathlens.solve.retrieval.documents import NOTE_SUFFIXES, PDF_SUFFIXES, TEXT_SUFFIXES

    known = TEXT_SUFFIXES + PDF_SUFFIXES + NOTE_SUFFIXES
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in known)
                   if p.is_dir() else [p])
    return out


def load_shipped_contexts(path: Path) -> dict[str, str]:
    """Contexts from a file written by `scripts/build_builtin_contexts.py` (request key -> context)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("prompt_version") != PROMPT_VERSION:
        return {}
    return {k: v["context"] for k, v in data.get("contexts", {}).items()}
