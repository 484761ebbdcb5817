"""MAPLE's self-reflection as the seed describes it (001, section 3.1): a multi-turn conversation.

The model that wrote a solution keeps it in the conversation as its own turn and is then shown,
turn by turn, the correct final answer ("does yours match?", its self-check) and the reference
solution ("where does your reasoning first depart from it, and what kind of mistake is it?"). It is
then asked for further points of departure, one per round, until it says there are none (`DONE`),
repeats itself, fails, or `max_rounds` rounds are used. Each round's reply is one failing point: the
points are what label discovery clusters. Every round is recorded, with why the loop stopped.

`reflect_once` is the single fresh request of earlier releases (`--reflection single`).
"""

from __future__ import annotations

import re
from typing import Literal

from mathlens.analyze.maple.judge import Reflection, ReflectionRound, reflect
from mathlens.analyze.maple.prompts import clip, reference_text
from mathlens.errors import ModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model

ReflectionMode = Literal["loop", "single"]

LOOP_SYSTEM = (
    "You are going back over your own answer to a math problem, with the correct answer and a "
    "reference solution in hand. Answer each question about your work briefly and specifically."
)
SELF_CHECK = ("The correct final answer is: {answer}\nDoes your final answer match it? Start your reply with "
              "MATCH or NO MATCH, then give one sentence.")
FIRST_POINT = ("Here is a reference solution:\n{reference}\n\nCompare your solution with it step by step. Name the "
               "first point where your reasoning departs from it and what kind of mistake that is, in one to "
               "three sentences.")
NEXT_POINT = ("Is there another point where your reasoning departs from the reference? Name it in one to three "
              "sentences, or reply DONE if there is none.")

_DONE = re.compile(r"^\W*(done|none|no other|no further|there is (no|none)|nothing else)\b", re.I)
_NO_MATCH = re.compile(r"\b(no match|does not match|doesn't match|not match|mismatch|incorrect)\b", re.I)
_MATCH = re.compile(r"^\W*match\b|\bmatches\b", re.I)


def self_check_verdict(reply: str) -> Literal["match", "mismatch", "unclear"]:
    """What the model said about its final answer against the correct one.

    >>> self_check_verdict("NO MATCH. I wrote 20 where 24 was right.")
    'mismatch'
    >>> self_check_verdict("MATCH - both are 5.")
    'match'
    >>> self_check_verdict("Let me think about it.")
    'unclear'
    """
    if _NO_MATCH.search(reply):
        return "mismatch"
    if _MATCH.search(reply):
        return "match"
    return "unclear"


def _said_done(reply: str) -> bool:
    return bool(_DONE.match(reply.strip())) or reply.strip().upper().rstrip(".!") == "DONE"


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


async def reflect_loop(model: Model, question: str, solution: str, reference_solution: str | None,
                       reference_answer: str | None, config: GenerateConfig, max_rounds: int) -> Reflection:
    """The multi-turn reflection of `model` on its own `solution` (see the module docstring)."""
    messages = [Message(role="system", content=LOOP_SYSTEM),
                Message(role="user", content=f"Problem:\n{clip(question)}"),
                Message(role="assistant", content=clip(solution))]
    out = Reflection(status="error", model=model.spec, mode="loop", max_rounds=max_rounds)

    async def ask(text: str) -> tuple[str, bool] | None:
        messages.append(Message(role="user", content=text))
        try:
            reply = await model.generate(messages, config)
        except ModelError as exc:
            out.error = str(exc)
            return None
        said = reply.text.strip()
        messages.append(Message(role="assistant", content=said))
        return said, reply.finish_reason == "length"

    check = await ask(SELF_CHECK.format(answer=clip(reference_answer or "(not given)", 500)))
    if check is None:
        return out.model_copy(update={"stopped": "error"})
    out.self_check, out.self_check_verdict = check[0], self_check_verdict(check[0])
    reference = reference_text(reference_solution) or f"(no worked solution; the correct answer is {reference_answer})"
    prompt = FIRST_POINT.format(reference=reference)
    stopped = "max_rounds"
    for n in range(1, max_rounds + 1):
        got = await ask(prompt if n == 1 else NEXT_POINT)
        if got is None:
            stopped = "error"
            break
        text, cut = got
        if not text:
            stopped = "empty"
            break
        if n > 1 and _said_done(text):
            stopped = "done"
            break
        if any(_norm(text) == _norm(r.text) for r in out.rounds):
            stopped = "repeat"  # a model that says the same again has nothing new to say
            break
        out.rounds.append(ReflectionRound(round=n, text=text, truncated=cut))
    ok = bool(out.rounds)
    return out.model_copy(update={
        "status": "ok" if ok else "error", "stopped": stopped,
        "text": "\n".join(r.text for r in out.rounds), "truncated": any(r.truncated for r in out.rounds),
    })


async def reflect_once(model: Model, question: str, solution: str, reference_solution: str | None,
                       reference_answer: str | None, config: GenerateConfig) -> Reflection:
    """One fresh request (the solution, the reference, and the question where it departs)."""
    r = await reflect(model, question, solution, reference_solution, reference_answer, config)
    rounds = [ReflectionRound(round=1, text=r.text, truncated=r.truncated)] if r.status == "ok" else []
    return r.model_copy(update={"mode": "single", "max_rounds": 1, "rounds": rounds,
                                "stopped": "max_rounds" if rounds else "error"})


def failing_points(reflections: list[Reflection | None]) -> list[str]:
    """The failing points of usable reflections, in order: each round of a loop, or a single reply."""
    out: list[str] = []
    for r in reflections:
        if r is None or r.status != "ok":
            continue
        out.extend(p.text for p in r.rounds) if r.rounds else out.append(r.text)
    return out
