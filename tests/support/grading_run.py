"""Build a small finished run on disk (an exam with a cohort, a manifest, records) for grading tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord, Variant
from mathlens.runs.store import RunStore
from mathlens.solve.prompts import EXAM_SYSTEM_ROLE

EXAM = {
    "id": "calc1-e1",
    "name": "Calculus I Exam 1",
    "cohort": {"class_average": 80.0, "size": 4, "scores": [60.0, 70.0, 90.0, 100.0], "illustrative": True},
    "questions": [
        {"id": "q1", "text": "Evaluate ln(e).", "points": 10, "answers": ["1"]},
        {"id": "q2", "text": "Differentiate x^2.", "points": 20, "answers": ["2x"]},
    ],
}

RESPONSES = {
    ("baseline", "q1"): "ln(e) = 1 because e^1 = e.\nFinal answer: 1",
    ("baseline", "q2"): "Using the power rule, \\frac{d}{dx} x^2 = 2x.\nFinal answer: $2x$",
    ("rag", "q1"): "ln(e) = e.\nFinal answer: e",
    ("rag", "q2"): "Power rule: 2x.\nFinal answer: 2x",
}


#: an ablation variant of q1 (added with `make_run(..., ablation=True)`)
ABLATION = Variant(name="number-1", kind="ablation", element_type="number", element_text="e",
                   question_text="Evaluate ln.")


def make_run(root: Path, model: str = "mock/student",
             configurations: tuple[str, ...] = ("baseline", "rag"), ablation: bool = False) -> RunStore:
    """A run with one exam, two questions, two configurations, one repeat each; with `ablation`,
    each configuration also answered the ablation variant `ABLATION` of q1."""
    exam_path = root / "exam.yaml"
    root.mkdir(parents=True, exist_ok=True)
    exam_path.write_text(yaml.safe_dump(EXAM), encoding="utf-8")
    store = RunStore(root / "run")
    now = datetime.now(UTC)
    store.write_manifest(Manifest(
        run_id="r1", mathlens_version="test", created_at=now, items=[ItemSource(source=str(exam_path))],
        models=[ModelEntry(spec=model)], configurations=list(configurations), generate=GenerateConfig(),
        system_role=EXAM_SYSTEM_ROLE,
    ))
    for conf in configurations:
        tasks = [("q1", Variant()), ("q2", Variant())] + ([("q1", ABLATION)] if ablation else [])
        for qid, variant in tasks:
            store.append(RunRecord(
                key=f"{model}|{conf}|calc1-e1|{qid}|{variant.name}|r0", model=model, configuration=conf,
                exam_id="calc1-e1", question_id=qid, variant=variant, repeat=0,
                messages=[Message(role="user", content=qid)], config=GenerateConfig(), request_hash="h",
                content_hash="c", response=RESPONSES[(conf, qid)], finish_reason="stop", created_at=now,
            ))
    store.close()
    return store
