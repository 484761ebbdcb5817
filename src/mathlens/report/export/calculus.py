"""The calculus study's result tables (seed 000): Tables 2, 3, 6, 7 and 8.

What each table of the study holds, and where mathlens reads it:

* Table 2, question-level metrics: per question, robustness, the element whose removal moved the
  answer most (its impact factor), step count, complexity, the reasoning pattern and phrase
  sensitivity. Read from the `sensitivity` entries (one per question, model and configuration);
  the reasoning pattern from the `flow` entry of the question's first original response.
* Table 3, exam-level metrics: per exam, the reasoning-flow aggregates (mean step count, complexity
  as mean ± sd, invalid steps) over the original prompts, from the `flow` summary. The exam-level
  robustness and phrase sensitivity are Table 8's.
* Table 6, exam performance against the class: per course and exam, the points scored out of the
  total, the percentage and the class average, from the `grade_tables` summary; with repeated
  runs, their number, the sd of the run percentages and the questions graded differently (the
  study's consistency check over five runs, §5.3).
* Table 7, configurations side by side: per exam, the student average then each configuration's
  percentage (original prompts only), from the `grade_tables` summary.
* Table 8, interpretability metrics by course, exam and configuration: robustness, complexity,
  step count and phrase sensitivity, one row per configuration labelled B (baseline), R (RAG) or
  C (contextual retrieval) under each course and exam, from the `sensitivity` summary. Cells are
  mean ± sd over the exam's questions; the CSV adds the 95% bootstrap interval and n.

Tables 4 and 5 of the study (the grading rubric and the system prompt) are inputs, not results, and
are not exported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from mathlens.analyze.ablation.analyzer import SENSITIVITY, SensitivitySummary
from mathlens.analyze.ablation.metrics import QuestionSensitivity
from mathlens.analyze.ablation.tables import ExamRow as SensitivityRow
from mathlens.analyze.ablation.tables import MetricSummary
from mathlens.analyze.flow.models import FLOW, FlowSummary
from mathlens.analyze.flow.models import ExamRow as FlowRow
from mathlens.analyze.grading.tables import GRADE_TABLES, ExamScore, GradeTables, Table7Row
from mathlens.report.export.builder import (
    CONFIGURATION_CODES,
    Col,
    Layout,
    TableBuilder,
    configuration_key,
    constant,
    course_of,
    empty,
    exam_key,
    exam_name,
    only,
    question_key,
    zero,
)
from mathlens.report.export.table import Cell, Column, Estimate, Ratio
from mathlens.report.loader import RunData
from mathlens.runs.documents import Document

LEGEND = "B: baseline; R: RAG; C: contextual retrieval."


def _estimate(m: MetricSummary) -> Estimate:
    return Estimate.spread(m.mean, m.sd, m.ci_low, m.ci_high, m.n)


class _ExamCell(Protocol):
    """A row about one exam in one cell (model and configuration)."""

    @property
    def exam_id(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def configuration(self) -> str: ...


E = TypeVar("E", bound=_ExamCell)


def _cell_order(run: RunData, r: _ExamCell) -> tuple[tuple[int, str], str, tuple[int, str]]:
    """Exams in the run's order, then models by name, then configurations in the study's order."""
    return exam_key(run, r.exam_id), r.model, configuration_key(r.configuration)


def _exam_columns(course: Callable[[E], Cell], exam: Callable[[E], Cell],
                  configuration: Callable[[E], Cell] | None = None) -> list[Col[E]]:
    """The columns that place an exam row: course (left out when no row has one), exam, model (left out
    when the run has one) and configuration (its name unless `configuration` reads it otherwise)."""
    return [
        Col(Column("Course"), course, empty),
        Col(Column("Exam"), exam),
        Col(Column("Model"), lambda r: r.model, constant),
        Col(Column("Configuration"), configuration or (lambda r: r.configuration)),
    ]


# -- Table 2 -----------------------------------------------------------------------------------

def _patterns(run: RunData) -> dict[tuple[str, str, str, str], str]:
    """(model, configuration, exam, question) -> the reasoning pattern of its first original response."""
    out: dict[tuple[str, str, str, str], tuple[int, str]] = {}
    if run.document(FLOW) is None:
        return {}
    for entry in run.all_entries(FLOW):
        ref = entry.record
        if not ref.original or entry.result is None:
            continue
        key = (ref.model, ref.configuration, ref.exam_id, ref.question_id)
        if key not in out or ref.repeat < out[key][0]:
            out[key] = (ref.repeat, ", ".join(entry.result.metrics.reasoning_pattern))
    return {k: v for k, (_, v) in out.items()}


def _element(q: QuestionSensitivity) -> str | None:
    if not q.impact:
        return None
    top = q.impact[0]
    return top.element_text if top.element_text is not None else top.variant


def table2(run: RunData, doc: Document[SensitivitySummary]) -> list[Layout[Any]]:
    items = sorted(run.all_entries(SENSITIVITY), key=lambda q: (
        exam_key(run, q.exam_id), question_key(run, q.exam_id, q.question_id), q.model,
        configuration_key(q.configuration)))
    patterns = _patterns(run)
    cols: list[Col[QuestionSensitivity]] = [
        Col(Column("Exam"), lambda q: exam_name(run, q.exam_id)),
        Col(Column("Question"), lambda q: q.question_id),
        Col(Column("Model"), lambda q: q.model, constant),
        Col(Column("Configuration"), lambda q: q.configuration),
        Col(Column("Robustness", 3), lambda q: q.robustness),
        Col(Column("Most influential element"), _element),
        Col(Column("Impact factor", 3), lambda q: q.impact[0].impact if q.impact else None),
        Col(Column("Step count", 1), lambda q: q.step_count),
        Col(Column("Complexity", 1), lambda q: q.complexity),
        Col(Column("Reasoning pattern"),
            lambda q: patterns.get((q.model, q.configuration, q.exam_id, q.question_id))),
        Col(Column("Phrase sensitivity", 3), lambda q: q.phrase_sensitivity),
    ]
    caption = ("The metrics of Table 2 of the calculus study. Robustness is the mean "
               "TF-IDF cosine between the original response and the responses to the ablated prompts; the "
               "impact factor (1 - cosine) is the most influential element's; phrase sensitivity is the "
               "largest change over the ablations. The reasoning pattern is that of the first original response.")
    return [Layout("Question-level metrics", cols, items, caption, groups=2)]


# -- Table 3 -----------------------------------------------------------------------------------

def table3(run: RunData, doc: Document[FlowSummary]) -> list[Layout[Any]]:
    items: Sequence[FlowRow] = sorted(doc.summary.exams, key=lambda r: _cell_order(run, r))
    cols: list[Col[FlowRow]] = [
        *_exam_columns(lambda r: course_of(run, r.exam_id), lambda r: exam_name(run, r.exam_id)),
        Col(Column("Responses", 0), lambda r: r.responses),
        Col(Column("Step count", 1), lambda r: r.mean_steps),
        Col(Column("Complexity", 1), lambda r: Estimate(r.mean_complexity, sd=r.sd_complexity,
                                                                   parts=("value", "sd"))),
        Col(Column("Invalid steps", 2), lambda r: r.mean_invalid_steps),
        Col(Column("Share with an invalid step", 2), lambda r: r.share_with_invalid_step),
    ]
    caption = ("As in Table 3 of the calculus study, over the original prompts: "
               "mean step count, complexity score as mean ± sd over responses, mean invalid steps per response "
               "and the share of responses with at least one invalid step. Exam-level robustness and phrase "
               "sensitivity are in Table 8.")
    return [Layout("Exam-level reasoning-flow metrics", cols, items, caption, groups=2)]


# -- Tables 6 and 7 ------------------------------------------------------------------------------

def table6(run: RunData, doc: Document[GradeTables]) -> list[Layout[Any]]:
    items = sorted(doc.summary.table6, key=lambda r: (
        course_of(run, r.exam_id) or "", *_cell_order(run, r), not r.original, r.variant, r.grader))
    cols: list[Col[ExamScore]] = [
        *_exam_columns(lambda r: course_of(run, r.exam_id), lambda r: r.exam_name),
        Col(Column("Prompt variant"), lambda r: r.variant, constant),
        Col(Column("Grader"), lambda r: r.grader, constant),
        Col(Column("Score", 1), lambda r: Ratio(r.score, r.total)),
        Col(Column("Score (%)", 1), lambda r: r.percent),
        Col(Column("Class average (%)", 1), lambda r: r.cohort.class_average),
        Col(Column("Ungraded questions", 0), lambda r: r.ungraded, zero),
        Col(Column("Runs", 0), lambda r: r.repeats, only(1)),
        Col(Column("SD over runs (%)", 1), lambda r: r.sd_percent, empty),
        Col(Column("Questions graded differently across runs", 0), lambda r: r.changed, zero),
    ]
    caption = ("As in Table 6 of the calculus study. Only graded questions count towards the score and its total; "
               "the class average is a descriptive comparison. With repeated runs each question's points are "
               "averaged over the runs, and the spread of the run scores is given.")
    return [Layout("Course exam performance comparison", cols, items, caption, groups=2)]


def _table7_label(r: Table7Row) -> str:
    return "Student average" if r.kind == "class" else f"{r.model} ({r.configuration})"


def table7(run: RunData, doc: Document[GradeTables]) -> list[Layout[Any]]:
    items = sorted(doc.summary.table7, key=lambda r: (
        exam_key(run, r.exam_id), r.kind != "class", r.model, configuration_key(r.configuration), r.grader))
    cols: list[Col[Table7Row]] = [
        Col(Column("Exam"), lambda r: r.exam),
        Col(Column("Model configuration"), _table7_label),
        Col(Column("Grader"), lambda r: r.grader if r.kind == "model" else None, constant),
        Col(Column("Score (%)", 1), lambda r: r.percent),
    ]
    caption = "As in Table 7 of the calculus study, on the original prompts."
    return [Layout("Performance comparison across configurations", cols, items, caption, groups=1)]


# -- Table 8 -----------------------------------------------------------------------------------

def table8(run: RunData, doc: Document[SensitivitySummary]) -> list[Layout[Any]]:
    items: Sequence[SensitivityRow] = sorted(doc.summary.exams, key=lambda r: (r.course or "", *_cell_order(run, r)))
    cols: list[Col[SensitivityRow]] = [
        *_exam_columns(lambda r: r.course, lambda r: r.exam,
                       lambda r: CONFIGURATION_CODES.get(r.configuration, r.configuration)),
        Col(Column("Robustness", 3), lambda r: _estimate(r.robustness)),
        Col(Column("Complexity", 1), lambda r: _estimate(r.complexity)),
        Col(Column("Step count", 1), lambda r: _estimate(r.step_count)),
        Col(Column("Phrase sensitivity", 3), lambda r: _estimate(r.phrase_sensitivity)),
    ]
    caption = (f"As in Table 8 of the calculus study. "
               f"{LEGEND} Each cell is the mean ± sd over the exam's questions (the CSV adds the 95% bootstrap "
               f"interval and the number of questions).")
    return [Layout("LLM interpretability metrics across courses, exams and configurations", cols, items, caption,
                   groups=3)]


TABLE2 = TableBuilder("calculus-table2-question-metrics", "Question-level metrics (calculus Table 2)", SENSITIVITY,
                      table2)
TABLE3 = TableBuilder("calculus-table3-exam-metrics", "Exam-level reasoning-flow metrics (calculus Table 3)", FLOW,
                      table3)
TABLE6 = TableBuilder("calculus-table6-exam-scores", "Exam performance against the class (calculus Table 6)",
                      GRADE_TABLES, table6)
TABLE7 = TableBuilder("calculus-table7-configurations", "Scores across configurations (calculus Table 7)",
                      GRADE_TABLES, table7)
TABLE8 = TableBuilder("calculus-table8-interpretability", "Interpretability metrics, B/R/C (calculus Table 8)",
                      SENSITIVITY, table8)
