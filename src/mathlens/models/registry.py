"""Model providers by name, addressed as `provider/model` (e.g. `ollama/gemma3:4b`).

Adding a backend means writing one module in `providers/` and adding one line to `PROVIDERS`.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.models.admission import Concurrency
from mathlens.models.base import Provider
from mathlens.models.cache import ResponseCache
from mathlens.models.embedded import DEFAULT_EMBEDDED
from mathlens.models.model import Model, RetryPolicy

#: provider name -> "module:Class"; imported lazily so that an optional dependency of one backend
#: (llama.cpp, say) is not needed by the others.
PROVIDERS: dict[str, str] = {
    "embedded": "mathlens.models.providers.llamacpp:EmbeddedProvider",
    "llamacpp": "mathlens.models.providers.llamacpp:LlamaCppProvider",
    "ollama": "mathlens.models.providers.ollama:OllamaProvider",
    "openai": "mathlens.models.providers.openai:OpenAIProvider",
    "replay": "mathlens.models.providers.replay:ReplayProvider",
    "mock": "mathlens.models.providers.mock:MockProvider",
}

DEFAULT_MODEL = f"embedded/{DEFAULT_EMBEDDED}"


def split_spec(spec: str) -> tuple[str, str]:
    """`"ollama/gemma3:4b"` -> `("ollama", "gemma3:4b")`; a bare `"embedded"` has the default model."""
    provider, _, name = spec.partition("/")
    if provider not in PROVIDERS:
        joined = re.fullmatch(r"([a-z]+)[:@](.+)", provider)
        if joined and joined.group(1) in PROVIDERS and not name:
            # "embedded:qwen2.5-coder-0.5b": the provider and the model are separated by a slash
            raise UserError(f"model {spec!r}: write the provider and the model with a slash, "
                            f"{joined.group(1)}/{joined.group(2)}")
        raise UnknownNameError("model provider", provider, PROVIDERS)
    if not name:
        if provider == "embedded":
            name = DEFAULT_EMBEDDED
        else:
            raise UserError(f"model {spec!r} names no model: write it as {provider}/<model>")
    return provider, name


def provider_class(name: str) -> type[Provider]:
    if name not in PROVIDERS:
        raise UnknownNameError("model provider", name, PROVIDERS)
    module, _, cls = PROVIDERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """`["num_ctx=4096", "host=http://x"]` -> `{"num_ctx": 4096, "host": "http://x"}` (JSON values allowed)."""
    import json

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"model option {pair!r} is not of the form key=value")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def get_model(
    spec: str,
    options: dict[str, Any] | None = None,
    cache: ResponseCache | None = None,
    retry: RetryPolicy | None = None,
    concurrency: Concurrency = None,
) -> Model:
    """Build a `Model` from its spec and options (the same pair is stored in run manifests)."""
    provider_name, model_name = split_spec(spec)
    provider = provider_class(provider_name)(model_name, **(options or {}))
    return Model(
        provider=provider,
        spec=spec,
        cache=cache,
        retry=retry or RetryPolicy(),
        concurrency=concurrency,
    )
