"""Ollama's native HTTP API (`/api/chat`, or `/api/generate` with `-M api=generate`).

Host: the `host` option, else `$OLLAMA_HOST`, else http://127.0.0.1:11434. Temperature, seed,
token cap (`num_predict`), stop sequences, `num_ctx` and the JSON-schema `format` are passed through.
With `-M think=true` (or false) the request carries Ollama's `think` switch; the trace a thinking
model returns (`message.thinking`, or `thinking` from /api/generate) becomes `ModelOutput.reasoning`
and the content stays the visible answer. An empty trace counts as none.
"""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from mathlens.errors import MalformedReplyError, TransientModelError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.options import OllamaOptions
from mathlens.models.providers._http import make_client, post_json, refuse_inline_key, timeout_option
from mathlens.models.providers._replies import OllamaReply, validate_reply


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
    accepts_images = True

    Options = OllamaOptions

    def __init__(self, model: str, **options: Any) -> None:
        refuse_inline_key(options)
        super().__init__(model, **options)
        settings = cast(OllamaOptions, self.settings)
        self.host = _host(settings.host)
        self.api = settings.api
        self.num_ctx = settings.num_ctx
        self.think = settings.think
        self._client = make_client(timeout_option(options))

    def identity(self) -> dict[str, Any]:
        identity = {"provider": self.name, "model": self.model, "base_url": self.host, "api": self.api,
                    "num_ctx": self.num_ctx}
        if self.think is not None:  # only when set, so that earlier runs keep their cache keys
            identity["think"] = self.think
        return identity

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

    @staticmethod
    def _images(msg: Message) -> list[str]:
        return [base64.b64encode(Path(p).read_bytes()).decode("ascii") for p in msg.images]

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
            url = f"{self.host}/api/generate"
        else:
            payload["messages"] = [
                {"role": m.role, "content": m.content, **({"images": self._images(m)} if m.images else {})}
                for m in messages
            ]
            url = f"{self.host}/api/chat"
        start = time.perf_counter()
        data = await post_json(self._client, url, payload)
        if "error" in data:
            raise TransientModelError(f"ollama error: {str(data['error'])[:300]}")
        reply = validate_reply(OllamaReply, data, "ollama reply")
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
            latency_s=time.perf_counter() - start,
            model_id=reply.model or self.model,
            reasoning=thinking or None,
        )

    async def aclose(self) -> None:
        await self._client.aclose()
