"""The built-in knowledge base `calculus`: the project's own Calculus I-III reference notes.

It is built on first use (so `mathlens run --config baseline,rag,contextual` works on a fresh
machine) with the default embedder and contexts read from `builtin/contexts.json`, a data file made
by `scripts/build_builtin_contexts.py` with the embedded model. A first use never waits for model
calls: a note whose shipped context is missing (after the notes were edited, say) gets the
structural fallback (document and note title), counted in `kb.json` as a fallback; rerun the script,
or `mathlens kb build --builtin --contextual --name calculus --overwrite`, to generate them. It is
rebuilt when the notes change.
"""

from __future__ import annotations

import fcntl
from dataclasses import replace
from importlib import resources
from pathlib import Path

from mathlens.solve.retrieval.build import BuildOptions, build_from_documents, load_shipped_contexts
from mathlens.solve.retrieval.chunking import ChunkSettings
from mathlens.solve.retrieval.documents import Document, load_note_file
from mathlens.solve.retrieval.store import KBInfo, KnowledgeBase, kb_path, kb_root, open_kb

BUILTIN_KB = "calculus"


def builtin_dir() -> Path:
    return Path(str(resources.files("mathlens.solve.retrieval") / "builtin"))


def notes_dir() -> Path:
    return builtin_dir() / "notes"


def contexts_file() -> Path:
    return builtin_dir() / "contexts.json"


def labelled_questions_file() -> Path:
    return builtin_dir() / "labelled_questions.yaml"


def builtin_documents() -> list[Document]:
    """Every built-in note file as a document, in file-name order."""
    return [load_note_file(p) for p in sorted(notes_dir().glob("*.yaml"))]


def builtin_options(**changes: object) -> BuildOptions:
    """How the built-in knowledge base is built (contextual, shipped contexts)."""
    opts = BuildOptions(chunks=ChunkSettings(), contextual=True,
                        shipped_contexts=load_shipped_contexts(contexts_file()), builtin=True, overwrite=True,
                        generate_missing=False)
    return replace(opts, **changes)  # type: ignore[arg-type]


def _up_to_date(info: KBInfo, docs: list[Document]) -> bool:
    return info.builtin and sorted(s.digest for s in info.sources) == sorted(d.digest for d in docs)


def ensure_builtin(name: str = BUILTIN_KB) -> KnowledgeBase:
    """Open the built-in knowledge base, building or refreshing it first when needed."""
    docs = builtin_documents()
    meta = kb_path(name) / "kb.json"

    def current() -> bool:
        return meta.is_file() and _up_to_date(KBInfo.model_validate_json(meta.read_text("utf-8")), docs)

    if current():
        return open_kb(name)
    kb_root().mkdir(parents=True, exist_ok=True)
    # One process builds; another that arrives meanwhile waits, then finds it built.
    with (kb_root() / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not current():
                build_from_documents(name, docs, builtin_options())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return open_kb(name)


def open_or_build(name: str) -> KnowledgeBase:
    """`open_kb`, except that the built-in name is built on first use."""
    return ensure_builtin(name) if name == BUILTIN_KB else open_kb(name)
