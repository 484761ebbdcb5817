"""Load what a report needs from run directories: manifest, records, questions, analyses.

Everything is read once; analysis files are parsed on first use. Per-question views group the
records of every run by (exam, question), so a report over several runs puts their responses to
the same question side by side.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.overview import RunOverview, run_overview
from mathlens.analyze.quality import QualityFlags, run_flags
from mathlens.analyze.questions import QuestionCounts, question_counts
from mathlens.errors import UserError
from mathlens.items.schema import Exam, Question
from mathlens.runs.coverage import RecordsSnapshot
from mathlens.runs.documents import Document, DocumentError, DocumentSpec, DocumentState, document_states
from mathlens.runs.records import Manifest, RunRecord
from mathlens.runs.store import RunStore
from mathlens.unique import occurrences

E = TypeVar("E", bound=BaseModel)
S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class RunData:
    """One run as the report sees it. `label` tells runs apart when several are compared."""

    root: Path
    manifest: Manifest
    records: list[RunRecord]
    exams: dict[str, Exam]
    label: str
    notes: list[str] = field(default_factory=list)
    #: the records this report read (their count, bytes and digest)
    snapshot: RecordsSnapshot | None = None
    _documents: dict[str, Document[Any] | None] = field(default_factory=dict, repr=False)
    _indexes: dict[str, dict[str, list[int]]] = field(default_factory=dict, repr=False)

    @cached_property
    def document_states(self) -> dict[str, DocumentState]:
        """Each analysis document present, by name, with the records it covers against the records
        this report read (`mathlens.runs.coverage`)."""
        return {s.name: s for s in document_states(self.root, self.snapshot)}

    def stale_notes(self, names: tuple[str, ...]) -> list[str]:
        """For each of the documents `names` that does not cover exactly the records this report
        shows: "analysis/NAME.jsonl covers ...", with the command that updates it."""
        states = self.document_states
        return [f"analysis/{n}.jsonl {states[n].note}" for n in names if n in states and states[n].stale
                and states[n].status != "unreadable"]

    @cached_property
    def analysis_names(self) -> list[str]:
        """Names of the analysis documents present (`analysis/<name>.jsonl`)."""
        d = self.root / "analysis"
        return sorted(p.stem for p in d.glob("*.jsonl")) if d.is_dir() else []

    def document(self, spec: DocumentSpec[Any, S]) -> Document[S] | None:
        """The envelope and typed summary of one analysis, or None when the run lacks it. A file that
        cannot be read (an older layout or schema version, damage) is noted, with the error that
        names the file and the version expected, and its sections are skipped."""
        if spec.name not in self._documents:
            try:
                self._documents[spec.name] = spec.read(self.root)
            except DocumentError as exc:
                self._refuse(spec, exc)
        return self._documents[spec.name]

    def _refuse(self, spec: DocumentSpec[Any, Any], exc: DocumentError) -> None:
        self.notes.append(f"skipped the {spec.name} analysis: {exc}")
        self._documents[spec.name] = None

    def _index(self, spec: DocumentSpec[Any, Any], fields: tuple[str, ...] | None) -> dict[str, list[int]]:
        """Offsets of the entries of `spec` by record key (`fields` None) or by the joined values of
        `fields`; built once. A damaged entry drops the whole document, with a note."""
        cache = spec.name if fields is None else f"{spec.name}:{','.join(fields)}"
        if cache not in self._indexes:
            index: dict[str, list[int]] = {}
            if self.document(spec) is not None:
                try:
                    if fields is None:
                        index = spec.index(self.root)
                    else:
                        for offset, entry in spec.scan(self.root):
                            key = "\x1f".join(str(getattr(entry, f)) for f in fields)
                            index.setdefault(key, []).append(offset)
                except DocumentError as exc:
                    self._refuse(spec, exc)
                    index = {}
            self._indexes[cache] = index
        return self._indexes[cache]

    def entries(self, spec: DocumentSpec[E, Any], key: str) -> list[E]:
        """Every entry of analysis `spec` about record `key`, in file order (read from disk on
        demand through a key -> offset index, so a large document is never held in memory)."""
        return [spec.entry_at(self.root, off) for off in self._index(spec, None).get(key, [])]

    def entry(self, spec: DocumentSpec[E, Any], key: str) -> E | None:
        """The (last) entry of analysis `spec` about record `key`, if it has one."""
        found = self.entries(spec, key)
        return found[-1] if found else None

    def entries_by(self, spec: DocumentSpec[E, Any], fields: tuple[str, ...], *values: str) -> list[E]:
        """The entries of `spec` whose `fields` (names of fields of its entry model, e.g.
        ``("exam_id", "question_id")``) equal `values`; indexed once per (spec, fields)."""
        unknown = [f for f in fields if f not in spec.entry.model_fields]
        if unknown:
            raise ValueError(f"{spec.entry.__name__} has no field(s) {', '.join(unknown)}")
        offsets = self._index(spec, fields).get("\x1f".join(values), [])
        return [spec.entry_at(self.root, off) for off in offsets]

    def all_entries(self, spec: DocumentSpec[E, Any]) -> Iterator[E]:
        """Every entry of analysis `spec`, streamed in file order (after a check that every line
        validates, so a damaged document is skipped as a whole, with a note)."""
        self._index(spec, None)
        if self.document(spec) is None:
            return iter(())
        return spec.entries(self.root)

    @cached_property
    def quality(self) -> dict[str, QualityFlags | None]:
        """Record key -> output-quality flags: as the answers analysis stored them, else computed
        from the record (None for a failed request)."""
        stored = {e.record.key: e.quality for e in self.all_entries(ANSWERS)}
        return run_flags(self.records, stored)

    @cached_property
    def overview(self) -> RunOverview:
        """The counts of this run's records (`mathlens.analyze.overview`, as `mathlens show` prints them)."""
        store = RunStore(self.root)
        if self.snapshot is not None:
            store.freeze(self.snapshot)  # the records this report read
        return run_overview(store, self.records, self.quality)

    @cached_property
    def questions(self) -> list[QuestionCounts]:
        """Per question: responses counted, with what the analyses found (`mathlens.analyze.questions`)."""
        specs: tuple[DocumentSpec[Any, Any], ...] = (ANSWERS, FLOW, SENSITIVITY)
        readable = [spec.name for spec in specs if self.document(spec) is not None]
        try:
            return question_counts(self.root, self.records, readable)
        except DocumentError as exc:
            self.notes.append(f"question counts without the analyses: {exc}")
            return question_counts(self.root, self.records, ())

    def degenerate(self, key: str) -> bool:
        """True when record `key`'s response is degenerate (empty, echo, loop, wrong script)."""
        flags = self.quality.get(key)
        return flags is not None and flags.degenerate

    def question(self, exam_id: str, question_id: str) -> Question | None:
        exam = self.exams.get(exam_id)
        if exam is None:
            return None
        return next((q for q in exam.questions if q.id == question_id), None)


@dataclass(frozen=True)
class Response:
    """One record placed in a question view."""

    run: RunData
    record: RunRecord

    @property
    def label(self) -> str:
        rec = self.record
        parts = [rec.model, rec.configuration]
        if self.run.manifest.runs > 1:
            parts.append(f"repeat {rec.repeat + 1}")
        return " · ".join(parts)

    @property
    def full_label(self) -> str:
        """`label` with the run named (for reports over several runs)."""
        return f"{self.run.label} · {self.label}"


@dataclass(frozen=True)
class QuestionView:
    """Every response to one question across the runs of a report."""

    exam_id: str
    question_id: str
    question: Question | None
    text: str
    originals: list[Response] = field(default_factory=list)
    variants: list[Response] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return question_anchor(self.exam_id, self.question_id)

    @property
    def label(self) -> str:
        return question_label(self.exam_id, self.question_id)


def question_anchor(exam_id: str, question_id: str) -> str:
    """The in-page anchor of a question's block: `q-EXAM-QUESTION`, any character but a letter, a
    digit, `-` or `_` replaced by `_`."""
    return "q-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in f"{exam_id}-{question_id}")


def question_label(exam_id: str, question_id: str) -> str:
    """A question as the page names it: `EXAM · QUESTION`."""
    return f"{exam_id} · {question_id}"


def load_run(path: Path | str, label: str | None = None) -> RunData:
    """Read a run directory (raises `UserError` when it is not one)."""
    store = RunStore(path)
    manifest = store.manifest()
    snapshot = store.freeze()  # a run still being written: read, and compare with, these records only
    records = list(store.records())
    notes: list[str] = []
    exams: dict[str, Exam] = {}
    try:
        exams = {e.id: e for e in store.exams()}
    except (UserError, OSError, ValueError) as exc:
        # the item files may have moved since the run; the records still hold every prompt
        notes.append(f"questions could not be loaded ({exc}); prompts are taken from records")
    return RunData(root=Path(path), manifest=manifest, records=records, exams=exams,
                   label=label or manifest.run_id, notes=notes, snapshot=snapshot)


def load_runs(paths: list[Path]) -> list[RunData]:
    """Read several runs; labels are the run ids (made unique if two runs share one)."""
    runs = [load_run(p) for p in paths]
    return [run if n == 1 else replace(run, label=f"{run.label} ({n})")
            for run, n in zip(runs, occurrences(r.label for r in runs), strict=True)]


def _prompt_text(rec: RunRecord) -> str:
    users = [m.content for m in rec.messages if m.role == "user"]
    return users[-1] if users else ""


def question_views(runs: list[RunData]) -> list[QuestionView]:
    """One view per (exam, question), in the order first met (exam order, then question order)."""
    views: dict[tuple[str, str], QuestionView] = {}
    for run in runs:
        for exam in run.exams.values():
            for q in exam.questions:
                views.setdefault((exam.id, q.id), QuestionView(exam.id, q.id, q, q.prompt_text()))
        for rec in run.records:
            view = views.get((rec.exam_id, rec.question_id))
            if view is None:
                view = views.setdefault((rec.exam_id, rec.question_id),
                                        QuestionView(rec.exam_id, rec.question_id, None, _prompt_text(rec)))
            (view.originals if rec.variant.kind == "original" else view.variants).append(Response(run, rec))
    return [v for v in views.values() if v.originals or v.variants]
