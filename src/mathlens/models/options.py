"""Typed model options: what `-M key=value` may say to each backend.

Every provider declares its options as a `ProviderOptions` subclass beside itself, in its own
module (`Provider.Options`; the HTTP backends share `HttpOptions`, the pooled ones `providers.pool.PoolOptions`
with its replica list); the
values given on the command line or stored in a run manifest are validated against it when the
provider is built. An unknown key is an error that suggests the closest known key and lists the
valid ones; a value of the wrong type or out of range names the key and the value.

`split_options` hands each model of a run the options its backend declares, so that one `-M`
list can serve a run that mixes backends (`-M num_ctx=8192` reaches the Ollama model only); a key
that no backend of the run declares is an error.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from mathlens.errors import UserError

T = TypeVar("T", bound=BaseModel)


class ProviderOptions(BaseModel):
    """The base of every provider's options (unknown keys refused, values frozen)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, allow_inf_nan=False)


def http_url(url: str, where: str) -> str:
    """`url` when it is an http:// or https:// URL with a host (and a valid port), else `ValueError`
    naming `where`."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ValueError(f"{where}: {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{where}: {url!r} is not an http:// or https:// URL with a host")
    return url


def _describe(cls: type[BaseModel]) -> str:
    return ", ".join(sorted(cls.model_fields)) or "none"


def parse_provider_options(cls: type[T], options: Mapping[str, Any], provider: str, what: str = "model option") -> T:
    """`options` validated as `cls`, or a `UserError` naming the key (and the valid keys).

    `what` names the options in messages ("model option", "analyzer option")."""
    unknown = sorted(set(options) - set(cls.model_fields))
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, list(cls.model_fields), n=2, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UserError(f"{provider}: unknown {what} {key!r}.{hint} Valid options: {_describe(cls)}.")
    try:
        return cls.model_validate(dict(options))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise UserError(f"{provider}: {what} {key}={err.get('input')!r}: {err['msg']}") from None


def split_options(options_classes: Mapping[str, type[ProviderOptions]], options: Mapping[str, Any]
                  ) -> dict[str, dict[str, Any]]:
    """For each model (spec -> its options class), the given options its backend declares.

    A key that none of the models declares is a `UserError` listing what each accepts.
    """
    declared = {spec: set(cls.model_fields) for spec, cls in options_classes.items()}
    every = set().union(*declared.values()) if declared else set()
    for key in options:
        if key not in every:
            close = difflib.get_close_matches(key, sorted(every), n=2, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            valid = "; ".join(f"{spec}: {_describe(cls)}" for spec, cls in options_classes.items())
            raise UserError(f"unknown model option {key!r}.{hint} Valid options: {valid}.")
    return {spec: {k: v for k, v in options.items() if k in keys} for spec, keys in declared.items()}
