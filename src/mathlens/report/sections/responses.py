"""Per question: each configuration's response, with its status, finish reason, output-quality flags
(each with the reason it was set) and retrieved context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.lookup import entries, first, num, scalar_items
from mathlens.report.registry import QuestionSection


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


def retrieved_chunks(retrieval: dict[str, Any] | None) -> tuple[list[Chunk], list[tuple[str, Any]]]:
    """Chunks named in a record's retrieval dict (list of dicts, or parallel id/score/text lists)."""
    if not retrieval:
        return [], []
    chunks: list[Chunk] = []
    listed = entries(retrieval, ("chunks", "retrieved", "results", "hits"))
    for c in listed:
        chunks.append(Chunk(str(first(c, "id", "chunk_id", default="")), num(first(c, "score", "distance")),
                            str(first(c, "text", "content", "context", default=""))))
    if not chunks:
        ids = first(retrieval, "chunk_ids", "ids") or []
        scores = first(retrieval, "scores") or []
        texts = first(retrieval, "texts") or []
        if isinstance(ids, list):
            for i, cid in enumerate(ids):
                chunks.append(Chunk(str(cid), num(scores[i]) if i < len(scores) else None,
                                    str(texts[i]) if i < len(texts) else ""))
    return chunks, scalar_items(retrieval)


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
                                  degenerate=flags is not None and flags.degenerate, quality=quality))
    return cards or None


SECTION = QuestionSection(id="responses", title="Responses", template="sections/responses.html.j2", build=build)
