"""Serve the responses recorded in an earlier run (`replay/<run dir>`), without any model.

A request is matched by its content hash (messages, config and schema, without the provider's
identity), which every run record stores. An unmatched request is a permanent error, so a replay
never silently answers something that was not recorded.

The provider reads the run's `records.jsonl` itself, through `RecordedReply` (the few fields of a
run record it needs), so that the model layer does not depend on the run layer above it. Like the
run store, it skips a torn last line and refuses a line that is not a record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mathlens.errors import PermanentModelError, UserError
from mathlens.models.base import FinishReason, GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.cache import content_hash

__all__ = ["RecordedReply", "ReplayProvider", "content_hash"]


class RecordedReply(BaseModel):
    """The part of a run record a replay needs (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    model: str
    content_hash: str
    status: str
    response: str | None = None
    finish_reason: FinishReason = "unknown"
    usage: Usage = Usage()


def recorded_replies(path: Path) -> list[RecordedReply]:
    """Every complete line of `path` (a run's records.jsonl) as a `RecordedReply`."""
    out = []
    with path.open("r", encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.endswith("\n"):
                break  # torn write of a killed process
            try:
                out.append(RecordedReply.model_validate_json(line))
            except ValidationError as exc:
                raise UserError(f"{path}:{n}: not a run record ({exc.errors()[0]['msg']})") from None
    return out


class ReplayProvider(Provider):
    name = "replay"
    default_concurrency = 64

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        path = Path(model)
        if not (path / "records.jsonl").exists():
            raise UserError(f"replay: {path} is not a run directory (no records.jsonl)")
        self._by_hash: dict[str, ModelOutput] = {}
        for rec in recorded_replies(path / "records.jsonl"):
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
