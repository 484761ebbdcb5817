"""OpenAI Batch API output files (the JSONL file a finished batch's `output_file_id` names).

Each line answers one request of the batch input:

    {"id": "batch_req_…", "custom_id": "q1", "response": {"status_code": 200, "request_id": "…",
     "body": {chat completion: "model", "choices": [{"message": {"content": …}, "finish_reason": …}],
              "usage": {…}}}, "error": null}

A failed request has `error` (`{"code", "message"}`) or a `status_code` other than 200 with the
reason in `body.error.message`; it becomes an error record. The visible answer is
`choices[0].message.content`; a reasoning trace in `reasoning_content` (or `reasoning`) of the
message is kept as the record's reasoning. `custom_id` is the row's id. The output file does not
hold the requests: give the batch input file with `--requests FILE` to keep the messages sent
(and to match by question text when the custom ids are not question ids).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mathlens.models.base import Message
from mathlens.runs.importing.common import (
    SourceError,
    SourceLog,
    SourceRow,
    as_object,
    check_source,
    error_text,
    finish_reason,
    flatten_content,
    messages_field,
    name_field,
    text_field,
    usage,
)
from mathlens.runs.importing.lines import iter_json_lines


def looks_like(first: dict[str, Any]) -> bool:
    """Whether a JSONL line is a batch output line."""
    return "custom_id" in first and ("response" in first or "error" in first)


def read_requests(path: Path) -> dict[str, tuple[Message, ...]]:
    """custom_id -> messages, from a batch input file (`{"custom_id", "body": {"messages": …}}`)."""
    check_source(path)
    out: dict[str, tuple[Message, ...]] = {}
    for n, obj in iter_json_lines(path):
        where = f"line {n}"
        cid = name_field(path, where, "custom_id", obj.get("custom_id"))
        if cid is None:
            raise SourceError(path, where, "custom_id", "is missing")
        body = obj.get("body")
        if not isinstance(body, dict):
            raise SourceError(path, where, "body", "expected the request body (an object)")
        if cid in out:
            raise SourceError(path, where, "custom_id", f"{cid!r} appears twice")
        out[cid] = messages_field(path, where, "body.messages", body.get("messages"))
    return out


def read(path: Path, requests: dict[str, tuple[Message, ...]] | None = None) -> SourceLog:
    """The rows of a batch output file; `requests` (from `read_requests`) adds the messages sent."""
    rows = []
    for n, obj in iter_json_lines(path):
        where = f"line {n}"
        if not looks_like(obj):
            raise SourceError(path, where, "custom_id", "not a batch output line (it needs 'custom_id' and "
                                                        "'response' or 'error')")
        cid = name_field(path, where, "custom_id", obj.get("custom_id"))
        if cid is None:
            raise SourceError(path, where, "custom_id", "is missing")
        sent = (requests or {}).get(cid, ())
        if requests is not None and cid not in requests:
            raise SourceError(path, where, "custom_id", f"{cid!r} is not in the --requests file")
        users = [m for m in sent if m.role == "user"]
        rows.append(_row(path, where, obj, cid, sent, users[-1].content if users else None))
    return SourceLog(rows=rows)


def _row(path: Path, where: str, obj: dict[str, Any], cid: str, sent: tuple[Message, ...],
         question: str | None) -> SourceRow:
    common: dict[str, Any] = {"where": where, "id": cid, "question": question, "messages": sent}
    if obj.get("error"):
        return SourceRow(**common, error=error_text(obj["error"]), finish_reason="error")
    response = obj.get("response")
    if not isinstance(response, dict):
        raise SourceError(path, where, "response", "expected an object (or an 'error')")
    body = response.get("body")
    status = response.get("status_code")
    if status != 200:
        reason = body.get("error") if isinstance(body, dict) and body.get("error") else f"status code {status}"
        return SourceRow(**common, error=f"HTTP {status}: {error_text(reason)}", finish_reason="error")
    if not isinstance(body, dict):
        raise SourceError(path, where, "response.body", "expected the completion (an object)")
    model = name_field(path, where, "response.body.model", body.get("model"))
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise SourceError(path, where, "response.body.choices", "expected at least one choice")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise SourceError(path, where, "response.body.choices[0].message", "expected an object")
    content = flatten_content(path, where, "response.body.choices[0].message.content", message.get("content"))
    thought = message.get("reasoning_content") or message.get("reasoning")
    u = as_object(body.get("usage"))
    return SourceRow(
        **common, response=content, model=model,
        reasoning=text_field(path, where, "response.body.choices[0].message.reasoning_content", thought)
        if isinstance(thought, str) and thought.strip() else None,
        finish_reason=finish_reason(choices[0].get("finish_reason")),
        usage=usage(u.get("prompt_tokens"), u.get("completion_tokens")),
    )
