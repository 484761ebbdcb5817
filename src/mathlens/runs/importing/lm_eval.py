"""lm-evaluation-harness sample files (`samples_<task>_<date>.jsonl`, written with `--log_samples`).

Each line is one document of the task: `doc_id`, `doc` (the dataset record), `target`,
`arguments` (the request: the prompt, then the generation settings; a chat prompt is the JSON
text of a message list when `--apply_chat_template` was given), `resps` (one list per request,
each holding the model's raw answers, several when the task repeats), `filtered_resps` and the
metric values. Older versions write `arguments` as a list of argument lists; newer ones as
`{"gen_args_0": {"arg_0": prompt, "arg_1": settings}}`; both are read.

A row per answer, numbered as repeats of its question in file order (a task that repeats gives
several answers per document, and a dataset may hold one question in several documents). The id is `doc.id` (or
`doc_id` as text); the question is the `doc` field named by `-F question=KEY` (default: the first
of `question`, `problem`, `text`, `input`), else the prompt. The samples file does not name the
model: it is read from the `results_<date>.json` written beside it (`model_name`), unless given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.importing.common import (
    SourceError,
    SourceLog,
    SourceRow,
    as_object,
    count_row,
    messages_field,
    name_field,
    text_field,
)
from mathlens.runs.importing.lines import iter_json_lines

QUESTION_KEYS = ("question", "problem", "text", "input")


def looks_like(first: dict[str, Any]) -> bool:
    """Whether a JSONL line is an lm-eval sample."""
    return "doc_id" in first and "resps" in first


def read(path: Path, question_key: str | None = None) -> SourceLog:
    """The rows of an lm-eval samples file."""
    rows: list[SourceRow] = []
    config: GenerateConfig | None = None
    count = 0
    for line, obj in iter_json_lines(path):
        where = f"line {line}"
        if not looks_like(obj):
            raise SourceError(path, where, "resps", "not an lm-eval sample (it needs 'doc_id' and 'resps')")
        doc = as_object(obj.get("doc"))
        prompt, settings = _arguments(path, where, obj.get("arguments"))
        messages = _prompt_messages(path, where, prompt)
        if config is None and settings:
            config = _config(settings)
        resps = obj.get("resps")
        if not isinstance(resps, list) or not resps or not isinstance(resps[0], list):
            raise SourceError(path, where, "resps", "expected a list of answer lists")
        sid = name_field(path, where, "doc.id", doc.get("id")) or name_field(path, where, "doc_id", obj.get("doc_id"))
        question = _question(path, where, doc, question_key) or (messages[-1].content if messages else None)
        for k, answer in enumerate(resps[0]):
            count += 1
            count_row(path, count, where)
            if isinstance(answer, list):  # loglikelihood tasks answer [logprob, is_greedy]: no text
                raise SourceError(path, where, f"resps[0][{k}]", "not a generated text (only generate_until "
                                                                 "tasks can be imported)")
            text = text_field(path, where, f"resps[0][{k}]", answer, required=True)
            rows.append(SourceRow(where=where if len(resps[0]) == 1 else f"{where} answer {k + 1}", id=sid,
                                  question=question, response=text, messages=messages,
                                  finish_reason="unknown"))
    return SourceLog(rows=rows, model=_sibling_model(path), task=_task_name(path), config=config)


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
    text = text_field(path, where, "arguments.arg_0", prompt)
    if text and text.lstrip().startswith("[{"):
        try:
            chat = json.loads(text)
        except json.JSONDecodeError:
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
    if isinstance(settings.get("max_gen_toks"), int) and settings["max_gen_toks"] > 0:
        fields["max_tokens"] = settings["max_gen_toks"]
    temp = settings.get("temperature")
    if isinstance(temp, int | float) and not isinstance(temp, bool):
        fields["temperature"] = float(temp)
    until = settings.get("until")
    if isinstance(until, list):
        fields["stop"] = tuple(str(s) for s in until[:16])
    return GenerateConfig(**fields)


def _task_name(path: Path) -> str | None:
    stem = path.stem
    if stem.startswith("samples_"):
        return stem.removeprefix("samples_").rsplit("_", 1)[0] or None
    return None


def _sibling_model(path: Path) -> str | None:
    """`model_name` from the results file lm-eval wrote beside the samples (same timestamp), if any."""
    stamp = path.stem.rsplit("_", 1)[-1] if path.stem.startswith("samples_") else None
    if not stamp:
        return None
    results = path.with_name(f"results_{stamp}.json")
    try:
        if not results.is_file() or results.stat().st_size > 16 * 1024 * 1024:
            return None
        doc = json.loads(results.read_bytes())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    name = doc.get("model_name")
    return name.strip()[:512] or None if isinstance(name, str) else None
