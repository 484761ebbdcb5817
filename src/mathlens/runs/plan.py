"""Turn a manifest into the exact list of requests a run makes (the same list on every resume).

In the sequential exam mode (`manifest.exam_mode`) the tasks of one (model, configuration, exam,
repeat) form a conversation: each task carries its `conversation` and `turn` (the question's
place in the exam), its messages hold that question's turn only, and the runner puts the earlier
questions and the model's answers before it (`runs/runner.py`). `conversations` groups them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from mathlens.errors import UserError
from mathlens.items.loaders import load_items
from mathlens.items.schema import Exam, Question
from mathlens.runs.records import Manifest, Task, Variant
from mathlens.solve.configurations import get_configuration
from mathlens.solve.tutoring import build_for_learner, profile_variants

#: Produces the extra prompt variants of a question (ablation); set by `ablation` options.
VariantFn = Callable[[Question, dict[str, Any]], list[Variant]]


def load_exams(manifest: Manifest) -> list[Exam]:
    return [
        load_items(s.source, fmt=s.format, mapping=s.mapping, limit=s.limit, sample=s.sample, seed=s.seed)
        for s in manifest.items
    ]


def _variant_fn() -> VariantFn:
    module = importlib.import_module("mathlens.solve.ablation")
    return module.question_variants  # type: ignore[no-any-return,unused-ignore]


def task_key(model: str, configuration: str, exam_id: str, question_id: str, variant: str, repeat: int) -> str:
    return f"{model}|{configuration}|{exam_id}|{question_id}|{variant}|r{repeat}"


def conversation_key(model: str, configuration: str, exam_id: str, repeat: int) -> str:
    return f"{model}|{configuration}|{exam_id}|r{repeat}"


def plan_tasks(manifest: Manifest, exams: list[Exam] | None = None) -> list[Task]:
    """Every request of the run, in a fixed order: model, configuration, exam, question, variant, repeat.

    Repeat k (for `--runs N`) uses seed `seed + k`, so repeats are distinct requests (and cache
    entries); at temperature 0 a deterministic backend may still answer them identically.
    In the sequential exam mode every task also names its conversation and turn.
    """
    sequential = manifest.exam_mode == "sequential"
    if sequential and manifest.tutor:
        raise UserError("the sequential exam mode puts an exam to a model; a tutoring run has no exam order "
                        "(use the per-question mode)")
    exams = exams if exams is not None else load_exams(manifest)
    variant_fn = _variant_fn() if manifest.ablation else None
    configs = [get_configuration(c, manifest.configuration_options) for c in manifest.configurations]
    seeded = [manifest.generate.with_(seed=manifest.generate.seed + r) for r in range(manifest.runs)]
    tasks: list[Task] = []
    for model in manifest.models:
        for conf in configs:
            for exam in exams:
                for turn, q in enumerate(exam.questions):
                    # a tutoring run puts each question to every learner paired with it (profile variants)
                    variants = profile_variants(manifest.tutor, q) if manifest.tutor else [Variant()]
                    if variant_fn is not None and manifest.ablation is not None:
                        variants += variant_fn(q, manifest.ablation)
                    for v in variants:
                        built = (build_for_learner(manifest.tutor, conf.name, q, v, model.spec)
                                 if manifest.tutor and v.kind == "profile"
                                 else conf.build(q, manifest.system_role, v.question_text))
                        for r in range(manifest.runs):
                            tasks.append(Task(
                                key=task_key(model.spec, conf.name, exam.id, q.id, v.name, r),
                                model=model.spec, configuration=conf.name, exam_id=exam.id,
                                question_id=q.id, variant=v, repeat=r, messages=built.messages,
                                config=seeded[r],
                                retrieval=built.retrieval,
                                conversation=conversation_key(model.spec, conf.name, exam.id, r) if sequential
                                else None,
                                turn=turn if sequential else None,
                            ))
    keys = [t.key for t in tasks]
    if len(keys) != len(set(keys)):
        dupes = sorted({k for k in keys if keys.count(k) > 1})[:3]
        raise ValueError(f"the plan repeats task keys (an exam listed twice?): {dupes}")
    return tasks


def conversations(tasks: list[Task]) -> list[list[list[Task]]]:
    """The conversations of a sequential plan: each a list of turns in exam order, each turn the
    original question's task first, then its variants' (which branch off the conversation)."""
    grouped: dict[str, dict[int, list[Task]]] = {}
    for t in tasks:
        if t.conversation is None or t.turn is None:
            raise ValueError(f"task {t.key} is not part of a conversation")
        grouped.setdefault(t.conversation, {}).setdefault(t.turn, []).append(t)
    out = []
    for turns in grouped.values():
        ordered = [sorted(turns[k], key=lambda t: t.variant.kind != "original") for k in sorted(turns)]
        out.append(ordered)
    return out


def _tokens(text: str) -> int:
    return len(text) // 4


def estimate_prompt_tokens(tasks: list[Task]) -> int:
    """A rough count (4 characters a token) for `--dry-run`.

    A sequential task also sends the earlier questions of its conversation and the answers to them;
    an answer is counted at the token cap, so that share is an upper bound."""
    total = sum(sum(_tokens(m.content) for m in t.messages) + 4 * len(t.messages) for t in tasks)
    if any(t.conversation is not None for t in tasks):
        for conv in conversations(tasks):
            before = 0
            for turn in conv:
                original = turn[0]
                total += before * len(turn)
                asked = sum(_tokens(m.content) + 4 for m in original.messages if m.role != "system")
                before += asked + original.config.max_tokens + 4
    return total
