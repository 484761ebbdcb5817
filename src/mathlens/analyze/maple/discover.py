"""Label discovery: cluster embeddings of self-reflections and show each cluster's representatives.

The seed (section 3.1) embeds the failing points with a BERT-style encoder and clusters them into a
consistent label set. Here the embeddings come from any embedder (the offline MiniLM by default),
k-means groups them with a fixed K or the K in a range with the best silhouette, and each cluster
is presented with the reflections nearest its centre and its most characteristic words, so a user
can name clusters, merge them, and save the result as a label set file.

    >>> pts = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]
    >>> d = discover_clusters(["a", "b", "c", "d"], pts, k=2)
    >>> sorted(c.size for c in d.clusters)
    [2, 2]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field

from mathlens.analyze.maple.labels import Label, LabelSet
from mathlens.errors import UserError

if TYPE_CHECKING:
    from sklearn.cluster import KMeans

# scikit-learn is imported where it is used, so that reading a stored `Discovery` (the MAPLE
# document's summary) does not load it.


class Cluster(BaseModel):
    """One group of similar reflections."""

    id: int
    size: int
    members: list[int] = Field(description="indices into the reflections, nearest the centre first")
    representatives: list[str]
    top_terms: list[str] = Field(default_factory=list)


class Discovery(BaseModel):
    """The clustering and how K was chosen."""

    k: int
    k_selection: str = Field(description="'fixed' or 'silhouette'")
    silhouettes: dict[int, float] = Field(default_factory=dict, description="K -> mean silhouette")
    clusters: list[Cluster]
    n: int
    seed: int


def _normalise(x: np.ndarray) -> np.ndarray:
    # Sentence embeddings are compared by cosine; on unit vectors k-means' Euclidean distance ranks alike.
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def _kmeans(x: np.ndarray, k: int, seed: int) -> KMeans:
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(x)


def _top_terms(texts: list[str], labels: np.ndarray, k: int, n_terms: int) -> dict[int, list[str]]:
    """The words with the highest mean TF-IDF weight inside each cluster."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        tfidf = TfidfVectorizer(stop_words="english", max_features=2000).fit(texts)
        mat = tfidf.transform(texts)
    except ValueError:  # every text empty or stop words only
        return {c: [] for c in range(k)}
    vocab = np.array(tfidf.get_feature_names_out())
    out: dict[int, list[str]] = {}
    for c in range(k):
        rows = mat[labels == c]
        if rows.shape[0] == 0:
            out[c] = []
            continue
        weights = np.asarray(rows.mean(axis=0)).ravel()
        order = np.argsort(-weights)[:n_terms]
        out[c] = [str(vocab[i]) for i in order if weights[i] > 0]
    return out


def discover_clusters(
    texts: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    k: int | None = None,
    k_range: tuple[int, int] = (2, 8),
    seed: int = 0,
    n_representatives: int = 3,
    n_terms: int = 6,
) -> Discovery:
    """Cluster `texts` by their `embeddings`: K fixed when given, else the silhouette-best K in `k_range`."""
    from sklearn.metrics import silhouette_score

    if len(texts) != len(embeddings):
        raise ValueError(f"{len(texts)} texts but {len(embeddings)} embeddings")
    n = len(texts)
    if n < 2:
        raise UserError(f"label discovery needs at least 2 reflections, got {n}")
    x = _normalise(np.asarray(embeddings, dtype=float))
    silhouettes: dict[int, float] = {}
    if k is not None:
        if not 1 <= k <= n:
            raise UserError(f"--discover-labels K must be between 1 and the number of reflections ({n}), got {k}")
        model, selection = _kmeans(x, k, seed), "fixed"
        if 1 < k < n:
            silhouettes[k] = float(silhouette_score(x, model.labels_))
    else:
        low, high = max(2, k_range[0]), min(k_range[1], n - 1)
        if low > high:
            raise UserError(f"too few reflections ({n}) to choose K by silhouette; give K explicitly")
        best: tuple[float, int, KMeans] | None = None
        for cand in range(low, high + 1):
            fit = _kmeans(x, cand, seed)
            if len(set(fit.labels_)) < 2:
                continue
            score = float(silhouette_score(x, fit.labels_))
            silhouettes[cand] = score
            if best is None or score > best[0]:
                best = (score, cand, fit)
        if best is None:
            raise UserError("every candidate K put all reflections in one cluster (identical embeddings?)")
        _, k, model = best
        selection = "silhouette"
    labels = np.asarray(model.labels_)
    terms = _top_terms(list(texts), labels, k, n_terms)
    clusters = []
    for c in range(k):
        idx = np.flatnonzero(labels == c)
        dist = np.linalg.norm(x[idx] - model.cluster_centers_[c], axis=1)
        members = [int(i) for i in idx[np.argsort(dist, kind="stable")]]
        clusters.append(
            Cluster(
                id=c,
                size=len(members),
                members=members,
                representatives=[texts[i] for i in members[:n_representatives]],
                top_terms=terms.get(c, []),
            )
        )
    clusters.sort(key=lambda cl: (-cl.size, cl.id))
    return Discovery(k=k, k_selection=selection, silhouettes=silhouettes, clusters=clusters, n=n, seed=seed)


def draft_label_set(discovery: Discovery, set_id: str = "discovered") -> LabelSet:
    """A label set with one placeholder label per cluster, for a user to rename, merge and weight.

    Definitions list the cluster's characteristic words and examples carry its representatives;
    every weight is 1 until the user ranks the labels.
    """
    labels = []
    for rank, cl in enumerate(discovery.clusters, start=1):
        words = ", ".join(cl.top_terms) or "no characteristic words"
        labels.append(
            Label(
                id=f"cluster_{cl.id}",
                name=f"Cluster {cl.id} ({cl.size} reflections)",
                definition=f"Rename and define this label. Characteristic words: {words}.",
                severity=rank,
                weight=1.0,
                examples=[r[:400] for r in cl.representatives],
            )
        )
    return LabelSet(id=set_id, version=1, source="discovered", labels=labels)
