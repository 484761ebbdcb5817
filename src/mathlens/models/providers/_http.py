"""Shared HTTP plumbing for the HTTP backends: one client, and error classification."""

from __future__ import annotations

from typing import Any

import httpx

from mathlens.errors import PermanentModelError, TransientModelError

#: Status codes worth retrying: rate limits and server-side failures.
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def make_client(timeout_s: float) -> httpx.AsyncClient:
    # Generous pool: concurrency is limited by the Model wrapper, not by the pool.
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), limits=limits, trust_env=False)


async def post_json(
    client: httpx.AsyncClient, url: str, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """POST and decode JSON, mapping every failure onto Transient/PermanentModelError."""
    try:
        resp = await client.post(url, json=payload, headers=headers)
    except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        raise TransientModelError(f"{type(exc).__name__} calling {url}") from exc
    if resp.status_code in TRANSIENT_STATUS:
        raise TransientModelError(f"HTTP {resp.status_code} from {url}: {resp.text[:200]}")
    if resp.status_code >= 400:
        raise PermanentModelError(f"HTTP {resp.status_code} from {url}: {resp.text[:500]}")
    try:
        data = resp.json()
    except ValueError as exc:
        raise TransientModelError(f"non-JSON reply from {url}: {resp.text[:200]!r}") from exc
    if not isinstance(data, dict):
        raise TransientModelError(f"unexpected reply from {url}: {str(data)[:200]}")
    return data
