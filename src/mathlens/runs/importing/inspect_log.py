"""Inspect AI logs (`.eval` and `.json`): one row per sample and epoch.

Two readers produce the same documents: Inspect's own (`inspect_ai.log.read_eval_log` for the
header, `read_eval_log_samples` for the samples, each sample then dumped to its JSON form) when
`inspect_ai` is importable, and the built-in one otherwise (`reader="mathlens"` forces it). The
built-in reader follows the log format as Inspect writes it:

* a `.json` log is one JSON object: `version`, `status`, `eval` (task, model, config...),
  `plan` (with the generate `config`), `results`, `stats` and `samples` (a list);
* an `.eval` log is a ZIP archive: `header.json` holds the same object without `samples`
  (`_journal/start.json` holds its first part while a run is still going), and each sample is a
  member `samples/<id>_epoch_<n>.json`. Members are stored, deflated or (since 2025)
  Zstandard-compressed (method 93), which the standard `zipfile` of Python < 3.14 cannot unpack:
  the built-in reader reads the member's bytes itself and unpacks them with `zstandard`.

From each sample: `id`, `epoch` (the repeat is `epoch - 1`), `input` (text, or messages), the
messages sent (those before the first assistant message), `output.completion` and the reasoning
blocks of the answer (`{"type": "reasoning", "reasoning": ...}` content parts; the visible text is
what follows them), `output.stop_reason`, `output.usage`, `total_time` and `error.message`.
A log whose run has not finished (`status: started`) is refused: its samples may be incomplete.
"""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.importing.common import (
    MAX_MEMBER_BYTES,
    MAX_UNPACKED_BYTES,
    SourceError,
    SourceLog,
    SourceRow,
    as_object,
    count_row,
    error_text,
    finish_reason,
    flatten_content,
    int_field,
    messages_field,
    name_field,
    text_field,
    usage,
)

ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50


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

def _inspect_documents(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    from inspect_ai.log import read_eval_log, read_eval_log_samples

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
    try:
        doc = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(path, None, None, f"not valid JSON ({exc})") from None
    except RecursionError:
        raise SourceError(path, None, None, "values nest too deeply") from None
    if not isinstance(doc, dict) or "eval" not in doc:
        raise SourceError(path, None, "eval", "not an Inspect log (no 'eval' object at the top level)")
    samples = doc.pop("samples", None)
    if samples is None:
        samples = []
    if not isinstance(samples, list):
        raise SourceError(path, None, "samples", "expected a list")
    return doc, iter(samples)


def _eval_documents(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(path, None, None, f"not an Inspect .eval archive ({exc}); a log cut off while it "
                                            "was written has no central directory") from None
    infos = {i.filename: i for i in archive.infolist()}
    budget = [MAX_UNPACKED_BYTES]
    if "header.json" not in infos:
        status = "no header.json"
        if "_journal/start.json" in infos:
            status = "only the start journal (the run did not finish)"
        raise SourceError(path, None, "header.json", f"the archive has {status}")
    header = _member_json(path, archive, infos["header.json"], budget)
    names = sorted((n for n in infos if n.startswith("samples/") and n.endswith(".json")), key=_sample_order)

    def samples() -> Iterator[dict[str, Any]]:
        with archive:
            for name in names:
                yield _member_json(path, archive, infos[name], budget)
    return header, samples()


def _sample_order(name: str) -> tuple[int, str]:
    stem = name.removeprefix("samples/").removesuffix(".json")
    sid, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, sid)


def _member_json(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> dict[str, Any]:
    data = _unpack(path, archive, info, budget)
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(path, info.filename, None, f"not valid JSON ({exc})") from None
    except RecursionError:
        raise SourceError(path, info.filename, None, "values nest too deeply") from None
    if not isinstance(doc, dict):
        raise SourceError(path, info.filename, None, "expected a JSON object")
    return doc


def _unpack(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> bytes:
    """A member's bytes within `MAX_MEMBER_BYTES` and the archive's remaining `budget`."""
    limit = min(MAX_MEMBER_BYTES, budget[0])
    if info.file_size > limit:
        raise SourceError(path, info.filename, None, f"unpacks to {info.file_size:,} bytes, more than the limit "
                                                     f"of {limit:,}")
    try:
        if info.compress_type == ZIP_ZSTANDARD:
            data = _unzstd(path, info, _raw_member(path, info), limit)
        elif info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with archive.open(info) as fh:
                data = fh.read(limit + 1)
        else:
            raise SourceError(path, info.filename, None, f"compression method {info.compress_type} is not "
                                                         "supported (stored, deflate and zstd are)")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise SourceError(path, info.filename, None, f"cannot unpack it ({exc})") from None
    if len(data) > limit:
        raise SourceError(path, info.filename, None, f"unpacks to more than the limit of {limit:,} bytes")
    budget[0] -= len(data)
    return data


def _raw_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """The compressed bytes of a member, found through its local header."""
    with path.open("rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(head)[0] != _LOCAL_SIGNATURE:
            raise SourceError(path, info.filename, None, "the member's local header is damaged")
        name_len, extra_len = _LOCAL_HEADER.unpack(head)[-2:]
        fh.seek(name_len + extra_len, 1)
        raw = fh.read(info.compress_size)
    if len(raw) < info.compress_size:
        raise SourceError(path, info.filename, None, "the archive is cut off inside this member")
    return raw


def _unzstd(path: Path, info: zipfile.ZipInfo, raw: bytes, limit: int) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise SourceError(path, info.filename, None, "the member is Zstandard-compressed: install the "
                                                     "`zstandard` package (or inspect-ai) to read it") from None
    try:
        with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
            return bytes(reader.read(limit + 1))
    except zstandard.ZstdError as exc:
        raise SourceError(path, info.filename, None, f"damaged Zstandard data ({exc})") from None


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
    return SourceLog(rows=rows, model=model, task=task, reader=reader, config=_config(header))


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
    )


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
