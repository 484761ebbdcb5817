"""Write a run's publication tables into a folder: one file per table and format, plus `index.json`.

Files are named ``<table id>.<ext>`` (``csv``, ``md``, ``tex``). `index.json` (a `TablesIndex`)
lists what was written (title, source analysis, rows, file per format), what was skipped and why,
and the notes the run's analyses left (an unreadable document, with the version expected). A file
listed in an earlier index of the same folder that this export does not write again is removed, so
the folder never keeps a table whose analysis has gone; nothing else in the folder is touched.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from mathlens import __version__
from mathlens.errors import UserError
from mathlens.report.export.registry import build_tables
from mathlens.report.export.render import EXTENSIONS, FORMATS, RENDERERS, Format
from mathlens.report.loader import RunData

INDEX = "index.json"
ALIASES: dict[str, Format] = {"md": "markdown", "tex": "latex"}


class ExportedTable(BaseModel):
    id: str
    title: str
    source: str = Field(description="the analysis document the table was read from")
    rows: int
    files: dict[str, str] = Field(description="format -> file name in the folder")


class SkippedTable(BaseModel):
    id: str
    title: str
    source: str
    reason: str


class TablesIndex(BaseModel):
    """`index.json` of an export folder."""

    format: Literal["mathlens.tables"] = "mathlens.tables"
    mathlens_version: str = __version__
    run_id: str
    run: str
    formats: list[str]
    tables: list[ExportedTable] = Field(default_factory=list)
    skipped: list[SkippedTable] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def parse_formats(text: str) -> tuple[Format, ...]:
    """``latex``, ``markdown``, ``csv`` (``tex`` and ``md`` too), or several separated by commas."""
    out: list[Format] = []
    for word in (w.strip().lower() for w in text.split(",")):
        if not word:
            continue
        fmt = ALIASES.get(word, word)
        if fmt not in FORMATS:
            raise UserError(f"unknown table format {word!r}; use {', '.join(FORMATS)} (or several, comma-separated)")
        if fmt not in out:
            out.append(fmt)
    if not out:
        raise UserError(f"name a table format: {', '.join(FORMATS)}")
    return tuple(out)


def _previous_files(folder: Path) -> set[str]:
    """File names an earlier export listed in this folder's index (nothing if there is none)."""
    try:
        old = TablesIndex.model_validate(json.loads((folder / INDEX).read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return set()
    return {name for t in old.tables for name in t.files.values() if name == Path(name).name}


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def export_tables(run: RunData, folder: Path, formats: Sequence[Format]) -> TablesIndex:
    """Build every table of `run` and write it in each of `formats` under `folder` (created)."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file; with --tables, --out names a folder")
    built = build_tables(run)
    folder.mkdir(parents=True, exist_ok=True)
    stale = _previous_files(folder)
    index = TablesIndex(run_id=run.manifest.run_id, run=str(run.root), formats=list(formats))
    for table in built.tables:
        files: dict[str, str] = {}
        for fmt in formats:
            name = f"{table.id}.{EXTENSIONS[fmt]}"
            _write(folder / name, RENDERERS[fmt](table))
            files[fmt] = name
            stale.discard(name)
        index.tables.append(ExportedTable(id=table.id, title=table.title, source=table.source,
                                          rows=len(table.rows), files=files))
    index.skipped = [SkippedTable(id=s.id, title=s.title, source=s.source, reason=s.reason) for s in built.skipped]
    index.notes = list(dict.fromkeys(run.notes))
    for name in stale:
        with contextlib.suppress(OSError):
            (folder / name).unlink()
    _write(folder / INDEX, index.model_dump_json(indent=2) + "\n")
    return index
