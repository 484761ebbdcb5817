"""Analysis documents: how every analysis stores its results in `RUN/analysis/<name>.jsonl`.

One document per analysis. The file is JSON Lines: the first line is the `Envelope` (which
analysis, its schema version, the mathlens version that wrote it, the options it ran with, the
run and a digest of the records it read, the number of entries, and the analysis's typed
summary); every further line is one entry. Entries about one response embed a `RecordRef`, the
record's identity, so any reader can group by model, configuration, exam, question, variant and
repeat without knowing the analysis.

Each analysis declares its document once, as a `DocumentSpec` naming its entry and summary models;
writers and readers (other analyses, the report, `show`) go through that spec, so what is read is
exactly what was written, validated by the owning pydantic model. Entries are written and read
as a stream: `write` consumes an iterator and `entries` yields one validated entry at a time, and
`index` maps record keys to byte offsets so the report can fetch one entry when it needs it.

Files from before this layout (`analysis/<name>.json`, no envelope) and files with another schema
version are refused with a `DocumentVersionError` that names the file, the version found and the
version expected; re-running the analysis rewrites them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mathlens import __version__
from mathlens.errors import UserError
from mathlens.runs.coverage import CoverageStatus, RecordsSnapshot, coverage, prefix_digests, records_snapshot
from mathlens.runs.locks import WriterLock, sweep_temporaries, temporary
from mathlens.runs.records import RunRecord

FORMAT: Final = "mathlens.analysis"

E = TypeVar("E", bound=BaseModel)
S = TypeVar("S", bound=BaseModel)


class DocumentError(UserError):
    """An analysis document could not be read (damaged, foreign, or an entry that does not validate)."""


class DocumentVersionError(DocumentError):
    """An analysis document was written in another layout or schema version than this mathlens reads."""


class RecordRef(BaseModel):
    """The identity of one run record, embedded in every per-response entry of every analysis."""

    model_config = ConfigDict(frozen=True)

    key: str
    model: str
    configuration: str
    exam_id: str
    question_id: str
    variant: str = "original"
    variant_kind: str = "original"
    repeat: int = 0

    @classmethod
    def of(cls, record: RunRecord) -> RecordRef:
        return cls(key=record.key, model=record.model, configuration=record.configuration,
                   exam_id=record.exam_id, question_id=record.question_id, variant=record.variant.name,
                   variant_kind=record.variant.kind, repeat=record.repeat)

    @property
    def original(self) -> bool:
        """The unmodified prompt (not an ablation or other variant)."""
        return self.variant_kind == "original"

    @property
    def group(self) -> tuple[str, str, str]:
        """(model, configuration, variant): the cell a figure is computed per."""
        return self.model, self.configuration, self.variant


class Envelope(BaseModel):
    """The first line of an analysis document."""

    format: Literal["mathlens.analysis"] = FORMAT
    analysis: str
    schema_version: int
    mathlens_version: str = __version__
    run_id: str
    records_sha256: str = Field(description="digest of records.jsonl as the analysis read it")
    #: how many records the analysis read, and their byte length in records.jsonl (None in
    #: documents written before these were recorded); see `mathlens.runs.coverage`
    records: int | None = None
    records_bytes: int | None = None
    #: the command that rewrites this document, with RUN for the run directory
    rerun: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    entries: int = 0
    summary: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Document(Generic[S]):
    """A document's envelope with its summary validated by the owning model."""

    path: Path
    envelope: Envelope
    summary: S

    @property
    def options(self) -> dict[str, Any]:
        return self.envelope.options


@dataclass(frozen=True)
class DocumentSpec(Generic[E, S]):
    """One analysis's document: its file name, schema version, entry model and summary model.

    Bump `version` whenever a field of `entry` or `summary` changes meaning or is removed; readers
    then refuse older files with a message saying to re-run the analysis.
    """

    name: str
    version: int
    entry: type[E]
    summary: type[S]
    #: how the analysis is re-run, for error messages
    rerun: str = "mathlens analyze RUN"

    # -- paths ---------------------------------------------------------------------------------
    def path(self, root: Path) -> Path:
        return Path(root) / "analysis" / f"{self.name}.jsonl"

    def legacy_path(self, root: Path) -> Path:
        return Path(root) / "analysis" / f"{self.name}.json"

    def exists(self, root: Path) -> bool:
        """Whether the run has this document (in the current layout or an older one)."""
        return self.path(root).exists() or self.legacy_path(root).exists()

    def lock_path(self, root: Path) -> Path:
        return Path(root) / "analysis" / f".{self.name}.lock"

    def lock(self, root: Path) -> WriterLock:
        """The lock that makes one process at a time the writer of this document."""
        return WriterLock(self.lock_path(root), f"analysis/{self.name}.jsonl of {root}",
                          f"another mathlens command is writing it; wait for it to finish, then run "
                          f"`{self.rerun_in(root)}` again if needed")

    def rerun_in(self, root: Path) -> str:
        """The command that rewrites this document for the run at `root`."""
        return self.rerun.replace("RUN", str(root))

    # -- writing -------------------------------------------------------------------------------
    def write(self, root: Path, *, run_id: str, entries: Iterable[E], summary: S | Callable[[], S],
              records_sha256: str | None = None, records: RecordsSnapshot | None = None,
              options: BaseModel | dict[str, Any] | None = None) -> Path:
        """Write the document atomically: entries are streamed to a temporary file, then the
        envelope (which needs the entry count) is written before them into another temporary in
        the same folder, which is renamed over the document. Both temporaries carry this
        process's PID, and the document's lock (`lock`) is held meanwhile, so two writers never
        mix; temporaries a killed writer left are removed by the next one.

        `records` is the snapshot of the records the analysis read (count, bytes, digest); older
        callers pass only `records_sha256`. `summary` may be a function, called once every entry
        has been consumed (so a summary can be accumulated while the entries stream past)."""
        if records is None and records_sha256 is None:
            raise TypeError("write() needs records (a RecordsSnapshot) or records_sha256")
        path = self.path(root)
        opts = options.model_dump(mode="json") if isinstance(options, BaseModel) else dict(options or {})
        lock = self.lock(root)
        try:
            lock.acquire()
        except OSError as exc:
            from mathlens.runs.store import write_failure

            raise write_failure(Path(root), self.lock_path(root), exc, again=self.rerun_in(root)) from None
        body = path.with_name(f".{path.name}.{os.getpid()}.entries.tmp")
        tmp = temporary(path)
        try:
            sweep_temporaries(path, f"{path.name}.tmp", f"{path.name}.entries.tmp")
            count = 0
            with body.open("w", encoding="utf-8") as fh:
                for entry in entries:
                    if not isinstance(entry, self.entry):
                        raise TypeError(f"{self.name}: entry is {type(entry).__name__}, not {self.entry.__name__}")
                    fh.write(entry.model_dump_json())
                    fh.write("\n")
                    count += 1
            envelope = Envelope(analysis=self.name, schema_version=self.version, run_id=run_id,
                                records_sha256=records.sha256 if records is not None else records_sha256 or "",
                                records=records.count if records is not None else None,
                                records_bytes=records.bytes if records is not None else None,
                                rerun=self.rerun, options=opts, entries=count,
                                summary=(summary() if callable(summary) else summary).model_dump(mode="json"))
            with tmp.open("w", encoding="utf-8") as out, body.open("r", encoding="utf-8") as src:
                out.write(envelope.model_dump_json())
                out.write("\n")
                while chunk := src.read(1 << 20):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            from mathlens.runs.store import write_failure

            raise write_failure(Path(root), path, exc, again=self.rerun_in(root)) from None
        finally:
            for leftover in (body, tmp):
                with contextlib.suppress(OSError):
                    leftover.unlink(missing_ok=True)
            lock.release()
        with contextlib.suppress(OSError):
            self.legacy_path(root).unlink(missing_ok=True)  # an older layout's file is now stale
        return path

    # -- reading -------------------------------------------------------------------------------
    def read(self, root: Path) -> Document[S] | None:
        """The envelope and summary, or None when the run has no such document."""
        path = self.path(root)
        if not path.exists():
            self._refuse_legacy(root)
            return None
        try:
            with path.open("rb") as fh:
                first = fh.readline()
        except OSError as exc:
            raise DocumentError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        envelope = self._envelope(path, first)
        try:
            summary = self.summary.model_validate(envelope.summary)
        except ValidationError as exc:
            raise DocumentError(f"{path}: line 1 (summary): {_first_problem(exc)}") from None
        return Document(path=path, envelope=envelope, summary=summary)

    def entries(self, root: Path) -> Iterator[E]:
        """Every entry, validated, one at a time (nothing when the document does not exist)."""
        for _, entry in self.scan(root):
            yield entry

    def index(self, root: Path) -> dict[str, list[int]]:
        """Record key -> byte offsets of the entries about that record (per-response documents)."""
        out: dict[str, list[int]] = {}
        for offset, entry in self.scan(root):
            ref = getattr(entry, "record", None)
            if isinstance(ref, RecordRef):
                out.setdefault(ref.key, []).append(offset)
        return out

    def entry_at(self, root: Path, offset: int) -> E:
        """The entry that starts at byte `offset` (from `index`)."""
        path = self.path(root)
        with path.open("rb") as fh:
            fh.seek(offset)
            line = fh.readline()
        return self._entry(path, line, None)

    def scan(self, root: Path) -> Iterator[tuple[int, E]]:
        """(byte offset, entry) for every entry, in file order."""
        path = self.path(root)
        if not path.exists():
            self._refuse_legacy(root)
            return
        with path.open("rb") as fh:
            self._envelope(path, fh.readline())
            lineno = 1
            while True:
                offset = fh.tell()
                line = fh.readline()
                if not line:
                    break
                lineno += 1
                if line.strip():
                    yield offset, self._entry(path, line, lineno)

    def _envelope(self, path: Path, line: bytes) -> Envelope:
        try:
            raw = json.loads(line)
        except ValueError:
            raise DocumentError(f"{path}: line 1 is not JSON; expected a {FORMAT} envelope") from None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise DocumentVersionError(f"{path}: not a mathlens analysis document (no {FORMAT!r} envelope); "
                                       f"expected {self.name!r} schema version {self.version}")
        if raw.get("analysis") != self.name:
            raise DocumentError(f"{path}: holds analysis {raw.get('analysis')!r}, expected {self.name!r}")
        if raw.get("schema_version") != self.version:
            raise DocumentVersionError(
                f"{path}: schema version {raw.get('schema_version')!r} (written by mathlens "
                f"{raw.get('mathlens_version', '?')}); this version reads {self.name!r} schema version "
                f"{self.version}. Re-run `{self.rerun}` to rewrite it.")
        try:
            return Envelope.model_validate(raw)
        except ValidationError as exc:
            raise DocumentError(f"{path}: line 1 (envelope): {_first_problem(exc)}") from None

    def _entry(self, path: Path, line: bytes, lineno: int | None) -> E:
        where = f"line {lineno}" if lineno else "entry"
        try:
            return self.entry.model_validate_json(line)
        except ValidationError as exc:
            raise DocumentError(f"{path}: {where}: {_first_problem(exc)}") from None

    def _refuse_legacy(self, root: Path) -> None:
        legacy = self.legacy_path(root)
        if legacy.exists():
            raise DocumentVersionError(
                f"{legacy}: written by an older mathlens in the unversioned layout; this version reads "
                f"{self.path(root).name} ({self.name!r} schema version {self.version}). "
                f"Re-run `{self.rerun}` to rewrite it.")


def read_envelope(path: Path) -> Envelope:
    """The envelope of any analysis document (for listings that do not know its analysis)."""
    try:
        with Path(path).open("rb") as fh:
            line = fh.readline()
        raw = json.loads(line)
    except (OSError, ValueError) as exc:
        raise DocumentError(f"{path}: line 1 is not a {FORMAT} envelope ({type(exc).__name__})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise DocumentVersionError(f"{path}: not a mathlens analysis document (no {FORMAT!r} envelope)")
    try:
        return Envelope.model_validate(raw)
    except ValidationError as exc:
        raise DocumentError(f"{path}: line 1 (envelope): {_first_problem(exc)}") from None


class DocumentState(BaseModel):
    """One analysis document of a run and the records it covers (`mathlens.runs.coverage`)."""

    name: str
    status: CoverageStatus | Literal["unreadable"]
    #: records the analysis read, and the entries it wrote (None when the envelope does not say)
    records: int | None = None
    entries: int | None = None
    #: for people: what the document covers and the command that updates it ("" when current)
    note: str = ""

    @property
    def stale(self) -> bool:
        return self.status != "current"


def document_states(root: Path, now: RecordsSnapshot | None = None) -> list[DocumentState]:
    """Every `analysis/*.jsonl` of the run at `root` with the records it covers against the run's
    records `now` (default: as they are on disk), in one pass over the records file."""
    folder = Path(root) / "analysis"
    paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    found: list[tuple[str, Envelope | str]] = []
    for path in paths:
        try:
            found.append((path.stem, read_envelope(path)))
        except DocumentError as exc:
            found.append((path.stem, str(exc)))
    if not found:
        return []
    records = Path(root) / "records.jsonl"
    now = now or records_snapshot(records)
    lengths = [e.records_bytes for _, e in found if isinstance(e, Envelope) and e.records_bytes is not None]
    prefixes = prefix_digests(records, [n for n in lengths if n < now.bytes])
    out = []
    for name, env in found:
        if isinstance(env, str):
            out.append(DocumentState(name=name, status="unreadable", note=env))
            continue
        cov = coverage(env.records_sha256, env.records_bytes, env.records, now, records, prefixes)
        rerun = (env.rerun or "mathlens analyze RUN").replace("RUN", str(root))
        out.append(DocumentState(name=name, status=cov.status, records=env.records, entries=env.entries,
                                 note=cov.note(rerun)))
    return out


def _first_problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field {loc}: {err.get('msg', 'invalid')}{more}"


def records_digest(path: Path) -> str:
    """sha256 of a records file, read in chunks ("" when it does not exist)."""
    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        return ""
    return digest.hexdigest()
