"""A scripted model for unit tests (never the default, never used by the CLI unless asked for).

`mock/echo` repeats the last user message; `mock/<anything>` with `responses=[...]` serves those
texts in order (cycling), and `errors=["transient", "permanent", ...]` makes the first calls fail.
Every request is appended to `requests` so a test can check what was sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from pydantic import Field

from mathlens.errors import PermanentModelError, TransientModelError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.options import ProviderOptions


class MockOptions(ProviderOptions):
    """`mock/NAME` (tests only): scripted replies."""

    responses: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    func: Callable[..., str] | None = None
    vision: bool = False


class MockProvider(Provider):
    name = "mock"
    default_concurrency = 8

    Options = MockOptions

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        settings = cast(MockOptions, self.settings)
        self.responses: list[str] = list(settings.responses)
        self.func: Callable[[list[Message]], str] | None = settings.func
        self.errors: list[str] = list(settings.errors)
        self.accepts_images = settings.vision
        self.requests: list[tuple[list[Message], GenerateConfig, dict[str, Any] | None]] = []
        self._i = 0

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "responses": self.responses}

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        self.requests.append((messages, config, schema))
        if self.errors:
            kind = self.errors.pop(0)
            if kind == "permanent":
                raise PermanentModelError("mock permanent failure")
            raise TransientModelError("mock transient failure")
        if self.func is not None:
            text = self.func(messages)
        elif self.responses:
            text = self.responses[self._i % len(self.responses)]
            self._i += 1
        else:
            text = next((m.content for m in reversed(messages) if m.role == "user"), "")
        words = re.findall(r"\S+\s*", text)
        # The text as written, line breaks included (they matter to step segmentation and parts),
        # up to the cap: a word stands in for a token.
        capped = text if len(words) <= config.max_tokens else "".join(words[: config.max_tokens]).rstrip()
        return ModelOutput(
            text=capped,
            finish_reason="length" if len(words) > config.max_tokens else "stop",
            usage=Usage(prompt_tokens=sum(len(m.content.split()) for m in messages),
                        completion_tokens=min(len(words), config.max_tokens)),
            model_id=f"mock/{self.model}",
        )
