"""Synthetic learner profiles: who the tutor is talking to (seed 003, section 4.2).

A profile has a grade, a performance level (high / intermediate / low achiever), a learning attitude,
a self-efficacy level and statements of prior knowledge. Profiles come from three places:

* `default`: six profiles shipped in `data/profiles_default.yaml` (three per grade for grades 4 and 8);
* `balanced[:PER_CELL[:SEED]]`: the seeded generator `generate_profiles`;
* a YAML file written by the user (a list under `profiles:`, or a bare list).

`LearnerProfile` itself, with the self-description a learner gives the tutor, is defined with the
tutoring requests (`mathlens.solve.tutoring`), since a tutoring run's manifest holds its profiles.
"""

from __future__ import annotations

import random
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mathlens.errors import UserError
from mathlens.items.errors import from_validation
from mathlens.solve.tutoring import Attitude, LearnerProfile, Performance, SelfEfficacy

__all__ = ["ATTITUDES", "PERFORMANCE_LEVELS", "SELF_EFFICACY_LEVELS", "LearnerProfile", "default_knowledge",
           "generate_profiles", "grade_objectives", "load_profile_file", "load_profiles"]

PERFORMANCE_LEVELS: tuple[Performance, ...] = ("high", "intermediate", "low")
ATTITUDES: tuple[Attitude, ...] = ("dislikes", "neutral", "likes")
SELF_EFFICACY_LEVELS: tuple[SelfEfficacy, ...] = ("low", "moderate", "high")


@cache
def _learner_text() -> dict[str, Any]:
    path = resources.files("mathlens.analyze.adaptivity") / "data" / "learners.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def default_knowledge(grade: int, performance: str) -> tuple[str, ...]:
    """The shipped prior-knowledge statements for a grade and level (empty for other grades)."""
    by_grade = _learner_text()["knowledge"].get(grade, {})
    return tuple(by_grade.get(performance, ()))


def grade_objectives(grade: int) -> tuple[str, ...]:
    """The grade-level learning objectives used in the system prompt (conditions 3 and 4)."""
    objectives = _learner_text()["objectives"].get(grade)
    if not objectives:
        known = ", ".join(str(g) for g in sorted(_learner_text()["objectives"]))
        raise UserError(f"no learning objectives are written for grade {grade} (known grades: {known})")
    return tuple(objectives)


def _with_knowledge(profile: LearnerProfile) -> LearnerProfile:
    if profile.prior_knowledge or profile.description:
        return profile
    return profile.model_copy(update={"prior_knowledge": default_knowledge(profile.grade, profile.performance)})


def generate_profiles(per_cell: int = 1, seed: int = 0, grades: tuple[int, ...] = (4, 8)) -> list[LearnerProfile]:
    """Balanced synthetic learners: `per_cell` per grade x performance level.

    Within each grade, the k-th learner of performance level i gets attitude (i + k + a) mod 3 and
    self-efficacy (i + 2k + s) mod 3 over seeded orderings of the levels (a, s and the orderings come
    from `seed`). These two Latin squares are orthogonal, so with `per_cell = 3` every
    attitude x self-efficacy pair occurs exactly once per grade, and for any `per_cell` each level
    of either factor occurs equally often (within one) at every performance level.

    >>> [p.id for p in generate_profiles(1, seed=0, grades=(4,))]
    ['g4-high-1', 'g4-intermediate-1', 'g4-low-1']
    """
    if per_cell < 1:
        raise UserError("balanced profiles need at least one learner per cell")
    rng = random.Random(seed)
    out: list[LearnerProfile] = []
    for grade in grades:
        attitudes = list(ATTITUDES)
        efficacies = list(SELF_EFFICACY_LEVELS)
        rng.shuffle(attitudes)
        rng.shuffle(efficacies)
        shift_a, shift_s = rng.randrange(3), rng.randrange(3)
        for i, level in enumerate(PERFORMANCE_LEVELS):
            for k in range(per_cell):
                out.append(LearnerProfile(
                    id=f"g{grade}-{level}-{k + 1}", grade=grade, performance=level,
                    attitude=attitudes[(i + k + shift_a) % 3],
                    self_efficacy=efficacies[(i + 2 * k + shift_s) % 3],
                    prior_knowledge=default_knowledge(grade, level),
                ))
    return out


def default_profiles_path() -> Path:
    """The shipped six-profile file."""
    return Path(str(resources.files("mathlens.analyze.adaptivity") / "data" / "profiles_default.yaml"))


def load_profile_file(path: Path) -> list[LearnerProfile]:
    """Read profiles from YAML (a list, or a mapping with a `profiles` list); errors name the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such profile file") from None
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict):
        data = data.get("profiles")
        prefix = ("profiles",)
    if not isinstance(data, list) or not data:
        raise UserError(f"{path}: expected a non-empty list of profiles (optionally under 'profiles:')")
    profiles = []
    for i, entry in enumerate(data):
        try:
            profiles.append(_with_knowledge(LearnerProfile.model_validate(entry)))
        except ValidationError as exc:
            raise from_validation(path, exc, node=node, prefix=(*prefix, i)) from None
    _check_unique(profiles, str(path))
    return profiles


def _check_unique(profiles: list[LearnerProfile], where: str) -> None:
    seen: set[str] = set()
    for p in profiles:
        if p.id in seen:
            raise UserError(f"{where}: profile id {p.id!r} appears twice")
        seen.add(p.id)


def load_profiles(spec: str) -> list[LearnerProfile]:
    """`default`, `balanced[:PER_CELL[:SEED]]`, or a YAML file path.

    >>> len(load_profiles("balanced:2:7"))
    12
    """
    if spec == "default":
        return load_profile_file(default_profiles_path())
    if spec == "balanced" or spec.startswith("balanced:"):
        parts = spec.split(":")[1:]
        try:
            per_cell = int(parts[0]) if parts and parts[0] else 1
            seed = int(parts[1]) if len(parts) > 1 else 0
        except ValueError:
            raise UserError(f"profiles {spec!r}: write balanced[:PER_CELL[:SEED]] with whole numbers") from None
        return generate_profiles(per_cell=per_cell, seed=seed)
    return load_profile_file(Path(spec))
