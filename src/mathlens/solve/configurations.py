"""Solving configurations: how a question becomes messages (baseline, rag, contextual, ...).

A configuration is one class with a `name` and `build`; register it in `CONFIGURATIONS`. Retrieval
configurations (solve/retrieval/) return what they retrieved, and it is stored on the record.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from mathlens.errors import UnknownNameError
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.solve.prompts import question_message


class Retrieval(BaseModel):
    """What a retrieval configuration showed the model for one request (stored on the record).

    The chunk lists are parallel: `chunk_ids[i]`, `scores[i]`, `texts[i]`... describe the i-th chunk
    shown. Further keys a configuration adds are kept (`extra="allow"`)."""

    model_config = ConfigDict(extra="allow")

    kb: str
    mode: str
    contextual: bool = False
    embedder: str | None = None
    top_k: int | None = None
    rerank: str | None = None
    query: str = ""
    chunk_ids: list[str] = Field(default_factory=list)
    scores: list[float | None] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    titles: list[str] = Field(default_factory=list)
    texts: list[str] = Field(default_factory=list)
    contexts: list[str | None] | None = None
    score_parts: list[dict[str, float]] = Field(default_factory=list)
    topics: list[str] | None = None
    #: "question": chunks on the question's `topics` were preferred; `off_topic` counts the chunks
    #: shown that are not on them (fillers when too few on-topic chunks exist)
    topic_filter: str | None = None
    off_topic: int = 0


@dataclass(frozen=True)
class Built:
    """Messages for one request, plus what a retrieval step showed the model (or None)."""

    messages: list[Message]
    retrieval: Retrieval | None = None


class Configuration(Protocol):
    @property
    def name(self) -> str:
        """The configuration's name (`baseline`, `rag`, ...)."""
        ...

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        """Messages for `question` (with `text` standing in for its prompt text when given)."""
        ...


@dataclass(frozen=True)
class Baseline:
    """Zero-shot: the system role and the question alone."""

    name: str = "baseline"
    options: dict[str, Any] = field(default_factory=dict)

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        msgs = [Message(role="system", content=system_role)] if system_role else []
        return Built(messages=[*msgs, question_message(question, text)])


#: name -> "module:factory"; a factory takes the configuration options dict.
CONFIGURATIONS: dict[str, str] = {
    "baseline": "mathlens.solve.configurations:Baseline",
    "rag": "mathlens.solve.retrieval.configs:RagConfiguration",
    "contextual": "mathlens.solve.retrieval.configs:ContextualConfiguration",
    "condition-1": "mathlens.solve.tutoring:condition_1",
    "condition-2": "mathlens.solve.tutoring:condition_2",
    "condition-3": "mathlens.solve.tutoring:condition_3",
    "condition-4": "mathlens.solve.tutoring:condition_4",
}


def get_configuration(name: str, options: dict[str, Any] | None = None) -> Configuration:
    """Build a configuration by name; `options` are shared by all (e.g. the knowledge base name)."""
    if name not in CONFIGURATIONS:
        raise UnknownNameError("configuration", name, CONFIGURATIONS)
    module, _, attr = CONFIGURATIONS[name].partition(":")
    factory = getattr(importlib.import_module(module), attr)
    if factory is Baseline:
        return Baseline(options=dict(options or {}))
    return factory(options=dict(options or {}))
