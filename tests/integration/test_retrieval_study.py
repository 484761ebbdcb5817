"""The calculus study's retrieval set-up: the built-in `calculus-study` knowledge base (longer
documents in overlapping chunks, topic-tagged), the question's topic filter, embedders served by
the stand-in over Ollama's and the OpenAI protocol, and the study's inline contextual variant."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mathlens.items.loaders import builtin_exams, load_items
from mathlens.items.schema import Question
from mathlens.solve.configurations import get_configuration
from mathlens.solve.prompts import CALCULUS_STUDY_ROLE
from mathlens.solve.retrieval.builtin import STUDY_CHUNKS, STUDY_KB, ensure_builtin, study_documents, variant_name
from mathlens.solve.retrieval.configs import INLINE_HEADER
from mathlens.solve.retrieval.topics import detect_topics
from mathlens.testing.embeddings import hashed_embedding
from mathlens.testing.standin import StandinServer


@pytest.fixture(scope="module")
def home(mathlens_home: Path) -> Path:
    return mathlens_home


@pytest.fixture(scope="module")
def server() -> Iterator[StandinServer]:
    with StandinServer() as srv:
        yield srv


def _question(exam: str, needle: str) -> Question:
    items = load_items(str(builtin_exams()[exam]))
    return next(q for q in items.questions if needle in q.text)


def test_study_kb_cuts_longer_documents_into_overlapping_topic_tagged_chunks(home: Path) -> None:
    kb = ensure_builtin(STUDY_KB)
    docs = {d.id: d for d in study_documents()}
    assert kb.info.builtin and not kb.info.contextual and len(kb.info.sources) == len(docs) == 17
    assert (kb.info.chunk_size, kb.info.overlap) == (STUDY_CHUNKS.size, STUDY_CHUNKS.overlap)
    # Longer documents: every document is cut into several chunks, fewer chunks than notes.
    per_doc: dict[str, list] = {}
    for c in kb.chunks:
        per_doc.setdefault(c.doc_id, []).append(c)
    assert all(len(v) >= 2 for v in per_doc.values()) and 17 * 2 <= kb.info.n_chunks < 165
    for chunks in per_doc.values():
        for a, b in itertools.pairwise(chunks):
            assert len(a.text) <= STUDY_CHUNKS.size and b.start < a.end  # consecutive windows overlap
            assert docs[a.doc_id].text[b.start:a.end].strip() in a.text
    assert all(c.topics == detect_topics(c.text) for c in kb.chunks)
    assert ensure_builtin(STUDY_KB) is kb  # up to date: opened, not rebuilt


def test_topic_filter_keeps_chunks_on_the_questions_topics(home: Path) -> None:
    q = _question("calc3-exam2", "x^3 - 3*x + y^2")
    conf = get_configuration("rag", {"kb": STUDY_KB, "topic_filter": "question", "top_k": 4})
    built = conf.build(q, CALCULUS_STUDY_ROLE)
    r = built.retrieval
    assert r is not None and r.topic_filter == "question" and r.topics
    kb = ensure_builtin(STUDY_KB)
    on = [c for c in r.chunk_ids if set(r.topics) & set(kb.by_id[c].topics)]
    assert len(r.chunk_ids) == 4 and len(on) == 4 - r.off_topic
    unfiltered = get_configuration("rag", {"kb": STUDY_KB, "top_k": 4}).build(q, CALCULUS_STUDY_ROLE).retrieval
    assert unfiltered is not None and unfiltered.topic_filter == "none" and unfiltered.off_topic == 0


def test_a_question_without_known_topics_is_not_filtered(home: Path) -> None:
    q = Question(id="x", text="What number is seven more than five?", answers=["12"])
    with_filter = get_configuration("rag", {"kb": STUDY_KB, "topic_filter": "question"}).build(q, "").retrieval
    without = get_configuration("rag", {"kb": STUDY_KB}).build(q, "").retrieval
    assert with_filter is not None and without is not None
    assert with_filter.topics == [] and with_filter.chunk_ids == without.chunk_ids


@pytest.mark.server
@pytest.mark.parametrize(("spec", "route"), [("ollama/nomic-embed-text", "/api/embed"),
                                             ("openai/nomic-embed-text", "/v1/embeddings")])
def test_study_configuration_with_an_embedder_served_over_http(home: Path, server: StandinServer, spec: str,
                                                               route: str) -> None:
    url = server.url + ("/v1" if spec.startswith("openai/") else "")
    q = _question("calc1-exam2", "sin(x^3)")
    options = {"kb": STUDY_KB, "embedder": spec, "embedder_url": url, "topic_filter": "question", "top_k": 3}
    seen = len(server.state.requests)
    built = get_configuration("rag", options).build(q, CALCULUS_STUDY_ROLE)
    calls = server.state.requests[seen:]
    assert calls and all(c["path"] == route and c["body"]["model"] == "nomic-embed-text" for c in calls)
    embedded = [t for c in calls for t in c["body"]["input"]]
    assert q.prompt_text() in embedded  # the query went to the server too
    r = built.retrieval
    assert r is not None and r.embedder is not None and r.embedder.startswith(spec) and len(r.chunk_ids) == 3
    kb = ensure_builtin(STUDY_KB, spec, {"host" if spec.startswith("ollama/") else "base_url": url})
    assert kb.name == variant_name(STUDY_KB, spec) != STUDY_KB
    # The built-in default-embedder copy is untouched: two embedders never share a collection.
    assert ensure_builtin(STUDY_KB).info.embedder_identity == "local/all-MiniLM-L6-v2"
    # The stand-in's vectors are hashed bags of words: the ranking is the cosine order of those
    # vectors over the on-topic chunks, computed here without Chroma.
    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True)) / (
            sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5)

    qv = hashed_embedding(q.prompt_text())
    on_topic = [c for c in kb.chunks if set(r.topics or []) & set(c.topics)]
    expected = sorted(on_topic, key=lambda c: (-round(cos(qv, hashed_embedding(c.text)), 6), c.id))[:3]
    assert r.chunk_ids == [c.id for c in expected]


def test_inline_variant_on_the_study_kb_needs_no_contexts(home: Path) -> None:
    q = _question("calc1-exam2", "sin(x^3)")
    built = get_configuration("contextual", {"kb": STUDY_KB, "inline": "true", "inline_k": 5}).build(
        q, CALCULUS_STUDY_ROLE)
    r = built.retrieval
    assert r is not None and r.mode == "inline" and not r.contextual and len(r.chunk_ids) == 5
    user = built.messages[-1].content
    assert user.startswith(INLINE_HEADER) and "[1] source:" not in user
    kb = ensure_builtin(STUDY_KB)
    for cid in r.chunk_ids:
        assert kb.by_id[cid].text.strip() in user


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MATHLENS_HOME": str(home), "MATHLENS_CACHE_DIR": str(home / "cache")}
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.server
def test_kb_cli_builds_and_queries_the_study_kb_with_an_ollama_embedder(home: Path, server: StandinServer) -> None:
    out = _cli(home, "kb", "build", "--builtin", "--name", STUDY_KB, "--embedder", "ollama/nomic-embed-text",
               "--embedder-url", server.url, "--overwrite", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["name"] == variant_name(STUDY_KB, "ollama/nomic-embed-text")
    assert doc["embedder"] == "ollama/nomic-embed-text"
    assert (doc["chunk_size"], doc["overlap"]) == (STUDY_CHUNKS.size, STUDY_CHUNKS.overlap)
    assert doc["chunks"] == ensure_builtin(STUDY_KB).info.n_chunks and not doc["contextual"]
    hits = _cli(home, "kb", "query", STUDY_KB, "the chain rule", "--embedder", "ollama/nomic-embed-text",
                "--embedder-url", server.url, "-k", "2", "--json")
    assert hits.returncode == 0, hits.stderr
    assert len(json.loads(hits.stdout)["hits"]) == 2
    unreachable = _cli(home, "kb", "query", STUDY_KB, "x", "--embedder", "ollama/other-model",
                       "--embedder-url", "http://127.0.0.1:9")
    assert unreachable.returncode == 2 and "cannot reach" in unreachable.stderr
    assert "Traceback" not in unreachable.stderr
