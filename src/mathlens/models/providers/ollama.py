"""Ollama's native HTTP API (`/api/chat`, or `/api/generate` with `-M api=generate`).

Host: the `host` option, else `$OLLAMA_HOST`, else http://127.0.0.1:11434. Temperature, seed,
token cap (`num_predict`), stop sequences, `num_ctx` and the JSON-schema `format` are passed through.
With `-M think=true` (or false) the request carries Ollama's `think` switch; the trace a thinking
model returns (`message.thinking`, or `thinking` from /api/generate) becomes `ModelOutput.reasoning`
and the content stays the visible answer. An empty trace counts as none.

Images go as base64 strings in a message's `images` only for a model declared to read them
(`-M vision=true`; `ollama show MODEL` lists "vision" among its capabilities); a text-only model
is the default, and the tutoring study sends it the written description of a diagram instead.

Requests go through a one-server `ReplicaPool` (`providers/pool.py`), which is also the model's
admission: a fixed 2 in flight by default (Ollama serves a few requests at once and queues the
rest), `--concurrency N` for another fixed limit, `--concurrency auto` to follow the server.
"""

from __future__ import annotations

import os
import time
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from pydantic import Field

from mathlens.errors import MalformedReplyError, PermanentModelError, TransientModelError, UserError
from mathlens.models.admission import Admission, Concurrency
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.images import image_base64
from mathlens.models.providers._http import HttpClient, RequestRefusedError, get_ok, post_json, refuse_inline_key
from mathlens.models.providers._replies import OllamaReply, validate_reply
from mathlens.models.providers.pool import PoolOptions, PoolSettings, ReplicaPool

#: Seconds a health probe may take.
PROBE_TIMEOUT_S = 5.0


class OllamaOptions(PoolOptions):
    """`ollama/MODEL`."""

    host: str | None = Field(None, description="server URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
    api: Literal["chat", "generate"] = Field("chat", description="/api/chat or /api/generate")
    num_ctx: int | None = Field(None, ge=64, le=1 << 22, description="context window passed to Ollama")
    think: bool | Literal["low", "medium", "high"] | None = Field(
        None, description="Ollama's think switch for reasoning models (true/false, or a level for models that "
        "take one; default: the model's own); the trace is kept apart from the answer")


def _host(option: Any) -> str:
    host = str(option or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434")
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise UserError(f"Ollama host {host!r} has an invalid port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"Ollama host {host!r} is not an http:// or https:// URL")
    return host.rstrip("/")


class OllamaProvider(Provider):
    name = "ollama"
    default_concurrency = 2

    Options = OllamaOptions

    def __init__(self, model: str, **options: Any) -> None:
        refuse_inline_key(options)
        super().__init__(model, **options)
        settings = cast(OllamaOptions, self.settings)
        self.host = _host(settings.host)
        self.api = settings.api
        self.num_ctx = settings.num_ctx
        self.think = settings.think
        self.accepts_images = settings.vision
        self._client = HttpClient(settings.timeout_s)
        self._pool = ReplicaPool([self.host], PoolSettings.of(settings), probe=self._healthy)

    def identity(self) -> dict[str, Any]:
        identity = {"provider": self.name, "model": self.model, "base_url": self.host, "api": self.api,
                    "num_ctx": self.num_ctx}
        if self.think is not None:  # only when set, so that earlier runs keep their cache keys
            identity["think"] = self.think
        return identity

    def admission(self, concurrency: Concurrency) -> Admission:
        """Fixed at `default_concurrency` unless `--concurrency` says otherwise ("auto": adaptive)."""
        gate = self._pool.configure(self.default_concurrency if concurrency is None else concurrency)
        self._client.reserve(gate.ceiling)
        return gate

    async def _healthy(self, url: str) -> bool:
        return await get_ok(self._client, f"{url}/api/tags", None, PROBE_TIMEOUT_S)

    def _options(self, config: GenerateConfig) -> dict[str, Any]:
        opts: dict[str, Any] = {
            "temperature": config.temperature,
            "seed": config.seed,
            "num_predict": config.max_tokens,
            "top_p": config.top_p,
            "repeat_penalty": config.repeat_penalty,
        }
        if config.stop:
            opts["stop"] = list(config.stop)
        if self.num_ctx:
            opts["num_ctx"] = int(self.num_ctx)
        opts.update(config.extra.get("ollama_options", {}))
        return opts

    def _images(self, msg: Message) -> list[str]:
        if msg.images and not self.accepts_images:
            raise PermanentModelError(f"ollama/{self.model} is declared text-only (-M vision=false, the default) "
                                      "but the request carries images; give -M vision=true if the model reads "
                                      "images, or send the written description (--images describe)")
        return [image_base64(p) for p in msg.images]

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        payload: dict[str, Any] = {"model": self.model, "stream": False, "options": self._options(config)}
        if schema is not None:
            payload["format"] = schema
        if self.think is not None:
            payload["think"] = self.think
        if self.api == "generate":
            system = "\n\n".join(m.content for m in messages if m.role == "system")
            turns = [m for m in messages if m.role != "system"]
            payload["prompt"] = "\n\n".join(m.content for m in turns)
            if system:
                payload["system"] = system
            images = [img for m in turns for img in self._images(m)]
            if images:
                payload["images"] = images
            path = "/api/generate"
        else:
            payload["messages"] = [
                {"role": m.role, "content": m.content, **({"images": self._images(m)} if m.images else {})}
                for m in messages
            ]
            path = "/api/chat"

        async def attempt(url: str) -> tuple[tuple[dict[str, Any], OllamaReply, float], int]:
            start = time.perf_counter()
            data = await post_json(self._client, url + path, payload)
            if "error" in data:
                raise TransientModelError(f"ollama error: {str(data['error'])[:300]}")
            reply = validate_reply(OllamaReply, data, "ollama reply")
            return (data, reply, time.perf_counter() - start), reply.eval_count

        try:
            (data, reply, latency_s), _ = await self._pool.send(attempt)
        except RequestRefusedError as exc:
            if exc.status == 400 and any(m.images for m in messages) and "image" in exc.body.lower():
                raise PermanentModelError(
                    f"Ollama refused a request with images: ollama/{self.model} may not read images. Run it with "
                    f"-M vision=false so that diagrams go as their written description. Ollama said: {exc}") from None
            raise
        if self.api == "generate":
            text, thinking = reply.response, reply.thinking
        else:
            text = reply.message.content if reply.message else None
            thinking = reply.message.thinking if reply.message else None
        if text is None:
            raise MalformedReplyError(f"ollama reply without text (keys: {sorted(data)[:10]})")
        return ModelOutput(
            text=text,
            finish_reason="length" if reply.done_reason == "length" else "stop",
            usage=Usage(prompt_tokens=reply.prompt_eval_count, completion_tokens=reply.eval_count),
            latency_s=latency_s,
            model_id=reply.model or self.model,
            reasoning=thinking or None,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
        await self._client.aclose()
