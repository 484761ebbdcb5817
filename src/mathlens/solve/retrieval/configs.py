"""The `rag` and `contextual` solving configurations (calculus seed 000 §4.4, Tables 7-8).

- `rag`: the question is embedded, the top-k chunks by cosine similarity are placed before it,
  each with a source marker (`[1] source: ..., chunk ...`).
- `contextual`: contextual retrieval. Chunks were indexed with a model-written context in front;
  the question is matched by embedding and by BM25, the two rankings fused by reciprocal rank
  fusion, optionally reranked, and the top-k chunks shown with source markers.
- `contextual` with `inline=true`: the seed's own variant (§4.4.2). The seed describes it as several
  pertinent passages placed directly in the prompt, with the answering model itself selecting and
  using what helps, no separate ranked retrieval step shown, and the material "embedded similarly
  for both RAG and contextual retrieval". So: the passages that share a topic with the question
  (its `topics` and the topics its wording mentions), ranked by the same embedding search as `rag`,
  up to `inline_k`, placed as one block of course notes in document order with an instruction to
  use the parts that help; no chunk contexts are needed.

The topic filter (`topic_filter=question`, the calculus study's configuration) keeps only chunks
tagged with one of the question's topics; when fewer than `top_k` remain, the best off-topic chunks
fill the rest, and the record says how many.

Options (from `manifest.configuration_options`): `kb` ("calculus"), `top_k` (4), `embedder` (the
knowledge base's own; for a built-in knowledge base, another embedder builds a copy for it),
`embedder_url` (host or base URL of that embedder), `mode` ("embedding" for rag, "hybrid" for
contextual), `rerank` (none), `candidates` (20), `topic_filter` ("none" or "question"), `inline`
(false), `inline_k` (6). What was retrieved is returned in `Built.retrieval` and stored on each
record.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.solve.configurations import Built, Retrieval
from mathlens.solve.prompts import question_message
from mathlens.solve.retrieval.builtin import BUILTIN_KB, is_builtin, open_or_build
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


TOPIC_FILTERS = ("none", "question")
#: most chunks ranked before the topic filter picks from them
MAX_FILTERED = 1000


@dataclass(frozen=True)
class RetrievalOptions:
    """Retrieval settings read from a run's configuration options."""

    kb: str = BUILTIN_KB
    top_k: int = 4
    embedder: str | None = None
    embedder_url: str | None = None
    mode: str = "embedding"
    rerank: str | None = None
    candidates: int = 20
    topic_filter: str = "none"
    inline: bool = False
    inline_k: int = 6

    @classmethod
    def parse(cls, options: dict[str, Any], default_mode: str) -> RetrievalOptions:
        """Validate and convert the options dict (values may arrive as strings from `-C k=v`)."""
        mode = str(options.get("mode", default_mode))
        if mode not in MODES:
            raise UnknownNameError("retrieval mode", mode, MODES)
        topic_filter = str(options.get("topic_filter") or "none")
        if topic_filter not in TOPIC_FILTERS:
            raise UnknownNameError("topic filter", topic_filter, TOPIC_FILTERS)
        return cls(kb=str(options.get("kb") or BUILTIN_KB), top_k=_as_int(options, "top_k", 4),
                   embedder=options.get("embedder") or None, embedder_url=options.get("embedder_url") or None,
                   mode=mode, rerank=options.get("rerank") or None, candidates=_as_int(options, "candidates", 20),
                   topic_filter=topic_filter, inline=_as_bool(options, "inline", False),
                   inline_k=_as_int(options, "inline_k", 6))

    def embedder_options(self) -> dict[str, Any]:
        """`host` (ollama) or `base_url` (openai) from `embedder_url`."""
        if not self.embedder_url:
            return {}
        return {"host" if (self.embedder or "").startswith("ollama/") else "base_url": self.embedder_url}


def question_topics(question: Question, query: str) -> list[str]:
    """The question's own topic tags and the topics its wording mentions, sorted."""
    return sorted(set(question.topics) | set(detect_topics(query)))


def on_topic_first(hits: list[Hit], kb: KnowledgeBase, topics: list[str], k: int) -> tuple[list[Hit], int]:
    """The best `k` hits tagged with one of `topics`, then the best others if too few; and how
    many of those fillers were needed. Ranks are renumbered; with no topics the ranking stands."""
    if not topics:
        return hits[:k], 0
    wanted = set(topics)
    on = [h for h in hits if wanted & set(kb.by_id[h.id].topics)]
    off = [h for h in hits if not wanted & set(kb.by_id[h.id].topics)]
    chosen = on[:k] + off[: max(0, k - len(on))]
    fill = max(0, len(chosen) - len(on[:k]))
    return [replace(h, rank=i) for i, h in enumerate(chosen, start=1)], fill


def format_marked(hits: list[Hit], kb: str) -> str:
    """Retrieved chunks with source markers, as placed before the question."""
    lines = [f"Reference material retrieved from the knowledge base '{kb}' (it may not all be relevant):"]
    for h in hits:
        label = f"[{h.rank}] source: {h.source}, chunk {h.id}" + (f" ({h.title})" if h.title else "")
        lines += ["", label, h.text.strip()]
    return "\n".join(lines)


INLINE_HEADER = ("Course notes for this question. Read them and use the parts that help you answer; "
                 "ignore the rest:")


def format_inline(hits: list[Hit]) -> str:
    """Curated passages as one continuous block of course notes (the seed's inline variant)."""
    return "\n\n".join([INLINE_HEADER, *(h.text.strip() for h in hits)])


def _record(kb: KnowledgeBase, opts: RetrievalOptions, query: str, hits: list[Hit], contextual: bool,
            mode: str, topics: list[str] | None = None, fill: int = 0) -> Retrieval:
    return Retrieval(
        kb=kb.name, mode=mode, contextual=contextual, embedder=kb.info.embedder_identity,
        top_k=opts.top_k, rerank=opts.rerank, query=query,
        chunk_ids=[h.id for h in hits], scores=[h.score for h in hits],
        sources=[h.source for h in hits], titles=[h.title for h in hits],
        texts=[h.text for h in hits],
        contexts=[h.context for h in hits] if contextual else None,
        score_parts=[h.parts for h in hits], topics=topics,
        topic_filter=opts.topic_filter if not opts.inline else "question", off_topic=fill)


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
        """The knowledge base (a built-in one is built on first use, for the embedder asked for)."""
        if self._kb is None:
            s = self.settings
            self._kb = open_or_build(s.kb, s.embedder, s.embedder_options()) if is_builtin(s.kb) \
                else open_or_build(s.kb)
        return self._kb

    def _embedder(self) -> str | None:
        # A built-in knowledge base was built for the embedder asked for; a user's must match it.
        return None if is_builtin(self.settings.kb) else self.settings.embedder

    def retrieve(self, query: str, topics: list[str] | None = None) -> tuple[list[Hit], int]:
        """The chunks shown for `query` (on `topics` first, when given), and how many of them are off topic."""
        s = self.settings
        pool = max(s.candidates, s.top_k) if s.rerank else s.top_k
        if topics:
            # The filter applies to the whole knowledge base (bounded), as the study's did at ingestion.
            wide = max(pool, min(len(self.kb().chunks), MAX_FILTERED))
            hits = self.kb().search(query, k=wide, mode=s.mode, contextual=self.contextual,
                                    embedder=self._embedder(), candidates=max(s.candidates, wide))
            hits, _ = on_topic_first(hits, self.kb(), topics, pool)
        else:
            hits = self.kb().search(query, k=pool, mode=s.mode, contextual=self.contextual,
                                    embedder=self._embedder(), candidates=s.candidates)
        hits = apply_reranker(s.rerank, query, hits, s.top_k)
        wanted = set(topics or ())
        off = sum(1 for h in hits if not wanted & set(self.kb().by_id[h.id].topics)) if wanted else 0
        return hits, off

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        """Messages with the retrieved chunks before the question, and what was retrieved."""
        query = text if text is not None else question.prompt_text()
        topics = question_topics(question, query) if self.settings.topic_filter == "question" else None
        hits, fill = self.retrieve(query, topics)
        record = _record(self.kb(), self.settings, query, hits, self.contextual, self.settings.mode, topics, fill)
        return Built(messages=_messages(system_role, question, text, format_marked(hits, self.kb().name)),
                     retrieval=record)


@dataclass
class ContextualConfiguration(RagConfiguration):
    """Contextual retrieval: context-prefixed chunks, embedding + BM25 fused by RRF (or `inline`)."""

    name: str = "contextual"
    contextual: bool = True
    default_mode: str = "hybrid"

    def curated(self, question: Question, query: str) -> tuple[list[Hit], list[str], int]:
        """The inline variant's passages, best first: the best on-topic chunks by the rag embedding
        search; the topics used; how many off-topic chunks filled a short list."""
        kb = self.kb()
        topics = question_topics(question, query)
        ranked = kb.search(query, k=len(kb.chunks), mode="embedding", contextual=False, embedder=self._embedder())
        chosen, fill = on_topic_first(ranked, kb, topics, self.settings.inline_k)
        return chosen, topics, fill

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        """Top-k fused chunks with source markers, or the inline passages when `inline` is set."""
        if not self.settings.inline:
            return super().build(question, system_role, text)
        query = text if text is not None else question.prompt_text()
        hits, topics, fill = self.curated(question, query)
        # Shown in document order, as a curated reading would be.
        kb = self.kb()
        hits = sorted(hits, key=lambda h: (h.doc_id, kb.by_id[h.id].start))
        record = _record(self.kb(), self.settings, query, hits, False, "inline", topics, fill)
        return Built(messages=_messages(system_role, question, text, format_inline(hits)), retrieval=record)
