"""Shared HTTP plumbing for the HTTP backends: one client, error classification, reply limits.

Every reply is untrusted: its body is read up to `MAX_REPLY_BYTES`, decoded with a nesting
guard, and any error text kept from it has the credentials of the request (and anything shaped
like a common API key) replaced by `[REDACTED]` before it can reach a record.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from typing import Any

import httpx

from mathlens.errors import MalformedReplyError, PermanentModelError, TransientModelError, UserError, redact_secrets

#: Status codes worth retrying: rate limits and server-side failures.
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Status codes that say the server itself is in trouble (a replica pool counts them against it).
SERVER_TROUBLE_STATUS = frozenset({500, 502, 503, 504})
#: Largest reply body read; a longer one is an error (a chat reply is a few kilobytes).
MAX_REPLY_BYTES = 32 * 1024 * 1024


class ServerTroubleError(TransientModelError):
    """No answer (refused, dropped, timed out) or HTTP 500/502/503/504: the server, not the request, is at fault."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, retry_after=retry_after)
        self.status = status


class RateLimitedError(TransientModelError):
    """HTTP 429: the server is busy; `retry_after` is how long it asked us to wait, if it said."""


class RequestRefusedError(PermanentModelError):
    """An HTTP error not worth retrying (a 4xx but 408/409/425/429, or a 5xx such as 501); `body` is
    its (redacted) text."""

    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


def make_client(timeout_s: float) -> httpx.AsyncClient:
    # Generous pool: concurrency is limited by the Model wrapper (and a replica pool), not by httpx.
    limits = httpx.Limits(max_connections=1024, max_keepalive_connections=256)
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), limits=limits, trust_env=False)


def timeout_option(options: dict[str, Any], default: float = 600.0) -> float:
    """The `timeout_s` model option as seconds (> 0), or `UserError`."""
    value = options.get("timeout_s", default)
    try:
        secs = float(value)
    except (TypeError, ValueError):
        secs = math.nan
    if isinstance(value, bool) or not math.isfinite(secs) or secs <= 0:
        raise UserError(f"model option timeout_s must be a number of seconds > 0 (not {value!r})")
    return secs


def refuse_inline_key(options: dict[str, Any]) -> None:
    """An `api_key` option would be written to the run manifest: refuse it, naming the alternative."""
    if "api_key" in options:
        raise UserError("model option api_key is refused: keys are never written to a run. Put the key in "
                        "$OPENAI_API_KEY, or in a variable named with -M api_key_env=NAME")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A `Retry-After` header as seconds from now: delta-seconds or an HTTP date; None if absent or bad.

    >>> retry_after_seconds("3")
    3.0
    >>> retry_after_seconds("soon") is None
    True
    """
    if not value:
        return None
    value = value.strip()
    try:
        secs = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        secs = when.timestamp() - (now if now is not None else time.time())
    if not math.isfinite(secs):
        return None
    return max(0.0, secs)


def decode_reply(raw: bytes, url: str) -> dict[str, Any]:
    """A reply body as a JSON object, or `ModelError` saying what is wrong with it."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise MalformedReplyError(f"reply from {url} is JSON nested too deeply to decode") from None
    except ValueError:
        raise TransientModelError(f"non-JSON reply from {url}: {raw[:200]!r}") from None
    if not isinstance(data, dict):
        raise MalformedReplyError(f"unexpected reply from {url}: a JSON {type(data).__name__}, not an object")
    return data


async def _read_capped(resp: httpx.Response, url: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise MalformedReplyError(f"reply from {url} is larger than {MAX_REPLY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def post_json(
    client: httpx.AsyncClient, url: str, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """POST and decode JSON, mapping every failure onto Transient/PermanentModelError.

    The subclasses say more: `ServerTroubleError` (no answer, 5xx), `RateLimitedError` (429),
    `RequestRefusedError` (another 4xx), so that a replica pool can tell a sick server from a
    busy one and from a bad request."""
    secrets = [v.split(" ", 1)[-1] for v in (headers or {}).values() if v]
    try:
        async with client.stream("POST", url, json=payload, headers=headers) as resp:
            raw = await _read_capped(resp, url)
            status, retry_after = resp.status_code, resp.headers.get("retry-after")
    except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        raise ServerTroubleError(f"{type(exc).__name__} calling {url}") from exc
    if status >= 400:
        body = redact_secrets(raw[:2000].decode("utf-8", "replace"), secrets)
        wait = retry_after_seconds(retry_after)
        if status == 429:
            raise RateLimitedError(f"HTTP 429 from {url}: {body[:200]}", retry_after=wait)
        if status in SERVER_TROUBLE_STATUS:
            raise ServerTroubleError(f"HTTP {status} from {url}: {body[:200]}", status=status, retry_after=wait)
        if status in TRANSIENT_STATUS:
            raise TransientModelError(f"HTTP {status} from {url}: {body[:200]}", retry_after=wait)
        raise RequestRefusedError(f"HTTP {status} from {url}: {body[:500]}", status=status, body=body)
    return decode_reply(raw, url)
