"""The three configurations on a built-in exam: messages, stored retrieval, and a real run with the
embedded model (the built-in knowledge base is built from nothing in a temporary home)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.items.loaders import builtin_exams, load_items
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from mathlens.solve.configurations import get_configuration
from mathlens.solve.prompts import EXAM_SYSTEM_ROLE
from mathlens.solve.retrieval.builtin import BUILTIN_KB, ensure_builtin
from mathlens.solve.retrieval.configs import INLINE_HEADER

EXAM = "calc1-exam2"


@pytest.fixture(scope="module")
def home(mathlens_home: Path) -> Path:
    return mathlens_home


@pytest.fixture
def env(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MATHLENS_HOME", str(home))
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(home / "cache"))
    return home


def _quotient_question() -> Question:
    exam = load_items(str(builtin_exams()[EXAM]))
    return next(q for q in exam.questions if "(x^2 + 1)/(x - 1)" in q.text)


def test_builtin_kb_is_built_on_first_use_without_model_calls(env: Path) -> None:
    assert not (env / "kb" / BUILTIN_KB).exists()
    kb = ensure_builtin()
    assert kb.info.builtin and kb.info.contextual and kb.info.n_chunks >= 120
    assert kb.info.context is not None and kb.info.context.calls == 0
    assert kb.info.context.shipped + kb.info.context.structural == kb.info.n_chunks
    assert ensure_builtin() is kb  # up to date: opened, not rebuilt


def test_three_configurations_build_traceable_messages(env: Path) -> None:
    q = _quotient_question()
    built = {name: get_configuration(name, {"top_k": 3}).build(q, EXAM_SYSTEM_ROLE)
             for name in ("baseline", "rag", "contextual")}
    assert built["baseline"].retrieval is None
    assert "Reference material" not in built["baseline"].messages[-1].content
    for name in ("rag", "contextual"):
        r = built[name].retrieval
        assert r is not None and r.kb == BUILTIN_KB and len(r.chunk_ids) == 3
        assert len(r.scores) == len(r.texts) == len(r.sources) == 3
        assert "der-quotient-rule" in r.chunk_ids, (name, r.chunk_ids)
        user = built[name].messages[-1].content
        for i, (cid, src) in enumerate(zip(r.chunk_ids, r.sources, strict=True), start=1):
            assert f"[{i}] source: {src}, chunk {cid}" in user
        assert user.rstrip().endswith(q.prompt_text().strip())
    rag, contextual = built["rag"].retrieval, built["contextual"].retrieval
    assert rag is not None and rag.mode == "embedding"
    assert contextual is not None and contextual.mode == "hybrid" and contextual.contexts is not None


def test_inline_variant_places_on_topic_notes_in_one_block(env: Path) -> None:
    q = _quotient_question()
    built = get_configuration("contextual", {"inline": "true", "inline_k": 4}).build(q, EXAM_SYSTEM_ROLE)
    r = built.retrieval
    assert r is not None and r.mode == "inline" and len(r.chunk_ids) == 4
    assert r.topics is not None and "derivatives" in r.topics
    kb = ensure_builtin()
    assert all("derivatives" in kb.by_id[c].topics for c in r.chunk_ids)
    assert built.messages[-1].content.startswith(INLINE_HEADER)
    assert "[1] source:" not in built.messages[-1].content
    # Ranked by the same embedding search as rag (the study embedded both alike), shown in note order.
    ranked = [h.id for h in kb.search(q.prompt_text(), k=len(kb.chunks))]
    on_topic = [c for c in ranked if set(r.topics) & set(kb.by_id[c].topics)]
    assert set(r.chunk_ids) == set(on_topic[:4]) and r.off_topic == 0
    order = [(kb.by_id[c].doc_id, kb.by_id[c].start) for c in r.chunk_ids]
    assert order == sorted(order)


def test_unreachable_embedder_for_builtin_kb_is_a_clear_error(env: Path) -> None:
    from mathlens.errors import UserError

    conf = get_configuration("rag", {"embedder": "ollama/nomic-embed-text", "embedder_url": "http://127.0.0.1:9"})
    with pytest.raises(UserError, match="cannot reach"):
        conf.build(_quotient_question(), EXAM_SYSTEM_ROLE)


@pytest.mark.embedded
async def test_run_all_three_configurations_with_the_embedded_model(env: Path, gemma_model_path: Path,
                                                                   tmp_path: Path) -> None:
    manifest = base_manifest(
        items=[ItemSource(source=str(builtin_exams()[EXAM]), limit=1)],
        models=[ModelEntry(spec="embedded/gemma3-270m")],
        configurations=["baseline", "rag", "contextual"], configuration_options={"top_k": 2},
        generate=GenerateConfig(max_tokens=24, stop=("<end_of_turn>",)), system_role=EXAM_SYSTEM_ROLE)
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    retry = RetryPolicy(max_attempts=1, timeout_s=240)
    result = await execute(store, manifest, build_models(manifest, None, retry, concurrency=1))
    assert result.written == 3 and result.errors == 0
    records = {r.configuration: r for r in RunStore(tmp_path / "run").records()}
    assert set(records) == {"baseline", "rag", "contextual"}
    assert records["baseline"].retrieval is None
    for name in ("rag", "contextual"):
        rec = records[name]
        assert rec.status == "ok" and rec.response is not None
        assert rec.retrieval is not None and len(rec.retrieval.chunk_ids) == 2
        assert rec.retrieval.chunk_ids[0] in rec.messages[-1].content
    # Retrieval made the prompts longer than the baseline's.
    assert records["rag"].usage.prompt_tokens > records["baseline"].usage.prompt_tokens
