"""Run overview: which runs, models and configurations; when; how many records, errors, truncations,
and how many responses are degenerate (with each output-quality flag counted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.analyze.quality import DEGENERATE_FLAGS
from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class Overview:
    runs: Table
    counts: Table
    errors: Table | None
    settings: list[tuple[str, list[tuple[str, str]]]]


def _when(value: Any) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value is not None else None


def build(ctx: ReportContext) -> Overview:
    """Tables of runs and record counts, the first errors, and each run's generation settings."""
    run_rows: list[tuple[Cell, ...]] = []
    count_rows: list[tuple[Cell, ...]] = []
    error_rows: list[tuple[Cell, ...]] = []
    unlisted: list[str] = []
    settings = []
    for run in ctx.runs:
        m = run.manifest
        overview = run.overview
        models = "; ".join(f"{e.spec} ({e.identity.get('model', '')})".replace(" ()", "") for e in m.models)
        run_rows.append((run.label, models, ", ".join(m.configurations), ", ".join(i.source for i in m.items),
                         m.runs, len(run.records), m.total_tasks, _when(m.created_at), _when(m.finished_at)))
        for g in overview.groups:
            count_rows.append((run.label, g.model, g.configuration, g.records, g.variants, g.ok, g.error,
                               g.truncated, g.cached, g.prompt_tokens, g.completion_tokens, g.mean_latency_s,
                               g.degenerate, *(g.quality.get(f, 0) for f in DEGENERATE_FLAGS),
                               g.quality.get("no_final_answer", 0)))
        error_rows.extend((run.label, e.key, e.error) for e in overview.errors)
        if overview.errors_total > len(overview.errors):
            unlisted.append(f"run {run.label}: the first {len(overview.errors)} of {overview.errors_total}")
        gen = m.generate
        settings.append((run.label, [
            ("temperature", str(gen.temperature)), ("seed", str(gen.seed)), ("max tokens", str(gen.max_tokens)),
            ("repeat penalty", str(gen.repeat_penalty)), ("stop", ", ".join(repr(s) for s in gen.stop) or "none"),
            ("judge", m.judge.spec if m.judge else "none"),
            ("configuration options", ", ".join(f"{k}={v}" for k, v in m.configuration_options.items()) or "none"),
            ("ablation", ", ".join(f"{k}={v}" for k, v in (m.ablation or {}).items()) or "none"),
            ("analyses", ", ".join(run.analysis_names) or "none"),
            ("mathlens", m.mathlens_version),
            ("system role", f"{m.system_role_name}: {m.system_role}" if m.system_role_name else m.system_role),
            ("exam mode", m.exam_mode),
        ]))
    runs = Table(ctx.uid("runs"), "Runs compared",
                 ("run", "models", "configurations", "items", "repeats", "records", "planned", "started",
                  "finished"), tuple(run_rows))
    counts = Table(ctx.uid("record-counts"), "Records per model and configuration",
                   ("run", "model", "configuration", "records", "of which variants", "ok", "errors", "truncated",
                    "cached", "prompt tokens", "completion tokens", "mean latency (s)", "degenerate",
                    *(f.replace("_", " ") for f in DEGENERATE_FLAGS), "no final answer"), tuple(count_rows),
                   caption="Truncated: the token cap cut the response short (finish reason 'length'). Degenerate: "
                           "empty, an echo of the system role or prompt, a repetition loop, or the wrong script "
                           "(one response can carry several flags); sensitivity and MAPLE figures leave these "
                           "responses out.")
    errors = Table(ctx.uid("errors"), "Failed requests", ("run", "record", "error"), tuple(error_rows),
                   caption=f"Listed: {'; '.join(unlisted)}." if unlisted else "") if error_rows else None
    return Overview(runs=runs, counts=counts, errors=errors, settings=settings)


SECTION = ReportSection(id="overview", title="Run overview", template="sections/overview.html.j2", build=build)
