"""The items a run was made from, kept inside the run directory (`RUN/items.json`).

A run is self-contained: when it is created, the exams and datasets it was planned from are
written into the run as they were loaded (after `--limit`/`--sample`), and every later stage
(resume, analyze, grade, MAPLE, report) reads its questions from there. Moving or deleting the
item file afterwards changes nothing. The manifest keeps each source's sha256 beside its path.

Runs made before snapshots existed have no `items.json`: their questions are reloaded from the
paths in the manifest, and a path that is gone is a clear error naming the file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from mathlens.errors import UserError
from mathlens.items.schema import Exam, Question
from mathlens.runs.records import ItemSource, Manifest

SNAPSHOT_NAME = "items.json"
SNAPSHOT_VERSION = 1


class ItemsSnapshot(BaseModel):
    """`RUN/items.json`: the loaded item sets of a run, in manifest order."""

    format: str = "mathlens-items"
    version: int = SNAPSHOT_VERSION
    exams: list[Exam]


def source_sha256(source: ItemSource) -> str | None:
    """The sha256 of an item source that is a file (None for a built-in exam name)."""
    path = Path(source.source)
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def read_snapshot(path: Path) -> list[Exam]:
    """The exams stored in a run's `items.json`; a damaged or foreign file is a `UserError`."""
    try:
        snap = ItemsSnapshot.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        raise UserError(f"{path}: not a mathlens item snapshot ({exc.errors()[0]['msg']})") from None
    if snap.format != "mathlens-items" or snap.version != SNAPSHOT_VERSION:
        raise UserError(f"{path}: item snapshot {snap.format} version {snap.version}; this mathlens reads "
                        f"mathlens-items version {SNAPSHOT_VERSION}")
    return snap.exams


def reload_from_sources(manifest: Manifest) -> list[Exam]:
    """Questions of a run without a snapshot, loaded again from the manifest's paths."""
    from mathlens.runs.plan import load_exams

    try:
        return load_exams(manifest)
    except UserError as exc:
        raise UserError(f"this run keeps no copy of its items (it was made by an older mathlens) and they "
                        f"cannot be loaded again: {exc}") from None


def question_map(exams: list[Exam]) -> dict[tuple[str, str], Question]:
    """(exam id, question id) -> question."""
    return {(exam.id, q.id): q for exam in exams for q in exam.questions}
