"""Variant options, pairs, paraphrases, and how the planner uses them."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from mathlens.errors import UserError
from mathlens.items.schema import Part, Question
from mathlens.models.base import GenerateConfig
from mathlens.runs.plan import plan_tasks
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest
from mathlens.solve.ablation import AblationOptions, apply_edits, extract_elements, question_variants, text_variants
from mathlens.solve.ablation.elements import Edit

TABLE1 = "Find the gradient ∇f of f(x,y)=x^2 y at point (-1,4)"


def test_options_accept_aliases_and_reject_unknown_types() -> None:
    opts = AblationOptions.from_dict({"elements": ["keywords", "coordinates"]})
    assert opts.types == ("coordinate", "keyword")
    assert AblationOptions.from_dict({"elements": "numbers,symbols"}).types == ("coordinate", "notation")
    assert AblationOptions.from_dict(None).types == AblationOptions().types
    with pytest.raises(UserError, match=r"unknown element type 'keywrods'.*'keywords'"):
        AblationOptions.from_dict({"elements": ["keywrods"]})
    with pytest.raises(UserError, match="whole numbers"):
        AblationOptions.from_dict({"max_pairs": "many"})


def test_selected_types_only() -> None:
    names = [v.name for v in text_variants(TABLE1, {"elements": ["coordinates", "keywords"]})]
    assert names == ["coordinate-1", "keyword-1"]


def test_variant_records_element_and_meaning() -> None:
    by_name = {v.name: v for v in text_variants(TABLE1, {"elements": ["all"]})}
    assert by_name["coordinate-1"].kind == "ablation" and not by_name["coordinate-1"].meaning_preserving
    assert by_name["keyword-1"].meaning_preserving and by_name["notation-1"].meaning_preserving
    assert by_name["expression-1"].element_type == "expression"
    assert by_name["expression-1"].element_text == "f(x,y)=x^2 y"


def test_pairs_combine_two_single_ablations() -> None:
    singles = text_variants(TABLE1, {"elements": ["all"]})
    both = text_variants(TABLE1, {"elements": ["all"], "pairs": True})
    pairs = [v for v in both if v.kind == "pair"]
    assert len(pairs) == len(list(itertools.combinations(singles, 2))) == 6
    pair = next(v for v in pairs if v.name == "pair-coordinate-1+keyword-1")
    assert pair.question_text == "Compute the gradient ∇f of f(x,y)=x^2 y"
    assert pair.element_type == "coordinate+keyword" and not pair.meaning_preserving
    kw_notation = next(v for v in pairs if v.name == "pair-keyword-1+notation-1")
    assert kw_notation.meaning_preserving
    assert kw_notation.question_text == "Compute the gradient of f(x,y)=x^2 y at point (-1,4)"
    capped = text_variants(TABLE1, {"elements": ["all"], "pairs": True, "max_pairs": 2})
    assert sum(v.kind == "pair" for v in capped) == 2


def test_paraphrases_are_meaning_preserving_and_distinct() -> None:
    paras = [v for v in text_variants(TABLE1, {"elements": [], "paraphrases": True}) if v.kind == "paraphrase"]
    texts = [v.question_text for v in paras]
    assert texts == ["Please find the gradient ∇f of f(x,y)=x^2 y at point (-1,4)",
                     "What is the gradient ∇f of f(x,y)=x^2 y at point (-1,4)?",
                     f"Solve the following problem.\n\n{TABLE1}"]
    assert all(v.meaning_preserving and v.element_type == "paraphrase" for v in paras)
    assert len(text_variants(TABLE1, {"paraphrases": True, "max_paraphrases": 1})) == 4 + 1


def test_question_variants_use_the_full_prompt_with_parts() -> None:
    q = Question(id="q", text="Let f(x) = x^2.", parts=[Part(label="a", text="Find f'(3).")])
    variants = question_variants(q, {"elements": ["expression"]})
    assert [v.question_text for v in variants] == ["(a) Find f'(3)."]


def test_variants_are_deterministic_and_names_unique() -> None:
    text = "Let u = <1, 2> and v = <3, 4>. Find u . v and ||u||. Then find the angle at (0, 0)."
    a = text_variants(text, {"pairs": True, "paraphrases": True})
    b = text_variants(text, {"pairs": True, "paraphrases": True})
    assert a == b
    assert len({v.name for v in a}) == len(a)
    assert all(v.question_text and v.question_text != text for v in a)
    assert len({v.question_text for v in a}) == len(a)


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        apply_edits("abcdef", [Edit(0, 3), Edit(2, 4)])


def test_removal_at_sentence_start_recapitalises() -> None:
    text = "For f(x) = x^2, find the minimum."
    (expr,) = [e for e in extract_elements(text) if e.type == "expression"]
    assert apply_edits(text, expr.edits) == "Find the minimum."


def test_planner_adds_one_task_per_variant(tmp_path: Path) -> None:
    exam = tmp_path / "exam.yaml"
    exam.write_text(f"id: t\nname: T\nquestions:\n  - id: q1\n    text: '{TABLE1}'\n"
                    "  - id: q2\n    text: 'Differentiate sin(x)*cos(x)'\n", encoding="utf-8")
    manifest = base_manifest(items=[ItemSource(source=str(exam))], models=[ModelEntry(spec="mock/a")],
                             generate=GenerateConfig(max_tokens=16), system_role="S", runs=2,
                             ablation={"elements": ["all"], "pairs": False, "paraphrases": False})
    tasks = plan_tasks(manifest)
    assert len(tasks) == (1 + 4) * 2 + (1 + 2) * 2
    q1_texts = {t.messages[-1].content for t in tasks if t.question_id == "q1" and t.repeat == 0}
    assert "Compute the gradient ∇f of f(x,y)=x^2 y at point (-1,4)" in q1_texts and TABLE1 in q1_texts
