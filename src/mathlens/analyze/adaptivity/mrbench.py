"""Real human labels for checking the judge: MRBench v2 (tutor replies to student mistakes).

MRBench v2 holds 1,655 tutor replies in 200 math dialogues, each labelled by people on eight
pedagogical dimensions. Three of them ask what one of our rubric items asks:

| MRBench dimension    | rubric item               | label -> item score                                  |
|----------------------|---------------------------|------------------------------------------------------|
| Providing_Guidance   | Q9 step-by-step cues      | Yes 1, To some extent 1 (strict: 0), No 0            |
| Tutor_Tone           | Q2 positive attitude      | Encouraging 1, Neutral 0, Offensive -1               |
| Coherence            | Q16 incoherence (absence) | Yes (coherent) 1, To some extent 1 (strict: 0), No 0 |

The other five (mistake identification, mistake location, revealing the answer, actionability,
human-likeness) have no counterpart in the rubric and are not used. "To some extent" is scored
leniently by default (the reply does provide some guidance, is mostly coherent); `strict=True`
counts it as a failure, and the benchmark reports both.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from mathlens.errors import UserError

from .judge import JudgeContext

MAX_HISTORY_CHARS = 3000


@dataclass(frozen=True)
class DimensionMap:
    """How one MRBench dimension becomes scores of one rubric item."""

    dimension: str
    item_id: str
    scores: dict[str, int]
    partial_label: str | None = None

    def score(self, label: str, strict: bool = False) -> int | None:
        """The item score for a human label; None for a label the map does not know."""
        if strict and label == self.partial_label:
            return 0
        return self.scores.get(label)


MAPPINGS: tuple[DimensionMap, ...] = (
    DimensionMap("Providing_Guidance", "Q9", {"Yes": 1, "To some extent": 1, "No": 0}, "To some extent"),
    DimensionMap("Tutor_Tone", "Q2", {"Encouraging": 1, "Neutral": 0, "Offensive": -1}),
    DimensionMap("Coherence", "Q16", {"Yes": 1, "To some extent": 1, "No": 0}, "To some extent"),
)


@dataclass(frozen=True)
class TutorReply:
    """One labelled tutor reply."""

    key: str
    tutor: str
    history: str
    solution: str
    response: str
    labels: dict[str, str]


def load_mrbench(path: Path) -> list[TutorReply]:
    """Every labelled reply, keyed `<dialogue index>:<conversation id>|<tutor>` (a few conversation ids
    repeat in the file, so the position keeps keys unique)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    out = []
    for n, conv in enumerate(data):
        for tutor, entry in conv.get("anno_llm_responses", {}).items():
            out.append(TutorReply(
                key=f"{n}:{conv['conversation_id']}|{tutor}", tutor=tutor, history=conv.get("conversation_history", ""),
                solution=conv.get("Ground_Truth_Solution", ""), response=entry.get("response", ""),
                labels=dict(entry.get("annotation", {}))))
    return out


def sample_replies(replies: list[TutorReply], n: int | None, seed: int = 0) -> list[TutorReply]:
    """A seeded random sample of `n` replies (all, in file order, for None)."""
    if n is None or n >= len(replies):
        return list(replies)
    idx = sorted(random.Random(seed).sample(range(len(replies)), n))
    return [replies[i] for i in idx]


def judge_context(reply: TutorReply) -> JudgeContext:
    """The judge's view of a reply: the dialogue so far stands in for the tutoring request."""
    history = reply.history
    if len(history) > MAX_HISTORY_CHARS:
        history = "[... earlier turns left out]\n" + history[-MAX_HISTORY_CHARS:]
    return JudgeContext(
        learner="a student in a one-to-one math tutoring dialogue who has just shown their work",
        request=f"The dialogue so far (the reply is the tutor's next turn):\n{history}",
        reference=f"Correct solution: {reply.solution}" if reply.solution else "(no reference given)",
        response=reply.response,
    )


def human_score(reply: TutorReply, mapping: DimensionMap, strict: bool = False) -> int | None:
    """The rubric score implied by the human label of one dimension (None when unlabelled)."""
    label = reply.labels.get(mapping.dimension)
    return None if label is None else mapping.score(label, strict)
