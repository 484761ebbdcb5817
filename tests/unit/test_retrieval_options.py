"""Configuration options for rag/contextual are validated before any knowledge base is touched."""

from __future__ import annotations

import pytest

from mathlens.errors import UnknownNameError, UserError
from mathlens.solve.retrieval.configs import RetrievalOptions, format_inline, format_marked
from mathlens.solve.retrieval.store import Hit, check_name


def test_defaults_and_string_values_from_the_command_line() -> None:
    o = RetrievalOptions.parse({}, "embedding")
    assert (o.kb, o.top_k, o.mode, o.inline, o.rerank) == ("calculus", 4, "embedding", False, None)
    o = RetrievalOptions.parse({"top_k": "6", "inline": "true", "mode": "bm25", "kb": "notes"}, "hybrid")
    assert (o.kb, o.top_k, o.mode, o.inline) == ("notes", 6, "bm25", True)


@pytest.mark.parametrize("options", [{"top_k": 0}, {"top_k": "many"}, {"inline": "perhaps"},
                                     {"candidates": -3}])
def test_bad_values_are_user_errors(options: dict[str, object]) -> None:
    with pytest.raises(UserError):
        RetrievalOptions.parse(options, "embedding")


def test_unknown_mode_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="hybrid"):
        RetrievalOptions.parse({"mode": "hybird"}, "embedding")


@pytest.mark.parametrize("name", ["a", "-x", "has space", "x" * 70, "ends-"])
def test_bad_kb_names(name: str) -> None:
    with pytest.raises(UserError):
        check_name(name)


def test_prompt_blocks_carry_source_markers() -> None:
    hits = [Hit(id="der-chain-rule", rank=1, score=0.9, text="## Chain rule\n(f(g(x)))' = ...",
                source="04_derivative_rules.yaml", doc_id="d", title="Chain rule")]
    marked = format_marked(hits, "calculus")
    assert "[1] source: 04_derivative_rules.yaml, chunk der-chain-rule (Chain rule)" in marked
    assert "## Chain rule" in format_inline(hits) and "[1]" not in format_inline(hits)
