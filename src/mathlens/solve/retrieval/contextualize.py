"""Chunk contexts for contextual retrieval: a model reads the whole document and writes, for each
chunk, a sentence or two that places the chunk in it. The context is put in front of the chunk
before embedding and before BM25 indexing, so a chunk that says "this rule" can still be found by a
query that names the rule.

Requests go through the model's response cache, so a knowledge base rebuilt from the same sources
with the same model costs no new calls. Chunks are sent in document order with the document first
in the prompt: a local llama.cpp model then reuses the evaluated document prefix from one chunk to
the next and only reads the new chunk.

A document longer than `ContextSettings.max_doc_chars` is shown in fixed blocks of that size (the
block that holds the chunk), so that it fits a small model's context window.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mathlens.errors import ModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model, closing_all
from mathlens.solve.retrieval.chunking import Chunk
from mathlens.solve.retrieval.documents import Document

#: Changes whenever the prompt or the cleaning changes, so old contexts are not reused by mistake.
PROMPT_VERSION = "ctx-v2"

CONTEXT_PROMPT = """{document}

Here is one passage from the document above:
<passage>
{chunk}
</passage>

In one or two short sentences, say what this passage is about and where it fits in the document \
(which topic, which rule or example), so that a search engine can find it. Reply with those \
sentences only."""

#: Lines of the instructions that a weak model may copy back; such a copy is not a context.
_ECHOES = ("here is one passage from the document", "in one or two short sentences",
           "so that a search engine can find it")


@dataclass(frozen=True)
class ContextSettings:
    """Prompt budget and decoding for context generation."""

    max_doc_chars: int = 7000
    max_context_chars: int = 320
    config: GenerateConfig = field(default_factory=lambda: GenerateConfig(
        max_tokens=72, temperature=0.0, stop=("\n\n", "<end_of_turn>", "<start_of_turn>", "</passage>")))


@dataclass
class ContextReport:
    """Contexts by chunk id, with what producing them cost."""

    contexts: dict[str, str]
    calls: int = 0
    cache_hits: int = 0
    fallbacks: int = 0
    seconds: float = 0.0


def document_block(doc: Document, chunk: Chunk, max_chars: int) -> str:
    """The part of `doc` shown with `chunk`: all of it, or the fixed block holding the chunk's middle."""
    if len(doc.text) <= max_chars:
        return doc.text
    middle = (chunk.start + chunk.end) // 2
    start = (middle // max_chars) * max_chars
    return doc.text[start:start + max_chars]


def context_messages(doc: Document, chunk: Chunk, settings: ContextSettings | None = None) -> list[Message]:
    """The request that asks for one chunk's context."""
    settings = settings or ContextSettings()
    body = CONTEXT_PROMPT.format(document=document_block(doc, chunk, settings.max_doc_chars).strip(),
                                 chunk=chunk.text.strip())
    return [Message(role="user", content=body)]


_TAGS = re.compile(r"</?(document|passage)>", re.I)


def clean_context(text: str, max_chars: int = 320) -> str:
    """Model output made safe to index: the first paragraph, no tags, bounded length, whole words.

    >>> clean_context("  This passage states the product rule.\\n\\nMore text")
    'This passage states the product rule.'
    """
    text = _TAGS.sub("", text).strip()
    text = text.split("\n\n", 1)[0].strip()
    if any(e in text.lower() for e in _ECHOES):
        return ""
    # Markdown heading marks and chat-role prefixes are noise around the sentence itself.
    text = re.sub(r"^(?:(?:user|model|answer|context)\s*:\s*)+", "", text, flags=re.I)
    text = re.sub(r"(?m)^#+\s*", "", text)
    text = " ".join(text.split())
    if len(text) > max_chars:
        cut = text.rfind(" ", 0, max_chars)
        text = text[: cut if cut > 0 else max_chars].rstrip(" ,;:")
    # A reply without a single letter run of three is noise, not a context.
    return text if re.search(r"[A-Za-z]{3}", text) else ""


def fallback_context(doc: Document, chunk: Chunk) -> str:
    """Used when the model wrote nothing usable: the document title and the chunk's heading."""
    title = chunk.title if chunk.title and chunk.title != doc.title else ""
    return f"From {doc.title}" + (f": {title}." if title else ".")


async def contextualize(chunks: list[Chunk], docs: dict[str, Document], model: Model,
                        settings: ContextSettings | None = None,
                        on_chunk: Callable[[int, int], None] | None = None) -> ContextReport:
    """Generate a context for every chunk (one request each, through `model`'s cache).

    A failed request is not fatal: the chunk gets `fallback_context` and is counted in `fallbacks`.
    """
    settings = settings or ContextSettings()
    report = ContextReport(contexts={})
    calls0, hits0 = model.stats.calls, model.stats.cache_hits
    start = time.perf_counter()
    for n, chunk in enumerate(sorted(chunks, key=lambda c: (c.doc_id, c.start)), start=1):
        doc = docs[chunk.doc_id]
        try:
            out = await model.generate(context_messages(doc, chunk, settings), settings.config)
            text = clean_context(out.text, settings.max_context_chars) if out.finish_reason != "error" else ""
        except ModelError:
            text = ""
        if not text:
            text = fallback_context(doc, chunk)
            report.fallbacks += 1
        report.contexts[chunk.id] = text
        if on_chunk is not None:
            on_chunk(n, len(chunks))
    report.calls = model.stats.calls - calls0
    report.cache_hits = model.stats.cache_hits - hits0
    report.seconds = round(time.perf_counter() - start, 3)
    return report


def contextualize_sync(chunks: list[Chunk], docs: dict[str, Document], model: Model,
                       settings: ContextSettings | None = None,
                       on_chunk: Callable[[int, int], None] | None = None, *, close: bool = False) -> ContextReport:
    """`contextualize` from synchronous code, also when an event loop is already running (a knowledge
    base built on first use while a run is being planned): then it runs on a thread of its own.
    With `close`, the model is closed on the same event loop once the work is done (a model's HTTP
    connections belong to the loop that opened them)."""
    models = [model] if close else []
    coro_fn = lambda: closing_all(contextualize(chunks, docs, model, settings, on_chunk), models)  # noqa: E731
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_fn())
    box: list[ContextReport] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            box.append(asyncio.run(coro_fn()))
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    worker = threading.Thread(target=work, name="mathlens-contextualize")
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
    return box[0]
