"""lm-evaluation-harness samples: `samples_<task>_<date>.jsonl` (written with `--log_samples`), and
JSON files holding such samples per task (`{"cache": {task: [sample, ...]}}` as older versions and
wrappers wrote them, or `{"samples": {task: [...]}}`, the result of `simple_evaluate` dumped whole).

Each sample is one document of the task: `doc_id`, `doc` (the dataset record), `target`,
`arguments` (the request: the prompt, then the generation settings; a chat prompt is the JSON
text of a message list when `--apply_chat_template` was given, sometimes wrapped in a list),
`resps` (one list per request, each holding the model's raw answers, several when the task
repeats), `filtered_resps`, `filter`, `metrics` (the metric names) and the metric values. Older
versions write `arguments` as a list of argument lists; newer ones as
`{"gen_args_0": {"arg_0": prompt, "arg_1": settings}}`; both are read.

A task with several filters (strict and flexible answer extraction, say) logs every document once
per filter, with the same answers: those lines are one row, and each filter's metric values and
extracted answer (`filtered_resps`) become the row's source scores (`exact_match (strict-match)`).
A row per answer, numbered as repeats of its question in file order; when a task repeats (several
answers per document) the metrics are about the document, not one answer, and are not kept.
Loglikelihood tasks (answers `[logprob, is_greedy]`) have no generated text and are refused.

The id is `doc.id` (or `doc_id` as text); the question is the `doc` field named by
`-F question=KEY` (default: the first of `question`, `problem`, `text`, `input`), else the prompt.
The gold answer is `target`. The samples file does not name the model: it and the task's settings
are read from the `results_<date>.json` written beside it (`model_name`, `config.model_args`,
`configs[task].generation_kwargs`, `n-shot`), unless the model is given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mathlens.errors import warn
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.importing.common import (
    ItemFacts,
    Scalar,
    SourceError,
    SourceLog,
    SourceRow,
    as_object,
    count_row,
    item_facts,
    messages_field,
    name_field,
    source_score,
    text_field,
)
from mathlens.runs.importing.lines import iter_json_lines, read_json_file
from mathlens.runs.importing.provenance import SourceScore

QUESTION_KEYS = ("question", "problem", "text", "input")
#: sample keys that are not metric values (older files carry no `metrics` list)
_NOT_METRICS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                          "doc_hash", "prompt_hash", "target_hash", "task", "task_name"})
#: document fields not kept as question metadata (the question, its answers, its worked solution)
_NOT_METADATA = frozenset({*QUESTION_KEYS, "answer", "answers", "solution", "target", "choices", "level", "subject",
                           "type", "id"})


def looks_like(first: dict[str, Any]) -> bool:
    """Whether a JSONL line is an lm-eval sample."""
    return "doc_id" in first and "resps" in first


def looks_like_json(doc: Any) -> bool:
    """Whether a JSON document holds lm-eval samples per task (`cache` or `samples`)."""
    if not isinstance(doc, dict):
        return False
    for key in ("cache", "samples"):
        tasks = doc.get(key)
        if isinstance(tasks, dict) and tasks and all(isinstance(v, list) for v in tasks.values()):
            first = next((s for v in tasks.values() for s in v[:1]), None)
            if isinstance(first, dict) and looks_like(first):
                return True
    return False


@dataclass
class _Collector:
    """Rows of one source, lines of one document under several filters merged into one row."""

    path: Path
    question_key: str | None
    rows: list[SourceRow] = field(default_factory=list)
    #: (task, doc_id) -> (index of its first row, number of answers, filters seen)
    docs: dict[tuple[str | None, str], tuple[int, int, set[str]]] = field(default_factory=dict)
    config: GenerateConfig | None = None

    def add(self, where: str, obj: dict[str, Any], task: str | None = None) -> None:
        path = self.path
        if not looks_like(obj):
            raise SourceError(path, where, "resps", "not an lm-eval sample (it needs 'doc_id' and 'resps')")
        resps = obj.get("resps")
        if not isinstance(resps, list) or not resps or not isinstance(resps[0], list):
            raise SourceError(path, where, "resps", "expected a list of answer lists")
        answers = resps[0]
        doc_key = (task, str(obj.get("doc_id"))[:200])
        filt = str(obj.get("filter") or "none")[:100]
        seen = self.docs.get(doc_key)
        if seen is not None:
            first, n_answers, filters = seen
            if filt in filters:
                raise SourceError(path, where, "doc_id", f"document {doc_key[1]} appears twice for filter {filt!r}")
            filters.add(filt)
            if n_answers == 1:
                row = self.rows[first]
                self.rows[first] = replace(row, scores=row.scores + _scores(obj, filt))
            return
        doc = as_object(obj.get("doc"))
        prompt, settings = _arguments(path, where, obj.get("arguments"))
        messages = _prompt_messages(path, where, prompt)
        if self.config is None and settings:
            self.config = _config(settings)
        sid = name_field(path, where, "doc.id", doc.get("id")) or name_field(path, where, "doc_id", obj.get("doc_id"))
        question = _question(path, where, doc, self.question_key) or (messages[-1].content if messages else None)
        facts = _facts(doc, obj.get("target"))
        self.docs[doc_key] = (len(self.rows), len(answers), {filt})
        for k, answer in enumerate(answers):
            count_row(path, len(self.rows) + 1, where)
            if isinstance(answer, list):  # loglikelihood tasks answer [logprob, is_greedy]: no text
                raise SourceError(path, where, f"resps[0][{k}]", "not a generated text: this is a loglikelihood "
                                  "(multiple-choice or perplexity) task, which has no answers to analyse; only "
                                  "generate_until tasks can be imported")
            text = text_field(path, where, f"resps[0][{k}]", answer, required=True)
            self.rows.append(SourceRow(
                where=where if len(answers) == 1 else f"{where} answer {k + 1}", id=sid, question=question,
                response=text, messages=messages, exam=task, finish_reason="unknown", item=facts,
                scores=_scores(obj, filt) if len(answers) == 1 else ()))


def _scores(obj: dict[str, Any], filt: str) -> tuple[SourceScore, ...]:
    """The metric values of one sample line, with the filtered answer as the extracted one."""
    names = obj.get("metrics")
    if not isinstance(names, list):
        names = [k for k, v in obj.items() if k not in _NOT_METRICS and isinstance(v, int | float)]
    filtered = obj.get("filtered_resps")
    answer = filtered[0] if isinstance(filtered, list) and filtered else None
    if isinstance(answer, list):
        answer = answer[0] if len(answer) == 1 else None
    label = f" ({filt})" if filt != "none" else ""  # "none" is lm-eval's name for no filter
    return tuple(source_score(f"{name}{label}", obj.get(name), answer if isinstance(answer, str) else None)
                 for name in names[:16] if isinstance(name, str) and name in obj)


def read(path: Path, question_key: str | None = None) -> SourceLog:
    """The rows of an lm-eval samples file."""
    task = _task_name(path)
    collector = _Collector(path, question_key)
    for line, obj in iter_json_lines(path):
        collector.add(f"line {line}", obj)
    settings = _sibling_results(path)
    return _log(collector, settings, task)


def read_json(path: Path, question_key: str | None = None) -> SourceLog:
    """The rows of a JSON file holding lm-eval samples per task (`cache` or `samples`)."""
    doc = read_json_file(path)
    if not looks_like_json(doc):
        raise SourceError(path, None, "cache", "not lm-eval samples (expected {'cache': {task: [sample, ...]}} "
                                               "or {'samples': {task: [...]}})")
    key = "cache" if isinstance(doc.get("cache"), dict) and looks_like_json({"cache": doc["cache"]}) else "samples"
    collector = _Collector(path, question_key)
    tasks = doc[key]
    for task, samples in tasks.items():
        for i, obj in enumerate(samples):
            where = f"{key}[{task!r}][{i}]"
            if not isinstance(obj, dict):
                raise SourceError(path, where, None, "expected a sample object")
            collector.add(where, obj, str(task)[:200] if len(tasks) > 1 else None)
    settings = _settings(doc, next(iter(tasks)) if len(tasks) == 1 else None)
    return _log(collector, settings, next(iter(tasks)) if len(tasks) == 1 else None)


@dataclass(frozen=True)
class _Settings:
    model: str | None = None
    values: dict[str, Scalar] = field(default_factory=dict)
    config: GenerateConfig | None = None


def _log(collector: _Collector, settings: _Settings, task: str | None) -> SourceLog:
    return SourceLog(rows=collector.rows, model=settings.model, task=task,
                     config=collector.config or settings.config, settings=settings.values)


def _facts(doc: dict[str, Any], target: Any) -> ItemFacts:
    choices = doc.get("choices")
    if isinstance(target, int) and not isinstance(target, bool) and isinstance(choices, list) \
            and 0 <= target < len(choices):
        target = choices[target]
    return item_facts(target=target, choices=choices, level=doc.get("level"),
                      subject=doc.get("subject") or doc.get("type"), metadata=doc, skip=_NOT_METADATA)


def _arguments(path: Path, where: str, value: Any) -> tuple[Any, dict[str, Any]]:
    """(prompt, generation settings) from either layout of `arguments`."""
    first: Any = None
    if isinstance(value, dict):
        first = next(iter(value.values()), None)
        if isinstance(first, dict):
            return first.get("arg_0"), as_object(first.get("arg_1"))
    elif isinstance(value, list) and value:
        first = value[0]
        if isinstance(first, list) and first:
            return first[0], first[1] if len(first) > 1 and isinstance(first[1], dict) else {}
    if value is None:
        return None, {}
    raise SourceError(path, where, "arguments", "expected the request's arguments (prompt and settings)")


def _prompt_messages(path: Path, where: str, prompt: Any) -> tuple[Message, ...]:
    """The messages sent: a chat prompt's message list, or the prompt text as one user message."""
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]  # some versions wrap the prompt in a list
    if prompt is None:
        return ()
    if isinstance(prompt, list):  # a message list not encoded as text
        return messages_field(path, where, "arguments.arg_0", prompt)
    text = text_field(path, where, "arguments.arg_0", prompt)
    if text and text.lstrip().startswith("[{"):
        try:
            chat = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            chat = None
        if isinstance(chat, list):
            return messages_field(path, where, "arguments.arg_0", chat)
    return (Message(role="user", content=text),) if text else ()


def _question(path: Path, where: str, doc: dict[str, Any], key: str | None) -> str | None:
    if key:
        cur: Any = doc
        for part in key.removeprefix("doc.").split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is None:
            raise SourceError(path, where, f"doc.{key.removeprefix('doc.')}", "is missing")
        return text_field(path, where, f"doc.{key}", cur)
    for k in QUESTION_KEYS:
        if isinstance(doc.get(k), str):
            return text_field(path, where, f"doc.{k}", doc[k])
    return None


def _config(settings: dict[str, Any]) -> GenerateConfig:
    fields: dict[str, Any] = {}
    tokens = settings.get("max_gen_toks", settings.get("max_tokens"))
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        fields["max_tokens"] = tokens
    temp = settings.get("temperature")
    if isinstance(temp, int | float) and not isinstance(temp, bool):
        fields["temperature"] = float(temp)
    until = settings.get("until")
    if isinstance(until, list):
        fields["stop"] = tuple(str(s) for s in until[:16])
    elif isinstance(until, str):
        fields["stop"] = (until,)
    return GenerateConfig(**fields)


def _task_name(path: Path) -> str | None:
    stem = path.stem
    if stem.startswith("samples_"):
        return stem.removeprefix("samples_").rsplit("_", 1)[0] or None
    return None


def _sibling_results(path: Path) -> _Settings:
    """The model and task settings from the results file lm-eval wrote beside the samples (same
    timestamp). A results file that is missing is nothing; one that cannot be read is a warning."""
    stamp = path.stem.rsplit("_", 1)[-1] if path.stem.startswith("samples_") else None
    results = path.with_name(f"results_{stamp}.json") if stamp else None
    if results is None or not results.is_file():
        return _Settings()
    try:
        doc = read_json_file(results)
    except SourceError as exc:
        warn(f"the results file beside the samples is not read: {exc}")
        return _Settings()
    return _settings(doc, _task_name(path)) if isinstance(doc, dict) else _Settings()


def _settings(doc: dict[str, Any], task: str | None) -> _Settings:
    """Model name and run settings from a results document (`model_name`, `config`, `configs`, `n-shot`)."""
    config = as_object(doc.get("config"))
    model_args = config.get("model_args")
    if isinstance(model_args, dict):  # newer versions keep the arguments parsed
        model_args = ",".join(f"{k}={v}" for k, v in model_args.items() if isinstance(v, str | int | float | bool))
    name = doc.get("model_name")
    if not isinstance(name, str) or not name.strip():
        name = _model_from_args(model_args) or config.get("model")
    values: dict[str, Scalar] = {}
    for key in ("model", "batch_size", "limit", "random_seed", "numpy_seed", "torch_seed", "fewshot_seed"):
        v = config.get(key)
        if v is None or isinstance(v, str | int | float | bool):
            values[key] = v if not isinstance(v, str) else v[:500]
    if isinstance(model_args, str) and model_args:
        values["model_args"] = _without_secrets(model_args)[:1000]
    for key in ("lm_eval_version", "git_hash", "date", "chat_template_sha"):
        v = doc.get(key)
        if isinstance(v, str | int | float):
            values[key] = v if not isinstance(v, str) else v[:200]
    task_config = as_object(as_object(doc.get("configs")).get(task or ""))
    shots = as_object(doc.get("n-shot")).get(task or "", task_config.get("num_fewshot"))
    if isinstance(shots, int) and not isinstance(shots, bool):
        values["num_fewshot"] = shots
    gen = as_object(task_config.get("generation_kwargs"))
    return _Settings(model=name.strip()[:512] if isinstance(name, str) and name.strip() else None,
                     values={k: v for k, v in values.items() if v is not None},
                     config=_config(gen) if gen else None)


def _model_from_args(args: Any) -> str | None:
    """`pretrained=...` or `model=...` from lm-eval's comma-separated model arguments."""
    if not isinstance(args, str):
        return None
    for part in args.split(","):
        key, _, value = part.partition("=")
        if key.strip() in ("pretrained", "model") and value.strip():
            return value.strip()
    return None


def _without_secrets(args: str) -> str:
    """Model arguments with anything that looks like a credential blanked."""
    kept = []
    for part in args.split(","):
        key, sep, _ = part.partition("=")
        secret = any(w in key.lower() for w in ("key", "token", "secret", "password"))
        kept.append(f"{key}{sep}[REDACTED]" if secret and sep else part)
    return ",".join(kept)
