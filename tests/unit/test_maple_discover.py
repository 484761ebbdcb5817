"""Label discovery on synthetic reflection embeddings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mathlens.analyze.maple.discover import discover_clusters, draft_label_set
from mathlens.analyze.maple.labels import load_label_set, save_label_set
from mathlens.errors import UserError

TOPICS = {
    0: "arithmetic slip when adding the two numbers",
    1: "misread the question and solved for the wrong quantity",
    2: "output repeats the same phrase and never ends",
}


def synthetic(per: int = 6, dim: int = 16, seed: int = 3) -> tuple[list[str], list[list[float]], list[int]]:
    """Three well separated directions with small noise; texts name their topic."""
    rng = np.random.default_rng(seed)
    centres = np.eye(dim)[:3] * 5
    texts, vecs, truth = [], [], []
    for t in range(3):
        for i in range(per):
            texts.append(f"{TOPICS[t]} (case {i})")
            vecs.append((centres[t] + rng.normal(0, 0.3, dim)).tolist())
            truth.append(t)
    return texts, vecs, truth


def test_silhouette_finds_three_clusters_matching_the_topics() -> None:
    texts, vecs, truth = synthetic()
    d = discover_clusters(texts, vecs, k=None, k_range=(2, 6))
    assert d.k == 3 and d.k_selection == "silhouette"
    assert max(d.silhouettes, key=lambda k: d.silhouettes[k]) == 3
    assert sorted(d.silhouettes) == [2, 3, 4, 5, 6]
    for cl in d.clusters:
        assert len({truth[i] for i in cl.members}) == 1
    assert sorted(i for cl in d.clusters for i in cl.members) == list(range(len(texts)))


def test_representatives_are_nearest_the_centre_and_terms_name_the_topic() -> None:
    texts, vecs, truth = synthetic()
    d = discover_clusters(texts, vecs, k=3, n_representatives=2)
    assert d.k_selection == "fixed" and 3 in d.silhouettes
    x = np.asarray(vecs)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    for cl in d.clusters:
        centre = x[cl.members].mean(axis=0)
        dists = np.linalg.norm(x[cl.members] - centre, axis=1)
        assert cl.representatives[0] == texts[cl.members[int(np.argmin(dists))]]
        assert len(cl.representatives) == 2
        topic = TOPICS[truth[cl.members[0]]]
        assert any(term in topic for term in cl.top_terms[:3])


def test_fixed_k_of_one_and_bad_k() -> None:
    texts, vecs, _ = synthetic(per=2)
    assert discover_clusters(texts, vecs, k=1).clusters[0].size == 6
    with pytest.raises(UserError, match="between 1"):
        discover_clusters(texts, vecs, k=7)


def test_too_few_reflections() -> None:
    with pytest.raises(UserError, match="at least 2"):
        discover_clusters(["only one"], [[1.0, 0.0]])
    with pytest.raises(UserError, match="give K explicitly"):
        discover_clusters(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], k=None)


def test_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="embeddings"):
        discover_clusters(["a", "b"], [[1.0]])


def test_draft_label_set_is_valid_data(tmp_path: Path) -> None:
    texts, vecs, _ = synthetic()
    labels = draft_label_set(discover_clusters(texts, vecs, k=3))
    assert labels.source == "discovered" and len(labels.labels) == 3
    assert all(lab.examples for lab in labels.labels)
    assert load_label_set(save_label_set(labels, tmp_path / "draft.yaml")) == labels
