"""Inspect AI logs (`.eval` and `.json`): one row per sample and epoch.

Two readers produce the same documents: Inspect's own (`inspect_ai.log.read_eval_log` for the
header, `read_eval_log_samples` for the samples, each sample then dumped to its JSON form) when
`inspect_ai` is importable, and the built-in one otherwise (`reader="mathlens"` forces it). The
built-in reader follows the log format as Inspect writes it:

* a `.json` log is one JSON object: `version`, `status`, `eval` (task, model, config, dataset...),
  `plan` (with the generate `config`), `results`, `stats` and `samples` (a list);
* an `.eval` log is a ZIP archive (`eval_archive`): `header.json` holds the same object without
  `samples` (`_journal/start.json` holds its first part while a run is still going), and each
  sample is a member `samples/<id>_epoch_<n>.json`.

Inspect's reader is handed a file only after the checks the built-in reader makes: a `.json` log's
nesting is measured on its bytes, and every member of an `.eval` archive is unpacked under the
limits and measured (`eval_archive.verify`), so a zip bomb or a deeply nested log is refused with
the limit named instead of taking the machine's memory.

From each sample: `id`, `epoch` (the repeat is `epoch - 1`), `input` (text, or messages), the
messages sent (those before the first assistant message), `output.completion` and the reasoning
blocks of the answer (`{"type": "reasoning", "reasoning": ...}` content parts; the visible text is
what follows them), `output.stop_reason`, `output.usage`, `total_time` and `error.message`; for
the question, `target`, `choices`, images in the input and `metadata` (`level`, `subject` or
`type`); and every scorer's verdict in `scores` (value and extracted `answer`), kept as the
record's `source_scores`. A log whose run has not finished (`status: started`) is refused: its
samples may be incomplete. A `cancelled` or `error` log is imported with what it holds and
marked partial, with the number of samples the evaluation planned.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mathlens.items.jsonread import within_depth
from mathlens.items.limits import SOURCE_NESTING
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.importing import eval_archive
from mathlens.runs.importing.common import (
    ItemFacts,
    SourceError,
    SourceLog,
    SourceRow,
    as_object,
    count_row,
    error_text,
    finish_reason,
    flatten_content,
    int_field,
    item_facts,
    messages_field,
    name_field,
    source_score,
    text_field,
    usage,
)
from mathlens.runs.importing.lines import parse_json, read_json_file
from mathlens.runs.importing.provenance import SourceScore

#: statuses of a log that holds part of its samples: imported, marked partial
PARTIAL_STATUSES = ("cancelled", "error")


def inspect_available() -> bool:
    """Whether Inspect's own log reader can be used."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def read(path: Path, reader: str = "auto") -> SourceLog:
    """The rows of an Inspect log; `reader` is "auto", "inspect_ai" or "mathlens"."""
    use_inspect = reader == "inspect_ai" or (reader == "auto" and inspect_available())
    if use_inspect:
        header, samples = _inspect_documents(path)
    elif path.suffix == ".json":
        header, samples = _json_documents(path)
    else:
        header, samples = _eval_documents(path)
    return _log(path, header, samples, "inspect_ai" if use_inspect else "mathlens")


# -- readers ------------------------------------------------------------------------------------

def _precheck(path: Path) -> None:
    """What the built-in reader would refuse, refused before Inspect's reader sees the file."""
    if path.suffix == ".json":
        raw = path.read_bytes()
        if not within_depth(raw, SOURCE_NESTING.value):
            parse_json(path, None, raw)  # raises, naming the depth and the limit
    else:
        eval_archive.verify(path)


def _inspect_documents(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    _precheck(path)
    try:
        log = read_eval_log(str(path), header_only=True)
    except Exception as exc:  # Inspect raises many types for a damaged file; all mean the same here
        raise SourceError(path, None, None, f"not a readable Inspect log ({type(exc).__name__}: "
                                            f"{str(exc)[:300]})") from None
    header = log.model_dump(mode="json", exclude={"samples"})

    def samples() -> Iterator[dict[str, Any]]:
        try:
            for s in read_eval_log_samples(str(path), all_samples_required=False):
                yield s.model_dump(mode="json", exclude={"events", "attachments", "store"})
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(path, None, "samples", f"cannot read the samples ({type(exc).__name__}: "
                                                     f"{str(exc)[:300]})") from None
    return header, samples()


def _json_documents(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    doc = read_json_file(path)
    if not isinstance(doc, dict) or "eval" not in doc:
        raise SourceError(path, None, "eval", "not an Inspect log (no 'eval' object at the top level)")
    samples = doc.pop("samples", None)
    if samples is None:
        samples = []
    if not isinstance(samples, list):
        raise SourceError(path, None, "samples", "expected a list")
    return doc, iter(samples)


def _eval_documents(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    archive = eval_archive.open_archive(path)
    names = {i.filename for i in archive.infolist()}
    budget = eval_archive.Budget()
    if "header.json" not in names:
        status = "no header.json"
        if "_journal/start.json" in names:
            status = "only the start journal (the run did not finish)"
        archive.close()
        raise SourceError(path, None, "header.json", f"the archive has {status}")
    header = eval_archive.member_json(path, archive, archive.getinfo("header.json"), budget)
    members = list(eval_archive.sample_members(archive))

    def samples() -> Iterator[dict[str, Any]]:
        with archive:
            for info in members:
                yield eval_archive.member_json(path, archive, info, budget)
    return header, samples()


# -- documents to rows ----------------------------------------------------------------------------

def _log(path: Path, header: dict[str, Any], samples: Iterator[dict[str, Any]], reader: str) -> SourceLog:
    status = header.get("status")
    if status == "started":
        raise SourceError(path, None, "status", "the log is of a run that has not finished (status 'started'); "
                                                "import it once Inspect has written it completely")
    ev = header.get("eval")
    if not isinstance(ev, dict):
        raise SourceError(path, None, "eval", "not an Inspect log (no 'eval' object)")
    model = name_field(path, "header", "eval.model", ev.get("model"))
    task = name_field(path, "header", "eval.task", ev.get("task"))
    rows: list[SourceRow] = []
    for n, sample in enumerate(samples, start=1):
        if not isinstance(sample, dict):
            raise SourceError(path, f"sample {n}", None, "expected a JSON object")
        count_row(path, n, f"sample {n}")
        rows.append(_row(path, sample, n, model))
    partial = status if status in PARTIAL_STATUSES else None
    return SourceLog(rows=rows, model=model, task=task, reader=reader, config=_config(header), partial=partial,
                     planned=_planned(ev))


def _planned(ev: dict[str, Any]) -> int | None:
    """Samples x epochs the evaluation planned, when the header says."""
    samples = as_object(ev.get("dataset")).get("samples")
    epochs = as_object(ev.get("config")).get("epochs") or 1
    if isinstance(samples, int) and isinstance(epochs, int) and not isinstance(samples, bool) and \
            0 <= samples < 10**9 and 0 < epochs < 10**6:
        return samples * epochs
    return None


def _config(header: dict[str, Any]) -> GenerateConfig | None:
    """The decoding settings the plan or the model used, where Inspect recorded them."""
    plan = as_object(header.get("plan"))
    ev = as_object(header.get("eval"))
    merged: dict[str, Any] = {}
    for part in (ev.get("model_generate_config"), (plan or {}).get("config")):
        if isinstance(part, dict):
            merged.update({k: v for k, v in part.items() if v is not None})
    fields: dict[str, Any] = {}
    if isinstance(merged.get("temperature"), int | float) and not isinstance(merged["temperature"], bool):
        fields["temperature"] = float(merged["temperature"])
    if isinstance(merged.get("max_tokens"), int) and merged["max_tokens"] > 0:
        fields["max_tokens"] = merged["max_tokens"]
    if isinstance(merged.get("seed"), int):
        fields["seed"] = merged["seed"]
    if isinstance(merged.get("top_p"), int | float) and not isinstance(merged["top_p"], bool):
        fields["top_p"] = float(merged["top_p"])
    if isinstance(merged.get("stop_seqs"), list):
        fields["stop"] = tuple(str(s) for s in merged["stop_seqs"][:16])
    return GenerateConfig(**fields) if fields else None


def _row(path: Path, s: dict[str, Any], n: int, log_model: str | None) -> SourceRow:
    sid = name_field(path, f"sample {n}", "id", s.get("id"))
    epoch = int_field(path, f"sample {sid or n}", "epoch", s.get("epoch"), low=1) or 1
    where = f"sample {sid if sid is not None else n} epoch {epoch}"
    sent = _sent_messages(path, where, s)
    question = _input_text(path, where, s.get("input"))
    output = as_object(s.get("output"))
    visible, reasoning = _answer(path, where, output)
    err = s.get("error")
    error = error_text(err) if err else None
    if error is None and isinstance(output.get("error"), str | dict) and output.get("error"):
        error = error_text(output["error"])
    stop = None
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        stop = choices[0].get("stop_reason")
    u = as_object(output.get("usage"))
    latency = s.get("total_time")
    return SourceRow(
        where=where, id=sid, question=question, response=visible, reasoning=reasoning, error=error,
        model=log_model, repeat=epoch - 1, messages=sent,
        finish_reason="error" if error else finish_reason(stop),
        usage=usage(u.get("input_tokens"), u.get("output_tokens")),
        latency_s=float(latency) if isinstance(latency, int | float) and 0 <= latency < 1e7 else 0.0,
        item=_facts(s), scores=_scores(s.get("scores")),
    )


def _facts(s: dict[str, Any]) -> ItemFacts:
    """The question's gold answers, choices, images and metadata, as the sample gives them."""
    meta = as_object(s.get("metadata"))
    subject = meta.get("subject") or meta.get("type") or meta.get("category")
    if isinstance(subject, int):
        subject = str(subject)  # Inspect tasks may number their subjects
    return item_facts(target=s.get("target"), choices=s.get("choices"), images=_images(s.get("input")),
                      level=meta.get("level"), subject=subject, metadata=meta,
                      skip=frozenset({"level", "subject", "type", "category"}))


def _images(value: Any) -> tuple[str, ...]:
    """Image references in a message-list input (paths and URLs; inline data is not kept)."""
    if not isinstance(value, list):
        return ()
    found: list[str] = []
    for m in value:
        content = m.get("content") if isinstance(m, dict) else None
        for part in content if isinstance(content, list) else []:
            ref = part.get("image") if isinstance(part, dict) and part.get("type") == "image" else None
            if isinstance(ref, str) and not ref.startswith("data:") and len(ref) <= 2000:
                found.append(ref)
    return tuple(found[:16])


def _scores(value: Any) -> tuple[SourceScore, ...]:
    """Every scorer's verdict; a scorer with several values gives one score per value."""
    out: list[SourceScore] = []
    for name, score in as_object(value).items():
        if not isinstance(score, dict):
            continue
        raw = score.get("value")
        if isinstance(raw, dict):
            out.extend(source_score(f"{name}.{key}", v, score.get("answer")) for key, v in list(raw.items())[:16])
        else:
            out.append(source_score(str(name), raw, score.get("answer")))
        if len(out) >= 32:
            break
    return tuple(out)


def _input_text(path: Path, where: str, value: Any) -> str | None:
    """A sample's input as text: the string, or the content of its last user message."""
    if isinstance(value, list):
        users = [m for m in messages_field(path, where, "input", value) if m.role == "user"]
        return users[-1].content if users else None
    return text_field(path, where, "input", value)


def _sent_messages(path: Path, where: str, s: dict[str, Any]) -> tuple[Message, ...]:
    """The messages put to the model: those of the sample before its first answer."""
    msgs = s.get("messages")
    if not isinstance(msgs, list):
        return ()
    before = []
    for m in msgs:
        if isinstance(m, dict) and m.get("role") == "assistant":
            break
        before.append(m)
    return messages_field(path, where, "messages", before)


def _answer(path: Path, where: str, output: dict[str, Any]) -> tuple[str | None, str | None]:
    """(visible text, reasoning) of the first choice; `output.completion` when there is no message."""
    choices = output.get("choices")
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
        else None
    if not isinstance(message, dict):
        return text_field(path, where, "output.completion", output.get("completion")), None
    content = message.get("content")
    if isinstance(content, list):
        blocks = [c for c in content if isinstance(c, dict)]
        thoughts = [c.get("reasoning") or c.get("summary") for c in blocks if c.get("type") == "reasoning"
                    and not c.get("redacted")]
        reasoning = "\n\n".join(t for t in thoughts if isinstance(t, str)) or None
        visible = flatten_content(path, where, "output.choices[0].message.content", content)
        return visible, text_field(path, where, "reasoning", reasoning)
    return flatten_content(path, where, "output.choices[0].message.content", content), None
