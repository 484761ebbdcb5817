"""`mathlens show`, `mathlens list`, `mathlens schema`: look at runs, names and file formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.errors import UnknownNameError
from mathlens.runs.store import RunStore

#: schema name -> "module:class" (imported only when asked for, so `show` loads no item code)
SCHEMAS: dict[str, str] = {"exam": "mathlens.items.schema:Exam", "question": "mathlens.items.schema:Question"}


@user_errors
def show(run_dir: Path = typer.Argument(..., help="A run directory."), as_json: bool = JSON_OPTION) -> None:
    """Summarise a run: records, errors, analyses present.

    Records per model and configuration, errors, truncations; each analysis with whether it is current."""
    from mathlens.cli.summary import print_imported, print_source_agreement, print_summary, run_summary

    store = RunStore(run_dir)
    doc = run_summary(store)
    if as_json:
        emit_json(doc)
        return
    print_summary(doc, footer=False)
    if doc.imported is not None:
        print_imported(doc.imported, shown=5)
        if doc.source_agreement is not None:
            print_source_agreement(doc.source_agreement)
    if doc.with_trace:
        console.print(f"reasoning traces: {doc.with_trace} records, {doc.trace_truncated} cut by the token cap "
                      "before a visible answer")
    if doc.analyses:
        state = {s.name: s.status for s in doc.analysis_states}
        console.print("analyses: " + ", ".join(n if state.get(n) == "current" else f"{n} ({state.get(n)})"
                                               for n in doc.analyses), highlight=False, markup=False)
    if doc.grade_tables is not None and doc.grade_tables.table6:
        from mathlens.cli.grade_tables import print_tables

        print_tables(doc.grade_tables.table6)


def _list_doc(what: str) -> dict[str, Any]:
    from mathlens.items.loaders import builtin_exams, load_items
    from mathlens.models.registry import DEFAULT_MODEL, PROVIDERS

    if what == "models":
        from mathlens.models.embedded import EMBEDDED_MODELS

        models: list[dict[str, Any]] = [{"spec": f"embedded/{m.name}", "model": m.title,
                 "size": f"{m.size_bytes / 1e6:.0f} MB" if m.size_bytes else "~250 MB",
                 "instruction-tuned": "yes" if m.instruction_tuned else "no (base)",
                 "speed": m.speed, "fit for": m.fit_for, "license": m.license}
                for m in EMBEDDED_MODELS.values()]
        return {"default": DEFAULT_MODEL, "embedded": models, "providers": sorted(PROVIDERS),
                "examples": ["llamacpp/PATH.gguf", "ollama/gemma3:4b",
                             "openai/MODEL --base-url http://127.0.0.1:8000/v1", "replay/RUN_DIR"]}
    if what == "exams":
        rows = []
        for name in builtin_exams():
            exam = load_items(name)
            rows.append({"name": name, "course": exam.course, "exam": exam.name,
                         "questions": len(exam.questions), "total_points": exam.total_points})
        return {"exams": rows}
    if what == "datasets":
        return {"formats": [
            {"format": "math", "fields": "problem, answer, solution, level, subject (MATH/MATH500)"},
            {"format": "gsm8k", "fields": "question, answer with the final answer after ####"},
            {"format": "jsonl", "fields": "question fields, or any keys mapped with --field text=KEY ..."},
            {"format": "exam", "fields": "YAML exam (see `mathlens schema exam`)"},
        ]}
    if what == "analyzers":
        from mathlens.analyze.registry import ANALYZERS, get_analyzer

        rows = []
        for name in ANALYZERS:
            a = get_analyzer(name)
            opts = ", ".join(f"{k}={f.get_default(call_default_factory=True)!r}" if not f.is_required() else k
                             for k, f in a.options.model_fields.items())
            rows.append({"name": name, "what": a.title, "judge": a.judge or "-",
                         "run by `analyze`": "yes" if a.default else "with --only",
                         "reads": ", ".join(a.reads) or "-", "options (-O NAME.KEY=VALUE)": opts or "-"})
        return {"analyzers": rows}
    raise UnknownNameError("list", what, ["models", "exams", "datasets", "analyzers"])


@user_errors
def list_(what: str = typer.Argument(..., help="models | exams | datasets | analyzers"),
          as_json: bool = JSON_OPTION) -> None:
    """List providers, exams, dataset formats or analyzers.

    Analyzers are listed with their options."""
    doc = _list_doc(what)
    if as_json:
        emit_json(doc)
        return
    for k, v in doc.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            from rich.table import Table

            table = Table(title=k if len(doc) > 1 else None)
            for col in v[0]:
                table.add_column(col)
            for row in v:
                table.add_row(*(str(x) for x in row.values()))
            out_console.print(table)
        else:
            out_console.print(f"[bold]{k}[/]: {escape(', '.join(v) if isinstance(v, list) else v)}")


@user_errors
def schema(name: str = typer.Argument("exam", help="exam | question | study")) -> None:
    """Print the JSON Schema of an item file or a study file."""
    if name == "study":
        from mathlens.study.load import study_schema

        print(json.dumps(study_schema(), indent=2))
        return
    if name not in SCHEMAS:
        raise UnknownNameError("schema", name, [*SCHEMAS, "study"])
    import importlib

    module, _, attr = SCHEMAS[name].partition(":")
    model = getattr(importlib.import_module(module), attr)
    print(json.dumps(model.model_json_schema(), indent=2))


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("list")(list_)
    app.command("schema")(schema)
