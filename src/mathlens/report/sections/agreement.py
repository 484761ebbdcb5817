"""Agreement between graders: judge vs humans and humans vs each other (kappa, alpha, MAE with CIs).

Reads the agreement documents the grading and tutoring analyses write (`agreement`,
`grade_agreement`, `tutor_agreement`), each a list of rows; intervals are shown as estimate and
bounds. Imported human grades (`human_grades`) are summarised by grader.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.lookup import entries, first, flatten
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Table, table_from_dicts

DOCS = (("agreement", "Grading agreement"), ("grade_agreement", "Grading agreement"),
        ("tutor_agreement", "Tutoring rubric agreement"))


@dataclass(frozen=True)
class Agreement:
    tables: tuple[Table, ...]


def build(ctx: ReportContext) -> Agreement | None:
    """One table per agreement document, plus a count of imported human grades per grader."""
    tables: list[Table] = []
    for run in ctx.runs:
        suffix = f" · {run.label}" if ctx.multi_run else ""
        for name, title in DOCS:
            doc = run.analysis(name)
            lists = ([(k, v) for k, v in doc.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
                     if isinstance(doc, dict) else [("rows", entries(doc))])
            for key, rows in lists:
                label = {"pairs": "between graders", "self_agreement": "of the judge with itself across runs",
                         "rows": ""}.get(key, key.replace("_", " "))
                t = table_from_dicts(ctx.uid(name, key, run.label), f"{title} {label}".strip() + suffix,
                                     [flatten(r) for r in rows if isinstance(r, dict)])
                if t is not None:
                    tables.append(t)
        human = run.analysis("human_grades")
        if human is not None:
            graders = Counter(str(first(e, "grader", "annotator", default="human")) for e in entries(human))
            t = table_from_dicts(ctx.uid("human-grades", run.label), "Imported human grades" + suffix,
                                 [{"grader": g, "grades": n} for g, n in graders.items()])
            if t is not None:
                tables.append(t)
    return Agreement(tuple(tables)) if tables else None


SECTION = ReportSection(id="agreement", title="Grader agreement", template="sections/agreement.html.j2",
                        build=build, analyses=("grades", "human_grades"))
