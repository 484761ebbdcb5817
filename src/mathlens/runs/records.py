"""What a run writes: its manifest and one record per model request.

The record store is the contract between generation and every analysis: analyzers read
`RunRecord`s and write their results under `RUN/analysis/`, never calling a model unless they are
judges (which record their own requests the same way).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from mathlens.items.formats import Format
from mathlens.models.base import FinishReason, GenerateConfig, Message, Usage
from mathlens.runs.importing.provenance import ImportedFrom, SourceScore
from mathlens.solve.configurations import Retrieval
from mathlens.solve.tutoring import TutorDesign
from mathlens.solve.variant import Variant

__all__ = ["ExamMode", "ItemSource", "Manifest", "ModelEntry", "RunRecord", "Status", "Task", "Variant"]

Status = Literal["ok", "error"]
#: How an exam is put to a model: each question in a request of its own, or every question in
#: order within one conversation (docs/exam-setup.md).
ExamMode = Literal["per-question", "sequential"]


class RequestFields(BaseModel):
    """What a planned request (`Task`) and its record (`RunRecord`) both say: which request it is
    and what was sent."""

    key: str
    model: str
    configuration: str
    exam_id: str
    question_id: str
    variant: Variant = Field(default_factory=Variant)
    repeat: int = 0
    messages: list[Message]
    config: GenerateConfig


class Task(RequestFields):
    """One planned request. `key` is unique within a run and stable across resumes."""

    retrieval: Retrieval | None = None
    #: sequential exam mode: the conversation this request belongs to (None: a request of its own)
    conversation: str | None = None
    #: sequential exam mode: the question's place in its exam (0 for the first); `messages` then
    #: hold this question's turn only, and the runner puts the earlier turns before it
    turn: int | None = None


class RunRecord(RequestFields):
    """One finished request. Failures are records too (`status="error"`, with `error`)."""

    request_hash: str
    content_hash: str
    response: str | None = None
    #: the reasoning trace, apart from `response` (the visible answer); None when there was none
    reasoning: str | None = None
    finish_reason: FinishReason = "unknown"
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    #: the replica of a pool that answered (its base URL); not part of any key
    replica: str | None = None
    status: Status = "ok"
    error: str | None = None
    retrieval: Retrieval | None = None
    #: sequential exam mode: the conversation and the question's place in it (`messages` then hold
    #: the whole conversation sent, earlier questions and answers included)
    conversation: str | None = None
    turn: int | None = None
    #: an imported record: the verdicts the source's own scorers gave it (`mathlens import`); None
    #: for records of `mathlens run`
    source_scores: list[SourceScore] | None = None
    created_at: datetime

    @property
    def truncated(self) -> bool:
        """The token cap cut this response short."""
        return self.finish_reason == "length"

    @property
    def worked_text(self) -> str | None:
        """The text whose reasoning is analysed (flow, step checks): the trace when the model gave
        one, else the response. The final answer is always read from `response`, the visible part."""
        return self.reasoning if self.reasoning else self.response

    @property
    def trace_truncated(self) -> bool:
        """The token cap cut the reasoning trace itself: the model never reached a visible answer."""
        return self.truncated and bool(self.reasoning) and not (self.response or "").strip()


class ModelEntry(BaseModel):
    spec: str
    options: dict[str, Any] = Field(default_factory=dict)
    identity: dict[str, Any] = Field(default_factory=dict)


class ItemSource(BaseModel):
    """Where an item set came from: the arguments given to `load_items`, and the file's hash. The
    questions themselves are kept in the run (`RUN/items.json`, see `mathlens.runs.snapshot`)."""

    source: str
    format: Format = "auto"
    mapping: dict[str, str] | None = None
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    #: sha256 of the source file when the run was made (None for a built-in exam name)
    sha256: str | None = None


class Manifest(BaseModel):
    """Everything needed to re-create, resume or re-analyse a run."""

    run_id: str
    mathlens_version: str
    created_at: datetime
    finished_at: datetime | None = None
    items: list[ItemSource]
    models: list[ModelEntry]
    judge: ModelEntry | None = None
    configurations: list[str] = Field(default_factory=lambda: ["baseline"])
    configuration_options: dict[str, Any] = Field(default_factory=dict)
    runs: int = 1
    seed: int = 1234
    generate: GenerateConfig
    system_role: str
    #: the named role whose text `system_role` holds (`--system-role NAME`); None for a role read
    #: from a file, and in manifests written before roles had names
    system_role_name: str | None = None
    #: how each exam was put to the model; manifests written before the option are per-question
    exam_mode: ExamMode = "per-question"
    ablation: dict[str, Any] | None = None
    #: a tutoring run's learners, context conditions and image handling (`mathlens.solve.tutoring`)
    tutor: TutorDesign | None = None
    packages: dict[str, str] = Field(default_factory=dict)
    python: str = ""
    platform: str = ""
    total_tasks: int = 0
    extra: dict[str, Any] = Field(default_factory=dict)
    #: set for a run made by `mathlens import` from another tool's output (it cannot be resumed)
    imported: ImportedFrom | None = None
    #: the name of the study this run ran (the resolved study is `RUN/study.yaml`); None before studies
    study: str | None = None
