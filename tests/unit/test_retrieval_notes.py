"""The built-in knowledge base's notes, labelled questions and shipped contexts are well formed."""

from __future__ import annotations

import json
from collections import Counter

from mathlens.solve.retrieval.build import context_key, load_shipped_contexts
from mathlens.solve.retrieval.builtin import builtin_documents, contexts_file, labelled_questions_file
from mathlens.solve.retrieval.chunking import ChunkSettings, chunk_documents
from mathlens.solve.retrieval.contextualize import PROMPT_VERSION, ContextSettings, fallback_context
from mathlens.solve.retrieval.evaluate import load_labelled
from mathlens.solve.retrieval.topics import TOPIC_KEYWORDS


def test_at_least_120_notes_with_unique_ids_and_known_topics() -> None:
    docs = builtin_documents()
    notes = [p for d in docs for p in d.passages]
    assert len(notes) >= 120
    ids = Counter(p.id for p in notes)
    assert [i for i, n in ids.items() if n > 1] == []
    for p in notes:
        assert set(p.topics) <= set(TOPIC_KEYWORDS), p.id


def test_every_topic_and_course_is_covered() -> None:
    docs = builtin_documents()
    used = {t for d in docs for p in d.passages for t in p.topics}
    assert used == set(TOPIC_KEYWORDS)
    courses = {d.text.splitlines()[0].rsplit("(", 1)[1].rstrip(")") for d in docs}
    assert courses == {"Calculus I", "Calculus II", "Calculus III"}


def test_each_note_is_one_chunk_whose_id_is_the_note_id() -> None:
    docs = builtin_documents()
    chunks = chunk_documents(docs, ChunkSettings())
    assert [c.id for c in chunks] == [p.id for d in docs for p in d.passages]
    for c in chunks:
        assert c.text.startswith("## ")
        assert "\n" in c.text and len(c.text) < 900


def test_labelled_questions_name_existing_notes() -> None:
    qs = load_labelled(labelled_questions_file())
    assert len(qs) >= 60
    ids = {p.id for d in builtin_documents() for p in d.passages}
    assert len({q.id for q in qs}) == len(qs)
    missing = sorted({r for q in qs for r in q.relevant} - ids)
    assert missing == []


def test_builtin_contexts_are_structural_unless_a_context_file_is_shipped() -> None:
    docs = {d.id: d for d in builtin_documents()}
    chunks = chunk_documents(list(docs.values()), ChunkSettings())
    shipped = load_shipped_contexts(contexts_file())
    if not contexts_file().is_file():
        # No model-written contexts are shipped: each note is placed by its document and its title.
        assert shipped == {}
        contexts = {c.id: fallback_context(docs[c.doc_id], c) for c in chunks}
        assert contexts["der-chain-rule"] == "From Rules of differentiation: Chain rule."
        assert len(set(contexts.values())) == len(chunks)
        return
    data = json.loads(contexts_file().read_text(encoding="utf-8"))
    assert data["prompt_version"] == PROMPT_VERSION
    keys = [context_key(docs[c.doc_id], c, ContextSettings()) for c in chunks]
    stale = [c.id for c, k in zip(chunks, keys, strict=True) if k not in shipped]
    assert stale == [], "notes changed since the contexts were generated: rerun the script"
    assert all(v.strip() for v in shipped.values())
