"""Import a source file as a run: detect its format, read, match, build records, write the run.

The questions come from `--items` (matched to the rows by id, else by text: `matching`) or, when
no items are given, from the source itself (`source_items`). Each record keeps the source's own
verdicts on it (`RunRecord.source_scores`), for the `source-agreement` analysis.

Nothing is written until every row has been read, checked and matched: the run is assembled in a
temporary directory beside `--out` and renamed into place at the end, so a failed import leaves
no directory behind. Records are what `mathlens run` writes: `key` from `runs.plan.task_key`
(model, configuration, exam, question, variant "original", repeat), `request_hash` over an
identity naming the import (`{"provider": "import", "format": ..., "model": ...}`) and the
messages, `content_hash` over the messages alone, as the runner computes it. An answer with an
inline `<think>` trace is split into `reasoning` and `response`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from mathlens.errors import UserError
from mathlens.items.limits import reading
from mathlens.items.loaders import load_items
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.cache import content_hash, request_hash
from mathlens.models.reasoning import split_reasoning
from mathlens.runs.importing import inspect_log, lm_eval, mapped, openai_batch
from mathlens.runs.importing.common import SourceError, SourceLog, SourceRow, check_source
from mathlens.runs.importing.lines import first_object, read_json_file
from mathlens.runs.importing.matching import MatchBy, Matcher
from mathlens.runs.importing.provenance import MAX_LISTED_UNMATCHED, ImportedFrom, ImportFormat, UnmatchedRow
from mathlens.runs.importing.source_items import items_from_rows
from mathlens.runs.plan import task_key
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord
from mathlens.runs.runner import base_manifest, now_utc
from mathlens.runs.snapshot import source_sha256
from mathlens.runs.store import RunStore

IMPORT_FORMATS: tuple[str, ...] = get_args(ImportFormat)
#: the formats that read a field mapping (`-F`); `lm-eval` takes only `-F question=KEY`
MAPPED_FORMATS = ("jsonl", "csv", "math-eval", "records-json")
Reader = Literal["auto", "inspect_ai", "mathlens"]


@dataclass(frozen=True)
class ImportRequest:
    """What `mathlens import` was asked to do."""

    source: Path
    #: the questions; empty: built from the source (`source_items`)
    items: list[ItemSource]
    out: Path
    fmt: str = "auto"
    mapping: dict[str, str] = field(default_factory=dict)
    #: the model's name, overriding what the source says
    model: str | None = None
    configuration: str | None = None
    match: MatchBy = "auto"
    #: for Inspect logs: whose reader to use
    reader: Reader = "auto"
    #: for OpenAI batch output: the batch input file (the requests)
    requests: Path | None = None


@dataclass(frozen=True)
class ImportResult:
    root: Path
    manifest: Manifest
    imported: ImportedFrom


def detect_format(path: Path) -> ImportFormat:
    """The format of a source, from its name and its content (a `.json` file by its top level,
    JSONL by its first line)."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix == ".json":
        return _json_format(path)
    first = first_object(path)
    if first is None:
        raise SourceError(path, None, None, "the file has no rows")
    if lm_eval.looks_like(first):
        return "lm-eval"
    if openai_batch.looks_like(first):
        return "openai-batch"
    if mapped.looks_like_math_eval(first):
        return "math-eval"
    return "jsonl"


def _json_format(path: Path) -> ImportFormat:
    """Inspect writes `version` first: such a log is not parsed here (its reader does that once)."""
    check_source(path)
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{") and head[1:].lstrip().startswith(b'"version"'):
        return "inspect"
    doc = read_json_file(path)
    if isinstance(doc, dict) and "eval" in doc:
        return "inspect"
    if lm_eval.looks_like_json(doc):
        return "lm-eval-json"
    if mapped.looks_like_records(doc):
        return "records-json"
    raise SourceError(path, None, None, "a JSON file that is neither an Inspect log, lm-eval samples per task "
                                        "('cache' or 'samples'), nor records (an object of records keyed by id, or "
                                        "a list of records): name its format with --format")


def read_source(request: ImportRequest, fmt: ImportFormat) -> SourceLog:
    """The rows of the source in format `fmt`."""
    path = request.source
    if request.requests is not None and fmt != "openai-batch":
        raise UserError("--requests goes with OpenAI batch output (--format openai-batch)")
    if fmt in ("lm-eval", "lm-eval-json"):
        mapped.check_mapping(request.mapping)
        extra = set(request.mapping) - {"question"}
        if extra:
            raise UserError(f"-F {sorted(extra)[0]}=...: an lm-eval samples file takes only -F question=DOC_KEY")
        read = lm_eval.read if fmt == "lm-eval" else lm_eval.read_json
        return read(path, request.mapping.get("question"))
    if fmt not in MAPPED_FORMATS and request.mapping:
        raise UserError(f"-F mappings are for JSONL, CSV and JSON records, not {fmt} files")
    if fmt == "inspect":
        return inspect_log.read(path, request.reader)
    if fmt == "openai-batch":
        requests = openai_batch.read_requests(request.requests) if request.requests else None
        return openai_batch.read(path, requests)
    if fmt == "csv":
        return mapped.read_csv(path, request.mapping)
    if fmt == "records-json":
        return mapped.read_records_json(path, request.mapping)
    return mapped.read_jsonl(path, request.mapping, "math-eval" if fmt == "math-eval" else None)


def import_run(request: ImportRequest) -> ImportResult:
    """Read, match and write; see the module notes. Raises `UserError` before writing anything."""
    with reading():  # the limits are read once for the whole import
        return _import(request)


def _import(request: ImportRequest) -> ImportResult:
    out = request.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} already exists and is not empty: choose another --out")
    size, sha = check_source(request.source)
    if request.fmt != "auto" and request.fmt not in IMPORT_FORMATS:
        raise UserError(f"--format must be auto or one of {', '.join(IMPORT_FORMATS)} (not {request.fmt!r})")
    fmt: ImportFormat = detect_format(request.source) if request.fmt == "auto" else request.fmt  # type: ignore[assignment]
    log = read_source(request, fmt)
    if not log.rows:
        raise SourceError(request.source, None, None, "the file holds no samples to import")
    if request.items:
        sources = [s.model_copy(update={"sha256": source_sha256(s)}) for s in request.items]
        exams = [load_items(s.source, fmt=s.format, mapping=s.mapping, limit=s.limit, sample=s.sample, seed=s.seed)
                 for s in sources]
        matcher = Matcher(exams, request.match)
    else:
        if request.match == "text":
            raise UserError("--match text needs --items: without them the questions are the source's own")
        exams, rows = items_from_rows(request.source, log.rows, _exam_name(request.source, log))
        log = replace(log, rows=rows)
        sources = [ItemSource(source=str(request.source), sha256=sha)]
        matcher = Matcher(exams, "id")
    built = _build(request, log, fmt, matcher)
    imported = ImportedFrom(
        source=str(request.source), format=fmt, sha256=sha, size_bytes=size, reader=log.reader,
        mapping=dict(request.mapping) or None, rows=len(log.rows), records=len(built.records),
        errors=sum(r.status == "error" for r in built.records), matched_by_id=built.by_id,
        matched_by_text=built.by_text, unmatched=len(built.unmatched),
        unmatched_rows=built.unmatched[:MAX_LISTED_UNMATCHED], task=log.task,
        items_from="items" if request.items else "source", partial=log.partial, planned=log.planned,
        scored=sum(bool(r.source_scores) for r in built.records),
        settings={k: v for k, v in log.settings.items() if v is not None})
    config = log.config or GenerateConfig()
    first = built.records[0]
    manifest = base_manifest(
        items=sources, models=[ModelEntry(spec=m, identity=_identity(fmt, m)) for m in built.models],
        configurations=built.configurations, runs=built.runs, seed=config.seed, generate=config,
        system_role=next((m.content for m in first.messages if m.role == "system"), ""),
        total_tasks=len(built.records), imported=imported)
    manifest = manifest.model_copy(update={"finished_at": now_utc()})
    _write(out, manifest, exams, built.records)
    return ImportResult(out, manifest, imported)


def _exam_name(path: Path, log: SourceLog) -> str:
    """The item set's name for questions built from the source: its task, else the file's name."""
    name = (log.task or path.stem).strip()
    return name[:120] or "imported"


def _identity(fmt: str, model: str) -> dict[str, Any]:
    return {"provider": "import", "format": fmt, "model": model}


@dataclass
class _Built:
    records: list[RunRecord]
    unmatched: list[UnmatchedRow]
    models: list[str]
    configurations: list[str]
    runs: int
    by_id: int = 0
    by_text: int = 0


def _build(request: ImportRequest, log: SourceLog, fmt: str, matcher: Matcher) -> _Built:
    """Match every row and turn the matched ones into records (repeats numbered per question)."""
    matched: list[tuple[SourceRow, str, str, str, str]] = []  # row, model, configuration, exam, question id
    unmatched: list[UnmatchedRow] = []
    by = {"id": 0, "text": 0}
    named = {row.model for row in log.rows if row.model}
    # a row that names no model (a failed batch request) takes the file's model when it has just one
    file_model = log.model or (next(iter(named)) if len(named) == 1 else None)
    for row in log.rows:
        m = matcher.match(row)
        if m.question is None or m.exam_id is None:
            unmatched.append(UnmatchedRow(where=row.where, id=row.id, reason=m.reason,
                                          question=(row.question or "")[:120] or None))
            continue
        by[m.by] += 1
        model = request.model or row.model or file_model
        if model is None:
            raise SourceError(request.source, row.where, "model", "the source does not name the model: give it "
                                                                  "with --model NAME (or map it with -F model=KEY)")
        matched.append((row, model, request.configuration or row.configuration or "baseline", m.exam_id,
                        m.question.id))
    if not matched:
        shown = "; ".join(f"{u.where}: {u.reason}" for u in unmatched[:3])
        raise UserError(f"{request.source}: no row matched a question of the items ({len(unmatched)} unmatched; "
                        f"{shown}). Check --items, or map the id/question fields with -F")
    repeats = _repeats(request.source, matched)
    config = log.config or GenerateConfig()
    hashes = _Hashes(fmt, config)
    records = [_record(row, model, conf, exam, qid, repeats[i], hashes, matcher)
               for i, (row, model, conf, exam, qid) in enumerate(matched)]
    return _Built(records=records, unmatched=unmatched, models=list(dict.fromkeys(r.model for r in records)),
                  configurations=list(dict.fromkeys(r.configuration for r in records)),
                  runs=max(repeats) + 1, by_id=by["id"], by_text=by["text"])


def _repeats(path: Path, matched: list[tuple[SourceRow, str, str, str, str]]) -> list[int]:
    """Each matched row's repeat: the source's own number where it has one, else the next free one
    of its (model, configuration, question) in file order."""
    used: dict[tuple[str, str, str, str], dict[int, str]] = {}
    out: list[int | None] = []
    for row, *group in matched:
        key = (group[0], group[1], group[2], group[3])
        if row.repeat is None:
            out.append(None)
            continue
        taken = used.setdefault(key, {})
        if row.repeat in taken:
            raise SourceError(path, row.where, "repeat", f"repeat {row.repeat} of question {group[3]!r} was "
                                                         f"already imported from {taken[row.repeat]}")
        taken[row.repeat] = row.where
        out.append(row.repeat)
    for i, (row, *group) in enumerate(matched):
        if out[i] is None:
            taken = used.setdefault((group[0], group[1], group[2], group[3]), {})
            k = 0
            while k in taken:
                k += 1
            taken[k] = row.where
            out[i] = k
    return [k if k is not None else 0 for k in out]


class _Hashes:
    """`request_hash`/`content_hash` of the records, computed once per distinct request (the
    repeats of a question share their messages, and hashing is most of the cost of an import)."""

    def __init__(self, fmt: str, config: GenerateConfig) -> None:
        self.fmt, self.config = fmt, config
        self._content: dict[tuple[Message, ...], str] = {}
        self._request: dict[tuple[str, tuple[Message, ...]], str] = {}

    def content(self, messages: tuple[Message, ...]) -> str:
        if messages not in self._content:
            self._content[messages] = content_hash(list(messages), self.config)
        return self._content[messages]

    def request(self, model: str, messages: tuple[Message, ...]) -> str:
        key = (model, messages)
        if key not in self._request:
            self._request[key] = request_hash(_identity(self.fmt, model), list(messages), self.config)
        return self._request[key]


def _record(row: SourceRow, model: str, conf: str, exam: str, qid: str, repeat: int, hashes: _Hashes,
            matcher: Matcher) -> RunRecord:
    sent = row.messages or (Message(role="user", content=row.question or _prompt(matcher, exam, qid)),)
    messages = list(sent)
    # a failed sample keeps the text it produced, if any; an empty one is no response
    response, reasoning = (row.response or None) if row.error else row.response, row.reasoning
    if response is not None and reasoning is None:
        split = split_reasoning(response)
        if split.reasoning is not None:
            response, reasoning = split.visible, split.reasoning or None
    return RunRecord(
        key=task_key(model, conf, exam, qid, "original", repeat), model=model, configuration=conf,
        exam_id=exam, question_id=qid, repeat=repeat, messages=messages, config=hashes.config,
        request_hash=hashes.request(model, sent), content_hash=hashes.content(sent), response=response,
        reasoning=reasoning,
        finish_reason=row.finish_reason, usage=row.usage, latency_s=row.latency_s,
        status="error" if row.error else "ok", error=row.error, source_scores=list(row.scores) or None,
        created_at=row.created_at or now_utc())


def _prompt(matcher: Matcher, exam: str, qid: str) -> str:
    return next(q.prompt_text() for e, q in matcher.by_id[qid] if e == exam)


def _write(out: Path, manifest: Manifest, exams: list[Any], records: list[RunRecord]) -> None:
    """Assemble the run in a temporary directory beside `out`, then rename it into place."""
    tmp = out.parent / f".{out.name}.importing-{os.getpid()}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        store = RunStore(tmp)
        store.write_items(exams)
        path = store.records_path
        try:
            with path.open("w", encoding="utf-8") as fh:
                for rec in records:
                    fh.write(rec.model_dump_json() + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror or exc} (nothing was imported)") from None
        store.write_manifest(manifest)
        if out.exists():
            out.rmdir()  # an empty directory named by --out (checked at the start)
        os.rename(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp, ignore_errors=True)
        raise
