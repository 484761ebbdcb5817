"""Which labels the judge applies: the given (fixed) label set, or the seed's own procedure.

`fixed` (default): the label set given (`--labels`, else the seven defaults). A discovery
(`--discover-labels K|auto`) clusters the failing points of the reflections into a draft label set
to review, and the run is still judged with the fixed labels.

`paper` (`--label-procedure paper`): the seed's procedure (001, sections 3.1-3.2). Every wrong
solution is reflected on first; the failing points are embedded (the offline MiniLM, a BERT-style
encoder, by default) and clustered (K from `--discover-labels`, else chosen by silhouette); a model
names each cluster and ranks the labels (`naming.py`); and the judge then labels the steps with
that label set. When no discovery can be made (too few distinct failing points), the fixed labels
are used and the summary says so.
"""

from __future__ import annotations

from typing import Literal

from mathlens.analyze.maple.discover import Discovery
from mathlens.analyze.maple.judge import Reflection
from mathlens.analyze.maple.labels import LabelSet
from mathlens.analyze.maple.naming import LabelNaming, name_clusters
from mathlens.analyze.maple.reflection import failing_points
from mathlens.analyze.maple.results import DiscoveryOutcome
from mathlens.errors import UserError
from mathlens.models.model import Model

LabelProcedure = Literal["fixed", "paper"]


def discover(reflections: list[Reflection | None], embedder_spec: str | None,
             k: int | Literal["auto"] | None) -> DiscoveryOutcome:
    """Cluster the distinct failing points; a discovery that cannot be made is recorded, not raised."""
    from mathlens.analyze.maple.discover import discover_clusters
    from mathlens.solve.retrieval.embed import get_embedder

    texts = failing_points(reflections)
    distinct = list(dict.fromkeys(texts))  # identical points (a model echoing its prompt) are one point
    embedder = get_embedder(embedder_spec)
    base = DiscoveryOutcome(status="error", embedder=embedder.identity, reflections=len(texts), texts=distinct)
    try:
        found = discover_clusters(distinct, embedder.embed(distinct) if distinct else [],
                                  k=None if k in (None, "auto") else int(k))
    except UserError as exc:
        return base.model_copy(update={"error": f"{exc} ({len(distinct)} distinct of {len(texts)})"})
    return base.model_copy(update={"status": "ok", "result": found})


async def paper_labels(model: Model, outcome: DiscoveryOutcome) -> tuple[LabelSet, LabelNaming] | None:
    """The label set compiled from a discovery by `model`, or None when there is no discovery."""
    if outcome.status != "ok" or outcome.result is None:
        return None
    found: Discovery = outcome.result
    return await name_clusters(model, found, outcome.texts)


def labels_note(procedure: str, discovery: DiscoveryOutcome | None, naming: LabelNaming | None) -> str:
    """One line on where the judge's labels came from."""
    if procedure == "fixed":
        drafted = discovery is not None and discovery.status == "ok"
        return "the fixed label set" + (" (the clusters were written as a draft to review)" if drafted else "")
    if naming is not None:
        n = len(naming.clusters)
        return f"compiled from {n} clusters of the reflections' failing points; weights {naming.weights}"
    why = discovery.error if discovery is not None else "no discovery"
    return f"the paper's procedure could not compile labels ({why}): judged with the fixed label set"
