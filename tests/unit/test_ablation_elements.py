"""Element extraction and variant texts on the case tables in tests/cases/ablation/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.solve.ablation import extract_elements, text_variants

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "ablation"


def _cases() -> list[Any]:
    out = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")):
            out.append(pytest.param(case, id=f"{path.stem}:{case['id']}"))
    return out


CASES = _cases()


def test_case_tables_are_large_and_varied() -> None:
    texts = {c.values[0]["text"] for c in CASES}
    assert len(texts) >= 40
    types = {t for c in CASES for t, _ in c.values[0]["elements"]}
    assert types == {"coordinate", "expression", "keyword", "notation", "linguistic"}


@pytest.mark.parametrize("case", CASES)
def test_elements(case: dict[str, Any]) -> None:
    got = [[e.type, e.text] for e in extract_elements(case["text"])]
    assert got == case["elements"]


@pytest.mark.parametrize("case", CASES)
def test_variant_texts(case: dict[str, Any]) -> None:
    variants = {v.name: v for v in text_variants(case["text"], {"elements": ["all"]})}
    for name, expected in (case.get("variants") or {}).items():
        assert name in variants, f"no variant {name}; have {sorted(variants)}"
        assert variants[name].question_text == expected
    for name in case.get("absent") or []:
        assert name not in variants
    if case.get("exact"):
        assert len(variants) == len(case["elements"])
        assert [(v.element_type, v.element_text) for v in variants.values()] == \
            [tuple(e) for e in case["elements"]]
