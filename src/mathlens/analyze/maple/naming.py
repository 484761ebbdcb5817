"""The paper's label procedure: the clusters of failing points become the label set the judge uses.

The seed (001, sections 3.1 and 4.4.1) clusters BERT embeddings of the reflections' failing points
and compiles from the clusters "a consistent set of error labels", which the judge then applies;
its penalty weights came from a human survey that ranked the labels by severity. Here a model (the
judge) names each cluster from its failing points nearest the centre — a short name and a
one-sentence definition of the shared mistake — and then orders the named labels from least to
most serious; a label's weight is its rank, as for the default labels. A naming reply that does not
fit its schema leaves the cluster's placeholder name and its characteristic words; an unusable
ranking leaves every weight at 1. Both are recorded (`LabelNaming`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from mathlens.analyze.maple.discover import Cluster, Discovery
from mathlens.analyze.maple.labels import Label, LabelSet
from mathlens.analyze.maple.prompts import clip
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model
from mathlens.models.structured import generate_structured

NAMING_SYSTEM = (
    "You compile error labels for wrong solutions to math problems. You are shown failing points that "
    "students' solutions have in common. Give the kind of mistake they share a short name (two to five "
    "words) and a one-sentence definition that a grader could apply to a single step."
)
RANKING_SYSTEM = (
    "You are given error labels for steps of math solutions. Order all of them from the least serious "
    "mistake to the most serious one."
)


class LabelName(BaseModel):
    """A model's name and definition for one cluster."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=2, max_length=60)
    definition: str = Field(min_length=10, max_length=300)


class NamedCluster(BaseModel):
    """How one cluster became a label."""

    cluster: int
    label_id: str
    status: str = Field(description="'ok', or why the placeholder name was kept")


class LabelNaming(BaseModel):
    """The label set made from the clusters, and how it was made."""

    model: str
    clusters: list[NamedCluster] = Field(default_factory=list)
    weights: str = Field(description="'ranked by the model' or 'equal (ranking unusable: ...)'")


def slug(name: str) -> str:
    """A label id from a name: lower_snake_case, at most 64 characters.

    >>> slug("Sign error in the chain rule!")
    'sign_error_in_the_chain_rule'
    """
    s = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:64].rstrip("_")
    return s if s and s[0].isalpha() else f"label_{s}"[:64]


def _members(cluster: Cluster, texts: list[str], n: int = 6) -> list[str]:
    return [clip(texts[i], 400) for i in cluster.members[:n]]


async def _name_one(model: Model, cluster: Cluster, texts: list[str],
                    config: GenerateConfig) -> tuple[LabelName | None, str]:
    points = "\n".join(f"- {t}" for t in _members(cluster, texts))
    messages = [Message(role="system", content=NAMING_SYSTEM),
                Message(role="user", content=f"Failing points ({cluster.size} in this group; the most typical):\n"
                                             f"{points}\n\nReply with one JSON object with the keys name and "
                                             "definition.")]
    out = await generate_structured(model, messages, LabelName, config)
    if out.status != "ok" or out.value is None:
        return None, f"{out.status}: {out.error}"[:200]
    return out.value, "ok"


async def _rank(model: Model, labels: list[Label], config: GenerateConfig) -> tuple[list[str] | None, str]:
    ids = tuple(lab.id for lab in labels)
    reply_cls = create_model("Ranking", __config__=ConfigDict(extra="forbid"),
                             order=(list[Literal[ids]], Field(min_length=len(ids), max_length=len(ids))))  # type: ignore[valid-type]
    listing = "\n".join(f"- {lab.id}: {lab.definition}" for lab in labels)
    messages = [Message(role="system", content=RANKING_SYSTEM),
                Message(role="user", content=f"Labels:\n{listing}\n\nReply with one JSON object whose key order "
                                             "lists every label id once, least serious first.")]
    out = await generate_structured(model, messages, reply_cls, config)
    value: Any = out.value
    if out.status != "ok" or value is None:
        return None, f"{out.status}: {out.error}"[:200]
    order = list(value.order)
    if sorted(order) != sorted(ids):
        return None, "the ranking did not list every label exactly once"
    return order, "ok"


async def name_clusters(model: Model, discovery: Discovery, texts: list[str],
                        config: GenerateConfig | None = None) -> tuple[LabelSet, LabelNaming]:
    """The label set compiled from `discovery`'s clusters of `texts` (see the module docstring)."""
    config = config or GenerateConfig(max_tokens=160, temperature=0.0)
    labels: list[Label] = []
    named: list[NamedCluster] = []
    taken: set[str] = set()
    for cluster in discovery.clusters:
        value, status = await _name_one(model, cluster, texts, config)
        if value is not None:
            name, definition = value.name.strip(), " ".join(value.definition.split())
        else:
            words = ", ".join(cluster.top_terms) or "no characteristic words"
            name, definition = f"Cluster {cluster.id}", f"Failing points with the characteristic words: {words}."
        base = slug(name)
        label_id, n = base, 2
        while label_id in taken:
            label_id, n = f"{base[:60]}_{n}", n + 1
        taken.add(label_id)
        labels.append(Label(id=label_id, name=name, definition=definition, severity=1, weight=1.0,
                            examples=[t[:400] for t in cluster.representatives]))
        named.append(NamedCluster(cluster=cluster.id, label_id=label_id, status=status))
    order, why = await _rank(model, labels, config) if len(labels) > 1 else (None, "one label")
    if order is not None:
        rank = {label_id: i for i, label_id in enumerate(order, start=1)}
        labels = [lab.model_copy(update={"severity": rank[lab.id], "weight": float(rank[lab.id])}) for lab in labels]
        weights = "ranked by the model"
    else:
        weights = f"equal ({why})" if why != "one label" else "equal (one label)"
    label_set = LabelSet(id="reflections", version=1, source="discovered", labels=labels)
    return label_set, LabelNaming(model=model.spec, clusters=named, weights=weights)
