"""`mathlens run`: put exams or datasets to one or more models and record every response."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import ValidationError

from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, user_errors
from mathlens.cli.options import NO_FLAGS, with_model_options
from mathlens.cli.progress import Bar
from mathlens.cli.run_args import check_model_options, check_out_dir, check_resume_dir, check_url, resolve_system_role
from mathlens.errors import UserError
from mathlens.flags import FlagValues, refused_flag
from mathlens.items.schema import Exam
from mathlens.models.admission import Concurrency
from mathlens.models.cache import ResponseCache
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.models.options import split_options
from mathlens.models.registry import get_model, provider_class, split_spec
from mathlens.runs.plan import estimate_prompt_tokens, load_exams, plan_tasks
from mathlens.runs.records import Manifest, ModelEntry, RunRecord, Task
from mathlens.runs.runner import Progress as RunProgress
from mathlens.runs.runner import RunResult, base_manifest, build_models, execute, now_utc, with_learned
from mathlens.runs.snapshot import source_sha256
from mathlens.runs.store import RunStore
from mathlens.study.load import PREFIX, is_study, load_study, study_from
from mathlens.study.model import Execution as StudyExecution
from mathlens.study.model import Study
from mathlens.study.resolve import (
    ablation_options,
    configuration_options,
    configurations,
    generate_config,
    item_sources,
    resolved,
    save_study,
    saved_study,
    tutor_design,
)

if TYPE_CHECKING:
    from mathlens.cli.summary import RunSummary


def _model_entries(study: Study) -> tuple[list[ModelEntry], dict[str, bool]]:
    """One manifest entry per model of the study: its own options, with the options given for every
    model (`-M`) that its backend declares (a key no backend of the run declares is an error);
    `--base-url` goes to every HTTP backend, and several of them make a pool of replicas for openai/
    models (docs/replicas.md). Also, for each model, whether it reads images (`-M vision`, a vision
    projector), as a tutoring design records it."""
    specs = [m.spec for m in study.models]
    check_model_options(study.model_options)
    for m in study.models:
        check_model_options(m.options)
    for url in study.base_urls:
        check_url("--base-url", url)
    shared = split_options({spec: provider_class(split_spec(spec)[0]).Options for spec in specs},
                           study.model_options)
    if len(set(specs)) != len(specs):
        raise UserError(f"model {next(s for s in specs if specs.count(s) > 1)} is listed twice")
    entries = []
    opened = []
    reads: dict[str, bool] = {}
    for ref in study.models:
        opts = {**shared[ref.spec], **ref.options}
        if study.base_urls:
            if ref.spec.startswith(("ollama/", "openai/")):
                opts.update(server_options(ref.spec, study.base_urls))
            elif len(specs) == 1:
                raise UserError(f"--base-url is for openai/ and ollama/ models, not {ref.spec}")
        model = get_model(ref.spec, opts)  # validates the spec and options now, not mid-run
        opened.append(model)
        entries.append(ModelEntry(spec=ref.spec, options=model.provider.recorded_options(), identity=model.identity()))
        reads[ref.spec] = model.accepts_images
    asyncio.run(closing_all(asyncio.sleep(0), opened))  # built to check them; the run builds its own
    return entries, reads


def _judge_entry(study: Study) -> ModelEntry | None:
    """The judge recorded with the run (checked now, not when the first grading needs it)."""
    if study.judge is None:
        return None
    check_model_options(study.judge.options)
    model = get_model(study.judge.spec, dict(study.judge.options))
    asyncio.run(closing_all(asyncio.sleep(0), [model]))
    return ModelEntry(spec=study.judge.spec, options=model.provider.recorded_options(), identity=model.identity())


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


def _load_summary() -> None:
    """Import what the summary printed after the run reads: its counts and grading tables, and the
    readers behind the quality flags of a sample of responses."""
    import mathlens.cli.summary  # noqa: F401
    from mathlens.analyze.quality.flags import load_readers

    load_readers()


@dataclass
class _SummaryLoader:
    """Loads the summary's modules (`_load_summary`) while the run waits for its last replies, where
    the imports cost it nothing (after the last record they would add to its end). A record frees a
    slot for the next request; once fewer records are left than the models take at once, every
    request has been sent and the process only waits."""

    in_flight: int
    left: int = 0
    loaded: bool = False

    def on_start(self, total: int, done: int) -> None:
        self.left = total - done

    def on_record(self, rec: RunRecord) -> None:
        self.left -= 1
        if not self.loaded and self.left < self.in_flight:
            self.loaded = True
            _load_summary()


def _execute(store: RunStore, manifest: Manifest, how: Options, tasks: list[Task]) -> RunResult:
    """Send `tasks` (the run's plan) as `how` says; the manifest is written again when they are done."""
    cache = None if how.no_cache else ResponseCache()
    quiet = how.quiet or how.as_json
    models = build_models(manifest, cache, how.retry, how.concurrency)
    bar = Bar(enabled=not quiet and sys.stderr.isatty(), lines=not quiet)
    loader = _SummaryLoader(in_flight=sum(m.admission.ceiling for m in models.values()))

    def on_start(total: int, done: int) -> None:
        bar.on_start(total, done)
        loader.on_start(total, done)

    def on_record(rec: RunRecord) -> None:
        bar.on_record(rec)
        loader.on_record(rec)

    try:
        result = asyncio.run(closing_all(execute(store, manifest, models, RunProgress(
            on_start=on_start, on_record=on_record, on_replicas=bar.on_replicas), tasks=tasks), models.values()))
    finally:
        bar.stop()
        if cache is not None:
            cache.close()
    manifest = with_learned(manifest, result).model_copy(update={"finished_at": now_utc()})
    store.write_manifest(manifest)
    return result


@user_errors
@with_model_options(Study)
def run(
    sources: list[str] = typer.Argument(None, metavar="STUDY|SOURCE",
                                        help="A study file (STUDY.yaml, or study:NAME for a built-in one), "
                                             "or exams (`mathlens list exams`) and item files."),
    out: Path = typer.Option(None, "--out", help="Run directory (default runs/RUN_ID)."),
    resume: Path = typer.Option(None, "--resume", help="Continue an interrupted run in this directory (its "
                                                       "manifest and study; --base-url, --concurrency, --timeout "
                                                       "and --attempts may change)."),
    retry_errors: bool = typer.Option(False, "--retry-errors",
                                      help="With --resume: send the requests that ended in an error again."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count requests and prompt tokens; call nothing."),
    no_cache: bool = typer.Option(False, "--no-cache",
                                  help="Neither read nor write the response cache: every request is sent, the "
                                       "judge's requests of the study's analyses too."),
    quiet: bool = QUIET_OPTION,
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Run questions against models; record every response.

    The run is a study: a study file names everything (`mathlens schema study`), and every option
    below sets the field of the same name over the file's value. Without a study file the sources
    are exams or item files and the options say the rest. Exits 1 when the run holds no successful
    record (every request failed).
    """
    check_out_dir(out)
    if retry_errors and resume is None:
        raise UserError("--retry-errors goes with --resume RUN_DIR")
    how = Options(retry_errors=retry_errors, dry_run=dry_run, quiet=quiet, as_json=as_json, no_cache=no_cache)
    if resume is not None:
        if sources:
            raise UserError("--resume takes the run directory only; the sources are in its manifest")
        resume_run(resume, flags, how)
        return
    study, base, where = _study(sources or [], flags)
    run_study(study, base, where, out, how)


def study_manifest(study: Study) -> Manifest:
    """The manifest of a new run of `study` (already `resolved`): its models checked and described,
    its judge, and for a tutoring study the design (its conditions are the configurations)."""
    entries, reads = _model_entries(study)
    role_text, role_name = ("", None) if study.tutoring is not None else resolve_system_role(study.role)
    return base_manifest(
        items=item_sources(study), models=entries, judge=_judge_entry(study),
        configurations=configurations(study), configuration_options=configuration_options(study), runs=study.repeats,
        seed=study.generation.seed, generate=generate_config(study), system_role=role_text,
        system_role_name=role_name, exam_mode=study.exam_mode, ablation=ablation_options(study), study=study.study,
        tutor=tutor_design(study, reads))


@contextlib.contextmanager
def _kept_from_collection() -> Iterator[None]:
    """The objects made so far (the command's modules and classes), and those `_start` adds (the
    study and the plan), kept out of the cyclic collector's passes until the call ends: they live
    until the command ends, and walking them again is wasted work (one full pass while the HTTP
    client loaded cost a run 0.03 s of start-up)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@_kept_from_collection()
def run_study(study: Study, base: Path | None, where: str | None, out: Path | None, how: Options) -> None:
    """Run `study` (read from the file in `base` named `where`; both None for one made on the command
    line) into `out` (default runs/RUN_ID): its requests, then its analyses, report and tables."""
    study = resolved(study, base, where)
    how = how.carried_out(study.execution)
    manifest = study_manifest(study)
    store = RunStore(out or Path("runs") / manifest.run_id)
    manifest = manifest.model_copy(update={"items": [s.model_copy(update={"sha256": source_sha256(s)})
                                                     for s in manifest.items]})
    _start(store, manifest, how, resumed=False, study=study)



def _study(sources: list[str], flags: FlagValues) -> tuple[Study, Path | None, str | None]:
    """The study to run: a study file (with the flags over its fields), or one made of the sources
    named and the flags. (The study, the folder its relative paths are read from, and what names its
    file in messages; None for both when the command line made it.)"""
    studies = [s for s in sources if is_study(s)]
    if studies:
        if len(sources) > 1:
            raise UserError(f"{studies[0]} is a study: run it alone (its items are in the file), not with "
                            f"{', '.join(s for s in sources if s != studies[0])}")
        study, path = load_study(studies[0], flags)
        if studies[0].startswith(PREFIX):
            return study, None, studies[0]
        return study, path.parent, str(path)
    items_flag = any(ff.path == ("items", "*", "source") for ff, _ in flags.given)
    if sources and items_flag:
        raise UserError("--items replaces a study file's items: give exams and item files either as arguments or "
                        "with --items, not both")
    if not sources and not items_flag:
        raise UserError("name a study (STUDY.yaml or study:NAME) or at least one exam or dataset "
                        "(see `mathlens list exams`)")
    data: dict[str, Any] = {"study": "command-line", "items": [{"source": s} for s in sources]}
    return study_from(data, "the command line", flags=flags), None, None


@_kept_from_collection()
def resume_run(resume: Path, flags: FlagValues, options: Options) -> None:
    """Continue the run in `resume` as its manifest (and study) say; only how requests are sent and
    which servers answer may change."""
    fixed = [ff.name for ff, _ in flags.given if ff.path[0] not in ("execution", "base_urls")]
    if fixed:
        raise UserError(f"{fixed[0]} cannot change a run being resumed (--resume uses the one in its manifest)")
    check_resume_dir(resume)
    store = RunStore(resume)
    manifest = store.manifest()
    if manifest.imported is not None:
        raise UserError(f"{resume} was imported from {manifest.imported.source} (mathlens import): it has no "
                        "requests to send, so it cannot be resumed; import again into a new --out")
    study = saved_study(store.root)
    data: dict[str, Any] = {"execution": study.execution.model_dump() if study is not None else {}}
    flags.apply(data)
    try:
        execution = StudyExecution.model_validate(data["execution"])
    except ValidationError as exc:
        first = exc.errors()[0]
        refused = refused_flag(StudyExecution, flags, first, prefix=("execution",))
        raise UserError(refused or f"execution: {first['msg']}") from None
    base_urls = [str(u) for u in data.get("base_urls") or []]
    for url in base_urls:
        check_url("--base-url", url)
    _start(store, resume_servers(manifest, base_urls) if base_urls else manifest, options.carried_out(execution),
           resumed=True, study=study)


@dataclass(frozen=True)
class Options:
    """How `mathlens run` carries out a planned run (what goes into no manifest)."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: Concurrency = None
    retry_errors: bool = False
    dry_run: bool = False
    quiet: bool = False
    as_json: bool = False
    #: neither read nor write the response cache
    no_cache: bool = False

    def carried_out(self, execution: StudyExecution) -> Options:
        """These options with the study's attempts, timeout and concurrency."""
        return replace(self, retry=RetryPolicy(max_attempts=execution.attempts, timeout_s=execution.timeout),
                       concurrency=execution.concurrency)


def _start(store: RunStore, manifest: Manifest, how: Options, *, resumed: bool, study: Study | None) -> None:
    """Plan the run of `manifest` in `store` and execute it (or, with `dry_run`, count it); then run
    the study's analyses and write its report and tables."""
    gc.freeze()  # the study and the manifest join the modules (the caller, `_kept_from_collection`, unfreezes)
    _plan_and_run(store, manifest, how, resumed=resumed, study=study)


def _plan_and_run(store: RunStore, manifest: Manifest, how: Options, *, resumed: bool, study: Study | None) -> None:
    exams = store.exams() if resumed else load_run_exams(manifest)
    tasks = plan_tasks(manifest, exams)
    if not tasks and manifest.tutor is not None:
        raise UserError("the design pairs no learner with any item (check the grades of profiles and items, or "
                        "pair everyone with --all-grades)")
    manifest = manifest.model_copy(update={"total_tasks": len(tasks)})
    if how.dry_run:
        _print_dry_run(store, manifest, tasks, exams, how, resumed)
        return
    if not resumed and store.records_path.exists() and store.records_path.stat().st_size > 0:
        raise UserError(_holds_a_run(store))  # before the lock: a refused run leaves no lock file behind
    store.acquire_lock()  # one writer per run directory
    try:
        if not resumed and store.records_path.exists() and store.records_path.stat().st_size > 0:
            raise UserError(_holds_a_run(store))  # written while this command waited for the lock
        if how.retry_errors:
            dropped = store.drop_error_records()
            if not (how.quiet or how.as_json):
                console.print(f"sending {dropped} failed request{'s' if dropped != 1 else ''} again", markup=False)
        if not resumed:
            store.write_items(exams)  # the run keeps its own copy of the questions
            if study is not None:
                save_study(store.root, study)
        store.write_manifest(manifest)
        result = _execute(store, manifest, how, tasks)
    finally:
        store.release_lock()
    from mathlens.cli.summary import print_summary, print_warning, run_summary

    doc = run_summary(store, result)
    if how.as_json:
        emit_json(doc)
    if how.as_json or how.quiet:
        print_warning(doc)
    else:
        print_summary(doc)
    _fail_if_nothing_succeeded(store, doc)
    if study is not None:
        after_run(store, study, quiet=how.quiet or how.as_json, no_cache=how.no_cache)


def _print_dry_run(store: RunStore, manifest: Manifest, tasks: list[Any], exams: list[Any], how: Options,
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


def load_run_exams(manifest: Manifest) -> list[Exam]:
    """The items of a new run: a tutoring run's with their image paths made absolute (they are
    relative to the item file)."""
    if manifest.tutor is not None:
        from mathlens.analyze.adaptivity.design import load_tutor_exams

        return load_tutor_exams(manifest.items)
    return load_exams(manifest)


def _holds_a_run(store: RunStore) -> str:
    """Why a new run cannot go to `store`, with the way on that works there: `--resume` for a run
    that was sent (it has requests to finish), another `--out` for an imported one (it has none)."""
    try:
        imported = store.manifest().imported
    except (UserError, OSError, ValueError):
        imported = None
    if imported is not None:
        return (f"{store.root} already holds a run imported from {imported.source} (mathlens import), which "
                "cannot be resumed: choose another --out")
    return (f"{store.root} already holds a run: resume it with `mathlens run --resume {store.root}`, "
            "or choose another --out")


def _fail_if_nothing_succeeded(store: RunStore, doc: RunSummary) -> None:
    """Exit 1, saying why, when the run holds records and none of them is `ok` (read from the
    run's counts in `doc`, which list the first failed requests in the order written)."""
    total, ok = doc.records, sum(g.ok for g in doc.groups)
    first_error = doc.errors[0].error if doc.errors else None
    if total and not ok:
        console.print(f"error: no request succeeded ({total} error records; the first: {first_error}). "
                      f"Fix the cause, then run: mathlens run --resume {store.root} --retry-errors",
                      markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def after_run(store: RunStore, study: Study, *, quiet: bool, no_cache: bool) -> None:
    """What a study asks for once its responses are in: its analyses (with their options; the
    judge-based ones with the run's judge, through the response cache unless `no_cache`), then its
    HTML report and its tables."""
    if study.analyses:
        from mathlens.analyze.registry import get_analyzer, run_analyzers
        from mathlens.cli.analyze import print_outcome

        outcomes = run_analyzers(store, list(study.analyses), study.analyses, no_cache=no_cache)
        if not quiet:
            for name, outcome in outcomes.items():
                print_outcome(name, get_analyzer(name).lines(outcome), outcome.status)
    if study.report.html:
        from mathlens.report import write_report

        write_report([store.root], store.root / "report.html")
        if not quiet:
            console.print(f"[bold]report:[/] {escape(store.root / 'report.html')}")
    if study.report.tables:
        from mathlens.report.export import export_tables
        from mathlens.report.loader import load_run

        index = export_tables(load_run(store.root), store.root / "tables", tuple(study.report.tables))
        if not quiet:
            console.print(f"[bold]tables:[/] {escape(store.root / 'tables')} ({len(index.tables)} tables)")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
