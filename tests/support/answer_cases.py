"""The answer-checking case tables of tests/cases/answers/, read case by case and counted by
phenomenon (the map is tests/cases/answers/phenomena.yaml). Used by
tests/unit/test_answers_phenomena.py and scripts/count_answer_cases.py.

One case is one expected verdict: a whole response against one reference it must equal (`right`)
or must not equal (`wrong`); an answer pair [predicted, reference, equal?]; a whole response of
conventions.yaml under one setting (the default rule, then its switch: two cases).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

CASES = Path(__file__).resolve().parents[1] / "cases" / "answers"
RESPONSE_TABLES = ("responses_reading", "responses_comparing")
PAIR_TABLES = ("pairs_comparing",)
CONVENTION_TABLES = ("conventions",)
TABLES = RESPONSE_TABLES + PAIR_TABLES + CONVENTION_TABLES


@dataclass(frozen=True)
class Case:
    """One expected verdict; `whole` when the text is a whole response, `setting` the
    EquivalenceConfig fields it is checked with (empty: the defaults)."""

    table: str
    group: str
    text: str
    reference: str
    equal: bool
    whole: bool
    setting: tuple[tuple[str, Any], ...] = ()


@cache
def load(table: str) -> dict[str, Any]:
    """One table as read (cached: callers must not change it)."""
    data: dict[str, Any] = yaml.safe_load((CASES / f"{table}.yaml").read_text(encoding="utf-8"))
    return data


def cases(table: str) -> list[Case]:
    """Every case of one table, in order."""
    out: list[Case] = []
    for group, rows in load(table).items():
        if table in RESPONSE_TABLES:
            for row in rows:
                out += [Case(table, group, row["response"], r, True, True) for r in row["right"]]
                out += [Case(table, group, row["response"], r, False, True) for r in row["wrong"]]
        elif table in PAIR_TABLES:
            out += [Case(table, group, str(p), str(r), bool(e), False) for p, r, e in rows]
        else:
            switch = tuple(sorted(rows["switch"].items()))
            for row in rows["cases"]:
                out.append(Case(table, group, row["response"], row["reference"], bool(row["default"]), True))
                out.append(Case(table, group, row["response"], row["reference"], bool(row["switched"]), True,
                                switch))
    return out


def all_cases() -> list[Case]:
    return [c for t in TABLES for c in cases(t)]


def phenomena() -> dict[str, dict[str, list[str]]]:
    """Section -> phenomenon -> its groups ("table/group")."""
    return load("phenomena")


@dataclass(frozen=True)
class Count:
    """The cases of one phenomenon (or of all): equal and not-equal, whole responses and pairs."""

    equal: int
    not_equal: int
    whole: int
    pairs: int

    @property
    def total(self) -> int:
        return self.equal + self.not_equal


def count(selected: list[Case]) -> Count:
    c = Counter((x.equal, x.whole) for x in selected)
    return Count(equal=c[True, True] + c[True, False], not_equal=c[False, True] + c[False, False],
                 whole=c[True, True] + c[False, True], pairs=c[True, False] + c[False, False])


def by_phenomenon() -> dict[tuple[str, str], Count]:
    """(section, phenomenon) -> its count."""
    every = all_cases()
    grouped: dict[str, list[Case]] = {}
    for c in every:
        grouped.setdefault(f"{c.table}/{c.group}", []).append(c)
    return {(section, name): count([c for g in groups for c in grouped.get(g, [])])
            for section, items in phenomena().items() for name, groups in items.items()}


def unlisted_groups() -> list[str]:
    """Groups of the tables that no phenomenon lists, and groups listed that no table holds."""
    held = {f"{c.table}/{c.group}" for c in all_cases()}
    listed = [g for items in phenomena().values() for groups in items.values() for g in groups]
    return sorted((held - set(listed)) | (set(listed) - held)
                  | {g for g, n in Counter(listed).items() if n > 1})
