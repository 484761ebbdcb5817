"""Per question: the reasoning graph and step table of each response (the `FLOW` document)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.flowdata import FlowView, flow_for, step_nodes
from mathlens.report.graph import GraphLayout, layout_graph
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table

#: what a redundant step is, in a response that reached its end and in one the token cap cut
REDUNDANT_WORDS = "no step that leads to the answer uses it"
REDUNDANT_WORDS_CUT = ("no step that leads to the last step written uses it: the token cap cut the response "
                       "before an answer, so a step the rest would have used is counted too")


@dataclass(frozen=True)
class FlowPanel:
    label: str
    gid: str
    flow: FlowView
    graph: GraphLayout
    steps: Table
    #: what "redundant" means for this response (`REDUNDANT_WORDS` or, when the token cap cut it, `_CUT`)
    redundant_words: str = REDUNDANT_WORDS


def build(ctx: ReportContext, view: QuestionView) -> list[FlowPanel] | None:
    """Graph and step table of every original response the flow analysis covers."""
    out = []
    for resp in view.originals:
        flow = flow_for(resp.run, resp.record.key)
        if flow is None:
            continue
        rows: list[tuple[Cell, ...]] = [
            (s.number, s.text, ", ".join(s.operations), ", ".join(s.concepts), s.level, s.depth,
             s.verification, s.expected or s.detail, s.redundant) for s in flow.steps]
        gid = ctx.uid("graph", view.anchor, resp.record.key)
        table = Table(ctx.uid("steps", view.anchor, resp.record.key), "Steps",
                      ("step", "text", "operations", "concepts", "complexity", "depth", "verification",
                       "expected / detail", "redundant"), tuple(rows), decimals={5: 1})
        out.append(FlowPanel(label=ctx.response_label(resp), gid=gid, flow=flow,
                             graph=layout_graph(step_nodes(flow), flow.edges), steps=table,
                             redundant_words=REDUNDANT_WORDS_CUT if resp.record.truncated else REDUNDANT_WORDS))
    return out or None


SECTION = QuestionSection(id="flow", title="Reasoning flow", template="sections/flow.html.j2", build=build,
                          analyses=("flow",))
