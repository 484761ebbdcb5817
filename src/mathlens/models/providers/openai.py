"""Any OpenAI-compatible chat-completions server: vLLM, llama.cpp's server, OpenAI itself.

`--base-url` (option `base_url`) defaults to `$OPENAI_BASE_URL` or https://api.openai.com/v1. The key
is read from the environment variable named by `api_key_env` (default `OPENAI_API_KEY`) and is never
written to disk: it is not part of the identity, the cache key or the manifest.

Several servers of one model (`--base-url` repeated, `-M base_urls=URL1,URL2` or `@FILE`) form a
pool (`providers/pool.py`, docs/replicas.md): each request goes to the least-loaded replica in
service, with an adaptive limit per replica, and a request that a replica fails (no answer, 5xx,
429) is sent to another one within the same call. A single server goes through the same pool.

Identity (the cache key and `request_hash`): provider and model, plus `deployment` when given.
No URL is part of it, so adding, removing or moving a replica keeps every cached response; a user
who serves different weights under one model name on different servers tells them apart with
`-M deployment=LABEL`.

Structured output uses `response_format`; `-M response_format=json_object` selects llama.cpp's
`{"type": "json_object", "schema": ...}` form, `guided_json` older vLLM's `guided_json` extra
parameter, the default `json_schema` the OpenAI/vLLM form. A reasoning trace the server returns
apart (`reasoning_content`, or `reasoning`) becomes `ModelOutput.reasoning`.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
import time
from pathlib import Path
from typing import Any, cast

import httpx

from mathlens.errors import MalformedReplyError, ModelError, PermanentModelError, TransientModelError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.options import OpenAIOptions
from mathlens.models.providers._http import (
    RateLimitedError,
    RequestRefusedError,
    ServerTroubleError,
    make_client,
    post_json,
    refuse_inline_key,
    timeout_option,
)
from mathlens.models.providers._replies import ChatCompletion, validate_reply
from mathlens.models.providers.pool import Outcome, PoolSettings, ReplicaPool

#: What vLLM (and llama.cpp, OpenAI) say when the prompt plus max_tokens do not fit the context.
_CONTEXT_LENGTH = re.compile(r"maximum context length|max_model_len|context length|context window|"
                             r"exceeds? the available context", re.IGNORECASE)
#: Seconds a health probe may take.
PROBE_TIMEOUT_S = 5.0


def context_length_error(exc: RequestRefusedError, max_tokens: int) -> PermanentModelError | None:
    """A clear error for a 400 that says the request does not fit the server's context; else None."""
    if exc.status != 400 or not _CONTEXT_LENGTH.search(exc.body):
        return None
    return PermanentModelError(
        f"the prompt plus max_tokens ({max_tokens}) exceed the server's context length (vLLM's max_model_len); "
        "a retry cannot fix it. Lower --max-tokens, shorten the prompt (fewer retrieved chunks, a shorter "
        "system role, --exam-mode per-question), or serve the model with a larger --max-model-len. "
        f"The server said: {exc}")


class OpenAIProvider(Provider):
    name = "openai"
    default_concurrency = 8
    accepts_images = True

    Options = OpenAIOptions

    def __init__(self, model: str, **options: Any) -> None:
        refuse_inline_key(options)
        super().__init__(model, **options)
        settings = cast(OpenAIOptions, self.settings)
        default = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        try:
            urls = settings.replica_urls(default)
        except ValueError as exc:
            raise UserError(f"openai: {exc}") from None
        self.base_url = urls[0]
        self.key_env = settings.api_key_env
        self.response_format = settings.response_format
        self.deployment = settings.deployment
        self._client = make_client(timeout_option(options))
        self._pool = ReplicaPool(urls, PoolSettings(
            max_concurrency=settings.max_concurrency, latency_factor=settings.latency_factor,
            failure_threshold=settings.failure_threshold, probe_s=settings.probe_s,
            hang_s=settings.hang_s),
            probe=self._healthy, start=self.default_concurrency)

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"provider": self.name, "model": self.model}
        if self.deployment:
            ident["deployment"] = self.deployment
        return ident

    def pool(self) -> ReplicaPool:
        return self._pool

    @property
    def urls(self) -> list[str]:
        """The servers of this model, in the order given."""
        return [r.url for r in self._pool.replicas]

    async def _healthy(self, url: str) -> bool:
        """Health probe: `GET {url}/models` answers 200 (vLLM, llama.cpp and OpenAI all serve it)."""
        try:
            resp = await self._client.get(f"{url}/models", headers=self._headers(), timeout=PROBE_TIMEOUT_S)
        except httpx.HTTPError:
            return False
        return resp.status_code == 200

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

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

    def _constrain(self, payload: dict[str, Any], schema: dict[str, Any]) -> None:
        if self.response_format == "guided_json":
            payload["guided_json"] = schema
        elif self.response_format == "json_object":
            payload["response_format"] = {"type": "json_object", "schema": schema}
        else:
            payload["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}

    def payload(self, messages: list[Message], config: GenerateConfig,
                schema: dict[str, Any] | None = None) -> dict[str, Any]:
        """The request body sent for `messages` (the same to every replica)."""
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
            self._constrain(payload, schema)
        payload.update(config.extra.get("openai_params", {}))
        return payload

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        payload = self.payload(messages, config, schema)
        headers = self._headers()
        tried: set[str] = set()
        last: ModelError | None = None
        while True:
            replica = await self._pool.acquire(tried)
            if replica is None:  # every replica in service failed this request once: the caller retries
                assert last is not None
                raise last
            tried.add(replica.url)
            epoch, outcome, retry_after = replica.limiter.epoch, cast(Outcome, "cancelled"), None
            start = time.perf_counter()
            tokens = 0
            try:
                data = await post_json(self._client, f"{replica.url}/chat/completions", payload, headers)
                out = self._output(data, time.perf_counter() - start)
                outcome, tokens = "ok", out.usage.completion_tokens
            except RateLimitedError as exc:
                outcome, retry_after, last = "overloaded", exc.retry_after, exc
                continue
            except ServerTroubleError as exc:
                outcome, retry_after, last = "failed", exc.retry_after, exc
                continue
            except RequestRefusedError as exc:
                outcome = "refused"
                raise context_length_error(exc, config.max_tokens) or exc from None
            except TransientModelError:  # 408/409/425, a non-JSON reply: the caller retries
                outcome = "refused"
                raise
            except MalformedReplyError:
                outcome = "refused"
                raise
            finally:
                self._pool.release(replica, outcome, epoch=epoch, latency_s=time.perf_counter() - start,
                                   completion_tokens=tokens, retry_after=retry_after)
            if len(self._pool.replicas) > 1:
                out = out.model_copy(update={"replica": replica.url})
            return out

    def _output(self, data: dict[str, Any], latency_s: float) -> ModelOutput:
        reply = validate_reply(ChatCompletion, data, "chat completion")
        if not reply.choices:
            raise MalformedReplyError("malformed chat completion: choices is empty")
        choice = reply.choices[0]
        message = choice.message
        reasoning = message.reasoning_content or message.reasoning or None
        return ModelOutput(
            text=message.content,
            finish_reason="length" if choice.finish_reason == "length" else "stop",
            usage=Usage(prompt_tokens=reply.usage.prompt_tokens, completion_tokens=reply.usage.completion_tokens),
            latency_s=latency_s,
            model_id=reply.model or self.model,
            reasoning=reasoning,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
        await self._client.aclose()
