"""Exam-level table in the layout of the calculus seed's Table 8 (§3.3, Table 3, §6.2).

One row per model × configuration × exam: course, exam, configuration, robustness, complexity,
step count and phrase sensitivity, each the mean of its question-level values (eq. 3 for the step
count) with the standard deviation across questions and a seeded percentile-bootstrap 95%
interval (`mathlens.stats.bootstrap.bootstrap_ci`, resampling questions). Questions without a
value for a metric are left out of that metric and counted in its `n`. The answer-flip rate is over
answered pairs only: `answer_pairs` counts the pairs it rests on and the pairs left out (a response
without a final answer / cut by the cap). `excluded_degenerate` counts the degenerate responses left
out of the row's questions, `excluded_questions` the questions left out entirely because their
original response is degenerate.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from statistics import fmean, stdev

from pydantic import BaseModel, Field

from mathlens.analyze.ablation.metrics import AnswerPairs, QuestionSensitivity, SensitivityConfig
from mathlens.stats.bootstrap import bootstrap_ci

TABLE_METRICS = ("robustness", "complexity", "step_count", "phrase_sensitivity")


class MetricSummary(BaseModel):
    """Mean, spread and bootstrap interval of one metric over an exam's questions."""

    mean: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    status: str


class ExamRow(BaseModel):
    """One row of the Table 8 layout."""

    course: str | None
    exam: str
    exam_id: str
    model: str
    configuration: str
    n_questions: int
    robustness: MetricSummary
    complexity: MetricSummary
    step_count: MetricSummary
    phrase_sensitivity: MetricSummary
    answer_flip_rate: MetricSummary
    #: pairs whose final answers were compared, and those left out because a response states no
    #: final answer or was cut by the token cap (an answer never given cannot flip)
    answer_pairs: AnswerPairs = Field(default_factory=AnswerPairs)
    flagged_questions: int
    excluded_degenerate: int = 0
    excluded_questions: int = 0


def summarize(values: list[float], config: SensitivityConfig) -> MetricSummary:
    """Mean, sample sd and bootstrap CI; `status` is the interval's (`ok`, `empty`, `degenerate`)."""
    ci = bootstrap_ci(values, n_resamples=config.n_resamples, confidence=config.confidence, seed=config.seed)
    return MetricSummary(mean=fmean(values) if values else None, sd=stdev(values) if len(values) > 1 else None,
                         ci_low=ci.low if ci.status == "ok" else None,
                         ci_high=ci.high if ci.status == "ok" else None, n=len(values), status=ci.status)


def exam_rows(questions: list[QuestionSensitivity], exams: dict[str, tuple[str, str | None]],
              config: SensitivityConfig) -> list[ExamRow]:
    """Aggregate question metrics per model, configuration and exam.

    `exams` maps an exam id to (exam name, course); unknown ids show the id and no course.
    """
    groups: dict[tuple[str, str, str], list[QuestionSensitivity]] = defaultdict(list)
    for q in questions:
        groups[(q.model, q.configuration, q.exam_id)].append(q)
    rows = []
    for (model, conf, exam_id), qs in groups.items():
        name, course = exams.get(exam_id, (exam_id, None))

        def values(metric: str, qs: list[QuestionSensitivity] = qs) -> list[float]:
            return [v for q in qs if (v := getattr(q, metric)) is not None]

        rows.append(ExamRow(
            course=course, exam=name, exam_id=exam_id, model=model, configuration=conf, n_questions=len(qs),
            **{m: summarize(values(m), config) for m in TABLE_METRICS},
            answer_flip_rate=summarize(values("answer_flip_rate"), config),
            answer_pairs=AnswerPairs.total(q.answer_pairs for q in qs),
            flagged_questions=sum(bool(q.flags) for q in qs),
            excluded_degenerate=sum(q.excluded_degenerate for q in qs),
            excluded_questions=sum(q.status == "degenerate" for q in qs),
        ))
    return rows


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.4f}"


def rows_csv(rows: list[ExamRow]) -> str:
    """The table as CSV: identifying columns, then mean, sd, ci_low, ci_high and n per metric."""
    metrics = [*TABLE_METRICS, "answer_flip_rate"]
    header = ["course", "exam", "exam_id", "model", "configuration", "n_questions"]
    for m in metrics:
        header += [m, f"{m}_sd", f"{m}_ci_low", f"{m}_ci_high", f"{m}_n"]
    header += ["answer_pairs_compared", "answer_pairs_unanswered", "answer_pairs_truncated",
               "flagged_questions", "excluded_degenerate", "excluded_questions"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for r in rows:
        line: list[str] = [r.course or "", r.exam, r.exam_id, r.model, r.configuration, str(r.n_questions)]
        for m in metrics:
            s: MetricSummary = getattr(r, m)
            line += [_fmt(s.mean), _fmt(s.sd), _fmt(s.ci_low), _fmt(s.ci_high), str(s.n)]
        pairs = r.answer_pairs
        line += [str(pairs.compared), str(pairs.unanswered), str(pairs.truncated),
                 str(r.flagged_questions), str(r.excluded_degenerate), str(r.excluded_questions)]
        writer.writerow(line)
    return buf.getvalue()
