"""Optional rerankers applied after retrieval: a name from `RERANKERS` or any `module:function`.

A reranker is a function `(query: str, hits: list[Hit]) -> list[Hit]` returning the same hits in a
new order (it may drop some). Retrieval hands it `rerank_pool` candidates and keeps the first top-k
of its answer. The built-in `overlap` reranker is lexical and needs no model: it orders candidates
by the share of distinct query terms that the chunk (with its context) contains, keeping the
retrieval order among equals. A cross-encoder or a model-based judge plugs in the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import replace

from mathlens.errors import UnknownNameError, UserError
from mathlens.solve.retrieval.bm25 import tokenize
from mathlens.solve.retrieval.store import Hit

Reranker = Callable[[str, list[Hit]], list[Hit]]


def overlap_rerank(query: str, hits: list[Hit]) -> list[Hit]:
    """Order by the fraction of distinct query terms found in the chunk or its context."""
    terms = set(tokenize(query))
    if not terms:
        return list(hits)

    def coverage(h: Hit) -> float:
        words = set(tokenize(f"{h.context or ''} {h.title} {h.text}"))
        return len(terms & words) / len(terms)

    ranked = sorted(enumerate(hits), key=lambda p: (-coverage(p[1]), p[0]))
    return [replace(h, parts={**h.parts, "overlap": round(coverage(h), 6)}) for _, h in ranked]


RERANKERS: dict[str, str] = {"overlap": "mathlens.solve.retrieval.rerank:overlap_rerank"}


def get_reranker(name: str) -> Reranker:
    """A reranker by registry name or `package.module:function` path."""
    target = RERANKERS.get(name, name)
    module, sep, attr = target.partition(":")
    if not sep:
        raise UnknownNameError("reranker", name, RERANKERS)
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"reranker {name!r} cannot be loaded: {exc}") from None
    if not callable(fn):
        raise UserError(f"reranker {name!r} is not a function")
    return fn


def apply_reranker(name: str | None, query: str, hits: list[Hit], k: int) -> list[Hit]:
    """Rerank `hits` (when a reranker is named) and keep the best `k`, renumbering ranks."""
    if not name:
        return hits[:k]
    out = get_reranker(name)(query, list(hits))
    known = {h.id for h in hits}
    if any(h.id not in known for h in out):
        raise UserError(f"reranker {name!r} returned chunks that were not among its candidates")
    return [replace(h, rank=i) for i, h in enumerate(out[:k], start=1)]
