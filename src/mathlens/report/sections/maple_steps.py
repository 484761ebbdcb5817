"""Per question: MAPLE's verdict on each solution — step labels with reasons, reflection, score parts."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.lookup import first, num
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class MapleCard:
    label: str
    status: str
    answer_status: str
    parts: tuple[tuple[str, str], ...]
    steps: Table | None
    reflection: str | None
    error: str


def _fmt(v: object) -> str:
    f = num(v)
    return "–" if f is None else f"{f:.3f}"


def build(ctx: ReportContext, view: QuestionView) -> list[MapleCard] | None:
    """One card per original response with a MAPLE entry."""
    out = []
    for resp in view.originals:
        e = resp.run.entry("maple", resp.record.key)
        if e is None:
            continue
        texts = [str(s) for s in e.get("steps") or []]
        rows: list[tuple[Cell, ...]] = []
        for s in e.get("step_labels") or []:
            if not isinstance(s, dict):
                continue
            n = s.get("step")
            text = texts[n - 1] if isinstance(n, int) and 0 < n <= len(texts) else None
            rows.append((n, text, ", ".join(str(lb) for lb in s.get("labels") or []), s.get("reason"), s.get("source")))
        steps = Table(ctx.uid("maple-steps", view.anchor, resp.record.key), "Labelled steps",
                      ("step", "text", "labels", "reason", "source"), tuple(rows)) if rows else None
        parts = (("MAPLE", _fmt(e.get("maple"))), ("e (error rate)", _fmt(e.get("e"))),
                 ("v (validity)", f"{_fmt(e.get('v'))} ({e.get('v_basis') or e.get('vr_source') or ''})"),
                 ("r (redundancy)", f"{_fmt(e.get('r'))} ({e.get('r_basis') or e.get('vr_source') or ''})"),
                 ("label counts", ", ".join(f"{k}: {v}" for k, v in (e.get("counts") or {}).items()) or "none"),
                 ("answer", f"{e.get('predicted')} (reference {e.get('reference')})"))
        refl = first(e, "reflection.text")
        out.append(MapleCard(label=ctx.response_label(resp), status=str(e.get("status", "")),
                             answer_status=str(e.get("answer_status", "")), parts=parts, steps=steps,
                             reflection=str(refl) if refl else None, error=str(e.get("error") or "")))
    return out or None


SECTION = QuestionSection(id="maple_steps", title="MAPLE step labels", template="sections/maple_steps.html.j2",
                          build=build, analyses=("maple",))
