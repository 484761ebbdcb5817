"""Run overview: which runs, models and configurations; when; how many records, errors, truncations,
and how many responses are degenerate (with each output-quality flag counted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.analyze.quality import DEGENERATE_FLAGS, flag_counts
from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table

MAX_ERRORS_LISTED = 50


@dataclass(frozen=True)
class Overview:
    runs: Table
    counts: Table
    errors: Table | None
    errors_total: int
    settings: list[tuple[str, list[tuple[str, str]]]]


def _when(value: Any) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value is not None else None


def build(ctx: ReportContext) -> Overview:
    """Tables of runs and record counts, the first errors, and each run's generation settings."""
    run_rows: list[tuple[Cell, ...]] = []
    count_rows: list[tuple[Cell, ...]] = []
    error_rows: list[tuple[Cell, ...]] = []
    errors_total = 0
    settings = []
    for run in ctx.runs:
        m = run.manifest
        models = "; ".join(f"{e.spec} ({e.identity.get('model', '')})".replace(" ()", "") for e in m.models)
        run_rows.append((run.label, models, ", ".join(m.configurations), ", ".join(i.source for i in m.items),
                         m.runs, len(run.records), m.total_tasks, _when(m.created_at), _when(m.finished_at)))
        groups: dict[tuple[str, str], dict[str, Any]] = {}
        for rec in run.records:
            g = groups.setdefault((rec.model, rec.configuration), {
                "records": 0, "ok": 0, "error": 0, "truncated": 0, "cached": 0, "variants": 0,
                "prompt": 0, "completion": 0, "latency": 0.0, "flags": []})
            g["flags"].append(run.quality.get(rec.key))
            g["records"] += 1
            g[rec.status] += 1
            g["truncated"] += rec.truncated
            g["cached"] += rec.cached
            g["variants"] += rec.variant.kind != "original"
            g["prompt"] += rec.usage.prompt_tokens
            g["completion"] += rec.usage.completion_tokens
            g["latency"] += rec.latency_s
            if rec.status == "error":
                errors_total += 1
                if len(error_rows) < MAX_ERRORS_LISTED:
                    error_rows.append((run.label, rec.key, rec.error or ""))
        for (model, conf), g in groups.items():
            q = flag_counts(g["flags"])
            count_rows.append((run.label, model, conf, g["records"], g["variants"], g["ok"], g["error"],
                               g["truncated"], g["cached"], g["prompt"], g["completion"],
                               round(g["latency"] / g["records"], 3) if g["records"] else None,
                               q["degenerate"], *(q[f] for f in DEGENERATE_FLAGS), q["no_final_answer"]))
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
                   caption=(f"First {MAX_ERRORS_LISTED} of {errors_total}." if errors_total > MAX_ERRORS_LISTED
                            else "")) if error_rows else None
    return Overview(runs=runs, counts=counts, errors=errors, errors_total=errors_total, settings=settings)


SECTION = ReportSection(id="overview", title="Run overview", template="sections/overview.html.j2", build=build)
