"""Printing the grade tables (Tables 6 and 7 of the calculus study) and grade changes.

Kept apart from `cli/grade.py` so that `mathlens show` can print a graded run's tables without
loading the grading code (and SymPy with it).
"""

from __future__ import annotations

from rich.table import Table

from mathlens.analyze.grading.tables import ExamScore, GradeChange, table7
from mathlens.cli.common import out_console
from mathlens.rounding import fixed


def pct(x: float | None) -> str:
    return "-" if x is None else fixed(x, 1)


def print_tables(rows: list[ExamScore]) -> None:
    """Tables 6 and 7 of the calculus study, from this run's grades (one row per configuration and
    prompt variant; Table 7 compares configurations on the original prompts)."""
    t6 = Table(title="Exam scores (as in Table 6 of the calculus study)")
    variants = any(not r.original for r in rows)
    repeated = any(len(r.run_scores) > 1 for r in rows)
    cols = ("exam", "model", "configuration", *(("variant",) if variants else ()), "grader", "score", "%",
            *(("% per run", "mean ± sd %", "changed") if repeated else ()), "class avg", "diff", "ungraded",
            "judge vs checker")
    for col in cols:
        t6.add_column(col)
    for r in rows:
        per_run = (" · ".join(pct(s.percent) for s in r.run_scores),
                   f"{pct(r.mean_percent)} ± {pct(r.sd_percent)}", str(r.changed)) if repeated else ()
        t6.add_row(r.exam_name, r.model, r.configuration, *((r.variant,) if variants else ()), r.grader,
                   f"{r.score:g}/{r.total:g}", pct(r.percent), *per_run, pct(r.cohort.class_average),
                   pct(r.cohort.difference), str(r.ungraded), _judge_mark(r.decisive, r.disagreements,
                                                                           r.judge_unreliable))
    out_console.print(t6)
    t7 = Table(title="Across configurations (as in Table 7 of the calculus study)")
    for col in ("exam", "configuration", "model", "grader", "score %", "judge vs checker"):
        t7.add_column(col)
    for row7 in table7(rows):
        t7.add_row(row7.exam, row7.configuration, row7.model, row7.grader, pct(row7.percent),
                   _judge_mark(row7.decisive, row7.disagreements, row7.judge_unreliable))
    out_console.print(t7)


def _judge_mark(decisive: int, disagreements: int, unreliable: bool) -> str:
    """`2/4 disagree`, with `UNRELIABLE` when the judge contradicts the checker on over a fifth."""
    if not decisive:
        return "-"
    return f"{disagreements}/{decisive} disagree" + (" UNRELIABLE" if unreliable else "")


def print_changes(changes: list[GradeChange]) -> None:
    """The questions whose grade changed between repeated runs (nothing when none did)."""
    if not changes:
        return
    table = Table(title="Questions whose grade changed between runs")
    for col in ("exam", "question", "model", "configuration", "variant", "grader", "grade per run", "spread"):
        table.add_column(col)
    for c in changes:
        per_run = " · ".join("-" if g.total is None else f"{g.total:g}" for g in c.grades)
        table.add_row(c.exam_id, c.question_id, c.model, c.configuration, c.variant, c.grader,
                      f"{per_run} (of {c.max_total:g})", f"{c.spread:g}")
    out_console.print(table)
