"""Source documents for a knowledge base: Markdown, plain text, PDF, and the built-in note files.

A `Document` is one source's whole text (contextual retrieval shows it to a model when writing each
chunk's context). Built-in note files are YAML: one file per subject area holding many short notes;
the file is the document and each note is one pre-cut chunk whose id is the note's id.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mathlens.errors import UserError
from mathlens.unique import occurrences

TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".rst")
PDF_SUFFIXES = (".pdf",)
NOTE_SUFFIXES = (".yaml", ".yml")
NOTE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*[a-z0-9]$")


class Note(BaseModel):
    """One reference note: a definition, rule, theorem or short worked example."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=NOTE_ID.pattern, min_length=3, max_length=80)
    title: str = Field(min_length=3)
    topics: list[str] = Field(min_length=1)
    text: str = Field(min_length=20)


class NoteFile(BaseModel):
    """A YAML file of notes on one area (e.g. `derivative_rules.yaml`)."""

    model_config = ConfigDict(extra="forbid")

    title: str
    course: str = Field(description="Calculus I, II or III")
    notes: list[Note] = Field(min_length=1)


@dataclass(frozen=True)
class Passage:
    """A pre-cut piece of a document (a note) with its own id, title and topics."""

    id: str
    title: str
    topics: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class Document:
    """One source. `passages` is empty for free text, which the chunker cuts itself."""

    id: str
    source: str
    title: str
    text: str
    passages: tuple[Passage, ...] = field(default=())

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]


def doc_id_for(path: Path) -> str:
    """A short stable id from a file name: `Calculus Notes 2.md` -> `calculus-notes-2`."""
    slug = re.sub(r"[^a-z0-9]+", "-", path.stem.lower()).strip("-")
    return slug or "document"


def load_note_file(path: Path) -> Document:
    """Read a YAML note file into one document whose passages are its notes."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        notes = NoteFile.model_validate(data)
    except (yaml.YAMLError, ValidationError) as exc:
        raise UserError(f"{path}: not a valid note file: {str(exc).splitlines()[0]}") from None
    parts: list[str] = [f"# {notes.title} ({notes.course})", ""]
    passages: list[Passage] = []
    offset = len("\n".join(parts)) + 1
    for note in notes.notes:
        # Note files wrap lines for editing; the text itself is one paragraph.
        block = f"## {note.title}\n{' '.join(note.text.split())}\n"
        passages.append(Passage(note.id, note.title, tuple(note.topics), offset, offset + len(block)))
        parts.append(block)
        offset += len(block) + 1
    text = "\n".join(parts)
    return Document(id=doc_id_for(path), source=path.name, title=notes.title, text=text,
                    passages=tuple(passages))


def _pdf_text(path: Path) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        # A blank line between pages keeps page breaks as segment boundaries for the chunker.
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages)
    except (PdfReadError, OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read this PDF ({exc})") from None


def load_document(path: Path) -> Document:
    """Load one file by its suffix; unknown suffixes and unreadable files are `UserError`s."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if suffix in NOTE_SUFFIXES:
        return load_note_file(path)
    if suffix in PDF_SUFFIXES:
        text = _pdf_text(path)
    elif suffix in TEXT_SUFFIXES:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{path}: not UTF-8 text ({exc.reason})") from None
    else:
        known = ", ".join(TEXT_SUFFIXES + PDF_SUFFIXES + NOTE_SUFFIXES)
        raise UserError(f"{path}: cannot ingest {suffix or 'files without a suffix'} (known: {known})")
    title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.strip()), path.stem)
    return Document(id=doc_id_for(path), source=path.name, title=title[:120], text=text)


def load_sources(paths: list[Path]) -> list[Document]:
    """Load files and directories (searched recursively for known suffixes), with unique ids."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            known = TEXT_SUFFIXES + PDF_SUFFIXES + NOTE_SUFFIXES
            files.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in known))
        else:
            files.append(p)
    if not files:
        raise UserError("no source files to ingest")
    docs = [load_document(f) for f in files]
    # two files with the same stem in different folders: the later ones are numbered
    return [d if n == 1 else replace(d, id=f"{d.id}-{n}")
            for d, n in zip(docs, occurrences(d.id for d in docs), strict=True)]
