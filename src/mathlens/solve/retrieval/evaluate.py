"""Retrieval quality on a labelled question set: recall@k and mean reciprocal rank.

recall@k of one question = |relevant ∩ top k| / |relevant|; reciprocal rank = 1 / (rank of the
first relevant chunk), 0 when none is retrieved within the cut-off. Both are averaged over questions.

The labels name notes. When the knowledge base cuts documents into windows (`calculus-study`), a
retrieved chunk stands for the notes it holds: those of which it contains at least `MIN_SHARE` of
the characters (`covered_notes`). recall@k is then the share of the relevant notes held by the
first k chunks, and the characters those k chunks put in the prompt are reported beside it, since
a longer chunk holds more notes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from mathlens.errors import UserError


class LabelledQuestion(BaseModel):
    """A question and the ids of the chunks (built-in note ids) that answer it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str = Field(min_length=5)
    relevant: list[str] = Field(min_length=1)


class LabelledSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[LabelledQuestion] = Field(min_length=1)


def load_labelled(path: Path) -> list[LabelledQuestion]:
    """Read a labelled question file (YAML with a `questions` list)."""
    try:
        return LabelledSet.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))).questions
    except (OSError, yaml.YAMLError, ValueError) as exc:
        raise UserError(f"{path}: not a labelled question file ({str(exc).splitlines()[0]})") from None


def recall_at_k(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """Share of the relevant ids found among the first `k` ranked ids.

    >>> recall_at_k(["a", "b", "c"], ["c", "d"], 3)
    0.5
    """
    rel = set(relevant)
    return len(rel & set(ranked[:k])) / len(rel) if rel else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    """1 / rank of the first relevant id (ranks from 1), or 0.0 when none is ranked.

    >>> reciprocal_rank(["a", "b", "c"], ["c"])
    0.3333333333333333
    """
    rel = set(relevant)
    return next((1.0 / i for i, r in enumerate(ranked, start=1) if r in rel), 0.0)


#: share of a note's characters a chunk must contain to count as holding it
MIN_SHARE = 0.5


@dataclass(frozen=True)
class Shown:
    """One retrieved chunk as the evaluation sees it: the note ids it holds and its length."""

    notes: frozenset[str]
    chars: int


def covered_notes(start: int, end: int, spans: Sequence[tuple[str, int, int]],
                  min_share: float = MIN_SHARE) -> frozenset[str]:
    """Ids of the notes (id, start, end) of which the window [start, end) holds at least `min_share`.

    >>> sorted(covered_notes(0, 100, [("a", 0, 40), ("b", 60, 160), ("c", 90, 200)]))
    ['a']
    >>> sorted(covered_notes(50, 160, [("a", 0, 40), ("b", 60, 160)]))
    ['b']
    """
    out = set()
    for note, s, e in spans:
        overlap = max(0, min(end, e) - max(start, s))
        if e > s and overlap / (e - s) >= min_share:
            out.add(note)
    return frozenset(out)


@dataclass(frozen=True)
class Quality:
    """Averages over a question set; `recall` maps k to mean recall@k, `chars` to the mean
    characters the first k chunks put in the prompt."""

    n: int
    recall: dict[int, float]
    mrr: float
    chars: dict[int, float]


def evaluate_shown(questions: list[LabelledQuestion], retrieve: Callable[[str], list[Shown]],
                   ks: Sequence[int] = (1, 4, 10)) -> Quality:
    """Score a retrieval function whose results stand for sets of notes (query -> ranked `Shown`)."""
    recalls = {k: 0.0 for k in ks}
    chars = {k: 0.0 for k in ks}
    mrr = 0.0
    for q in questions:
        shown = retrieve(q.text)
        rel = set(q.relevant)
        for k in ks:
            held = set().union(*(s.notes for s in shown[:k])) if shown[:k] else set()
            recalls[k] += len(rel & held) / len(rel)
            chars[k] += sum(s.chars for s in shown[:k])
        mrr += next((1.0 / i for i, s in enumerate(shown, start=1) if rel & s.notes), 0.0)
    n = len(questions)
    return Quality(n=n, recall={k: round(v / n, 4) for k, v in recalls.items()}, mrr=round(mrr / n, 4),
                   chars={k: round(v / n, 1) for k, v in chars.items()})


def evaluate(questions: list[LabelledQuestion], retrieve: Callable[[str], list[str]],
             ks: Sequence[int] = (1, 4, 10)) -> Quality:
    """Score a retrieval function (query -> ranked note ids, at least max(ks) long when possible)."""
    return evaluate_shown(questions, lambda text: [Shown(frozenset([i]), 0) for i in retrieve(text)], ks)
