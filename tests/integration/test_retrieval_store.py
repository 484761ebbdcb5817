"""Knowledge bases end to end with the real offline embedder and real embedded Chroma: build,
reopen, query the same results, embedder mismatch, contextual indexing, and the `kb` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.errors import UnknownNameError, UserError
from mathlens.models.base import Message
from mathlens.solve.retrieval.build import BuildOptions, build_kb
from mathlens.solve.retrieval.chunking import ChunkSettings
from mathlens.solve.retrieval.store import list_kbs, open_kb, release_clients, remove_kb

CASES = Path(__file__).parents[1] / "cases" / "retrieval"
CORPUS = CASES / "corpus"
QUERIES = yaml.safe_load((CASES / "queries.yaml").read_text())


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("mlhome")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MATHLENS_HOME", str(root))
        mp.setenv("MATHLENS_CACHE_DIR", str(root / "cache"))
        build_kb("notes", [CORPUS], BuildOptions(chunks=ChunkSettings(size=300, overlap=60)))
        yield root
        release_clients()


@pytest.fixture
def kb_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MATHLENS_HOME", str(home))
    return home


@pytest.mark.parametrize("case", [c for group in QUERIES.values() for c in group], ids=lambda c: c["query"][:40])
def test_embedding_search_finds_the_right_document(kb_env: Path, case: dict[str, Any]) -> None:
    hits = open_kb("notes").search(case["query"], k=3)
    assert hits[0].doc_id == case["top_doc"]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].score >= hits[1].score >= hits[2].score
    assert -1.0 <= hits[-1].score <= 1.0


def test_reopened_knowledge_base_gives_identical_results(kb_env: Path) -> None:
    queries = [c["query"] for group in QUERIES.values() for c in group]
    before = {q: [(h.id, h.score) for h in open_kb("notes").search(q, k=4, mode=m)]
              for q in queries for m in ("embedding",)}
    release_clients()  # drop every in-process handle: the next open reads the files again
    after = {q: [(h.id, h.score) for h in open_kb("notes").search(q, k=4)] for q in queries}
    assert after == before
    info = json.loads((kb_env / "kb" / "notes" / "kb.json").read_text())
    assert info["embedder_identity"] == "local/all-MiniLM-L6-v2"
    assert info["n_chunks"] == len(open_kb("notes").chunks)
    assert {s["doc_id"] for s in info["sources"]} == {"derivatives", "integrals", "series"}


def test_chunks_are_tied_to_source_and_position(kb_env: Path) -> None:
    kb = open_kb("notes")
    for c in kb.chunks:
        src = (CORPUS / c.source).read_text()
        assert src[c.start:c.end].strip() == c.text
        assert c.id == f"{c.doc_id}#{c.index}"


def test_querying_with_another_embedder_is_refused(kb_env: Path) -> None:
    kb = open_kb("notes")
    with pytest.raises(UserError, match="embedded with local/all-MiniLM-L6-v2"):
        kb.search("product rule", embedder="ollama/nomic-embed-text")
    assert kb.search("product rule", embedder="local/all-MiniLM-L6-v2")  # the same one is fine


def test_plain_knowledge_base_has_no_contextual_index(kb_env: Path) -> None:
    with pytest.raises(UserError, match="--contextual"):
        open_kb("notes").search("product rule", contextual=True)


def test_existing_name_needs_overwrite_and_unknown_names_suggest(kb_env: Path) -> None:
    with pytest.raises(UserError, match="--overwrite"):
        build_kb("notes", [CORPUS], BuildOptions())
    with pytest.raises(UnknownNameError, match="notes"):
        open_kb("note")


def test_topic_filter_at_build_drops_off_topic_text(kb_env: Path) -> None:
    opts = BuildOptions(chunks=ChunkSettings(size=300, overlap=0, topics=("integration-techniques",)))
    info = build_kb("integration-only", [CORPUS], opts)
    kb = open_kb("integration-only")
    assert info.topics == ["integration-techniques"]
    assert {c.doc_id for c in kb.chunks} == {"integrals"}
    assert not any("Office hours" in c.text for c in kb.chunks)
    remove_kb("integration-only")
    assert "integration-only" not in [i.name for i in list_kbs()]


def _context_for(messages: list[Message]) -> str:
    """A scripted context writer: names the rule that the passage states."""
    passage = messages[-1].content.split("<passage>")[1]
    for rule in ("product rule", "quotient rule", "chain rule", "by parts", "partial fractions",
                 "geometric", "ratio test"):
        if rule in passage.lower():
            return f"Context: this passage explains the {rule} (calculus course notes)."
    return "Context: course administration."


def test_contextual_build_prefixes_contexts_and_fuses_rankings(kb_env: Path) -> None:
    opts = BuildOptions(chunks=ChunkSettings(size=300, overlap=60), contextual=True,
                        context_model="mock/contexts", context_model_options={"func": _context_for})
    info = build_kb("notes-ctx", [CORPUS], opts)
    assert info.contextual and info.context is not None
    assert info.context.calls == info.n_chunks and info.context.fallbacks == 0
    kb = open_kb("notes-ctx")
    ctx = {c.id: c.context for c in kb.chunks}
    assert all(v and not v.lower().startswith("context:") for v in ctx.values())  # prefix cleaned
    # "calculus" occurs only in the generated contexts, so BM25 finds it only with them.
    assert kb.search("calculus", k=3, mode="bm25") == []
    lex = kb.search("calculus", k=3, mode="bm25", contextual=True)
    assert len(lex) == 3 and all(h.context and "calculus" in h.context for h in lex)
    fused = kb.search("which rule differentiates a quotient", k=3, mode="hybrid", contextual=True)
    assert fused[0].id == next(c.id for c in kb.chunks if "quotient rule" in c.text)
    assert set(fused[0].parts) <= {"embedding", "bm25"} and fused[0].parts
    # A rebuild reuses every context from the response cache: no new model calls.
    again = build_kb("notes-ctx", [CORPUS], BuildOptions(**{**opts.__dict__, "overwrite": True}))
    assert again.context is not None and again.context.calls == 0
    assert again.context.cache_hits == info.n_chunks


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MATHLENS_HOME": str(home), "MATHLENS_CACHE_DIR": str(home / "cache")}
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cli_list_and_query_from_a_fresh_process(kb_env: Path) -> None:
    same = open_kb("notes").search("the ratio test for series", k=2, mode="hybrid")
    out = _cli(kb_env, "kb", "query", "notes", "the ratio test for series", "--mode", "hybrid", "-k", "2",
               "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [h["id"] for h in doc["hits"]] == [h.id for h in same]
    listed = json.loads(_cli(kb_env, "kb", "list", "--json").stdout)
    assert "notes" in [k["name"] for k in listed["knowledge_bases"]]
    bad = _cli(kb_env, "kb", "query", "notes", "x", "--embedder", "ollama/nomic-embed-text")
    assert bad.returncode == 2 and "cannot be queried" in bad.stderr
