"""Per question: each configuration's response, with its status, finish reason, output-quality flags
(each with the reason it was set) and retrieved context.

A reasoning model's trace is shown apart from its visible answer: collapsed (``<details>``, closed
until clicked) above the answer, which stays outside it; a trace the token cap cut before any
answer gets a "trace cut by token cap" badge and an empty-answer note instead of the answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.solve.configurations import Retrieval


@dataclass(frozen=True)
class Chunk:
    id: str
    score: float | None
    text: str


@dataclass(frozen=True)
class ResponseCard:
    label: str
    key: str
    status: str
    finish_reason: str
    truncated: bool
    cached: bool
    text: str | None
    error: str | None
    completion_tokens: int
    latency_s: float
    chunks: list[Chunk]
    retrieval_meta: list[tuple[str, Any]]
    degenerate: bool = False
    #: (flag, reason) for every quality flag set, except `truncated` (shown by its own badge)
    quality: tuple[tuple[str, str], ...] = ()
    #: the reasoning trace, apart from `text` (the visible answer); None when there was none
    reasoning: str | None = None
    #: the token cap cut the trace itself, before any visible answer
    trace_truncated: bool = False


def retrieved_chunks(retrieval: Retrieval | None) -> tuple[list[Chunk], list[tuple[str, Any]]]:
    """The chunks a retrieval configuration showed the model, and its scalar settings."""
    if retrieval is None:
        return [], []
    chunks = [Chunk(cid, retrieval.scores[i] if i < len(retrieval.scores) else None,
                    retrieval.texts[i] if i < len(retrieval.texts) else "")
              for i, cid in enumerate(retrieval.chunk_ids)]
    meta = [(k, v) for k, v in retrieval.model_dump().items() if v is None or isinstance(v, str | int | float | bool)]
    return chunks, meta


def build(ctx: ReportContext, view: QuestionView) -> list[ResponseCard] | None:
    """One card per original (non-ablated) response."""
    cards = []
    for resp in view.originals:
        rec = resp.record
        chunks, meta = retrieved_chunks(rec.retrieval)
        flags = resp.run.quality.get(rec.key)
        quality: tuple[tuple[str, str], ...] = ()
        if flags is not None:
            reasons = {d.split(":", 1)[0]: d.split(":", 1)[1].strip() for d in reversed(flags.details)}
            quality = tuple((n, reasons.get(n, n)) for n in flags.names() if n != "truncated")
        cards.append(ResponseCard(label=ctx.response_label(resp), key=rec.key, status=rec.status,
                                  finish_reason=rec.finish_reason, truncated=rec.truncated, cached=rec.cached,
                                  text=rec.response, error=rec.error,
                                  completion_tokens=rec.usage.completion_tokens, latency_s=rec.latency_s,
                                  chunks=chunks, retrieval_meta=meta,
                                  degenerate=flags is not None and flags.degenerate, quality=quality,
                                  reasoning=rec.reasoning, trace_truncated=rec.trace_truncated))
    return cards or None


SECTION = QuestionSection(id="responses", title="Responses", template="sections/responses.html.j2", build=build)
