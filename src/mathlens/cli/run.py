"""`mathlens run`: put exams or datasets to one or more models and record every response."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, user_errors
from mathlens.cli.run_args import (
    RunNumbers,
    check_exam_mode,
    check_model_options,
    check_out_dir,
    check_resume_dir,
    check_resume_options,
    check_url,
    resolve_system_role,
)
from mathlens.cli.summary import print_summary, print_warning, run_summary
from mathlens.errors import UserError
from mathlens.items.loaders import ITEM_FORMATS
from mathlens.models.admission import Concurrency, ReplicaStats
from mathlens.models.base import GenerateConfig
from mathlens.models.cache import ResponseCache
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.models.options import split_options
from mathlens.models.registry import DEFAULT_MODEL, get_model, parse_options, provider_class, split_spec
from mathlens.runs.plan import estimate_prompt_tokens, load_exams, plan_tasks
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord
from mathlens.runs.runner import Progress as RunProgress
from mathlens.runs.runner import RunResult, base_manifest, build_models, execute, now_utc, with_learned
from mathlens.runs.snapshot import source_sha256
from mathlens.runs.store import RunStore
from mathlens.solve.prompts import DEFAULT_STOP, SYSTEM_ROLES


def _split_csv(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def _model_entries(models: list[str], options: dict[str, Any], base_urls: list[str] | None) -> list[ModelEntry]:
    """One manifest entry per model, each with the `-M` options its backend declares (a key no
    backend of the run declares is an error); `--base-url` goes to every HTTP backend, and several
    of them make a pool of replicas for openai/ models (docs/replicas.md)."""
    specs = list(models or [DEFAULT_MODEL])
    per_model = split_options({spec: provider_class(split_spec(spec)[0]).Options for spec in specs}, options)
    entries = []
    opened = []
    for spec in specs:
        opts = per_model[spec]
        if base_urls:
            if spec.startswith(("ollama/", "openai/")):
                opts.update(server_options(spec, base_urls))
            elif len(specs) == 1:
                raise UserError(f"--base-url is for openai/ and ollama/ models, not {spec}")
        model = get_model(spec, opts)  # validates the spec and options now, not mid-run
        opened.append(model)
        entries.append(ModelEntry(spec=spec, options=model.provider.recorded_options(), identity=model.identity()))
    asyncio.run(closing_all(asyncio.sleep(0), opened))  # built to check them; the run builds its own
    return entries


def server_options(spec: str, base_urls: list[str]) -> dict[str, Any]:
    """The model options `--base-url` (given once or more) sets for `spec`: `host` for ollama/ (one
    server), `base_url` for one openai/ server, `base_urls` for a pool."""
    if spec.startswith("ollama/"):
        if len(base_urls) > 1:
            raise UserError(f"--base-url given {len(base_urls)} times: pools of replicas are for openai/ models, "
                            f"and {spec} takes one server")
        return {"host": base_urls[0]}
    return {"base_url": base_urls[0]} if len(base_urls) == 1 else {"base_urls": list(base_urls)}


def resume_servers(manifest: Manifest, base_urls: list[str]) -> Manifest:
    """`manifest` with the servers of its openai/ models replaced by `base_urls` (`--base-url` with
    `--resume`): their identity holds no URL, so keys, records and the cache stay valid."""
    models = [m for m in manifest.models if m.spec.startswith("openai/")]
    if not models:
        raise UserError("--base-url with --resume replaces the servers of openai/ models, and this run has none")
    entries = []
    for entry in manifest.models:
        if entry.spec.startswith("openai/"):
            opts = {k: v for k, v in entry.options.items() if k not in ("base_url", "base_urls")}
            entry = entry.model_copy(update={"options": {**opts, **server_options(entry.spec, base_urls)}})
        entries.append(entry)
    return manifest.model_copy(update={"models": entries})


class _ProgressWithReplicas(Progress):
    """A rich progress bar with a table of replica counters under it (models served by a pool)."""

    replicas: dict[str, list[ReplicaStats]] = {}  # noqa: RUF012 - replaced per instance by _Bar

    def get_renderables(self) -> Any:
        yield from super().get_renderables()
        if self.replicas:
            yield replica_table(self.replicas)


def replica_table(replicas: dict[str, list[ReplicaStats]], title: str | None = None) -> Table:
    """Each replica's requests, errors (no answer, 5xx), 429s, current limit and in/out state."""
    table = Table(title=title, box=None, pad_edge=False)
    for col in ("model", "replica", "state", "requests", "ok", "errors", "429s", "in flight", "limit"):
        table.add_column(col, justify="left" if col in ("model", "replica", "state") else "right")
    for spec, stats in replicas.items():
        for r in stats:
            state = {"in": "[green]in[/]", "out": "[red]out[/]", "resting": "[yellow]resting[/]"}[r.state]
            table.add_row(escape(spec), escape(r.url), state, str(r.requests), str(r.ok), str(r.errors),
                          str(r.overloaded), str(r.in_flight), str(r.limit))
    return table


def _replica_line(replicas: dict[str, list[ReplicaStats]]) -> str:
    return "; ".join(f"{r.url} {r.state} {r.requests} req {r.errors} err limit {r.limit}"
                     for stats in replicas.values() for r in stats)


class _Bar:
    """Progress fed by the runner's callbacks: done/total, rate, ETA, tokens/s, errors.

    On a terminal it is a rich progress bar (with a table of replica counters under it when a
    model is served by a pool). When stderr is not a terminal (a log file, CI) and `lines` is set,
    it prints one plain line every `LINE_EVERY` records or `LINE_SECONDS` seconds, whichever comes
    first, so a log shows the run is alive, and a line of replica counters after it.
    """

    LINE_EVERY = 5
    LINE_SECONDS = 60.0

    def __init__(self, enabled: bool, lines: bool = False) -> None:
        self.enabled = enabled
        self.lines = lines and not enabled
        self.total = 0
        self.done = 0
        self.last_line = time.perf_counter()
        self.replicas: dict[str, list[ReplicaStats]] = {}
        self.bar = _ProgressWithReplicas(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[tps]} tok/s"),
            TextColumn("[red]{task.fields[errors]} errors"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=console, disable=not enabled,
        )
        self.task: Any = None
        self.start = time.perf_counter()
        self.tokens = 0
        self.errors = 0
        self.count = 0

    def on_start(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        self.bar.start()
        self.task = self.bar.add_task("requests", total=total, completed=done, rate="", tps="0", errors=0)
        if self.lines:
            print(f"[run] {done}/{total} requests done, {total - done} to send", file=sys.stderr, flush=True)

    def on_record(self, rec: RunRecord) -> None:
        self.count += 1
        self.tokens += rec.usage.completion_tokens if not rec.cached else 0
        self.errors += rec.status == "error"
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        self.bar.update(self.task, advance=1, rate=f"{self.count / elapsed:.2f} req/s",
                        tps=f"{self.tokens / elapsed:.1f}", errors=self.errors)
        self.done += 1
        now = time.perf_counter()
        if self.lines and (self.count % self.LINE_EVERY == 0 or self.done == self.total
                           or now - self.last_line >= self.LINE_SECONDS):
            self.last_line = now
            print(f"[run] {self.done}/{self.total} requests, {self.errors} errors, "
                  f"{self.tokens / elapsed:.1f} tok/s, {elapsed:.0f} s elapsed", file=sys.stderr, flush=True)
            if self.replicas:
                print(f"[run] replicas: {_replica_line(self.replicas)}", file=sys.stderr, flush=True)

    def on_replicas(self, spec: str, stats: list[ReplicaStats]) -> None:
        self.replicas[spec] = stats
        self.bar.replicas = self.replicas

    def stop(self) -> None:
        self.bar.stop()


def _execute(store: RunStore, manifest: Manifest, concurrency: Concurrency, retry: RetryPolicy,
             quiet: bool) -> RunResult:
    cache = ResponseCache()
    models = build_models(manifest, cache, retry, concurrency)
    bar = _Bar(enabled=not quiet and sys.stderr.isatty(), lines=not quiet)
    try:
        result = asyncio.run(closing_all(execute(store, manifest, models, RunProgress(
            on_start=bar.on_start, on_record=bar.on_record, on_replicas=bar.on_replicas)), models.values()))
    finally:
        bar.stop()
        cache.close()
    manifest = with_learned(manifest, result).model_copy(update={"finished_at": now_utc()})
    store.write_manifest(manifest)
    return result


@user_errors
def run(
    sources: list[str] = typer.Argument(None, help="Exam names (see `mathlens list exams`) or files."),
    model: list[str] = typer.Option(None, "--model", "-m", help=f"provider/model, repeatable [{DEFAULT_MODEL}]"),
    model_option: list[str] = typer.Option(None, "-M", help="Model option key=value (all models)."),
    base_url: list[str] = typer.Option(None, "--base-url", help="Server URL for openai/ollama models; repeat it "
                                       "for a pool of openai/ replicas (with --resume: the servers to use now)."),
    judge: str = typer.Option(None, "--judge", help="Judge model for later grading (stored in the manifest)."),
    runs: int = typer.Option(1, "--runs", min=1, help="Repeat each question N times (seed + k)."),
    limit: int = typer.Option(None, "--limit", min=1, help="First K questions of each source."),
    sample: int = typer.Option(None, "--sample", min=1, help="A seeded random sample of N questions."),
    seed: int = typer.Option(1234, "--seed", help="Generation seed (and sampling seed)."),
    fmt: str = typer.Option("auto", "--format", help="auto|exam|math|gsm8k|jsonl"),
    field: list[str] = typer.Option(None, "--field", help="Generic JSONL mapping field=source_key."),
    configurations: list[str] = typer.Option(None, "--configuration", "--config",
                                             help="Solving configurations: baseline,rag,contextual."),
    kb: str = typer.Option(None, "--kb", help="Knowledge base for rag/contextual [calculus]."),
    top_k: int = typer.Option(None, "--top-k", help="Retrieved chunks per question."),
    configuration_option: list[str] = typer.Option(None, "--configuration-option", "-C",
                                                   help="Configuration option key=value."),
    ablate: str = typer.Option(None, "--ablate", help="Ablation variants: all, or element types a,b."),
    pairs: bool = typer.Option(False, "--ablate-pairs", help="Also ablate pairs of elements."),
    paraphrases: bool = typer.Option(False, "--paraphrases", help="Also send meaning-preserving paraphrases."),
    max_tokens: int = typer.Option(512, "--max-tokens", help="Token cap per response."),
    temperature: float = typer.Option(0.0, "--temperature"),
    concurrency: str = typer.Option(None, "--concurrency", help="Requests in flight per model: N is a fixed "
                                    "limit (at most N at once, over all of a model's servers); auto adapts to the "
                                    "server (starts at 16 per server, grows while it answers well, backs off on "
                                    "429/503, Retry-After, timeouts and rising latency; ceiling -M max_concurrency, "
                                    "default 256). Default: auto for openai/, 2 for ollama/, 1 for embedded."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds per request before a retry."),
    retries: int = typer.Option(4, "--attempts", help="Attempts per request on transient failures."),
    system_role: str = typer.Option(None, "--system-role", help=f"A named system role ({', '.join(SYSTEM_ROLES)}) "
                                    "or a text file replacing it (default: exam)."),
    exam_mode: str = typer.Option(None, "--exam-mode", help="per-question (each question a request of its own, "
                                  "the default) or sequential (an exam's questions in order in one conversation)."),
    out: Path = typer.Option(None, "--out", help="Run directory [runs/<run id>]."),
    resume: Path = typer.Option(None, "--resume", help="Continue an interrupted run in this directory."),
    retry_errors: bool = typer.Option(False, "--retry-errors",
                                      help="With --resume: send the requests that ended in an error again."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count requests and prompt tokens; call nothing."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
    as_json: bool = JSON_OPTION,
) -> None:
    """Run questions against models; every response is recorded in a run directory.

    Exits 1 when the run holds no successful record (every request failed).
    """
    numbers = RunNumbers(runs=runs, max_tokens=max_tokens, temperature=temperature, concurrency=concurrency,
                         timeout=timeout, attempts=retries, top_k=top_k)
    numbers.check()
    for url in base_url or []:
        check_url("--base-url", url)
    model_opts = parse_options(model_option)
    check_model_options(model_opts)
    check_out_dir(out)
    if retry_errors and resume is None:
        raise UserError("--retry-errors goes with --resume RUN_DIR")
    how = Execution(retry=RetryPolicy(max_attempts=retries, timeout_s=timeout), concurrency=numbers.in_flight(),
                    retry_errors=retry_errors, dry_run=dry_run, quiet=quiet, as_json=as_json)
    if resume is not None:
        if sources:
            raise UserError("--resume takes the run directory only; the sources are in its manifest")
        check_resume_dir(resume)
        check_resume_options(system_role, exam_mode)
        store = RunStore(resume)
        imported = store.manifest().imported
        if imported is not None:
            raise UserError(f"{resume} was imported from {imported.source} (mathlens import): it has no requests "
                            "to send, so it cannot be resumed; import again into a new --out")
        _start(store, resume_servers(store.manifest(), base_url) if base_url else store.manifest(), how,
               resumed=True)
        return
    if not sources:
        raise UserError("name at least one exam or dataset (see `mathlens list exams`)")
    if fmt not in ITEM_FORMATS:
        raise UserError(f"--format must be one of {', '.join(ITEM_FORMATS)} (not {fmt!r})")
    mapping = dict(f.split("=", 1) for f in field or [] if "=" in f) or None
    conf_opts: dict[str, Any] = parse_options(configuration_option)
    if kb:
        conf_opts["kb"] = kb
    if top_k:
        conf_opts["top_k"] = top_k
    ablation = {"elements": _split_csv([ablate]), "pairs": pairs, "paraphrases": paraphrases} if ablate else None
    role_text, role_name = resolve_system_role(system_role)
    mode = check_exam_mode(exam_mode)
    manifest = base_manifest(
        items=[ItemSource(source=s, format=fmt, mapping=mapping, limit=limit, sample=sample, seed=seed)
               for s in sources],
        models=_model_entries(model, model_opts, base_url),
        judge=_model_entries([judge], {}, None)[0] if judge else None,
        configurations=_split_csv(configurations) or ["baseline"], configuration_options=conf_opts, runs=runs,
        seed=seed, generate=GenerateConfig(temperature=temperature, seed=seed, max_tokens=max_tokens,
                                           stop=DEFAULT_STOP),
        system_role=role_text, system_role_name=role_name, exam_mode=mode,
        ablation=ablation,
    )
    store = RunStore(out or Path("runs") / manifest.run_id)
    manifest = manifest.model_copy(update={"items": [s.model_copy(update={"sha256": source_sha256(s)})
                                                     for s in manifest.items]})
    _start(store, manifest, how, resumed=False)


@dataclass(frozen=True)
class Execution:
    """How `mathlens run` carries out a planned run (the options that do not go into the manifest)."""

    retry: RetryPolicy
    concurrency: Concurrency = None
    retry_errors: bool = False
    dry_run: bool = False
    quiet: bool = False
    as_json: bool = False


def _start(store: RunStore, manifest: Manifest, how: Execution, *, resumed: bool) -> None:
    """Plan the run of `manifest` in `store` and execute it (or, with `dry_run`, count it)."""
    exams = store.exams() if resumed else load_exams(manifest)
    tasks = plan_tasks(manifest, exams)
    manifest = manifest.model_copy(update={"total_tasks": len(tasks)})
    if how.dry_run:
        _print_dry_run(store, manifest, tasks, exams, how, resumed)
        return
    store.acquire_lock()  # one writer per run directory
    try:
        if not resumed and store.records_path.exists() and store.records_path.stat().st_size > 0:
            raise UserError(f"{store.root} already holds a run: use --resume {store.root} or another --out")
        if how.retry_errors:
            dropped = store.drop_error_records()
            if not (how.quiet or how.as_json):
                console.print(f"sending {dropped} failed request{'s' if dropped != 1 else ''} again", markup=False)
        if not resumed:
            store.write_items(exams)  # the run keeps its own copy of the questions
        store.write_manifest(manifest)
        result = _execute(store, manifest, how.concurrency, how.retry, how.quiet or how.as_json)
    finally:
        store.release_lock()
    doc = run_summary(store, result)
    if how.as_json:
        emit_json(doc)
        print_warning(doc)
    else:
        print_summary(doc)
    _fail_if_nothing_succeeded(store)


def _print_dry_run(store: RunStore, manifest: Manifest, tasks: list[Any], exams: list[Any], how: Execution,
                   resumed: bool) -> None:
    done = store.done_keys() if resumed else set()
    doc: dict[str, Any] = {
        "requests": len(tasks) - len(done), "total_requests": len(tasks), "already_done": len(done),
        "questions": sum(len(e.questions) for e in exams), "models": [m.spec for m in manifest.models],
        "configurations": manifest.configurations, "runs": manifest.runs,
        "estimated_prompt_tokens": estimate_prompt_tokens(tasks)}
    if how.as_json:
        emit_json(doc)
    else:
        console.print(f"{doc['requests']} requests ({doc['questions']} questions × variants × "
                      f"{len(doc['configurations'])} configurations × {doc['runs']} runs × "
                      f"{len(doc['models'])} models), about {doc['estimated_prompt_tokens']} prompt tokens")


def _fail_if_nothing_succeeded(store: RunStore) -> None:
    """Exit 1, saying why, when the run holds records and none of them is `ok`."""
    total = ok = 0
    first_error: str | None = None
    for rec in store.records():
        total += 1
        ok += rec.status == "ok"
        if rec.status == "error" and first_error is None:
            first_error = rec.error
    if total and not ok:
        console.print(f"error: no request succeeded ({total} error records; the first: {first_error}). "
                      f"Fix the cause, then run: mathlens run --resume {store.root} --retry-errors",
                      markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
