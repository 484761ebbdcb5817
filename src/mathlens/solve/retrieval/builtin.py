"""The built-in knowledge bases, made from the project's own Calculus I-III reference notes.

- `calculus`: each note is one chunk (its id is the note id). Its chunk contexts are structural,
  the note's document and title, counted as `structural` in `kb.json`: no model is asked, so a
  first use never waits for model calls. A data file `builtin/contexts.json` of model-written
  contexts (made by `scripts/build_builtin_contexts.py`), when present, supplies the contexts of
  the notes it covers; `mathlens kb build --builtin --contextual --name calculus --model M
  --overwrite` generates them with model M instead.
- `calculus-study`: the calculus study's retrieval set-up (seed 000 §4.4.1). Each note file is one
  longer document of course notes (headings and paragraphs), cut into overlapping windows of
  `STUDY_CHUNKS` characters; every chunk is tagged with the topics its keywords mark, so retrieval
  can filter by the question's topics. No chunk contexts: the study's contextual variant places
  passages inline (`-C inline=true`) and needs none.

Both are built on first use (so `mathlens run --config baseline,rag,contextual` works on a fresh
machine) and rebuilt when the notes change. With an embedder other than the default
(`-C embedder=ollama/nomic-embed-text`), a built-in knowledge base is built for that embedder
under a name of its own (`calculus-study.ollama-nomic-embed-text`), so the vectors of two
embedders never mix.
"""

from __future__ import annotations

import fcntl
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from mathlens.solve.retrieval.build import BuildOptions, build_from_documents, load_shipped_contexts
from mathlens.solve.retrieval.chunking import ChunkSettings
from mathlens.solve.retrieval.documents import Document, load_note_file
from mathlens.solve.retrieval.embed import DEFAULT_EMBEDDER, get_embedder
from mathlens.solve.retrieval.store import FORMAT_VERSION, KBInfo, KnowledgeBase, kb_path, kb_root, open_kb

BUILTIN_KB = "calculus"
STUDY_KB = "calculus-study"
#: window and overlap (characters) of the study knowledge base; the study does not give its sizes
STUDY_CHUNKS = ChunkSettings(size=1000, overlap=200)


def builtin_dir() -> Path:
    return Path(str(resources.files("mathlens.solve.retrieval") / "builtin"))


def notes_dir() -> Path:
    return builtin_dir() / "notes"


def contexts_file() -> Path:
    return builtin_dir() / "contexts.json"


def labelled_questions_file() -> Path:
    return builtin_dir() / "labelled_questions.yaml"


def builtin_documents() -> list[Document]:
    """Every built-in note file as a document whose passages are its notes, in file-name order."""
    return [load_note_file(p) for p in sorted(notes_dir().glob("*.yaml"))]


def study_documents() -> list[Document]:
    """The note files as free-text documents (no pre-cut passages): the chunker cuts them."""
    return [replace(d, passages=()) for d in builtin_documents()]


def builtin_options(**changes: object) -> BuildOptions:
    """How the built-in knowledge base `calculus` is built (contextual, shipped contexts)."""
    opts = BuildOptions(chunks=ChunkSettings(), contextual=True,
                        shipped_contexts=load_shipped_contexts(contexts_file()), builtin=True, overwrite=True,
                        generate_missing=False)
    return replace(opts, **changes)  # type: ignore[arg-type]


def study_options(**changes: object) -> BuildOptions:
    """How `calculus-study` is built: overlapping windows, no contexts."""
    opts = BuildOptions(chunks=STUDY_CHUNKS, contextual=False, builtin=True, overwrite=True)
    return replace(opts, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Builtin:
    """A knowledge base mathlens builds itself from its own notes."""

    name: str
    documents: Callable[[], list[Document]]
    options: Callable[..., BuildOptions]
    description: str


BUILTINS: dict[str, Builtin] = {
    BUILTIN_KB: Builtin(BUILTIN_KB, builtin_documents, builtin_options,
                        "165 notes, one chunk each, with contexts (rag and contextual retrieval)"),
    STUDY_KB: Builtin(STUDY_KB, study_documents, study_options,
                      "17 documents of course notes in overlapping 1,000-character chunks, topic-tagged "
                      "(the calculus study's set-up)"),
}


def is_builtin(name: str) -> bool:
    """Whether `name` is a built-in knowledge base (built on first use)."""
    return name in BUILTINS


def variant_name(name: str, embedder: str | None) -> str:
    """The folder name of built-in `name` embedded with `embedder` (the name itself for the default).

    >>> variant_name("calculus-study", "ollama/nomic-embed-text")
    'calculus-study.ollama-nomic-embed-text'
    """
    if embedder is None or embedder == DEFAULT_EMBEDDER:
        return name
    slug = re.sub(r"[^A-Za-z0-9]+", "-", embedder).strip("-")
    return f"{name}.{slug}"[:64].rstrip("-.")


def _up_to_date(info: KBInfo, docs: list[Document], identity: str, chunks: ChunkSettings) -> bool:
    return (info.builtin and info.format_version == FORMAT_VERSION
            and sorted(s.digest for s in info.sources) == sorted(d.digest for d in docs)
            and info.embedder_identity == identity and (info.chunk_size, info.overlap) == (chunks.size, chunks.overlap))


def ensure_builtin(name: str = BUILTIN_KB, embedder: str | None = None,
                   embedder_options: dict[str, Any] | None = None) -> KnowledgeBase:
    """Open built-in knowledge base `name` for `embedder`, building or refreshing it first when needed."""
    spec = BUILTINS[name]
    emb_opts = dict(embedder_options or {})
    docs = spec.documents()
    opts = spec.options(embedder=embedder, embedder_options=emb_opts)
    folder = variant_name(name, embedder)
    identity = get_embedder(embedder, emb_opts, cached=False).identity
    meta = kb_path(folder) / "kb.json"

    def current() -> bool:
        return meta.is_file() and _up_to_date(KBInfo.model_validate_json(meta.read_text("utf-8")), docs,
                                               identity, opts.chunks)

    if current():
        return open_kb(folder)
    kb_root().mkdir(parents=True, exist_ok=True)
    # One process builds; another that arrives meanwhile waits, then finds it built.
    with (kb_root() / f".{folder}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not current():
                build_from_documents(folder, docs, opts)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return open_kb(folder)


def open_or_build(name: str, embedder: str | None = None,
                  embedder_options: dict[str, Any] | None = None) -> KnowledgeBase:
    """`open_kb`, except that a built-in name is built on first use (for `embedder`, if given)."""
    if is_builtin(name):
        return ensure_builtin(name, embedder, embedder_options)
    return open_kb(name)
