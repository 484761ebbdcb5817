"""The `rag` and `contextual` solving configurations (calculus seed 000 §4.4, Tables 7-8).

- `rag`: the question is embedded, the top-k chunks by cosine similarity are placed before it,
  each with a source marker (`[1] source: ..., chunk ...`).
- `contextual`: contextual retrieval. Chunks were indexed with a model-written context in front;
  the question is matched by embedding and by BM25, the two rankings fused by reciprocal rank
  fusion, optionally reranked, and the top-k chunks shown with source markers.
- `contextual` with `inline=true`: the seed's own variant, in which curated passages are put inline
  in one prompt without a retriever ranking them: the passages are the notes that share a topic with
  the question (its `topics`, or the topics its wording mentions), ordered by their fused score.

Options (from `manifest.configuration_options`): `kb` ("calculus"), `top_k` (4), `embedder` (the
knowledge base's own), `mode` ("embedding" for rag, "hybrid" for contextual), `rerank` (none),
`candidates` (20), `inline` (false), `inline_k` (6). What was retrieved is returned in
`Built.retrieval` and stored on each record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.solve.configurations import Built, Retrieval
from mathlens.solve.prompts import question_message
from mathlens.solve.retrieval.builtin import BUILTIN_KB, open_or_build
from mathlens.solve.retrieval.rerank import apply_reranker
from mathlens.solve.retrieval.store import MODES, Hit, KnowledgeBase
from mathlens.solve.retrieval.topics import detect_topics

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _as_int(options: dict[str, Any], key: str, default: int, low: int = 1) -> int:
    value = options.get(key, default)
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise UserError(f"configuration option {key}={value!r} is not a whole number") from None
    if n < low:
        raise UserError(f"configuration option {key} must be at least {low}, not {n}")
    return n


def _as_bool(options: dict[str, Any], key: str, default: bool) -> bool:
    value = options.get(key, default)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise UserError(f"configuration option {key}={value!r} is not true or false")


@dataclass(frozen=True)
class RetrievalOptions:
    """Retrieval settings read from a run's configuration options."""

    kb: str = BUILTIN_KB
    top_k: int = 4
    embedder: str | None = None
    mode: str = "embedding"
    rerank: str | None = None
    candidates: int = 20
    inline: bool = False
    inline_k: int = 6

    @classmethod
    def parse(cls, options: dict[str, Any], default_mode: str) -> RetrievalOptions:
        """Validate and convert the options dict (values may arrive as strings from `-C k=v`)."""
        mode = str(options.get("mode", default_mode))
        if mode not in MODES:
            raise UnknownNameError("retrieval mode", mode, MODES)
        return cls(kb=str(options.get("kb") or BUILTIN_KB), top_k=_as_int(options, "top_k", 4),
                   embedder=options.get("embedder") or None, mode=mode,
                   rerank=options.get("rerank") or None, candidates=_as_int(options, "candidates", 20),
                   inline=_as_bool(options, "inline", False), inline_k=_as_int(options, "inline_k", 6))


def format_marked(hits: list[Hit], kb: str) -> str:
    """Retrieved chunks with source markers, as placed before the question."""
    lines = [f"Reference material retrieved from the knowledge base '{kb}' (it may not all be relevant):"]
    for h in hits:
        label = f"[{h.rank}] source: {h.source}, chunk {h.id}" + (f" ({h.title})" if h.title else "")
        lines += ["", label, h.text.strip()]
    return "\n".join(lines)


def format_inline(hits: list[Hit]) -> str:
    """Curated passages as one continuous block of course notes (the seed's inline variant)."""
    parts = ["Course notes for this question:"]
    parts += [h.text.strip() for h in hits]
    return "\n\n".join(parts)


def _record(kb: KnowledgeBase, opts: RetrievalOptions, query: str, hits: list[Hit], contextual: bool,
            mode: str, topics: list[str] | None = None) -> Retrieval:
    return Retrieval(
        kb=kb.name, mode=mode, contextual=contextual, embedder=kb.info.embedder_identity,
        top_k=opts.top_k, rerank=opts.rerank, query=query,
        chunk_ids=[h.id for h in hits], scores=[h.score for h in hits],
        sources=[h.source for h in hits], titles=[h.title for h in hits],
        texts=[h.text for h in hits],
        contexts=[h.context for h in hits] if contextual else None,
        score_parts=[h.parts for h in hits], topics=topics)


def _messages(system_role: str, question: Question, text: str | None, context: str) -> list[Message]:
    msgs = [Message(role="system", content=system_role)] if system_role else []
    return [*msgs, question_message(question, text, context=context)]


@dataclass
class RagConfiguration:
    """Retrieval-augmented generation: top-k chunks by embedding similarity, with source markers."""

    options: dict[str, Any] = field(default_factory=dict)
    name: str = "rag"
    contextual: bool = False
    default_mode: str = "embedding"

    def __post_init__(self) -> None:
        self.settings = RetrievalOptions.parse(self.options, self.default_mode)
        self._kb: KnowledgeBase | None = None

    def kb(self) -> KnowledgeBase:
        """The knowledge base (the built-in one is built on first use)."""
        if self._kb is None:
            self._kb = open_or_build(self.settings.kb)
        return self._kb

    def retrieve(self, query: str) -> list[Hit]:
        """The chunks shown for `query`."""
        s = self.settings
        pool = max(s.candidates, s.top_k) if s.rerank else s.top_k
        hits = self.kb().search(query, k=pool, mode=s.mode, contextual=self.contextual, embedder=s.embedder,
                                candidates=s.candidates)
        return apply_reranker(s.rerank, query, hits, s.top_k)

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        """Messages with the retrieved chunks before the question, and what was retrieved."""
        query = text if text is not None else question.prompt_text()
        hits = self.retrieve(query)
        record = _record(self.kb(), self.settings, query, hits, self.contextual, self.settings.mode)
        return Built(messages=_messages(system_role, question, text, format_marked(hits, self.kb().name)),
                     retrieval=record)


@dataclass
class ContextualConfiguration(RagConfiguration):
    """Contextual retrieval: context-prefixed chunks, embedding + BM25 fused by RRF (or `inline`)."""

    name: str = "contextual"
    contextual: bool = True
    default_mode: str = "hybrid"

    def curated(self, question: Question, query: str) -> tuple[list[Hit], list[str]]:
        """The inline variant's passages: chunks sharing a topic with the question, best fused first."""
        s = self.settings
        kb = self.kb()
        topics = set(question.topics) | set(detect_topics(query))
        ranked = kb.search(query, k=len(kb.chunks), mode="hybrid", contextual=True, embedder=s.embedder,
                           candidates=len(kb.chunks))
        on_topic = [h for h in ranked if topics & set(kb.by_id[h.id].topics)]
        chosen = (on_topic or ranked)[: s.inline_k]
        # Shown in document order, as a curated reading would be.
        chosen.sort(key=lambda h: (h.doc_id, kb.by_id[h.id].start))
        return chosen, sorted(topics)

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        """Top-k fused chunks with source markers, or the inline passages when `inline` is set."""
        if not self.settings.inline:
            return super().build(question, system_role, text)
        query = text if text is not None else question.prompt_text()
        hits, topics = self.curated(question, query)
        record = _record(self.kb(), self.settings, query, hits, True, "inline", topics)
        return Built(messages=_messages(system_role, question, text, format_inline(hits)), retrieval=record)
