"""Word-level ablation: the case table in tests/cases/ablation/words/, the options that select it, the
stop-word list, and word variants flowing through the planner and the sensitivity analysis."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.ablation import SensitivityConfig, question_sensitivity
from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.ablation.divergence import tfidf_cosines
from mathlens.analyze.registry import run_one
from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.plan import plan_tasks
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, execute
from mathlens.runs.store import RunStore
from mathlens.solve.ablation import (
    DEFAULT_MAX_WORDS,
    ELEMENT_TYPES,
    KEYWORD_SYNONYMS,
    AblationOptions,
    apply_edits,
    stop_words,
    text_variants,
    word_elements,
)
from mathlens.solve.ablation.segments import split_text

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "ablation" / "words"
CASE_LIST: list[tuple[str, dict[str, Any]]] = [
    (path.stem, case) for path in sorted(CASES_DIR.glob("*.yaml"))
    for case in yaml.safe_load(path.read_text(encoding="utf-8"))]
CASES = [pytest.param(case, id=f"{stem}:{case['id']}") for stem, case in CASE_LIST]
SECTION_6_1: str = next(case["text"] for _, case in CASE_LIST if case["id"] == "study-6-1-gradient")


def _options(case: dict[str, Any]) -> dict[str, Any]:
    return {"elements": ["words"], "max_words": case.get("max_words", DEFAULT_MAX_WORDS)}


def test_case_table_covers_the_cap_math_and_order() -> None:
    ids = {case["id"] for _, case in CASE_LIST}
    assert len(CASE_LIST) >= 10
    assert {"study-6-1-gradient", "study-6-1-capped", "latex-text-left-alone", "reading-order"} <= ids


@pytest.mark.parametrize("case", CASES)
def test_words_chosen(case: dict[str, Any]) -> None:
    got = word_elements(case["text"], case.get("max_words", DEFAULT_MAX_WORDS))
    assert [e.text for e in got] == case["words"]
    assert all(e.type == "word" and e.action == "remove" and not e.meaning_preserving for e in got)


@pytest.mark.parametrize("case", CASES)
def test_word_variant_texts(case: dict[str, Any]) -> None:
    variants = {v.name: v for v in text_variants(case["text"], _options(case))}
    for name, expected in (case.get("variants") or {}).items():
        assert name in variants, f"no variant {name}; have {sorted(variants)}"
        assert variants[name].question_text == expected
        assert variants[name].element_type == "word" and variants[name].kind == "ablation"
    for name in case.get("absent") or []:
        assert name not in variants


@pytest.mark.parametrize("case", CASES)
def test_word_edits_stay_out_of_math(case: dict[str, Any]) -> None:
    text = case["text"]
    math = [(s.start, s.end) for s in split_text(text) if s.kind == "math"]
    for element in word_elements(text, 50):
        for edit in element.edits:
            assert not any(edit.start < e and s < edit.end for s, e in math), (element.text, edit)
            assert element.text in text[edit.start:edit.end].lower()


def test_section_6_1_words_include_the_studys_list_and_every_occurrence_goes() -> None:
    words = {v.element_text: v for v in text_variants(SECTION_6_1, {"elements": ["words"]})}
    assert {"directional", "maximum"} <= set(words)
    direction = words["direction"].question_text or ""
    assert SECTION_6_1.count("direction ") == 2 and "direction " not in direction
    assert direction.count("directional") == 1
    # Math is untouched: every LaTeX span of the original is still there.
    assert r"$\overrightarrow{w}=-\widehat{𝚤}+\widehat{𝚥}$" in direction


def test_all_keeps_its_meaning_and_words_are_asked_for_by_name() -> None:
    assert AblationOptions.from_dict({"elements": ["all"]}).types == ELEMENT_TYPES
    assert "word" not in AblationOptions.from_dict(None).types
    assert AblationOptions.from_dict({"elements": "words"}).types == ("word",)
    assert AblationOptions.from_dict({"elements": ["word"]}).types == ("word",)
    assert AblationOptions.from_dict({"elements": ["words", "all"]}).types == (*ELEMENT_TYPES, "word")
    assert AblationOptions.from_dict({"elements": "content_words,keywords"}).types == ("keyword", "word")
    assert AblationOptions.from_dict({}).max_words == DEFAULT_MAX_WORDS
    assert AblationOptions.from_dict({"max_words": 3}).max_words == 3
    assert AblationOptions.from_dict({"max_words": -2}).max_words == 0
    with pytest.raises(UserError, match="max_words"):
        AblationOptions.from_dict({"max_words": "several"})
    with pytest.raises(UserError, match=r"unknown element type 'wrods'.*'words'"):
        AblationOptions.from_dict({"elements": ["all", "wrods"]})
    everything = text_variants(SECTION_6_1, {"elements": ["all", "words"]})
    typed = text_variants(SECTION_6_1, {"elements": ["all"]})
    assert [v.name for v in everything if v.element_type != "word"] == [v.name for v in typed]
    assert [v.name for v in everything if v.element_type == "word"] == [f"word-{i}" for i in range(1, 9)]


def test_stop_words_are_package_data_of_function_words_only() -> None:
    words = stop_words()
    assert {"the", "of", "at", "and", "is", "not", "which", "with"} <= words
    assert all(w == w.lower() and w.isalpha() for w in words)
    # No content word of the study's list, and no instruction verb (those are keyword elements).
    assert not words & {"directional", "maximum", "derivative", "gradient", "rate", "change"}
    assert not words & set(KEYWORD_SYNONYMS)


def test_words_are_deterministic_and_repeat_free() -> None:
    options = {"elements": ["all", "words"], "pairs": True, "max_pairs": 200}
    a = text_variants(SECTION_6_1, options)
    assert a == text_variants(SECTION_6_1, options)
    assert len({v.question_text for v in a}) == len(a) and len({v.name for v in a}) == len(a)
    pair = next(v for v in a if v.name == "pair-word-1+word-6")
    assert "directional" not in (pair.question_text or "") and "maximum" not in (pair.question_text or "")


def test_a_removed_word_takes_one_blank_beside_it() -> None:
    text = "Find the maximum value, then the minimum value of g."
    by_word = {e.text: e for e in word_elements(text)}
    assert list(by_word) == ["maximum", "value", "minimum"]
    assert apply_edits(text, by_word["maximum"].edits) == "Find the value, then the minimum value of g."
    # Before a comma the blank in front goes; before a word the blank after it.
    assert apply_edits(text, by_word["value"].edits) == "Find the maximum, then the minimum of g."


def test_planner_sends_one_task_per_word_up_to_the_cap(tmp_path: Path) -> None:
    exam = tmp_path / "exam.yaml"
    exam.write_text("id: t\nname: T\nquestions:\n  - id: q1\n    text: 'Find the maximum rate of change of f.'\n",
                    encoding="utf-8")
    manifest = base_manifest(items=[ItemSource(source=str(exam))], models=[ModelEntry(spec="mock/a")],
                             generate=GenerateConfig(max_tokens=16), system_role="S",
                             ablation={"elements": ["words"], "max_words": 2})
    tasks = plan_tasks(manifest)
    assert [t.variant.name for t in tasks] == ["original", "word-1", "word-2"]
    assert [t.variant.element_text for t in tasks[1:]] == ["maximum", "rate"]
    assert tasks[2].messages[-1].content == "Find the maximum of change of f."


# -- word variants through the sensitivity analysis --------------------------------------------

ANSWER = "1. The gradient is <2xy, x^2>.\n2. At (-1,4) it is <-8, 1>.\nFinal answer: <-8, 1>"
OFF_TOPIC = "Without that word the question reads differently.\nFinal answer: unclear"


def _solver(messages: list[Message]) -> str:
    """Answers the same unless 'directional' was removed from the prompt."""
    return ANSWER if "directional" in messages[-1].content else OFF_TOPIC


def test_word_variants_are_ranked_by_the_sensitivity_analysis(tmp_path: Path, mock_model: Any) -> None:
    exam = tmp_path / "exam.yaml"
    exam.write_text(yaml.safe_dump({"id": "t", "name": "T", "questions": [{"id": "q1", "text": SECTION_6_1}]}),
                    encoding="utf-8")
    manifest = base_manifest(items=[ItemSource(source=str(exam))], models=[ModelEntry(spec="mock/solver")],
                             generate=GenerateConfig(max_tokens=64), system_role="S",
                             ablation={"elements": ["words"], "max_words": 8})
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    asyncio.run(execute(store, manifest, {"mock/solver": mock_model(func=_solver, name="solver")}))
    run_one(store, "sensitivity", {"flow": False, "n_resamples": 0})
    (q,) = list(SENSITIVITY.entries(store.root))
    assert q.status == "ok" and q.n_ablations == 8
    # By hand: seven variants answer word for word like the original (cosine 1, impact 0); removing
    # 'directional' gives OFF_TOPIC, whose impact is 1 - cos(ANSWER, OFF_TOPIC) under the fitted vectoriser.
    cos = tfidf_cosines(ANSWER, [OFF_TOPIC] + [ANSWER] * 7).values[0]
    assert cos is not None and cos < 0.5
    top = q.impact[0]
    assert (top.rank, top.element_type, top.element_text) == (1, "word", "directional")
    assert top.impact == pytest.approx(1 - cos)
    assert {i.element_text for i in q.impact[1:]} == {"derivative", "direction", "rapid", "increase", "maximum",
                                                        "rate", "change"}
    assert all(i.element_type == "word" and i.impact == pytest.approx(0.0, abs=1e-9) for i in q.impact[1:])
    assert (q.ps_element_type, q.ps_element_text) == ("word", "directional")
    assert q.robustness == pytest.approx((cos + 7) / 8)


def test_question_sensitivity_reads_word_records_like_any_ablation() -> None:
    question = Question(id="q1", text=SECTION_6_1)
    variants = text_variants(SECTION_6_1, {"elements": ["words"], "max_words": 2})
    from datetime import UTC, datetime

    from mathlens.runs.records import RunRecord, Variant

    def rec(response: str, variant: Variant) -> RunRecord:
        return RunRecord(key=f"m|b|e|q1|{variant.name}|r0", model="m", configuration="b", exam_id="e",
                         question_id="q1", variant=variant, messages=[Message(role="user", content="x")],
                         config=GenerateConfig(), request_hash="h", content_hash="c", response=response,
                         created_at=datetime.now(UTC))

    records = [rec(ANSWER, Variant()), rec(OFF_TOPIC, variants[0]), rec(ANSWER, variants[1])]
    q = question_sensitivity(records, question, SensitivityConfig(flow=False))
    assert [(i.element_type, i.element_text) for i in q.impact] == [("word", "directional"), ("word", "derivative")]
    assert q.answer_flip_rate is not None and q.answer_pairs.compared == 2
