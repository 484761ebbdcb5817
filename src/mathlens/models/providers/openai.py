"""Any OpenAI-compatible chat-completions server: vLLM, llama.cpp's server, OpenAI itself.

`--base-url` (option `base_url`) defaults to `$OPENAI_BASE_URL` or https://api.openai.com/v1. The key
is read from the environment variable named by `api_key_env` (default `OPENAI_API_KEY`) and is never
written to disk: it is not part of the identity, the cache key or the manifest.

Requests go through a `ReplicaPool` (`providers/pool.py`, docs/replicas.md), with one server or
several (`--base-url` repeated, `-M base_urls=URL1,URL2` or `@FILE`): each request goes to the
least-loaded server in service, and one that a server fails (no answer, 5xx, 429) is sent to another
within the same call. The pool is also the model's admission: adaptive by default (it follows the
servers' signals), a fixed limit with `--concurrency N`.

Identity (the cache key and `request_hash`): provider and model, plus `deployment` when given, and
`reasoning` when it is set. No URL is part of it, so adding, removing or moving a replica keeps
every cached response; a user who serves different weights under one model name on different
servers tells them apart with `-M deployment=LABEL`.

Capabilities:

- **Images** are sent as `image_url` content parts (base64 data URLs) only for a model declared
  to read them (`-M vision=true`); the tutoring study then sends diagrams as images under
  `--images auto`, and their written description otherwise. A server that refuses a request
  carrying image parts gets an error naming the flag.
- **Reasoning models** (OpenAI's o-series and the like) refuse `max_tokens` and any temperature
  but their own. `-M reasoning=true` sends `max_completion_tokens` and leaves out `temperature`,
  `top_p` and `stop`. Without the option, a 400 that names one of those parameters switches the
  model to that form for the rest of the process and resends the request (not counted as a
  retry); the run records `reasoning=true` in its manifest (`learned`), so a resume starts so.
  `-M reasoning=false` never switches.

Structured output uses `response_format`; `-M response_format=json_object` selects llama.cpp's
`{"type": "json_object", "schema": ...}` form, `guided_json` older vLLM's `guided_json` extra
parameter, the default `json_schema` the OpenAI/vLLM form. A reasoning trace the server returns
apart (`reasoning_content`, or `reasoning`) becomes `ModelOutput.reasoning`.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Literal, cast

from pydantic import Field

from mathlens.errors import MalformedReplyError, PermanentModelError, UserError
from mathlens.models.admission import Admission, Concurrency, ReplicaStats
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.images import image_parts
from mathlens.models.providers._http import (
    HttpClient,
    RequestRefusedError,
    get_ok,
    post_json,
    refuse_inline_key,
)
from mathlens.models.providers._replies import ChatCompletion, validate_reply
from mathlens.models.providers.pool import PoolOptions, PoolSettings, ReplicaList, ReplicaPool, replica_url


class OpenAIOptions(PoolOptions):
    """`openai/MODEL`: one server, or a pool of replicas (docs/replicas.md)."""

    base_url: str | None = Field(None, description="server URL (default: $OPENAI_BASE_URL or OpenAI's)")
    base_urls: ReplicaList = Field((), description="replicas of one model: URL1,URL2 or @FILE (one URL a line); "
                                   "requests go to the least-loaded one in service")
    deployment: str | None = Field(None, min_length=1, max_length=200,
                                   description="label of what the servers run, part of the cache key (for "
                                   "different weights served under one model name)")
    api_key_env: str = Field("OPENAI_API_KEY", min_length=1, description="environment variable holding the key")
    response_format: Literal["json_schema", "json_object", "guided_json"] = Field(
        "json_schema", description="structured-output form: OpenAI/vLLM json_schema, llama.cpp json_object, or "
        "older vLLM's guided_json")
    reasoning: bool | None = Field(None, description="a reasoning model: send max_completion_tokens and no "
                                   "temperature, top_p or stop (default: switch when the server's 400 asks for it)")

    def replica_urls(self, default: str) -> tuple[str, ...]:
        """Every server of this model: `base_url` (or `default`) when no `base_urls` are given, else
        `base_url` (if given) followed by the `base_urls` not already named."""
        if not self.base_urls:
            return (replica_url(self.base_url or default, "base_url"),)
        first = (replica_url(self.base_url, "base_url"),) if self.base_url else ()
        return first + tuple(u for u in self.base_urls if u not in first)


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


#: A 400 that names a parameter reasoning models refuse (OpenAI's wording, and vLLM's like it).
_REASONING_400 = re.compile(r"max_completion_tokens|unsupported (?:parameter|value)[^.]*'(?:max_tokens|temperature|"
                            r"top_p|stop)'|'(?:temperature|top_p|stop)' (?:is not supported|does not support)",
                            re.IGNORECASE)
#: A 400 that says the model cannot take image parts.
_IMAGE_400 = re.compile(r"image|vision|multimodal|image_url|content part", re.IGNORECASE)


def needs_reasoning_form(exc: RequestRefusedError) -> bool:
    """Whether a refusal says the model takes only the reasoning-model request form.

    >>> needs_reasoning_form(RequestRefusedError("x", 400, "Unsupported parameter: 'max_tokens' is not "
    ...     "supported with this model. Use 'max_completion_tokens' instead."))
    True
    >>> needs_reasoning_form(RequestRefusedError("x", 400, "maximum context length is 4096 tokens"))
    False
    """
    return exc.status == 400 and _REASONING_400.search(exc.body) is not None


def text_only_error(spec: str) -> PermanentModelError:
    """The error for image parts meant for a model not declared to read them."""
    return PermanentModelError(f"{spec} is declared text-only (-M vision=false, the default) but the request "
                               "carries images; give -M vision=true if the model reads images, or send the "
                               "written description (--images describe)")


class OpenAIProvider(Provider):
    name = "openai"
    default_concurrency = 8

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
        self.accepts_images = settings.vision
        #: None: not said (switch on the server's 400); True/False: as given
        self.reasoning_option = settings.reasoning
        self.reasoning_form = settings.reasoning is True
        self._client = HttpClient(settings.timeout_s)
        self._pool = ReplicaPool(urls, PoolSettings.of(settings), probe=self._healthy)

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"provider": self.name, "model": self.model}
        if self.deployment:
            ident["deployment"] = self.deployment
        if self.reasoning_option is not None:  # only when set, so that earlier runs keep their cache keys
            ident["reasoning"] = self.reasoning_option
        return ident

    def admission(self, concurrency: Concurrency) -> Admission:
        """The pool's admission: adaptive unless `concurrency` is a number (then fixed, over all servers)."""
        gate = self._pool.configure(concurrency)
        self._client.reserve(gate.ceiling)
        return gate

    def recorded_options(self) -> dict[str, Any]:
        """The options, with a replica file (`base_urls=@FILE`) replaced by the URLs it held."""
        options = dict(self.options)
        if isinstance(options.get("base_urls"), str):
            options["base_urls"] = [r.url for r in self._pool.replicas]
        return options

    def replica_stats(self) -> list[ReplicaStats]:
        return self._pool.stats() if len(self._pool.replicas) > 1 else []

    def learned(self) -> dict[str, Any]:
        return {"reasoning": True} if self.reasoning_form and self.reasoning_option is None else {}

    @property
    def pool(self) -> ReplicaPool:
        """The servers of this model and their counters."""
        return self._pool

    @property
    def urls(self) -> list[str]:
        """The servers of this model, in the order given."""
        return [r.url for r in self._pool.replicas]

    async def _healthy(self, url: str) -> bool:
        """Health probe: `GET {url}/models` answers 200 (vLLM, llama.cpp and OpenAI all serve it)."""
        return await get_ok(self._client, f"{url}/models", self._headers(), PROBE_TIMEOUT_S)

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _content(self, msg: Message) -> Any:
        if not msg.images:
            return msg.content
        if not self.accepts_images:
            raise text_only_error(f"openai/{self.model}")
        return [{"type": "text", "text": msg.content}, *image_parts(msg.images)]

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
        }
        if self.reasoning_form:  # reasoning models take only their own sampling and no stop
            payload["max_completion_tokens"] = config.max_tokens
        else:
            payload.update(temperature=config.temperature, top_p=config.top_p, max_tokens=config.max_tokens)
            if config.stop:
                payload["stop"] = list(config.stop)
        payload["seed"] = config.seed
        if schema is not None:
            self._constrain(payload, schema)
        payload.update(config.extra.get("openai_params", {}))
        return payload

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        headers = self._headers()
        while True:
            reasoning_form = self.reasoning_form
            payload = self.payload(messages, config, schema)

            async def attempt(url: str, payload: dict[str, Any] = payload) -> tuple[ModelOutput, int]:
                start = time.perf_counter()
                data = await post_json(self._client, f"{url}/chat/completions", payload, headers)
                out = self._output(data, time.perf_counter() - start)
                return out, out.usage.completion_tokens

            try:
                out, url = await self._pool.send(attempt)
            except RequestRefusedError as exc:
                if self.reasoning_option is None and not reasoning_form and needs_reasoning_form(exc):
                    self.reasoning_form = True  # the server said how: send it again in that form
                    continue
                raise self._refusal(exc, messages, config) from None
            if len(self._pool.replicas) > 1:
                out = out.model_copy(update={"replica": url})
            return out

    def _refusal(self, exc: RequestRefusedError, messages: list[Message], config: GenerateConfig) -> Exception:
        too_long = context_length_error(exc, config.max_tokens)
        if too_long is not None:
            return too_long
        if exc.status == 400 and any(m.images for m in messages) and _IMAGE_400.search(exc.body):
            return PermanentModelError(
                f"the server refused a request with image parts: openai/{self.model} may not read images. Run "
                f"it with -M vision=false so that diagrams go as their written description. The server said: {exc}")
        return exc

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
