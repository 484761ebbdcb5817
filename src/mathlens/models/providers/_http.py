"""Shared HTTP plumbing for the HTTP backends: one aiohttp session per process, error
classification, reply limits.

**One session.** Every HTTP backend in a process sends through one `aiohttp.ClientSession` per
event loop (`SharedSessions`), so connections are kept alive and reused across models, and no
backend pays for a pool of its own. Its connection limit follows the admission of the models
using it: each backend reserves as many connections as its admission can ever let in (plus room
for health probes), and the session's limit is the sum. A backend that reserves more after the
session opened gets a session with the larger limit (the old one is closed when the last backend
using the loop closes). aiohttp, not httpx: at 128 requests in flight httpx's connection pool
spends most of its time choosing a connection (docs/scaling.md).

**Untrusted replies.** A body is read in chunks up to `MAX_REPLY_BYTES` (after decompression,
so a compressed bomb stops at the cap too), decoded with a nesting guard, and any error text kept
from it has the credentials of the request (and anything shaped like a common API key) replaced
by `[REDACTED]` before it can reach a record.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from pydantic import Field

from mathlens.errors import MalformedReplyError, PermanentModelError, TransientModelError, UserError, redact_secrets
from mathlens.models.options import ProviderOptions

#: Status codes worth retrying: rate limits and server-side failures.
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Status codes that say the server itself is in trouble (a replica pool counts them against it).
SERVER_TROUBLE_STATUS = frozenset({500, 502, 503, 504})
#: Largest reply body read; a longer one is an error (a chat reply is a few kilobytes).
MAX_REPLY_BYTES = 32 * 1024 * 1024
#: Connections reserved beyond a backend's admission ceiling (health probes of replicas).
PROBE_CONNECTIONS = 2


class HttpOptions(ProviderOptions):
    """Options of every backend reached over HTTP."""

    timeout_s: float = Field(600.0, gt=0, description="seconds before the HTTP client gives up on a reply")
    vision: bool = Field(False, description="the model reads images: under --images auto, diagrams are sent as "
                         "image parts (default: false, the written description is sent)")


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


@dataclass
class _LoopSessions:
    """The sessions of one event loop and the connections each backend reserved."""

    reserved: dict[int, int] = field(default_factory=dict)
    session: aiohttp.ClientSession | None = None
    limit: int = 0
    retired: list[aiohttp.ClientSession] = field(default_factory=list)


class SharedSessions:
    """One `aiohttp.ClientSession` per event loop, shared by every HTTP backend of the process."""

    def __init__(self) -> None:
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSessions] = (
            weakref.WeakKeyDictionary())

    def _of_loop(self) -> _LoopSessions:
        loop = asyncio.get_running_loop()
        entry = self._loops.get(loop)
        if entry is None:
            entry = self._loops[loop] = _LoopSessions()
        return entry

    def session(self, owner: object, connections: int) -> aiohttp.ClientSession:
        """The running loop's session, with room for `connections` more for `owner` (kept until
        `release(owner)`)."""
        entry = self._of_loop()
        entry.reserved[id(owner)] = max(1, connections)
        wanted = sum(entry.reserved.values())
        if entry.session is None or entry.session.closed or wanted > entry.limit:
            if entry.session is not None and not entry.session.closed:
                entry.retired.append(entry.session)  # requests in flight on it finish there
            # keep-alive connections are what makes 128 in flight cheap; no DNS cache needed on
            # loopback, but a real cluster benefits from it
            connector = aiohttp.TCPConnector(limit=wanted, limit_per_host=0, ttl_dns_cache=300,
                                             enable_cleanup_closed=True)
            entry.session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                                  skip_auto_headers=("User-Agent",))
            entry.limit = wanted
        return entry.session

    def limit(self) -> int:
        """The connection limit of the running loop's session (0 when it has none)."""
        entry = self._loops.get(asyncio.get_running_loop())
        return entry.limit if entry is not None and entry.session is not None else 0

    async def release(self, owner: object) -> None:
        """`owner` is done; the loop's sessions close when no backend holds a reservation."""
        try:
            entry = self._of_loop()
        except RuntimeError:  # no running loop: nothing was opened from here
            return
        entry.reserved.pop(id(owner), None)
        if entry.reserved:
            return
        sessions = [*entry.retired, *([entry.session] if entry.session is not None else [])]
        entry.retired.clear()
        entry.session, entry.limit = None, 0
        for session in sessions:
            if not session.closed:
                await session.close()


#: The process's sessions (one per event loop).
SESSIONS = SharedSessions()


class HttpClient:
    """A backend's handle on the shared session: its timeout and its reservation of connections."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.connections = 1 + PROBE_CONNECTIONS

    def reserve(self, in_flight: int) -> None:
        """Make room for `in_flight` requests at once (the backend's admission ceiling)."""
        self.connections = max(1, in_flight) + PROBE_CONNECTIONS

    def session(self) -> aiohttp.ClientSession:
        return SESSIONS.session(self, self.connections)

    async def aclose(self) -> None:
        await SESSIONS.release(self)


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


async def _read_capped(resp: aiohttp.ClientResponse, url: str) -> bytes:
    declared = resp.content_length
    if declared is not None and declared > MAX_REPLY_BYTES:
        raise MalformedReplyError(f"reply from {url} is larger than {MAX_REPLY_BYTES} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise MalformedReplyError(f"reply from {url} is larger than {MAX_REPLY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


#: aiohttp's failures that mean the server gave no (whole) answer.
_NO_ANSWER = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError)


async def post_json(
    client: HttpClient, url: str, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """POST and decode JSON, mapping every failure onto Transient/PermanentModelError.

    The subclasses say more: `ServerTroubleError` (no answer, 5xx), `RateLimitedError` (429),
    `RequestRefusedError` (another 4xx), so that a replica pool can tell a sick server from a
    busy one and from a bad request."""
    secrets = [v.split(" ", 1)[-1] for v in (headers or {}).values() if v]
    body = json.dumps(payload).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    try:
        async with client.session().post(url, data=body, headers=sent, timeout=client.timeout) as resp:
            raw = await _read_capped(resp, url)
            status, retry_after = resp.status, resp.headers.get("Retry-After")
    except _NO_ANSWER as exc:
        raise ServerTroubleError(f"{type(exc).__name__} calling {url}") from exc
    except aiohttp.ClientError as exc:  # a malformed status line or headers: the server is at fault
        raise ServerTroubleError(f"{type(exc).__name__} calling {url}: {str(exc)[:200]}") from exc
    if status >= 400:
        text = redact_secrets(raw[:2000].decode("utf-8", "replace"), secrets)
        wait = retry_after_seconds(retry_after)
        if status == 429:
            raise RateLimitedError(f"HTTP 429 from {url}: {text[:200]}", retry_after=wait)
        if status in SERVER_TROUBLE_STATUS:
            raise ServerTroubleError(f"HTTP {status} from {url}: {text[:200]}", status=status, retry_after=wait)
        if status in TRANSIENT_STATUS:
            raise TransientModelError(f"HTTP {status} from {url}: {text[:200]}", retry_after=wait)
        raise RequestRefusedError(f"HTTP {status} from {url}: {text[:500]}", status=status, body=text)
    return decode_reply(raw, url)


async def get_ok(client: HttpClient, url: str, headers: dict[str, str] | None, timeout_s: float) -> bool:
    """Whether `GET url` answers 200 within `timeout_s` (a health probe; any failure is False)."""
    try:
        async with client.session().get(url, headers=headers or {},
                                        timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
            await resp.read()
            return resp.status == 200
    except (TimeoutError, aiohttp.ClientError, OSError):
        return False
