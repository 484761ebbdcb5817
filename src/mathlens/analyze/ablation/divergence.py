"""How far a response to an ablated prompt moved from the response to the original.

Two measures from the calculus seed (000, §3.2):

* **TF-IDF weighted cosine similarity.** The seed does not say which texts the vectoriser is
  fitted on. Here it is fitted on the responses *of one question* — the original response and the
  responses to all of that question's variants (for one model, configuration and repeat) — so the
  inverse document frequencies reflect what is common to that question's answers and what is
  particular to one of them. Scores are therefore comparable within a question and, as averages,
  across questions; they are not comparable with a vectoriser fitted on a whole corpus.
* **Normalised token-level Levenshtein distance** (rapidfuzz): edits between the two token
  sequences divided by the longer length, 0 for identical and 1 for entirely different responses.

Both use the same tokeniser: words and numbers, plus operator symbols (`=`, `^`, `+`, `√`, `∇`...)
as tokens of their own, lowercased. Unlike scikit-learn's default it keeps one-character tokens,
because in math `x`, `2` and `=` carry meaning. Brackets and sentence punctuation are dropped.

Beyond the seed, `sequence_distance` compares reasoning patterns (the operation sequence of each
response) with the same normalised edit distance.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein
from sklearn.feature_extraction.text import TfidfVectorizer

TOKEN_PATTERN = r"[^\W\d_]+|\d+(?:\.\d+)?|[=+\-*/^<>≤≥≠≈√∇∂∫∑Σπ∞→|]"
_TOKEN_RE = re.compile(TOKEN_PATTERN)


def tokenize(text: str) -> list[str]:
    """Lowercased word, number and operator tokens.

    >>> tokenize("f(x) = x^2, so f'(3) = 6.")
    ['f', 'x', '=', 'x', '^', '2', 'so', 'f', '3', '=', '6']
    """
    return _TOKEN_RE.findall(text.lower())


def _identity(tokens: list[str]) -> list[str]:
    return tokens


def _vectorizer() -> TfidfVectorizer:
    # Documents arrive already tokenised (each text is tokenised once and the tokens reused for
    # the edit distance), so scikit-learn's own pattern and two-character minimum do not apply.
    return TfidfVectorizer(analyzer=_identity, norm="l2", smooth_idf=True, sublinear_tf=False)


@dataclass(frozen=True)
class Cosines:
    """Cosine similarity of each `other` text to the reference text.

    `values[i]` is None when both texts have no tokens at all (similarity is undefined);
    when only one of them is empty the similarity is 0.
    """

    values: tuple[float | None, ...]


def _cosines(tokens: list[list[str]]) -> tuple[float | None, ...]:
    """Cosine of documents 1.. to document 0, from token lists."""
    if not any(tokens):
        return tuple(None for _ in tokens[1:])
    matrix = _vectorizer().fit_transform(tokens)
    sims = (matrix[1:] @ matrix[0].T).toarray().ravel()
    out: list[float | None] = []
    for i, sim in enumerate(sims, start=1):
        if not tokens[0] and not tokens[i]:
            out.append(None)
        else:
            # Rounding keeps float noise (0.9999999999999998) out of 1 - cos.
            out.append(round(float(min(1.0, max(0.0, sim))), 12))
    return tuple(out)


def tfidf_cosines(reference: str, others: Sequence[str]) -> Cosines:
    """TF-IDF cosine of each text in `others` to `reference`, fitted on `[reference, *others]`.

    >>> tfidf_cosines("the same words", ["the same words"]).values
    (1.0,)
    >>> tfidf_cosines("alpha beta", ["gamma delta"]).values
    (0.0,)
    """
    return Cosines(_cosines([tokenize(d) for d in [reference, *others]]))


@dataclass(frozen=True)
class PairMeasures:
    """Both seed measures for each `other` text against the reference (same order)."""

    cosines: tuple[float | None, ...]
    levenshtein: tuple[float, ...]


def divergences(reference: str, others: Sequence[str]) -> PairMeasures:
    """TF-IDF cosines (fitted on all the texts) and token Levenshtein distances, tokenising once."""
    tokens = [tokenize(d) for d in [reference, *others]]
    return PairMeasures(_cosines(tokens), tuple(sequence_distance(tokens[0], t) for t in tokens[1:]))


def pairwise_cosines(texts: Sequence[str]) -> list[float]:
    """TF-IDF cosine of every pair of `texts` (vectoriser fitted on `texts`), pairs with an empty
    text on both sides left out."""
    tokens = [tokenize(t) for t in texts]
    if len(texts) < 2 or not any(tokens):
        return []
    matrix = _vectorizer().fit_transform(tokens)
    gram = (matrix @ matrix.T).toarray()
    return [round(float(np.clip(gram[i, j], 0.0, 1.0)), 12) for i, j in itertools.combinations(range(len(texts)), 2)
            if tokens[i] or tokens[j]]


def token_levenshtein(a: str, b: str) -> float:
    """Normalised Levenshtein distance between the token sequences of `a` and `b` (0 = same).

    >>> token_levenshtein("x = 2", "x = 3")
    0.3333333333333333
    """
    return sequence_distance(tokenize(a), tokenize(b))


def sequence_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """Normalised Levenshtein distance between two sequences of labels (0 when both are empty)."""
    if not a and not b:
        return 0.0
    # Map labels to integers once: rapidfuzz compares integer sequences fastest.
    codes: dict[str, int] = {}
    ia = [codes.setdefault(t, len(codes)) for t in a]
    ib = [codes.setdefault(t, len(codes)) for t in b]
    return float(Levenshtein.normalized_distance(ia, ib))
