"""Command options generated from the pydantic models they fill (`mathlens.flags`).

`with_model_options(Model)` decorates a command function: the options of every flagged field of
`Model` are added to its signature (type, help, choices and placeholder taken from the field), and
the function receives them gathered as one `FlagValues` argument, holding only the flags given on
the command line. The command writes them into its model's data (a file's, or an empty one) and
lets the model validate: a flag and a field are one declaration, checked the same way.

Option types: `int`, `float`, `str` and `Literal` fields take one value (a `Literal` lists its
choices); `bool` fields are plain switches (no value, no `<bool>` in help); list fields repeat
(`--base-url A --base-url B`); `dict` fields take `KEY=VALUE` pairs, the values read as JSON where
they parse (`-M threads=2`).
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable
from typing import Any, Literal, ParamSpec, TypeVar, get_args, get_origin

import typer
from pydantic import BaseModel

from mathlens.flags import FlagField, FlagValues, flag_fields, refused_flag

P = ParamSpec("P")
R = TypeVar("R")

#: the name of the argument a decorated command receives its flags in
FLAGS_ARGUMENT = "flags"
#: the flags a command received when none was given (the default of its `flags` argument)
NO_FLAGS = FlagValues()


def _option(ff: FlagField) -> tuple[Any, Any]:
    """(annotation, typer.Option) of one flagged field."""
    names = ff.flag.names
    if ff.kind is bool and not ff.many:
        if "/" in names[0]:  # a pair of switches (--with-x/--without-x): None when neither is given
            return bool | None, typer.Option(None, *names, help=ff.help, show_default=False)
        return bool, typer.Option(False, *names, help=ff.help, show_default=False)
    if get_origin(ff.kind) is dict or ff.kind is dict or ff.flag.merge:
        return list[str], typer.Option(None, *names, help=ff.help, metavar=ff.flag.metavar or "KEY=VALUE",
                                       show_default=False)
    # a comma-separated list is read as text and split before its field checks the values
    base: Any = ff.kind if ff.kind in (int, float, str) and not ff.flag.split else str
    choices = ff.choices
    if choices:  # typer offers choices through an Enum; its values are read back in `gather`
        base = enum.Enum(ff.dest, {c: c for c in choices}, type=str)  # type: ignore[misc,no-redef]
    metavar = ff.flag.metavar
    if ff.many:
        return list[base], typer.Option(None, *names, help=ff.help, metavar=metavar, show_default=False)
    return base | None, typer.Option(None, *names, help=ff.help, metavar=metavar, show_default=False)


def parse_pairs(pairs: list[str], option: str = "-M", text: bool = False) -> dict[str, Any]:
    """`["a=1", "b=x"]` -> `{"a": 1, "b": "x"}`: values read as JSON where they parse, or kept as
    text (`text`, for a field that maps names to names). A pair without `=`, or a key given two
    different values, is an error naming `option`."""
    import contextlib
    import json

    from mathlens.errors import UserError

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f"{option} takes KEY=VALUE (not {pair!r})")
        value: Any = raw.strip() if text else raw
        if not text:
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(raw)
        if key in out and out[key] != value:  # the same pair twice says one thing; two values would not
            raise UserError(f"{option} gives {key!r} two values ({out[key]!r} and {value!r})")
        out[key] = value
    return out


def _text_values(ff: FlagField) -> bool:
    """A `dict[str, str]` field: its values are names, never JSON."""
    args = get_args(ff.kind)
    return len(args) == 2 and args[1] is str


def gather(fields: list[FlagField], values: dict[str, Any]) -> FlagValues:
    """The flags among `values` (by destination name) that were given, typed for their fields."""
    given: list[tuple[FlagField, Any]] = []
    for ff in fields:
        value = values.get(ff.dest)
        switch = ff.kind is bool and "/" not in ff.flag.names[0]
        if value is None or value == [] or (switch and value is False):
            continue
        if switch and ff.flag.invert:
            value = False
        if ff.flag.merge and isinstance(value, list):
            value = parse_pairs(value, ff.flag.names[-1] if len(ff.flag.names[-1]) == 2 else ff.name, _text_values(ff))
        elif isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, list):
            value = [v.value if isinstance(v, enum.Enum) else v for v in value]
        given.append((ff, value))
    return FlagValues(tuple(given))


def _within(ff: FlagField, parts: tuple[str, ...]) -> bool:
    """The field lies at or under one of `parts` (dotted paths, `*` for a list's elements)."""
    path = ".".join(ff.path)
    return any(path == p or path.startswith(p + ".") for p in parts)


def with_model_options(model: type[BaseModel], skip: tuple[str, ...] = (),
                       only: tuple[str, ...] | None = None) -> Callable[[Callable[P, R]], Callable[..., R]]:
    """Add the options of `model`'s flagged fields (but those named in `skip`) to a command; with
    `only`, just those of the fields at or under these dotted paths (`tutoring`, `items.*.limit`), for a
    command that fills a part of the model and decides the rest itself.

    The command declares a parameter named `flags` (a `FlagValues`); every other parameter is kept
    as written. Two options with one name are refused when the command is built.
    """
    fields = [ff for ff in flag_fields(model) if ff.name not in skip and (only is None or _within(ff, only))]

    def decorate(fn: Callable[P, R]) -> Callable[..., R]:
        own = inspect.signature(fn, eval_str=True)
        kept = [p for p in own.parameters.values() if p.name != FLAGS_ARGUMENT]
        taken = {n for p in kept if isinstance(p.default, typer.models.OptionInfo)
                 for n in (p.default.param_decls or ())}
        generated = []
        for ff in fields:
            clash = taken.intersection(ff.flag.names)
            if clash:
                raise ValueError(f"{fn.__name__}: option {', '.join(sorted(clash))} declared twice")
            taken.update(ff.flag.names)
            annotation, option = _option(ff)
            generated.append(inspect.Parameter(ff.dest, inspect.Parameter.KEYWORD_ONLY, default=option,
                                               annotation=annotation))
        dests = {ff.dest for ff in fields}

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> R:
            values = {k: kwargs.pop(k) for k in list(kwargs) if k in dests}
            kwargs[FLAGS_ARGUMENT] = gather(fields, values)
            return fn(*args, **kwargs)

        positional = [p for p in kept if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        keyword = [p.replace(kind=p.KEYWORD_ONLY) for p in kept if p not in positional]
        wrapper.__signature__ = own.replace(parameters=[*positional, *generated, *keyword])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in wrapper.__signature__.parameters.values()}  # type: ignore[attr-defined]
        return wrapper

    return decorate


def literal_values(annotation: Any) -> tuple[str, ...]:
    """The values of a `Literal` annotation (for messages)."""
    return tuple(str(a) for a in get_args(annotation)) if get_origin(annotation) is Literal else ()


M = TypeVar("M", bound=BaseModel)


def options_from(model: type[M], flags: FlagValues, data: dict[str, Any] | None = None) -> M:
    """`model` validated from `data` (empty by default) with the flags given written over it; a value
    refused names the flag that set it (a `UserError`, exit 2)."""
    from pydantic import ValidationError

    from mathlens.errors import UserError

    values = dict(data or {})
    flags.apply(values)
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        refused = refused_flag(model, flags, first)
        if refused:
            raise UserError(refused) from None
        where = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")  # a validator's own message reads alone
        raise UserError(f"{where}: {message}" if where else message) from None
