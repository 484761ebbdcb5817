"""BM25, reciprocal rank fusion, the overlap reranker and retrieval metrics on hand-checked values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.errors import UnknownNameError, UserError
from mathlens.solve.retrieval.bm25 import BM25Index, tokenize
from mathlens.solve.retrieval.evaluate import evaluate, load_labelled, recall_at_k, reciprocal_rank
from mathlens.solve.retrieval.fusion import reciprocal_rank_fusion
from mathlens.solve.retrieval.rerank import apply_reranker, get_reranker
from mathlens.solve.retrieval.store import Hit

CASES = yaml.safe_load((Path(__file__).parents[1] / "cases" / "retrieval" / "ranking.yaml").read_text())


def _index() -> BM25Index:
    corpus = CASES["bm25"]["corpus"]
    return BM25Index.from_texts(list(corpus), list(corpus.values()))


def test_bm25_scores_match_hand_computation() -> None:
    idx = _index()
    want = CASES["bm25"]["scores"]
    got = dict(zip(idx.ids, idx.scores(CASES["bm25"]["query"]), strict=True))
    assert got == pytest.approx(want, abs=1e-6)
    assert [i for i, _ in idx.search(CASES["bm25"]["query"], 5)] == CASES["bm25"]["ranking"]


def test_bm25_rare_term_scores_higher() -> None:
    idx = _index()
    [(doc, score)] = idx.search(CASES["bm25"]["query_area"], 5)
    assert doc == "d2"
    assert score == pytest.approx(CASES["bm25"]["score_area_d2"], abs=1e-6)


def test_bm25_unknown_term_matches_nothing() -> None:
    assert _index().search("laplace transform", 3) == []


def test_tokenize_drops_stopwords_and_keeps_math_tokens() -> None:
    assert tokenize("Find the integral of x^2 from 0 to 3") == ["integral", "x", "2", "0", "3"]


@pytest.mark.parametrize("case", CASES["rrf"], ids=lambda c: c["name"])
def test_rrf(case: dict[str, Any]) -> None:
    got = reciprocal_rank_fusion(case["rankings"], k=case["k"])
    assert [i for i, _ in got] == [i for i, _ in case["expected"]]
    assert [s for _, s in got] == pytest.approx([s for _, s in case["expected"]], abs=1e-6)


def test_rrf_weights_and_errors() -> None:
    got = reciprocal_rank_fusion([["a"], ["b"]], k=0, weights=[1.0, 3.0])
    assert got == [("b", 3.0), ("a", 1.0)]
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])


def _hit(i: str, text: str, rank: int) -> Hit:
    return Hit(id=i, rank=rank, score=1.0 / rank, text=text, source="s", doc_id="d", title="")


def test_overlap_reranker_prefers_covering_chunks_and_keeps_order_among_equals() -> None:
    hits = [_hit("a", "limits of functions", 1), _hit("b", "chain rule derivative composition", 2),
            _hit("c", "derivative of products", 3)]
    out = apply_reranker("overlap", "chain rule derivative", hits, 2)
    assert [h.id for h in out] == ["b", "c"]
    assert [h.rank for h in out] == [1, 2]
    assert out[0].parts["overlap"] == 1.0


def test_reranker_by_import_path_and_unknown_names() -> None:
    fn = get_reranker("mathlens.solve.retrieval.rerank:overlap_rerank")
    assert callable(fn)
    with pytest.raises(UnknownNameError):
        get_reranker("crossencoder")
    with pytest.raises(UserError):
        get_reranker("mathlens.nowhere:fn")


def test_metrics() -> None:
    assert recall_at_k(["a", "b", "c", "d"], ["b", "d"], 2) == 0.5
    assert recall_at_k(["a"], ["z"], 10) == 0.0
    assert reciprocal_rank(["x", "y", "z"], ["z", "y"]) == 0.5
    assert reciprocal_rank([], ["a"]) == 0.0


def test_evaluate_averages_over_questions(tmp_path: Path) -> None:
    path = tmp_path / "qs.yaml"
    path.write_text(yaml.safe_dump({"questions": [
        {"id": "1", "text": "first question", "relevant": ["a"]},
        {"id": "2", "text": "second question", "relevant": ["b", "c"]}]}))
    qs = load_labelled(path)
    ranked = {"first question": ["a", "x"], "second question": ["x", "c", "b"]}
    q = evaluate(qs, lambda text: ranked[text], ks=(1, 2))
    assert q.recall == {1: 0.5, 2: 0.75}  # (1 + 0)/2 and (1 + 0.5)/2
    assert q.mrr == 0.75  # (1 + 1/2)/2
