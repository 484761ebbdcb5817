"""Label a step with operations, concept tags, and a cognitive complexity level.

Operations and concepts come from the versioned lexicons in ``lexicon/*.yaml`` (regular
expressions over the step text) plus symbolic cues from the parser (a ``Derivative`` in the
parsed math means differentiation even when no word says so).

Complexity level (the seed's low / medium / high, "derived from symbolic depth and syntactic
complexity") is a points rule, so that it can be checked by hand:

* syntactic depth ``d`` (height of the deepest parsed expression tree in the step):
  ``d >= 6`` gives 2 points, ``4 <= d <= 5`` gives 1;
* one point per operation beyond the first, at most 2;
* one point for a calculus operator in the math (derivative, integral, limit, series) and one
  more when there are two kinds of them or a partial derivative;
* one point per concept tag, at most 2.

0-1 points is ``low``, 2-3 ``medium``, 4 or more ``high`` (numerically 1, 2, 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

import yaml

Level = Literal["low", "medium", "high"]
LEVEL_VALUE: dict[str, int] = {"low": 1, "medium": 2, "high": 3}
_CALCULUS_CUES = ("derivative", "integral", "limit", "sum")


@dataclass(frozen=True)
class Entry:
    """One lexicon entry: a name, its word patterns and its symbolic cues."""

    name: str
    words: tuple[re.Pattern[str], ...]
    symbols: frozenset[str]


@dataclass(frozen=True)
class Lexicon:
    """Operations and concepts, with the versions of the files they came from."""

    operations: tuple[Entry, ...]
    concepts: tuple[Entry, ...]
    version: str


def _entries(data: dict[str, dict[str, list[str]]]) -> tuple[Entry, ...]:
    out = []
    for name, spec in data.items():
        words = tuple(re.compile(p, re.I) for p in spec.get("words", []))
        out.append(Entry(name, words, frozenset(spec.get("symbols", []))))
    return tuple(out)


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    """The packaged lexicons (read once)."""
    folder = resources.files("mathlens.analyze.flow.lexicon")
    ops = yaml.safe_load(folder.joinpath("operations.yaml").read_text(encoding="utf-8"))
    concepts = yaml.safe_load(folder.joinpath("concepts.yaml").read_text(encoding="utf-8"))
    version = f"operations-v{ops['version']}+concepts-v{concepts['version']}"
    return Lexicon(_entries(ops["operations"]), _entries(concepts["concepts"]), version)


def _matches(entry: Entry, text: str, cues: set[str]) -> int | None:
    """Position of the first cue of `entry` in `text` (-1 for a symbolic cue), or None."""
    best: int | None = None
    for pattern in entry.words:
        m = pattern.search(text)
        if m and (best is None or m.start() < best):
            best = m.start()
    if entry.symbols & cues:
        return -1 if best is None else min(best, -1)
    return best


def label(text: str, cues: set[str], lexicon: Lexicon | None = None) -> tuple[list[str], list[str]]:
    """Operations (in order of first appearance, symbolic cues first) and concepts of a step."""
    lex = lexicon or load_lexicon()
    ops = [(pos, i, e.name) for i, e in enumerate(lex.operations) if (pos := _matches(e, text, cues)) is not None]
    ops.sort()
    operations = [name for _, _, name in ops]
    # Partial differentiation implies differentiation was named twice; keep the specific one.
    if "partial differentiation" in operations and "differentiation" in operations and "derivative" not in cues:
        operations.remove("differentiation")
    concepts = [e.name for e in lex.concepts if _matches(e, text, cues) is not None]
    return operations, concepts


def complexity_level(depth: int, operations: list[str], concepts: list[str], cues: set[str]) -> Level:
    """The points rule in the module notes."""
    points = 2 if depth >= 6 else 1 if depth >= 4 else 0
    points += min(max(len(operations) - 1, 0), 2)
    calculus = [c for c in _CALCULUS_CUES if c in cues]
    if calculus:
        points += 1
        if len(calculus) > 1 or "partial" in cues:
            points += 1
    points += min(len(concepts), 2)
    if points >= 4:
        return "high"
    if points >= 2:
        return "medium"
    return "low"
