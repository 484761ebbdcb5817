"""Grading worksheets: one CSV row per record x unit, written for people and read back.

Each rubric chooses its columns (the record's context, the unit's scale, the response); every
worksheet has a record key, a unit id, a score cell, a note cell and may have a grader cell.
Reading is the same for every rubric:

- columns are found under any of their names, so sheets filled before the names were unified
  still import: `key` or `response_key`; `criterion` or `item_id`; `points` or `score`;
  `comment` or `note`;
- a row naming a record that is not in the run, or a unit that is not in the rubric, is refused,
  and so is a unit scored twice for the same record by the same grader;
- the score is parsed by the unit's scale (a value or a label on an ordinal scale, a number of
  points within bounds), and refused otherwise with the file and line;
- a blank score is "not scored" (`left blank`); a record none of whose rows is filled is not a
  judgement at all;
- the grader is the name given to the reader, else the row's `grader` cell, else the file name.

`replace_graders` merges a new import into what was stored (`stored_judgements`, which refuses a
document of another schema version rather than overwrite it): a grader imported again replaces
only their own judgements.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.runs.documents import DocumentSpec, DocumentVersionError

from .entries import Judgement, UnitScore, settle
from .units import Ordinal, Target

#: canonical column -> the names it may have in a worksheet (the first is what new sheets use)
ALIASES: dict[str, tuple[str, ...]] = {
    "key": ("key", "response_key"),
    "unit": ("criterion", "item_id"),
    "score": ("points", "score"),
    "note": ("comment", "note"),
    "grader": ("grader",),
}
REQUIRED = ("key", "unit", "score")
BLANK = "left blank"


def write_sheet(path: Path, columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> int:
    """Write a worksheet with these columns; the number of rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
            count += 1
    return count


def format_value(value: float | None) -> str:
    """A score as a worksheet shows it (`1`, `2.5`; blank for none)."""
    return "" if value is None else f"{value:g}"


@dataclass(frozen=True)
class SheetRead:
    """What one worksheet held: the judgements (one per grader and record with any score) and the
    number of rows read."""

    judgements: list[Judgement]
    rows: int


def _columns(path: Path, header: Sequence[str] | None) -> dict[str, str]:
    found = {name: next((a for a in ALIASES[name] if a in (header or [])), "") for name in ALIASES}
    missing = [" or ".join(ALIASES[n]) for n in REQUIRED if not found[n]]
    if missing:
        raise UserError(f"{path}: the worksheet lacks the column(s) {', '.join(missing)}")
    return found


def read_sheet(path: Path, targets: Mapping[str, Target], *, grader: str | None = None, noun: str = "unit",
               missing: str = "units left blank") -> SheetRead:
    """Judgements from one filled worksheet, validated against the run (`targets`: record key ->
    the record and its units). `noun` names a unit in errors ("rubric item"); `missing` says how
    many units a partly scored record lacks ("criteria left blank")."""
    try:
        fh = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise UserError(f"{path}: no such worksheet") from None
    cells: dict[tuple[str, str], dict[str, UnitScore]] = {}
    rows = 0
    with fh:
        reader = csv.DictReader(fh)
        cols = _columns(path, reader.fieldnames)
        for row in reader:
            rows += 1
            where = f"{path}:{reader.line_num}"

            def cell(name: str, row: dict[str, str] = row) -> str:
                return (row.get(cols[name]) or "").strip() if cols[name] else ""

            key = cell("key")
            target = targets.get(key)
            if target is None:
                raise UserError(f"{where}: record {key!r} is not in this run")
            try:
                unit = target.unit(cell("unit"), noun)
            except UnknownNameError as exc:
                raise UserError(f"{where}: {exc}") from None
            name = grader or cell("grader") or path.stem
            scores = cells.setdefault((name, key), {})
            if unit.id in scores:
                raise UserError(f"{where}: {key} {unit.id} is scored twice")
            text, note = cell("score"), cell("note")
            if not text:
                scores[unit.id] = UnitScore(unit=unit.id, max=unit.scale.top, rationale=note, error=BLANK)
                continue
            value = unit.scale.parse(text, unit.id, where)
            label = unit.scale.label_of(value) if isinstance(unit.scale, Ordinal) else None
            scores[unit.id] = UnitScore(unit=unit.id, value=value, label=label, max=unit.scale.top, rationale=note)
    judgements = []
    for (name, key), by_unit in cells.items():
        if all(s.value is None for s in by_unit.values()):
            continue
        target = targets[key]
        ordered = [by_unit[u.id] for u in target.units if u.id in by_unit]
        judgements.append(settle(target.record, f"human:{name}", ordered, target.max_total,
                                 expected=len(target.units), missing=missing))
    return SheetRead(judgements=judgements, rows=rows)


def replace_graders(stored: Iterable[Judgement], new: Sequence[Judgement]) -> list[Judgement]:
    """`stored` without the judgements of the graders in `new`, followed by `new`."""
    incoming = {j.grader for j in new}
    return [j for j in stored if j.grader not in incoming] + list(new)


def stored_judgements(spec: DocumentSpec[Judgement, Any], root: Path) -> list[Judgement]:
    """The judgements of people imported so far (`spec`'s entries). A document this version cannot
    read is refused, not replaced: an import merges with it and would drop the grades it holds."""
    try:
        return list(spec.entries(root))
    except DocumentVersionError as exc:
        raise UserError(f"{exc} An import now would drop the grades stored there. Move the file aside and "
                        "import each grader's worksheet again.") from None
