"""The reader limits: one table, each limit raisable by its variable, each listed in docs/limits.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.errors import UserError
from mathlens.items.jsonread import JsonLimitError, load_json, nesting_depth, within_depth
from mathlens.items.limits import ITEM_NESTING, LIMITS, SOURCE_ROWS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "limits.md"


def test_docs_list_every_limit_with_its_default() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for limit in LIMITS.values():
        assert f"`{limit.name.upper()}`" in text, limit.name


def test_a_limit_is_raised_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SOURCE_ROWS.value == SOURCE_ROWS.default
    monkeypatch.setenv("MATHLENS_LIMIT_SOURCE_ROWS", "1_000_000")
    assert SOURCE_ROWS.value == 1_000_000
    assert "MATHLENS_LIMIT_SOURCE_ROWS=N" in SOURCE_ROWS.exceeded("2 rows")
    for bad in ("0", "-3", "ten", "1e6", "9" * 30):
        monkeypatch.setenv("MATHLENS_LIMIT_SOURCE_ROWS", bad)
        with pytest.raises(UserError, match="MATHLENS_LIMIT_SOURCE_ROWS"):
            _ = SOURCE_ROWS.value


@pytest.mark.parametrize(("text", "depth"), [
    (b"5", 0), (b'"[[[["', 0), (b"[]", 1), (b'{"a": [1, {"b": []}]}', 4),
    (b'["\\"[", [[]]]', 3),            # an escaped quote does not end the string
    (b'["\\\\", [[]]]', 3),            # an escaped backslash before the closing quote
    (b'{"k": "}}}}]]]"}', 1), (b"[" * 5000 + b"]" * 5000, 5000),
])
def test_nesting_is_measured_outside_strings(text: bytes, depth: int) -> None:
    assert nesting_depth(text) == depth
    assert within_depth(text, depth) and (depth == 0 or not within_depth(text, depth - 1))


def test_nesting_agrees_with_the_parsed_value_on_mixed_documents() -> None:
    import json
    import random

    rng = random.Random(7)

    def make(level: int) -> object:
        if level == 0 or rng.random() < 0.3:
            return rng.choice(["a]b", 'q"[', "\\", 3, None, "{{"])
        if rng.random() < 0.5:
            return [make(level - 1) for _ in range(rng.randint(0, 3))]
        return {f"k{i}]": make(level - 1) for i in range(rng.randint(0, 3))}

    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    for _ in range(300):
        value = make(rng.randint(0, 8))
        assert nesting_depth(json.dumps(value).encode()) == depth(value)


def test_load_json_refuses_depth_and_non_finite_numbers() -> None:
    with pytest.raises(JsonLimitError, match="values nest 40 levels deep"):
        load_json(b"[" * 40 + b"]" * 40, ITEM_NESTING.default)
    for text in (b'{"a": NaN}', b"[Infinity]", b"[-Infinity]", b"[1e999]"):
        with pytest.raises(JsonLimitError, match="finite"):
            load_json(text, 10, finite=True)
    assert load_json(b'{"a": [1.5, "NaN"]}', 10, finite=True) == {"a": [1.5, "NaN"]}


def test_reading_holds_the_values_for_one_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathlens.items.limits import reading

    monkeypatch.setenv("MATHLENS_LIMIT_SOURCE_ROWS", "7")
    with reading() as held:
        assert held["source_rows"] == SOURCE_ROWS.value == 7
        monkeypatch.setenv("MATHLENS_LIMIT_SOURCE_ROWS", "9")  # read once: the file keeps its limits
        assert SOURCE_ROWS.value == 7
    assert SOURCE_ROWS.value == 9
