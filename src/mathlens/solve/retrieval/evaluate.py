"""Retrieval quality on a labelled question set: recall@k and mean reciprocal rank.

recall@k of one question = |relevant ∩ top k| / |relevant|; reciprocal rank = 1 / (rank of the
first relevant chunk), 0 when none is retrieved within the cut-off. Both are averaged over questions.
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


@dataclass(frozen=True)
class Quality:
    """Averages over a question set; `recall` maps k to mean recall@k."""

    n: int
    recall: dict[int, float]
    mrr: float


def evaluate(questions: list[LabelledQuestion], retrieve: Callable[[str], list[str]],
             ks: Sequence[int] = (1, 4, 10)) -> Quality:
    """Score a retrieval function (query -> ranked ids, at least max(ks) long when possible)."""
    recalls = {k: 0.0 for k in ks}
    mrr = 0.0
    for q in questions:
        ranked = retrieve(q.text)
        for k in ks:
            recalls[k] += recall_at_k(ranked, q.relevant, k)
        mrr += reciprocal_rank(ranked, q.relevant)
    n = len(questions)
    return Quality(n=n, recall={k: round(v / n, 4) for k, v in recalls.items()}, mrr=round(mrr / n, 4))
