"""Serve the responses recorded in an earlier run (`replay/<run dir>`), without any model.

A request is matched by its content hash (messages, config and schema, without the provider's
identity), which every run record stores. An unmatched request is a permanent error, so a replay
never silently answers something that was not recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mathlens.errors import PermanentModelError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.cache import request_hash


def content_hash(messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None) -> str:
    """The identity-free hash stored on run records as `content_hash`."""
    return request_hash({}, messages, config, schema)


class ReplayProvider(Provider):
    name = "replay"
    default_concurrency = 64

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        from mathlens.runs.store import RunStore  # local: runs depends on models, not the reverse

        path = Path(model)
        if not (path / "records.jsonl").exists():
            raise UserError(f"replay: {path} is not a run directory (no records.jsonl)")
        self._by_hash: dict[str, ModelOutput] = {}
        for rec in RunStore(path).records():
            if rec.status == "ok" and rec.response is not None:
                self._by_hash[rec.content_hash] = ModelOutput(
                    text=rec.response, finish_reason=rec.finish_reason, usage=rec.usage,
                    model_id=f"replay:{rec.model}",
                )

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": str(Path(self.model).resolve())}

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        out = self._by_hash.get(content_hash(messages, config, schema))
        if out is None:
            raise PermanentModelError("replay: this request was not recorded in the run")
        return out.model_copy(update={"usage": Usage(**out.usage.model_dump())})
