"""A tutoring run's design (profiles x conditions x items x models) and its records joined back to it.

The design is the manifest's typed `tutor` field (`mathlens.solve.tutoring.TutorDesign`), profiles
included, and the run keeps its own copy of the items (`RUN/items.json`), so `--resume` and every
later analysis see the same learners and questions even if the files have changed since. The
ordinary planner (`mathlens.runs.plan`) makes the requests: the configurations are the context
conditions `condition-<n>`, and each question is put to each learner paired with it as a variant
of kind "profile" named after the learner. A learner is paired with the items of their own grade;
an item without a grade is paired with every learner.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from mathlens.errors import UserError
from mathlens.items.loaders import load_items
from mathlens.items.schema import Exam, Question
from mathlens.models.base import GenerateConfig
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import ItemSource, Manifest, RunRecord
from mathlens.solve.tutoring import LearnerProfile, TutorDesign, condition_of

__all__ = ["BUILTIN_ITEMS", "Cell", "TutorDesign", "builtin_items_path", "cells_of", "design_of",
           "load_tutor_exams", "resolve_items", "tutor_generate_config"]

BUILTIN_ITEMS = "tutoring"


def builtin_items_path() -> Path:
    """The YAML file of the built-in tutoring items."""
    return Path(str(resources.files("mathlens.items") / "builtin" / "tutoring" / "tutoring.yaml"))


def resolve_items(source: str) -> Path:
    """`tutoring` (the built-in set) or a path to an exam YAML/JSONL file."""
    if source == BUILTIN_ITEMS:
        return builtin_items_path()
    path = Path(source)
    if not path.exists():
        raise UserError(f"{source}: no such item file (use '{BUILTIN_ITEMS}' for the built-in tutoring items)")
    return path.resolve()


def design_of(manifest: Manifest) -> TutorDesign:
    """The tutoring design of a run; `UserError` when the run is not a tutoring run."""
    if manifest.tutor is not None:
        return manifest.tutor
    if "tutor" in manifest.extra:
        raise UserError(f"run {manifest.run_id} is a tutoring run made by an older mathlens (its design is in "
                        "manifest.extra, and its requests were planned apart from other runs); this version "
                        "reads the design from manifest.tutor. Run the study again with `mathlens tutor run`.")
    raise UserError(f"run {manifest.run_id} is not a tutoring run (no tutoring design in its manifest)")


def _with_absolute_images(exam: Exam, root: Path) -> Exam:
    """Image paths of an item file are relative to the file; requests name them absolutely."""
    def fix(q: Question) -> Question:
        if not q.images:
            return q
        return q.model_copy(update={"images": [img if Path(img).is_absolute() else str((root / img).resolve())
                                               for img in q.images]})

    return exam.model_copy(update={"questions": [fix(q) for q in exam.questions]})


def load_tutor_exams(sources: list[ItemSource]) -> list[Exam]:
    """Load the item files of a new tutoring run, with image paths made absolute."""
    return [_with_absolute_images(load_items(s.source, fmt=s.format, limit=s.limit, sample=s.sample, seed=s.seed),
                                  Path(s.source).resolve().parent)
            for s in sources]


@dataclass(frozen=True)
class Cell:
    """Where one response sits in the design, with what a judge needs to know about it."""

    key: str
    model: str
    condition: int
    profile: LearnerProfile
    exam_id: str
    question: Question
    record: RunRecord

    @property
    def ref(self) -> RecordRef:
        """The record's identity, as analysis documents embed it."""
        return RecordRef.of(self.record)


def cells_of(manifest: Manifest, records: list[RunRecord], exams: list[Exam]) -> list[Cell]:
    """Join each tutoring record (a profile variant) to its learner and item; other records are ignored."""
    design = design_of(manifest)
    questions = {(e.id, q.id): q for e in exams for q in e.questions}
    out: list[Cell] = []
    for r in records:
        if r.variant.kind != "profile":
            continue
        q = questions.get((r.exam_id, r.question_id))
        p = design.profile(r.variant.name)
        if q is None or p is None:
            raise UserError(f"record {r.key} names an item or profile that the run's design does not have")
        out.append(Cell(key=r.key, model=r.model, condition=condition_of(r.configuration), profile=p,
                        exam_id=r.exam_id, question=q, record=r))
    return out


def tutor_generate_config(max_tokens: int, extra: dict[str, Any] | None = None) -> GenerateConfig:
    """Decoding for tutoring responses: greedy, bounded, stopping at the end of the turn."""
    from mathlens.solve.prompts import DEFAULT_STOP

    return GenerateConfig(max_tokens=max_tokens, stop=DEFAULT_STOP, extra=extra or {})
