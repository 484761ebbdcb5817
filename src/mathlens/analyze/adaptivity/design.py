"""The study design (profiles x conditions x items x models) and the exact task list it makes.

The design is stored in `manifest.extra["tutor"]`, profiles included, so `--resume` and every
later analysis re-plan the same tasks even if the profile file has changed since.

Records of a tutor run: `configuration` is `condition-<n>`, `variant.name` is the learner profile
id, and the key is `tutor|<model>|c<n>|<profile>|<exam>|<question>`. A learner is paired with the
items of their own grade; an item without a grade is paired with every learner.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mathlens.errors import UserError
from mathlens.items.loaders import load_items
from mathlens.items.schema import Exam, Question
from mathlens.models.base import GenerateConfig
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import Manifest, RunRecord, Task, Variant

from .conditions import ImageMode, build_messages, condition_label, condition_of, describe_for
from .profiles import LearnerProfile

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


class TutorDesign(BaseModel):
    """What `manifest.extra["tutor"]` holds."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    profiles: list[LearnerProfile] = Field(min_length=1)
    profile_source: str = "default"
    conditions: list[int] = Field(min_length=1)
    image_mode: ImageMode = "auto"
    match_grade: bool = True
    rubric: str = "v1"


def design_of(manifest: Manifest) -> TutorDesign:
    """The tutoring design of a run; `UserError` when the run is not a tutor run."""
    data = manifest.extra.get("tutor")
    if data is None:
        raise UserError(f"run {manifest.run_id} is not a tutoring run (no 'tutor' design in its manifest)")
    return TutorDesign.model_validate(data)


def load_tutor_exams(manifest: Manifest) -> list[Exam]:
    """Reload the run's item files (the paths in `manifest.items`)."""
    return [load_items(s.source, fmt=s.format, limit=s.limit, sample=s.sample, seed=s.seed)
            for s in manifest.items]


def tutor_key(model: str, condition: int, profile_id: str, exam_id: str, question_id: str) -> str:
    """The stable, unique key of one tutoring request."""
    return f"tutor|{model}|c{condition}|{profile_id}|{exam_id}|{question_id}"


def _pairs(design: TutorDesign, question: Question) -> list[LearnerProfile]:
    if not design.match_grade or question.grade is None:
        return design.profiles
    return [p for p in design.profiles if p.grade == question.grade]


def plan_tutor_tasks(manifest: Manifest, accepts_images: dict[str, bool],
                     exams: list[Exam] | None = None) -> list[Task]:
    """Every request of a tutoring run, in a fixed order: model, condition, profile, exam, item.

    `accepts_images` maps each model spec to whether its backend reads images (see
    `conditions.describe_for` for what happens with a text-only one).
    """
    design = design_of(manifest)
    exams = exams if exams is not None else load_tutor_exams(manifest)
    roots = [Path(s.source).resolve().parent for s in manifest.items]
    tasks: list[Task] = []
    for model in manifest.models:
        for cond in design.conditions:
            for profile in design.profiles:
                for exam, root in zip(exams, roots, strict=True):
                    for q in exam.questions:
                        if profile not in _pairs(design, q):
                            continue
                        describe = describe_for(q, design.image_mode, accepts_images[model.spec], model.spec)
                        tasks.append(Task(
                            key=tutor_key(model.spec, cond, profile.id, exam.id, q.id),
                            model=model.spec, configuration=condition_label(cond), exam_id=exam.id,
                            question_id=q.id, variant=Variant(name=profile.id),
                            messages=build_messages(q, profile, cond, describe, image_root=root),
                            config=manifest.generate,
                        ))
    if not tasks:
        raise UserError("the design pairs no learner with any item (check the grades of profiles and items)")
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise UserError("the design repeats a request (an item file listed twice?)")
    return tasks


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


def cells_of(manifest: Manifest, records: list[RunRecord], exams: list[Exam] | None = None) -> list[Cell]:
    """Join each tutor record to its learner profile and item (records of other kinds are ignored)."""
    design = design_of(manifest)
    exams = exams if exams is not None else load_tutor_exams(manifest)
    profiles = {p.id: p for p in design.profiles}
    questions = {(e.id, q.id): q for e in exams for q in e.questions}
    out: list[Cell] = []
    for r in records:
        if not r.key.startswith("tutor|"):
            continue
        q = questions.get((r.exam_id, r.question_id))
        p = profiles.get(r.variant.name)
        if q is None or p is None:
            raise UserError(f"record {r.key} names an item or profile that the run's design does not have")
        out.append(Cell(key=r.key, model=r.model, condition=condition_of(r.configuration), profile=p,
                        exam_id=r.exam_id, question=q, record=r))
    return out


def tutor_generate_config(max_tokens: int, extra: dict[str, Any] | None = None) -> GenerateConfig:
    """Decoding for tutoring responses: greedy, bounded, stopping at the end of the turn."""
    from mathlens.solve.prompts import DEFAULT_STOP

    return GenerateConfig(max_tokens=max_tokens, stop=DEFAULT_STOP, extra=extra or {})
