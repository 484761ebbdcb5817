"""Execute a run: plan, skip what is done, send the rest, append one record per request.

Per-question mode: every task is a request of its own, sent concurrently. Sequential exam mode
(`manifest.exam_mode`, docs/exam-setup.md): the tasks of one conversation are sent in exam order,
each question with the earlier questions and the model's answers before it; conversations run
concurrently with one another. The choices that keep a conversation consistent:

- A question whose request failed is recorded (`status="error"`) and left out of the later
  turns: the next question follows the last answered one, so the messages always alternate
  question, answer and hold only what the model really said.
- A resume rebuilds each conversation from its records (the question turn each record sent, and
  its answer), so a run cut after question k continues with question k+1 exactly as an
  uninterrupted run would have sent it.
- Ablation variants of question k branch off the conversation: each is one request with the same
  earlier turns as question k and the variant in its place; their answers never enter later turns.
"""

from __future__ import annotations

import asyncio
import platform
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from mathlens import __version__
from mathlens.errors import ModelError, UserError, redact_secrets
from mathlens.models.admission import Concurrency, ReplicaStats
from mathlens.models.base import Message
from mathlens.models.cache import RequestText, ResponseCache
from mathlens.models.model import Model, RetryPolicy
from mathlens.models.registry import get_model
from mathlens.runs.counts import Tally
from mathlens.runs.plan import conversations, plan_tasks
from mathlens.runs.records import Manifest, RunRecord, Task
from mathlens.runs.store import RunStore

#: Packages whose versions go into the manifest.
TRACKED_PACKAGES = ("pydantic", "sympy", "math-verify", "llama_cpp_python", "aiohttp", "httpx", "scikit-learn",
                    "rapidfuzz", "chromadb", "statsmodels", "networkx")


def package_versions() -> dict[str, str]:
    out = {}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def new_run_id(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return now.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def now_utc() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Progress:
    """Callbacks the CLI hooks a progress bar to; the default does nothing.

    `on_replicas(spec, stats)` follows each record of a model served by a pool of several
    replicas, with every replica's counters (requests, errors, current limit, in/out)."""

    on_start: Callable[[int, int], None] = lambda total, done: None
    on_record: Callable[[RunRecord], None] = lambda rec: None
    on_replicas: Callable[[str, list[ReplicaStats]], None] = lambda spec, stats: None


@dataclass(frozen=True)
class RunResult:
    root: Path
    total: int
    skipped: int
    written: int
    errors: int
    model_calls: int
    cache_hits: int
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: per model served by several replicas: each replica's counters at the end of this invocation
    replicas: dict[str, list[ReplicaStats]] = field(default_factory=dict)
    #: per model, options its backend found out while running (`Provider.learned`), for the manifest
    learned: dict[str, dict[str, Any]] = field(default_factory=dict)


def with_learned(manifest: Manifest, result: RunResult) -> Manifest:
    """`manifest` with the options the backends found out added to their models' options (so a
    resume starts with them, and the manifest says how the requests were really sent)."""
    if not result.learned:
        return manifest
    models = [e.model_copy(update={"options": {**e.options, **result.learned[e.spec]}})
              if e.spec in result.learned else e for e in manifest.models]
    return manifest.model_copy(update={"models": models})


def build_models(manifest: Manifest, cache: ResponseCache | None, retry: RetryPolicy,
                 concurrency: Concurrency) -> dict[str, Model]:
    models = {}
    for entry in manifest.models:
        models[entry.spec] = get_model(entry.spec, entry.options, cache=cache, retry=retry,
                                       concurrency=concurrency)
    return models


#: Longest error text kept on a record.
MAX_ERROR_CHARS = 2000


def _error_record(common: dict[str, Any], message: str) -> RunRecord:
    text = redact_secrets(message[:MAX_ERROR_CHARS])
    return RunRecord(**common, status="error", error=text, finish_reason="error", created_at=now_utc())


async def _one(task: Task, model: Model) -> RunRecord:
    text = RequestText.of(task.messages, task.config)
    common: dict[str, Any] = {
        "key": task.key, "model": task.model, "configuration": task.configuration, "exam_id": task.exam_id,
        "question_id": task.question_id, "variant": task.variant, "repeat": task.repeat,
        "messages": task.messages, "config": task.config, "retrieval": task.retrieval,
        "conversation": task.conversation, "turn": task.turn,
        "request_hash": model.key_of(text),
        "content_hash": text.hash({}),
    }
    try:
        out = await model.generate(task.messages, task.config, key=common["request_hash"])
    except ModelError as exc:
        return _error_record(common, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a backend bug or a reply nobody foresaw must not end the run
        return _error_record(common, f"unexpected {type(exc).__name__}: {exc}")
    return RunRecord(**common, response=out.text, reasoning=out.reasoning, finish_reason=out.finish_reason,
                     usage=out.usage, latency_s=out.latency_s, cached=out.cached,
                     replica=None if out.cached else out.replica,
                     status="ok", created_at=now_utc())


@dataclass
class _Sink:
    """Where finished records go: appended to the store, counted, reported.

    Each record is written to the file at once (a killed process keeps it); forcing the file to
    disk (fsync, milliseconds on a busy disk) runs in a worker thread, one at a time, covering
    every record written meanwhile (group commit), so the event loop never waits for the disk.
    `flush` waits for the last one; a failed fsync stops the run at the next record."""

    store: RunStore
    progress: Progress
    #: the models served by several replicas, by spec
    pooled: dict[str, Model] = field(default_factory=dict)
    #: the run's counts, kept as records are appended (None when the records could not be counted)
    tally: Tally | None = None
    written: int = 0
    errors: int = 0
    _syncing: asyncio.Task[None] | None = field(default=None, repr=False)
    _unsynced: bool = field(default=False, repr=False)

    async def _sync(self) -> None:
        while self._unsynced:
            self._unsynced = False
            await asyncio.to_thread(self.store.sync)

    async def flush(self) -> None:
        """Wait until every record written is on disk."""
        if self._syncing is not None:
            await self._syncing
        self.store.sync()

    def add(self, rec: RunRecord) -> None:
        if self._syncing is not None and self._syncing.done() and self._syncing.exception() is not None:
            raise self._syncing.exception()  # type: ignore[misc]
        size = self.store.append(rec, sync=False)
        if self.tally is not None:
            self.tally.add(rec, size)
        self._unsynced = True
        if self._syncing is None or self._syncing.done():
            self._syncing = asyncio.get_running_loop().create_task(self._sync())
        self.written += 1
        self.errors += rec.status == "error"
        self.progress.on_record(rec)
        model = self.pooled.get(rec.model)
        if model is not None:
            self.progress.on_replicas(rec.model, model.provider.replica_stats())


def in_conversation(task: Task, history: list[Message]) -> Task:
    """`task` with the conversation so far (`history`: earlier question turns and answers) placed
    after its system role and before its own question turn."""
    lead = [m for m in task.messages if m.role == "system"]
    own = [m for m in task.messages if m.role != "system"]
    return task.model_copy(update={"messages": [*lead, *history, *own]})


def answered_turn(rec: RunRecord | None) -> list[Message]:
    """What a recorded question adds to its conversation: the question turn it sent and the
    model's answer; nothing for a failed (or missing) request."""
    if rec is None or rec.status != "ok" or rec.response is None or not rec.messages:
        return []
    return [rec.messages[-1], Message(role="assistant", content=rec.response)]


async def _send_turn(tasks: list[Task], model: Model, sink: _Sink) -> dict[str, RunRecord]:
    """Send one turn's requests (a question and its variants) together; record each as it ends."""
    running = [asyncio.create_task(_one(t, model)) for t in tasks]
    out: dict[str, RunRecord] = {}
    try:
        for fut in asyncio.as_completed(running):
            rec = await fut
            sink.add(rec)
            out[rec.key] = rec
    finally:
        for job in running:
            job.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    return out


async def _conversation(turns: list[list[Task]], model: Model, done: dict[str, RunRecord], sink: _Sink) -> None:
    """Put one exam to a model in order; `done` holds the records an earlier invocation wrote."""
    history: list[Message] = []
    for turn in turns:
        todo = [in_conversation(t, history) for t in turn if t.key not in done]
        sent = await _send_turn(todo, model, sink) if todo else {}
        original = turn[0].key
        history += answered_turn(sent.get(original) or done.get(original))


async def _run_window(jobs: list[Callable[[], Any]], window: int) -> None:
    """Run the coroutines `jobs` make, in order and at most `window` at a time: `window` workers
    each take the next job when theirs ends (constant work per job, however wide the window).
    The first exception stops all."""
    it = iter(jobs)

    async def worker() -> None:
        for make in it:
            await make()

    workers = [asyncio.create_task(worker()) for _ in range(min(window, len(jobs)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for job in workers:
            job.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


async def execute(store: RunStore, manifest: Manifest, models: dict[str, Model],
                  progress: Progress | None = None, tasks: list[Task] | None = None) -> RunResult:
    """Send every planned task not yet recorded; records are appended as they complete.

    Takes the run's lock first (`RunInUseError` if another process writes the run). A record that
    cannot be written (a full disk) stops the run with `RunStoreWriteError`; the records written
    before it are intact and a resume completes the run. Tasks that name a conversation (the
    sequential exam mode) are sent conversation by conversation, in order.
    """
    progress = progress or Progress()
    took_lock = not store.locked
    store.acquire_lock()
    sink = _Sink(store, progress, pooled=pooled_models(models), tally=_tally(store))
    try:
        tasks = tasks if tasks is not None else plan_tasks(manifest, store.exams())
        sequential = any(t.conversation is not None for t in tasks)
        # a conversation is rebuilt from its records; a request of its own needs only the key
        done: dict[str, RunRecord] = {r.key: r for r in store.records()} if sequential else {}
        done_keys = set(done) if sequential else store.done_keys()
        todo = [t for t in tasks if t.key not in done_keys]
        progress.on_start(len(tasks), len(tasks) - len(todo))
        # Bound the number of in-flight coroutines; each Model also limits its own concurrency.
        window = max(8, 2 * sum(m.admission.ceiling for m in models.values()))
        jobs: list[Callable[[], Any]]
        if sequential:
            jobs = [_conversation_job(conv, models[conv[0][0].model], done, sink) for conv in conversations(tasks)
                    if any(t.key not in done_keys for turn in conv for t in turn)]
        else:
            jobs = [_task_job(t, models[t.model], sink) for t in todo]
        try:
            await _run_window(jobs, window)
        finally:
            await sink.flush()
            if sink.tally is not None:
                sink.tally.save()
    finally:
        store.close()
        if took_lock:
            store.release_lock()
    return RunResult(
        root=store.root, total=len(tasks), skipped=len(tasks) - len(todo), written=sink.written,
        errors=sink.errors, model_calls=sum(m.stats.calls for m in models.values()),
        cache_hits=sum(m.stats.cache_hits for m in models.values()),
        stats={spec: vars(m.stats).copy() for spec, m in models.items()},
        replicas={spec: m.provider.replica_stats() for spec, m in sink.pooled.items()},
        learned={spec: learned for spec, m in models.items() if (learned := m.provider.learned())},
    )


def _tally(store: RunStore) -> Tally | None:
    """The counts the sink keeps (a record file that cannot be counted is left to the next count,
    which names the line)."""
    try:
        return Tally(store.root)
    except UserError:
        return None


def pooled_models(models: dict[str, Model]) -> dict[str, Model]:
    """The models served by more than one replica, by spec."""
    return {spec: m for spec, m in models.items() if m.provider.replica_stats()}


def _task_job(task: Task, model: Model, sink: _Sink) -> Callable[[], Any]:
    async def job() -> None:
        sink.add(await _one(task, model))
    return job


def _conversation_job(turns: list[list[Task]], model: Model, done: dict[str, RunRecord],
                      sink: _Sink) -> Callable[[], Any]:
    async def job() -> None:
        await _conversation(turns, model, done, sink)
    return job


def base_manifest(**fields: Any) -> Manifest:
    """A manifest with version, platform and timestamps filled in."""
    return Manifest(
        run_id=fields.pop("run_id", None) or new_run_id(), mathlens_version=__version__,
        created_at=now_utc(), packages=package_versions(), python=sys.version.split()[0],
        platform=platform.platform(), **fields,
    )
