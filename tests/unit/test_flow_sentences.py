"""The segmenter's sentence rule (`mathlens.analyze.flow.sentences`) on the case table
tests/cases/flow/sentences.yaml, by phenomenon; where spaCy is installed, spaCy's own
sentencizer must cut every case the same way (the rule is spaCy's, without importing it)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.flow.segment import segment_steps
from mathlens.analyze.flow.sentences import sentence_spans

CASES = yaml.safe_load((Path(__file__).parents[1] / "cases" / "flow" / "sentences.yaml").read_text(encoding="utf-8"))
ROWS = [pytest.param(case, id=f"{group}-{i}") for group, cases in CASES.items() for i, case in enumerate(cases)]


@pytest.mark.parametrize("case", ROWS)
def test_the_rule_cuts_each_case_as_written(case: dict[str, Any]) -> None:
    text = case["text"]
    assert [text[a:b] for a, b in sentence_spans(text)] == case["sentences"]


@pytest.mark.skipif(importlib.util.find_spec("spacy") is None, reason="spaCy is not installed (the dev extra)")
@pytest.mark.parametrize("case", ROWS)
def test_spacy_cuts_each_case_the_same_way(case: dict[str, Any], spacy_sentencizer: Any) -> None:
    assert [s.text for s in spacy_sentencizer(case["text"]).sents] == case["sentences"]


@pytest.fixture(scope="module")
def spacy_sentencizer() -> Any:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def test_a_long_block_is_grouped_back_into_steps_of_at_most_600_characters() -> None:
    sentence = "We note that the value is 2 and so it holds. "
    steps = segment_steps(sentence * 100)
    assert len(steps) > 1 and all(len(s.text) <= 600 for s in steps)
    assert all(s.text.endswith("holds.") for s in steps)  # cut between sentences, not inside one


def test_segmenting_prose_imports_no_language_toolkit() -> None:
    code = ("import sys; from mathlens.analyze.flow.segment import segment_steps; "
            "segment_steps('It holds. ' * 200); "
            "print(sorted(m for m in ('spacy', 'thinc', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
