"""Solving configurations: how a question becomes messages (baseline, rag, contextual, ...).

A configuration is one class with a `name` and `build`; register it in `CONFIGURATIONS`. Retrieval
configurations (solve/retrieval/) return what they retrieved, and it is stored on the record.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from mathlens.errors import UnknownNameError
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.solve.prompts import question_message


@dataclass(frozen=True)
class Built:
    """Messages for one request, plus what a retrieval step showed the model (or None)."""

    messages: list[Message]
    retrieval: dict[str, Any] | None = None


class Configuration(Protocol):
    name: str

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        """Messages for `question` (with `text` standing in for its prompt text when given)."""
        ...


@dataclass
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
