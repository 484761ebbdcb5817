"""Okapi BM25 over chunk texts: the lexical half of contextual retrieval.

score(q, d) = Σ over distinct query terms t of  idf(t) · f(t,d)·(k1+1) / (f(t,d) + k1·(1 − b + b·|d|/avgdl)),
idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)), with N documents, n(t) of them containing t, f(t,d)
the count of t in d and |d| its length in tokens. This idf (the Lucene form) is never negative, so a
term found in most chunks still counts a little instead of pushing scores below zero.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

#: Very common English words that carry no topic; math letters (x, y, e) are kept.
_STOPWORD_TEXT = """a an and are as at be by for from has have how if in into is it its of on or that
the then this to was what when where which with find show use using let given"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def tokenize(text: str) -> list[str]:
    """Lower-case word and number tokens without stop words.

    >>> tokenize("Find the derivative of x^2 + 3x.")
    ['derivative', 'x', '2', '3x']
    """
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS]


@dataclass
class BM25Index:
    """An in-memory BM25 index; `ids[i]` names document i."""

    ids: list[str]
    docs: list[list[str]]
    k1: float = 1.5
    b: float = 0.75
    _tf: list[Counter[str]] = field(init=False, repr=False)
    _df: Counter[str] = field(init=False, repr=False)
    _avgdl: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.docs):
            raise ValueError("ids and docs differ in length")
        self._tf = [Counter(d) for d in self.docs]
        self._df = Counter(t for tf in self._tf for t in tf)
        self._avgdl = sum(len(d) for d in self.docs) / len(self.docs) if self.docs else 0.0

    @classmethod
    def from_texts(cls, ids: list[str], texts: list[str], k1: float = 1.5, b: float = 0.75) -> BM25Index:
        """Index raw texts with `tokenize`."""
        return cls(ids=list(ids), docs=[tokenize(t) for t in texts], k1=k1, b=b)

    def idf(self, term: str) -> float:
        """Inverse document frequency of `term` (0 documents -> the largest value)."""
        n, big_n = self._df.get(term, 0), len(self.docs)
        return math.log(1.0 + (big_n - n + 0.5) / (n + 0.5))

    def scores(self, query: str | list[str]) -> list[float]:
        """BM25 score of every document for `query` (text or tokens), in index order."""
        terms = set(tokenize(query) if isinstance(query, str) else query)
        out = []
        for doc, tf in zip(self.docs, self._tf, strict=True):
            norm = self.k1 * (1 - self.b + self.b * len(doc) / self._avgdl) if self._avgdl else self.k1
            s = 0.0
            for t in terms:
                f = tf.get(t, 0)
                if f:
                    s += self.idf(t) * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The `k` best (id, score) pairs with a positive score, best first; ties keep index order."""
        scored = [(i, s) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda p: (-p[1], p[0]))
        return [(self.ids[i], s) for i, s in scored[:k]]
