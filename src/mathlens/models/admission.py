"""Admission: how many calls a model lets in at once, as each provider declares it.

The `Model` wrapper asks its provider for an `Admission` (`Provider.admission`) and enters it around
every call; it knows nothing else about how the provider limits itself. Two kinds exist:

- `FixedAdmission`: at most N calls in flight, exactly (a semaphore). `--concurrency N` asks for it
  with every provider; in-process backends (llama.cpp) only ever have it.
- the adaptive admission of HTTP backends (`providers/pool.py`): the limit follows what the server
  says (429/503, `Retry-After`, timeouts, its latency rising at constant load) between 1 and a
  ceiling. `--concurrency auto` asks for it; `openai/` models use it by default.

`Concurrency` is what the user asked for: an int (fixed), ``"auto"`` (adaptive where the provider
has it) or None (the provider's default).
"""

from __future__ import annotations

import abc
import asyncio
from typing import Literal

from pydantic import BaseModel, ConfigDict

#: What `--concurrency` says: a fixed number of calls in flight, "auto", or None (the default).
Concurrency = int | Literal["auto"] | None

#: The largest fixed limit or adaptive ceiling accepted (a run that needs more uses replicas).
MAX_CONCURRENCY = 4096

ReplicaState = Literal["in", "out", "resting"]


class ReplicaStats(BaseModel):
    """One server's counters, as the progress display and the run summary show them."""

    model_config = ConfigDict(frozen=True)

    url: str
    state: ReplicaState
    in_flight: int
    limit: int
    requests: int
    ok: int
    errors: int
    overloaded: int


class Admission(abc.ABC):
    """A gate every call of a model goes through: `await enter()` before, `leave()` after.

    `ceiling` is the most calls it can ever let in at once (the run layer sizes its window of
    tasks by it, and HTTP backends their connection limit)."""

    @property
    @abc.abstractmethod
    def ceiling(self) -> int:
        """The most calls let in at once, ever."""

    @abc.abstractmethod
    async def enter(self) -> None:
        """Wait until a call may start."""

    @abc.abstractmethod
    def leave(self) -> None:
        """A call let in by `enter` has ended (however it ended)."""

    def describe(self) -> str:
        """How the limit behaves, in a few words (for messages and `--help`-like output)."""
        return f"at most {self.ceiling} in flight"

    async def __aenter__(self) -> None:
        await self.enter()

    async def __aexit__(self, *exc: object) -> None:
        self.leave()


class FixedAdmission(Admission):
    """At most `limit` calls in flight, never more and, with work waiting, never fewer.

    >>> FixedAdmission(3).describe()
    'fixed: at most 3 in flight'
    """

    def __init__(self, limit: int) -> None:
        if not 1 <= limit <= MAX_CONCURRENCY:
            raise ValueError(f"a fixed concurrency must be between 1 and {MAX_CONCURRENCY} (not {limit})")
        self._limit = limit
        self._sem = asyncio.Semaphore(limit)

    @property
    def ceiling(self) -> int:
        return self._limit

    async def enter(self) -> None:
        await self._sem.acquire()

    def leave(self) -> None:
        self._sem.release()

    def describe(self) -> str:
        return f"fixed: at most {self.ceiling} in flight"


def check_concurrency(value: object, name: str = "--concurrency") -> Concurrency:
    """`value` as a `Concurrency` (an int 1..MAX_CONCURRENCY, "auto", or None), else `ValueError`
    naming `name`.

    >>> check_concurrency("auto"), check_concurrency("8"), check_concurrency(None)
    ('auto', 8, None)
    """
    if value is None or value == "auto":
        return value
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number from 1 to {MAX_CONCURRENCY}, or auto (not {value!r})")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{name} must be a whole number from 1 to {MAX_CONCURRENCY}, or auto "
                         f"(not {value!r})") from None
    if not 1 <= number <= MAX_CONCURRENCY:
        raise ValueError(f"{name} must be from 1 to {MAX_CONCURRENCY}, or auto (not {value!r}); a run that "
                         "needs more in flight spreads them over replicas (docs/replicas.md)")
    return number
