"""Execute a run: plan, skip what is done, send the rest, append one record per request."""

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
from mathlens.errors import ModelError, redact_secrets
from mathlens.models.cache import ResponseCache, content_hash
from mathlens.models.model import Model, RetryPolicy
from mathlens.models.registry import get_model
from mathlens.runs.plan import plan_tasks
from mathlens.runs.records import Manifest, RunRecord, Task
from mathlens.runs.store import RunStore

#: Packages whose versions go into the manifest.
TRACKED_PACKAGES = ("pydantic", "sympy", "math-verify", "llama_cpp_python", "httpx", "scikit-learn",
                    "rapidfuzz", "chromadb", "statsmodels", "spacy", "networkx")


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


@dataclass
class Progress:
    """Callbacks the CLI hooks a progress bar to; the default does nothing."""

    on_start: Callable[[int, int], None] = lambda total, done: None
    on_record: Callable[[RunRecord], None] = lambda rec: None


@dataclass
class RunResult:
    root: Path
    total: int
    skipped: int
    written: int
    errors: int
    model_calls: int
    cache_hits: int
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)


def build_models(manifest: Manifest, cache: ResponseCache | None, retry: RetryPolicy,
                 concurrency: int | None) -> dict[str, Model]:
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
    common: dict[str, Any] = {
        "key": task.key, "model": task.model, "configuration": task.configuration, "exam_id": task.exam_id,
        "question_id": task.question_id, "variant": task.variant, "repeat": task.repeat,
        "messages": task.messages, "config": task.config, "retrieval": task.retrieval,
        "request_hash": model.key(task.messages, task.config),
        "content_hash": content_hash(task.messages, task.config),
    }
    try:
        out = await model.generate(task.messages, task.config)
    except ModelError as exc:
        return _error_record(common, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a backend bug or a reply nobody foresaw must not end the run
        return _error_record(common, f"unexpected {type(exc).__name__}: {exc}")
    return RunRecord(**common, response=out.text, finish_reason=out.finish_reason, usage=out.usage,
                     latency_s=out.latency_s, cached=out.cached, status="ok", created_at=now_utc())


async def execute(store: RunStore, manifest: Manifest, models: dict[str, Model],
                  progress: Progress | None = None, tasks: list[Task] | None = None) -> RunResult:
    """Send every planned task not yet recorded; records are appended as they complete.

    Takes the run's lock first (`RunInUseError` if another process writes the run). A record that
    cannot be written (a full disk) stops the run with `RunStoreWriteError`; the records written
    before it are intact and a resume completes the run.
    """
    progress = progress or Progress()
    took_lock = not store.locked
    store.acquire_lock()
    tasks = tasks if tasks is not None else plan_tasks(manifest, store.exams())
    done = store.done_keys()
    todo = [t for t in tasks if t.key not in done]
    progress.on_start(len(tasks), len(tasks) - len(todo))
    written = errors = 0
    # Bound the number of in-flight coroutines; each Model also limits its own concurrency.
    window = max(8, 4 * sum((m.concurrency or m.provider.default_concurrency) for m in models.values()))
    pending: set[asyncio.Task[RunRecord]] = set()
    it = iter(todo)
    try:
        while True:
            while len(pending) < window:
                t = next(it, None)
                if t is None:
                    break
                pending.add(asyncio.create_task(_one(t, models[t.model])))
            if not pending:
                break
            finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for fut in finished:
                rec = fut.result()
                store.append(rec)
                written += 1
                errors += rec.status == "error"
                progress.on_record(rec)
    finally:
        for fut in pending:
            fut.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        store.close()
        if took_lock:
            store.release_lock()
    return RunResult(
        root=store.root, total=len(tasks), skipped=len(tasks) - len(todo), written=written, errors=errors,
        model_calls=sum(m.stats.calls for m in models.values()),
        cache_hits=sum(m.stats.cache_hits for m in models.values()),
        stats={spec: vars(m.stats).copy() for spec, m in models.items()},
    )


def base_manifest(**fields: Any) -> Manifest:
    """A manifest with version, platform and timestamps filled in."""
    return Manifest(
        run_id=fields.pop("run_id", None) or new_run_id(), mathlens_version=__version__,
        created_at=now_utc(), packages=package_versions(), python=sys.version.split()[0],
        platform=platform.platform(), **fields,
    )
