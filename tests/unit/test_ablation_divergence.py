"""Divergence measures on hand-worked case tables (tests/cases/ablation/divergence/)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.ablation.divergence import (
    divergences,
    pairwise_cosines,
    sequence_distance,
    tfidf_cosines,
    token_levenshtein,
    tokenize,
)

DIR = Path(__file__).resolve().parents[1] / "cases" / "ablation" / "divergence"


def _load(name: str) -> list[Any]:
    return [pytest.param(c, id=c["id"]) for c in yaml.safe_load((DIR / name).read_text(encoding="utf-8"))]


@pytest.mark.parametrize("case", _load("cosine.yaml"))
def test_cosine(case: dict[str, Any]) -> None:
    (got,) = tfidf_cosines(case["reference"], [case["other"]]).values
    if case["cosine"] is None:
        assert got is None
    else:
        assert got == pytest.approx(case["cosine"], abs=1e-6)


@pytest.mark.parametrize("case", _load("levenshtein.yaml"))
def test_levenshtein(case: dict[str, Any]) -> None:
    assert token_levenshtein(case["a"], case["b"]) == pytest.approx(case["distance"], abs=1e-6)
    assert token_levenshtein(case["b"], case["a"]) == pytest.approx(case["distance"], abs=1e-6)


@pytest.mark.parametrize("case", _load("patterns.yaml"))
def test_pattern_distance(case: dict[str, Any]) -> None:
    assert sequence_distance(case["a"], case["b"]) == pytest.approx(case["distance"], abs=1e-6)


def test_vectoriser_is_fitted_on_all_texts_of_the_question() -> None:
    # Three texts: "a" and "c" each appear in two, "b" in one, so
    # idf(a) = idf(c) = ln(4/3) + 1 and idf(b) = ln(4/2) + 1.
    (cos_ab, _) = tfidf_cosines("a b", ["a c", "c"]).values
    ia, ib = math.log(4 / 3) + 1, math.log(2) + 1
    expected = ia**2 / (math.sqrt(ia**2 + ib**2) * math.sqrt(2 * ia**2))
    assert cos_ab == pytest.approx(expected, abs=1e-9)
    assert tfidf_cosines("a b", ["a c"]).values[0] != pytest.approx(expected, abs=1e-3)


def test_pairwise_cosines_of_repeats() -> None:
    assert pairwise_cosines(["same text", "same text", "same text"]) == pytest.approx([1.0, 1.0, 1.0])
    assert pairwise_cosines(["one"]) == []
    assert pairwise_cosines(["p q", "r s"]) == [0.0]


def test_tokenizer_keeps_math_tokens() -> None:
    assert tokenize("∇f = <-8, 1>; |v| = √65") == ["∇", "f", "=", "<", "-", "8", "1", ">", "|", "v", "|", "=",
                                                  "√", "65"]
    assert tokenize("3.14 and x^2") == ["3.14", "and", "x", "^", "2"]


def test_divergences_match_the_single_measures() -> None:
    ref, others = "x = 2 so y = 4", ["x = 3 so y = 9", "", "x = 2 so y = 4"]
    m = divergences(ref, others)
    assert m.cosines == tfidf_cosines(ref, others).values
    assert m.levenshtein == tuple(token_levenshtein(ref, o) for o in others)
    assert m.levenshtein[1] == 1.0 and m.levenshtein[2] == 0.0
