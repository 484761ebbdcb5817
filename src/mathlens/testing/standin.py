"""A local stand-in for model servers, speaking the OpenAI chat-completions and Ollama protocols.

It answers deterministically (the reply is a function of the request), can wait a fixed delay per
request (to stand in for a batching server such as vLLM), and can be told to fail: for requests
whose last user message contains a marker, a queue of behaviours is consumed one per attempt:
`"ok"`, `"500"`, `"429"`, `"400"`, `"timeout"` (never answers in time) and `"drop"` (closes the
connection without a reply). `"429:N"` is a 429 with `Retry-After: N`; `"echo-headers"` is a 500
whose body repeats the request headers (as some proxies do). Replies that are valid JSON of the
wrong shape, the names of `MALFORMED`: `"usage-text"`, `"usage-huge"`, `"usage-nan"`,
`"content-number"`, `"content-parts"` (allowed by the OpenAI format), `"no-choices"` and
`"deep"` (a body nested 100,000 levels). Reasoning traces (`think=` on the server, or the behaviours
`"think-inline"`, `"think-field"`, `"think-cut"` for one request): the reply carries the trace of
`trace(messages)` inline in `<think>…</think>` before the answer, in its own field
(`reasoning_content` in OpenAI replies, `thinking` in Ollama's), or cut by the token cap (an
unclosed `<think>` with no answer and `finish_reason` "length"). Embeddings (`/api/embed`,
`/v1/embeddings`) are answered with hashed bag-of-words vectors (`testing/embeddings.py`), and with
`schema_replies` a request constrained to a JSON schema gets a small instance of it
(`testing/schema_reply.py`), so judge-based analyses run against the stand-in. Used by
the provider, fault, resume and retrieval tests and by the benchmarks. It binds to 127.0.0.1 only.

Three load behaviours stand in for the servers an adaptive client meets: **healthy** (the
default: every request answered after `delay_s`, however many are in flight), **saturating**
(`serve_at_once=C`: at most C requests are worked on at once, the rest wait their turn, as a
vLLM or Ollama server queues what it cannot batch: throughput is capped at C / `delay_s` and
latency grows with the queue) and **throttling** (`capacity=C`: past C in flight, an immediate 429
with `Retry-After`). `refuse` lists request fields (`"max_tokens"`, `"temperature"`, `"stop"`,
`"image_url"`) that the server answers with a 400 worded as OpenAI words it, standing in for a
reasoning model or a text-only one.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mathlens.testing.embeddings import embedding_reply
from mathlens.testing.schema_reply import instance, requested_schema

#: Wrong-shape reply bodies (OpenAI protocol) by behaviour name; `%(text)s` is the normal reply text.
MALFORMED: dict[str, str] = {
    "usage-text": '{"choices": [{"message": {"content": %(text)s}, "finish_reason": "stop"}], '
                  '"usage": {"prompt_tokens": "abc", "completion_tokens": "lots"}}',
    "usage-huge": '{"choices": [{"message": {"content": %(text)s}, "finish_reason": "stop"}], '
                  '"usage": {"prompt_tokens": 1e400, "completion_tokens": 3}}',
    "usage-nan": '{"choices": [{"message": {"content": %(text)s}, "finish_reason": "stop"}], '
                 '"usage": {"prompt_tokens": NaN, "completion_tokens": 3}}',
    "content-number": '{"choices": [{"message": {"content": 42}, "finish_reason": "stop"}]}',
    "content-parts": '{"choices": [{"message": {"content": [{"type": "text", "text": %(text)s}]}, '
                     '"finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 7}}',
    "no-choices": '{"choices": []}',
}


def deep_body(depth: int = 100_000) -> bytes:
    """A JSON body nested `depth` arrays deep inside an object."""
    return b'{"choices": ' + b"[" * depth + b"]" * depth + b"}"


def default_reply(messages: list[dict[str, Any]]) -> str:
    """A deterministic, step-shaped reply derived from the last user message."""
    last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    text = last if isinstance(last, str) else json.dumps(last)
    digest = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return (f"Step 1: Read the question ({len(text)} characters).\n"
            f"Step 2: Compute {digest % 97} + {digest % 89} = {digest % 97 + digest % 89}.\n"
            f"Final answer: {digest % 97 + digest % 89}")


def default_trace(messages: list[dict[str, Any]]) -> str:
    """A deterministic thinking-aloud trace for `messages` (step-shaped, like `default_reply`)."""
    return "Let me think.\n" + default_reply(messages).replace("Final answer", "So the answer should be")


def _capped(text: str, max_tokens: object, finish: str) -> tuple[str, str]:
    """`text` cut after `max_tokens` words (a word standing in for a token), with finish reason
    "length", when it is longer; else as it was."""
    if not isinstance(max_tokens, int) or max_tokens <= 0:
        return text, finish
    words = re.findall(r"\S+\s*", text)
    return ("".join(words[:max_tokens]).rstrip(), "length") if len(words) > max_tokens else (text, finish)


def _traced(mode: str | None, text: str, trace: str) -> tuple[str, str | None, str]:
    """(content, trace field or None, finish reason) of a reply in trace `mode` (see the module notes)."""
    if mode == "inline":
        return f"<think>\n{trace}\n</think>\n\n{text}", None, "stop"
    if mode == "field":
        return text, trace, "stop"
    if mode == "cut":
        return f"<think>\n{trace}", None, "length"
    return text, None, "stop"


@dataclass
class StandinState:
    delay_s: float = 0.0
    timeout_sleep_s: float = 30.0
    reply: Callable[[list[dict[str, Any]]], str] = default_reply
    #: answer a request that carries a JSON schema with a small instance of it (testing/schema_reply.py)
    schema_replies: bool = False
    #: reasoning traces on every reply: None, "inline", "field" or "cut" (module notes)
    think: str | None = None
    #: cut a reply longer than the request's `max_tokens` there, counting words as tokens, with finish
    #: reason "length", as a server's token cap does (off: replies are whole, whatever the cap)
    token_cap: bool = False
    trace: Callable[[list[dict[str, Any]]], str] = default_trace
    faults: dict[str, list[str]] = field(default_factory=dict)
    #: replica-pool behaviours (docs/replicas.md): answer 429 + Retry-After past `capacity` requests in
    #: flight; `fail` every request ("500", or "drop" the connection) and the health check (503);
    #: a 400 like vLLM's when prompt words + max_tokens exceed `max_model_len`; `dead` after `kill()`
    capacity: int | None = None
    retry_after_s: float = 1.0
    fail: str | None = None
    max_model_len: int | None = None
    #: saturating server: at most this many requests worked on at once, the rest queue
    serve_at_once: int | None = None
    #: request fields answered with a 400 (module notes)
    refuse: tuple[str, ...] = ()
    dead: bool = False
    in_flight: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the most requests in flight at once, as the server counted them
    peak_in_flight: int = 0
    #: requests answered 429 for being past `capacity`
    throttled: int = 0
    _work: threading.Semaphore | None = field(default=None, repr=False)

    def worker_slots(self) -> threading.Semaphore | None:
        """The saturating server's slots (None: every request is worked on at once)."""
        if self.serve_at_once is None:
            return None
        with self.lock:
            if self._work is None:
                self._work = threading.Semaphore(self.serve_at_once)
            return self._work

    def behaviour(self, messages: list[dict[str, Any]]) -> str:
        last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        text = last if isinstance(last, str) else json.dumps(last)
        with self.lock:
            for marker, queue in self.faults.items():
                if marker in text:
                    self.attempts[marker] = self.attempts.get(marker, 0) + 1
                    return queue.pop(0) if queue else "ok"
        return "ok"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def _send(self, status: int, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _drop(self) -> None:
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def do_GET(self) -> None:
        if self.server.state.dead:
            self._drop()
        elif self.server.state.fail and self.path.rstrip("/") in ("/v1/models", "/models", "/health"):
            self._send(503, {"error": {"message": "stand-in failing"}})
        elif self.path.rstrip("/") == "/health":
            self._send(200, {})
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": "standin", "object": "model"}]})
        elif self.path.rstrip("/") == "/api/tags":
            self._send(200, {"models": [{"name": "standin"}]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        state = self.server.state
        if state.dead:
            self._drop()
            return
        with state.lock:
            full = state.capacity is not None and state.in_flight >= state.capacity
            state.in_flight += not full
            state.throttled += full
            state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
        if full:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self._send(429, {"error": {"message": "stand-in at capacity"}},
                       {"Retry-After": f"{state.retry_after_s:g}"})
            return
        try:
            self._post(state)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _post(self, state: StandinState) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with state.lock:
            state.requests.append({"path": self.path, "body": body})
        if state.dead or state.fail == "drop":
            self._drop()
            return
        if state.fail:
            self._send(int(state.fail), {"error": {"message": f"stand-in failing ({state.fail})"}})
            return
        embedded = embedding_reply(self.path, body)
        if embedded is not None:
            self._send(*embedded)
            return
        refused = _refusal(state, body)
        if refused:
            self._send(400, {"error": {"message": refused, "type": "invalid_request_error", "param": None}})
            return
        too_long = _context_error(state, body)
        if too_long:
            self._send(400, {"object": "error", "message": too_long, "type": "BadRequestError", "code": 400})
            return
        messages = body.get("messages")
        if messages is None:  # /api/generate
            messages = [{"role": "system", "content": body.get("system", "")},
                        {"role": "user", "content": body.get("prompt", "")}]
        action = state.behaviour(messages)
        if action == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if action == "timeout":
            time.sleep(state.timeout_sleep_s)
            self.close_connection = True
            return
        if action in ("500", "429", "400"):
            self._send(int(action), {"error": {"message": f"stand-in {action}"}})
            return
        if action.startswith("429:"):
            self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": action[4:]})
            return
        if action == "echo-headers":
            auth = self.headers.get("Authorization")
            self._send(500, {"error": {"message": f"upstream refused authorization {auth}",
                                       "request_headers": dict(self.headers)}})
            return
        slots = state.worker_slots()
        if slots is not None:
            with slots:
                time.sleep(state.delay_s)
        elif state.delay_s:
            time.sleep(state.delay_s)
        if state.dead:  # killed while this request waited: no answer
            self._drop()
            return
        schema = requested_schema(body) if state.schema_replies else None
        text = json.dumps(instance(schema)) if schema is not None else state.reply(messages)
        mode = action.removeprefix("think-") if action.startswith("think-") else state.think
        text, thinking, finish = _traced(mode, text, state.trace(messages) if mode else "")
        if state.token_cap:
            text, finish = _capped(text, body.get("max_tokens") or body.get("max_completion_tokens"), finish)
        reasoning_field = {"reasoning_content": thinking} if thinking else {}
        if action == "deep":
            self._send(200, deep_body())
            return
        if action in MALFORMED:
            self._send(200, (MALFORMED[action] % {"text": json.dumps(text)}).encode())
            return
        if self.path.endswith("/chat/completions"):
            self._send(200, {
                "id": "standin-1", "object": "chat.completion", "model": body.get("model", "standin"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text, **reasoning_field},
                             "finish_reason": finish}],
                "usage": _usage(messages, text),
            })
        elif self.path == "/api/chat":
            self._send(200, {"model": body.get("model"), "done": True, "done_reason": finish, "prompt_eval_count": 7,
                             "message": {"role": "assistant", "content": text,
                                         **({"thinking": thinking} if thinking else {})},
                             "eval_count": len(text.split())})
        elif self.path == "/api/generate":
            self._send(200, {"model": body.get("model"), "response": text, "done": True, "done_reason": finish,
                             **({"thinking": thinking} if thinking else {}),
                             "prompt_eval_count": 7, "eval_count": len(text.split())})
        else:
            self._send(404, {"error": f"no route {self.path}"})


def _usage(messages: list[dict[str, Any]], text: str) -> dict[str, int]:
    """Word counts standing in for token counts, with the total the OpenAI format also carries."""
    prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
    completion = len(text.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _refusal(state: StandinState, body: dict[str, Any]) -> str | None:
    """OpenAI's 400 message for the first field of `state.refuse` the request carries, else None."""
    for name in state.refuse:
        if name == "image_url":
            if "image_url" in json.dumps(body.get("messages", [])):
                return "Invalid content type. image_url is only supported by certain models."
        elif name == "max_tokens" and name in body:
            return ("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                    "'max_completion_tokens' instead.")
        elif name in body:
            return f"Unsupported parameter: '{name}' is not supported with this model."
    return None


def _context_error(state: StandinState, body: dict[str, Any]) -> str | None:
    """vLLM's message when prompt words + max_tokens exceed `max_model_len`, else None."""
    if state.max_model_len is None:
        return None
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
    wanted = prompt + int(body.get("max_tokens") or 0)
    if wanted <= state.max_model_len:
        return None
    return (f"This model's maximum context length is {state.max_model_len} tokens. However, you requested "
            f"{wanted} tokens ({prompt} in the messages, {body.get('max_tokens')} in the completion). Please "
            "reduce the length of the messages or completion.")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, state: StandinState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class StandinServer:
    """Context manager: `with StandinServer(delay_s=0.1) as srv: srv.url` -> http://127.0.0.1:PORT."""

    def __init__(self, **state: Any) -> None:
        self.state = StandinState(**state)
        self._server = _Server(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StandinServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.state.dead:
            self._server.shutdown()
            self._server.server_close()

    def kill(self) -> None:
        """Die mid-run: refuse new connections and drop every request in progress or kept alive."""
        self.state.dead = True
        self._server.shutdown()
        self._server.server_close()


def main() -> None:
    """`python -m mathlens.testing.standin [--delay S] [--capacity N] [--retry-after S] [--serve-at-once N]
    [--port-file F]`: serve until killed."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--capacity", type=int, default=None, help="answer 429 past this many in flight")
    parser.add_argument("--retry-after", type=float, default=1.0, help="the Retry-After of those 429s")
    parser.add_argument("--serve-at-once", type=int, default=None,
                        help="saturate: work on at most this many at once, queue the rest")
    parser.add_argument("--schema-replies", action="store_true",
                        help="answer a request constrained to a JSON schema with a small instance of it")
    parser.add_argument("--port-file", default=None)
    args = parser.parse_args()
    with StandinServer(delay_s=args.delay, capacity=args.capacity, retry_after_s=args.retry_after,
                       serve_at_once=args.serve_at_once, schema_replies=args.schema_replies) as srv:
        if args.port_file:
            with open(args.port_file, "w") as fh:
                fh.write(srv.url)
        print(srv.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
