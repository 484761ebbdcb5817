"""The analyzer protocol: what every analysis of a run declares, and what it is handed.

An analysis is one module that defines an `Analyzer`:

- `name`, a one-line `title`, and the `Options` it accepts, a pydantic model (unknown keys and
  wrong types are refused with the valid keys listed; `mathlens analyze -O NAME.key=value`);
- `writes`, the `DocumentSpec`s of the documents it writes (`mathlens.runs.documents`);
- `reads`, the analyzers whose documents it reads: they run first when both are selected, and a
  dependency whose document is missing is run too;
- `judge`, the role of the judge model it needs (None for analyses that call no model). The judge
  is resolved once, in `run_analyzers`, by the rule of `mathlens.runs.judge`; a bare
  `mathlens analyze RUN` runs only the analyses that need none (`Analyzer.default`);
- `summary`, the pydantic model of what one run of it found (usually its document's summary);
- `run(job) -> Outcome[summary]`, which reads the run through `job.store`, writes its documents with
  `job.write(spec, entries, summary)` and returns an `Outcome`: a status, the typed summary, the
  paths written and notes;
- `describe(summary) -> Sequence[str | Rows]`, the lines a command prints for that summary (the
  analyzer says how its own results read; no command reads them by key). A `Rows` is a small table
  of cells already written as text, which the command lays out to the width of the terminal.

Per-record work goes through `job.executor(...)` (`executor.py`): a local thread pool by default,
or Ray tasks (`mathlens analyze --executor ray`); the executor's options are not analysis options
and never enter a document's envelope, since they do not change what is computed.

`mathlens analyze`, `mathlens grade`, `mathlens maple` and `mathlens tutor score` all run analyses
through `run_analyzers` (`registry.py`), so options, judge choice and order follow one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from mathlens.analyze.executor import Executor, ExecutorOptions, open_executor
from mathlens.models.options import parse_provider_options
from mathlens.runs.coverage import RecordsSnapshot
from mathlens.runs.documents import DocumentSpec, DocumentState
from mathlens.runs.records import ModelEntry
from mathlens.runs.store import RunStore

Opt = TypeVar("Opt", bound="AnalyzerOptions")
E = TypeVar("E", bound=BaseModel)
S = TypeVar("S", bound=BaseModel)
Summary = TypeVar("Summary", bound=BaseModel)


class AnalyzerOptions(BaseModel):
    """Base of every analyzer's options: unknown keys are refused, values are validated."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class NoOptions(AnalyzerOptions):
    """An analyzer that takes no options."""


@dataclass(frozen=True)
class AnalysisJob(Generic[Opt]):
    """One analyzer's run over one run directory: the store, its validated options, its judge."""

    store: RunStore
    options: Opt
    judge: ModelEntry | None = None
    #: do not reuse cached model replies (judges)
    no_cache: bool = False
    #: where per-record work runs (`--executor`, `--address`, `--workers`, `--batch`)
    executor_options: ExecutorOptions = field(default_factory=ExecutorOptions)
    #: an executor opened once for every analyzer of one `run_analyzers` call (a Ray connection)
    shared_executor: Executor | None = None

    @contextmanager
    def executor(self, default_workers: int = 1) -> Iterator[Executor]:
        """The executor for this job's per-record work; a local one has `default_workers` threads
        unless `--workers` says otherwise. One opened here is closed on leaving."""
        if self.shared_executor is not None:
            yield self.shared_executor
            return
        opened = open_executor(self.executor_options, default_workers=default_workers)
        try:
            yield opened
        finally:
            opened.close()

    @cached_property
    def records(self) -> RecordsSnapshot:
        """The records this job reads (frozen by `run_analyzers` before any analyzer starts, so a
        run still being written is read up to the same record by every analyzer)."""
        return self.store.snapshot()

    @property
    def records_sha256(self) -> str:
        return self.records.sha256

    def write(self, spec: DocumentSpec[E, S], entries: Iterable[E], summary: S | Callable[[], S]) -> Path:
        """Write one document of this analysis (envelope with this job's options, run and records)."""
        return spec.write(self.store.root, run_id=self.store.manifest().run_id,
                          records=self.records, entries=entries, summary=summary,
                          options=self.options)

    def require_judge(self) -> ModelEntry:
        if self.judge is None:  # run_analyzers resolves a judge for every analyzer that declares one
            raise RuntimeError("this analyzer needs a judge and none was resolved")
        return self.judge


@dataclass(frozen=True)
class Outcome(Generic[Summary]):
    """What one analyzer's run produced: its status, its own typed summary, the files it wrote.

    `status` is `ok`, `error` (the analyzer raised; `error` says what, `summary` is None) or a word
    of the analysis's own (`no_variants`, `empty`). `notes` are sentences for a person.
    """

    status: str
    summary: Summary | None
    paths: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None

    @classmethod
    def ok(cls, summary: Summary, *paths: Path, status: str = "ok",
           notes: Iterable[str] = ()) -> Outcome[Summary]:
        """The outcome of an analyzer that finished."""
        return cls(status=status, summary=summary, paths=tuple(paths), notes=tuple(notes))

    @classmethod
    def skipped(cls, reason: str) -> Outcome[Any]:
        """The outcome of an analyzer that had nothing to do (`reason` says why)."""
        return cls(status="skipped", summary=None, notes=(reason,))

    @classmethod
    def failed(cls, error: str) -> Outcome[Any]:
        """The outcome of an analyzer that raised."""
        return cls(status="error", summary=None, error=error)


class OutcomeDocument(BaseModel):
    """An outcome as `--json` prints it: the summary is the analyzer's own model, dumped whole."""

    model_config = ConfigDict(frozen=True)

    analyzer: str
    status: str
    paths: list[str]
    notes: list[str]
    error: str | None = None
    summary: SerializeAsAny[BaseModel] | None = None

    @classmethod
    def of(cls, name: str, outcome: Outcome[Any]) -> OutcomeDocument:
        """The printable form of `outcome` (of the analyzer `name`)."""
        return cls(analyzer=name, status=outcome.status, paths=[str(p) for p in outcome.paths],
                   notes=list(outcome.notes), error=outcome.error, summary=outcome.summary)


class OutcomesDocument(BaseModel):
    """What `mathlens analyze --json` prints: each analyzer's outcome, by name, for one run."""

    model_config = ConfigDict(frozen=True)

    run: str
    analyzers: dict[str, OutcomeDocument]
    #: the run's analysis documents that cover fewer or other records than it holds now
    stale: list[DocumentState] = Field(default_factory=list)

    @classmethod
    def of(cls, run: Path, outcomes: dict[str, Outcome[Any]],
           stale: list[DocumentState] | None = None) -> OutcomesDocument:
        """The document of `outcomes` (as `run_analyzers` returns them) over `run`."""
        return cls(run=str(run), analyzers={name: OutcomeDocument.of(name, o) for name, o in outcomes.items()},
                   stale=list(stale or []))


@dataclass(frozen=True)
class Rows:
    """A table among the lines an analyzer prints: a header per column and rows of cells already
    written as text (an empty cell says nothing). The columns named in `right` hold figures and are
    aligned right."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        wrong = [r for r in self.rows if len(r) != len(self.headers)]
        if wrong:
            raise ValueError(f"a row of {len(wrong[0])} cells under {len(self.headers)} headers")


#: one printed line of an analyzer: text, or a small table
Line = str | Rows


def no_lines(summary: BaseModel) -> list[Line]:
    """The `describe` of an analyzer whose status line says all."""
    del summary
    return []


@dataclass(frozen=True)
class Analyzer(Generic[Opt, Summary]):
    """One analysis (see the module notes)."""

    name: str
    title: str
    options: type[Opt]
    summary: type[Summary]
    run: Callable[[AnalysisJob[Opt]], Outcome[Summary]]
    writes: tuple[DocumentSpec[Any, Any], ...] = ()
    reads: tuple[str, ...] = ()
    judge: str | None = None
    #: the lines a command prints for a summary of this analyzer
    describe: Callable[[Summary], Sequence[Line]] = no_lines

    @property
    def default(self) -> bool:
        """Whether a bare `mathlens analyze RUN` runs it: only analyses that call no model do."""
        return self.judge is None

    def lines(self, outcome: Outcome[Any]) -> list[Line]:
        """What a command prints under the analyzer's status line for `outcome`."""
        if outcome.error is not None:
            return [outcome.error]
        out: list[Line] = list(outcome.notes)
        if outcome.summary is not None:
            out = [*self.describe(outcome.summary), *out]
        return out

    def parse_options(self, values: dict[str, Any] | BaseModel | None) -> Opt:
        """`values` validated as this analyzer's options (a `UserError` names a bad key)."""
        if isinstance(values, self.options):
            return values
        if isinstance(values, BaseModel):
            values = values.model_dump()
        return parse_provider_options(self.options, values or {}, self.name, what="analyzer option")
