"""Any OpenAI-compatible chat-completions server: vLLM, llama.cpp's server, OpenAI itself.

`--base-url` (option `base_url`) defaults to `$OPENAI_BASE_URL` or https://api.openai.com/v1. The key
is read from the environment variable named by `api_key_env` (default `OPENAI_API_KEY`) and is never
written to disk: it is not part of the identity, the cache key or the manifest.

Structured output uses `response_format`; `-M response_format=json_object` selects llama.cpp's
`{"type": "json_object", "schema": ...}` form, the default `json_schema` the OpenAI/vLLM form.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import time
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from mathlens.errors import MalformedReplyError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.options import OpenAIOptions
from mathlens.models.providers._http import make_client, post_json, refuse_inline_key, timeout_option
from mathlens.models.providers._replies import ChatCompletion, validate_reply


class OpenAIProvider(Provider):
    name = "openai"
    default_concurrency = 8
    accepts_images = True

    Options = OpenAIOptions

    def __init__(self, model: str, **options: Any) -> None:
        refuse_inline_key(options)
        super().__init__(model, **options)
        settings = cast(OpenAIOptions, self.settings)
        base = settings.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self.base_url = str(base).rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UserError(f"base URL {self.base_url!r} is not an http:// or https:// URL")
        self.key_env = settings.api_key_env
        self.response_format = settings.response_format
        self._client = make_client(timeout_option(options))

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "base_url": self.base_url}

    @staticmethod
    def _content(msg: Message) -> Any:
        if not msg.images:
            return msg.content
        parts: list[dict[str, Any]] = [{"type": "text", "text": msg.content}]
        for path in msg.images:
            mime = mimetypes.guess_type(path)[0] or "image/png"
            data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            parts.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}})
        return parts

    def _format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.response_format == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": self._content(m)} for m in messages],
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
            "seed": config.seed,
        }
        if config.stop:
            payload["stop"] = list(config.stop)
        if schema is not None:
            payload["response_format"] = self._format(schema)
        payload.update(config.extra.get("openai_params", {}))
        headers = {}
        key = os.environ.get(self.key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        start = time.perf_counter()
        data = await post_json(self._client, f"{self.base_url}/chat/completions", payload, headers)
        reply = validate_reply(ChatCompletion, data, "chat completion")
        if not reply.choices:
            raise MalformedReplyError("malformed chat completion: choices is empty")
        choice = reply.choices[0]
        return ModelOutput(
            text=choice.message.content,
            finish_reason="length" if choice.finish_reason == "length" else "stop",
            usage=Usage(prompt_tokens=reply.usage.prompt_tokens, completion_tokens=reply.usage.completion_tokens),
            latency_s=time.perf_counter() - start,
            model_id=reply.model or self.model,
        )

    async def aclose(self) -> None:
        await self._client.aclose()
