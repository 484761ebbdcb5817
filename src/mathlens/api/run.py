"""A run directory as data: its records, questions and analysis documents, typed or as data frames.

`open_run(path)` reads a run made by `mathlens run` or `mathlens import` (nothing is written).
`Run.analysis(name)` returns the document an analysis wrote, validated by the model that owns it
(`Analysis.summary`, `Analysis.entries()`); `Run.frame(name)` the same entries as a pandas
DataFrame, one row per entry, nested fields flattened to dotted columns (`verdict.predicted`) and
the record's identity as plain columns (`key`, `model`, `configuration`, `exam_id`,
`question_id`, `variant`, `repeat`). `frame("records")` is the run's records themselves.

Documents are found by name through `DOCUMENTS` (the analysis's `DocumentSpec`, imported only when
asked for); a document another version of mathlens wrote is refused with the command that
rewrites it, as everywhere else.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from pydantic import BaseModel

from mathlens.errors import UnknownNameError, UserError

if TYPE_CHECKING:
    import pandas as pd

    from mathlens.analyze.flow.models import FlowRecord, FlowSummary
    from mathlens.analyze.grading.answer_records import AnswerRecord, AnswersSummary
    from mathlens.analyze.source_agreement.models import SourceAgreementEntry, SourceAgreementSummary
    from mathlens.items.schema import Question
    from mathlens.runs.documents import DocumentSpec, Envelope
    from mathlens.runs.records import Manifest, RunRecord

E = TypeVar("E", bound=BaseModel)
S = TypeVar("S", bound=BaseModel)

#: document name -> "module:SPEC", imported when asked for
DOCUMENTS: dict[str, str] = {
    "answers": "mathlens.analyze.grading.answer_records:ANSWERS",
    "flow": "mathlens.analyze.flow.models:FLOW",
    "sensitivity": "mathlens.analyze.ablation.analyzer:SENSITIVITY",
    "breakdown": "mathlens.analyze.breakdown.models:BREAKDOWN",
    "source-agreement": "mathlens.analyze.source_agreement.models:SOURCE_AGREEMENT",
    "grades": "mathlens.analyze.grading.grades:GRADES",
    "human_grades": "mathlens.analyze.grading.grades:HUMAN_GRADES",
    "grade_tables": "mathlens.analyze.grading.tables:GRADE_TABLES",
    "agreement": "mathlens.analyze.grading.agreement_report:AGREEMENT",
    "maple": "mathlens.analyze.maple.results:MAPLE",
    "maple_agreement": "mathlens.analyze.maple.agreement:MAPLE_AGREEMENT",
    "tutor_scores": "mathlens.analyze.adaptivity.judge:TUTOR_SCORES",
    "tutor_human": "mathlens.analyze.adaptivity.worksheet:TUTOR_HUMAN",
    "tutor_agreement": "mathlens.analyze.adaptivity.agreement:TUTOR_AGREEMENT",
    "tutor_stats": "mathlens.analyze.adaptivity.tables:TUTOR_STATS",
}
#: the record identity columns `frame` puts first
RECORD_COLUMNS = ("key", "model", "configuration", "exam_id", "question_id", "variant", "repeat")


def document_spec(name: str) -> DocumentSpec[Any, Any]:
    """The `DocumentSpec` of the document called `name` ("did you mean" when there is none)."""
    target = DOCUMENTS.get(name)
    if target is None:
        raise UnknownNameError("analysis document", name, [*DOCUMENTS, "records"])
    module, _, attr = target.partition(":")
    spec: DocumentSpec[Any, Any] = getattr(importlib.import_module(module), attr)
    return spec


@dataclass(frozen=True)
class Analysis(Generic[E, S]):
    """One analysis document of a run: its envelope, its typed summary and a stream of its entries."""

    name: str
    path: Path
    envelope: Envelope
    summary: S
    spec: DocumentSpec[E, S]
    root: Path

    @property
    def options(self) -> dict[str, Any]:
        """The options the analysis ran with."""
        return self.envelope.options

    def entries(self) -> Iterator[E]:
        """Every entry, validated, one at a time."""
        return self.spec.entries(self.root)


class Run:
    """A run directory, read-only (see the module notes)."""

    def __init__(self, path: Path) -> None:
        from mathlens.runs.store import RunStore

        self.path = Path(path)
        self._store = RunStore(self.path)
        self.manifest: Manifest = self._store.manifest()  # a directory that is no run fails here, clearly

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    def records(self) -> Iterator[RunRecord]:
        """Every record of the run (one model answer each), in the order they were written."""
        return self._store.records()

    def questions(self) -> list[Question]:
        """The run's questions (its own copy), item set after item set."""
        return [q for exam in self._store.exams() for q in exam.questions]

    def analyses(self) -> list[str]:
        """The names of the analysis documents the run has."""
        return [name for name in DOCUMENTS if (self.path / "analysis" / f"{name}.jsonl").is_file()]

    @overload
    def analysis(self, name: Literal["answers"]) -> Analysis[AnswerRecord, AnswersSummary]: ...
    @overload
    def analysis(self, name: Literal["flow"]) -> Analysis[FlowRecord, FlowSummary]: ...
    @overload
    def analysis(self, name: Literal["source-agreement"]) -> Analysis[SourceAgreementEntry,
                                                                     SourceAgreementSummary]: ...
    @overload
    def analysis(self, name: DocumentSpec[E, S]) -> Analysis[E, S]: ...
    @overload
    def analysis(self, name: str) -> Analysis[Any, Any]: ...

    def analysis(self, name: str | DocumentSpec[Any, Any]) -> Analysis[Any, Any]:
        """The document of one analysis, by name (`answers`, `flow`, `source-agreement`...: see
        `DOCUMENTS`) or by its `DocumentSpec`; a `UserError` when the run does not have it."""
        spec = document_spec(name) if isinstance(name, str) else name
        doc = spec.read(self.path)
        if doc is None:
            rerun = spec.rerun.replace("RUN", str(self.path))
            present = self.analyses()
            raise UserError(f"{self.path} has no {spec.name} analysis: run `{rerun}`"
                            + (f" (it has: {', '.join(present)})" if present else ""))
        return Analysis(name=spec.name, path=doc.path, envelope=doc.envelope, summary=doc.summary, spec=spec,
                        root=self.path)

    def frame(self, name: str) -> pd.DataFrame:
        """The entries of one analysis (or the records, `"records"`) as a DataFrame (module notes)."""
        import pandas as pd

        if name == "records":
            rows = [_flat(r.model_dump(mode="json")) for r in self.records()]
        else:
            rows = [_flat(_with_record(e.model_dump(mode="json"))) for e in self.analysis(name).entries()]
        frame = pd.DataFrame(rows)
        first = [c for c in RECORD_COLUMNS if c in frame.columns]
        return frame[first + [c for c in frame.columns if c not in first]]


def _with_record(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with its record's identity lifted to the top (`record.model` -> `model`)."""
    ref = entry.pop("record", None)
    if isinstance(ref, dict):
        lifted = {k: ref[k] for k in RECORD_COLUMNS if k in ref}
        entry = {**lifted, **{f"record.{k}": v for k, v in ref.items() if k not in lifted}, **entry}
    return entry


def _flat(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects flattened to dotted keys; lists are kept as cells."""
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = f"{prefix}{key}"
        if isinstance(v, dict) and v:
            out.update(_flat(v, name + "."))
        else:
            out[name] = v
    return out


def open_run(path: str | Path) -> Run:
    """Open a run directory (made by `mathlens run` or `mathlens import`) for reading.

    A path that is no run is a `UserError` saying so.
    """
    return Run(Path(path))
