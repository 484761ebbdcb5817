"""Command-line options declared on the pydantic models they fill, so a field is declared once.

A field that a command also takes as an option carries a `Flag` in its annotation::

    class Generation(BaseModel):
        max_tokens: Annotated[int, Flag("--max-tokens"), Field(ge=1, description="token cap per response")] = 512

`flag_fields(Model)` walks a model (and the models its fields hold, lists of models included) and
returns one `FlagField` per flagged field, with its path (`generation.max_tokens`,
`items.*.limit` for a field of every element of a list); `mathlens.cli.options` turns them into
the command's options (type, help and choices from the field) and writes the values given back
into the data before the model validates it, so the model's own checks (ranges, choices, unknown
keys) judge a flag and a file alike.

How a value is written (`FlagField.apply`):

- a plain field: set (in every element, for a field under a list: `--limit 2` limits each item set);
- `merge=True` on a `dict` field: `KEY=VALUE` pairs merged into it (`-M threads=2`);
- `each=True` on a field of a list's elements: one element per value given (`--model a --model b`
  makes two model entries, keeping the other fields of the first);
- `split=True` on a list field: comma-separated values are split (`--config baseline,rag`).

This module is a shared helper below every layer (like `errors.py`): models anywhere may use it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class Flag:
    """Marks a model field as a command-line option (see the module notes)."""

    names: tuple[str, ...]
    #: help text; the field's description when None
    help: str | None = None
    merge: bool = False
    each: bool = False
    split: bool = False
    #: the option's placeholder in help (e.g. ``KEY=VALUE``); derived from the type when None
    metavar: str | None = None
    #: a switch that sets a true-by-default field to false (`--no-reflect`)
    invert: bool = False

    def __init__(self, *names: str, help: str | None = None, merge: bool = False, each: bool = False,
                 split: bool = False, metavar: str | None = None, invert: bool = False) -> None:
        if not names or not all(n.startswith("-") for n in names):
            raise ValueError(f"a Flag needs option names starting with '-', not {names!r}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "help", help)
        object.__setattr__(self, "merge", merge)
        object.__setattr__(self, "each", each)
        object.__setattr__(self, "split", split)
        object.__setattr__(self, "metavar", metavar)
        object.__setattr__(self, "invert", invert)


@dataclass(frozen=True)
class FlagField:
    """One flagged field of a model: where it is, what it takes, how it is written."""

    flag: Flag
    path: tuple[str, ...]
    field: FieldInfo
    #: the field's type without `None` (and the element type of a list field)
    kind: Any
    #: the option repeats (a list field, or one element per value)
    many: bool
    optional: bool

    @property
    def name(self) -> str:
        """The option's long name (`--max-tokens`; the first of a pair `--with-x/--without-x`)."""
        return next((n for n in self.flag.names if n.startswith("--")), self.flag.names[0]).split("/")[0]

    @property
    def dest(self) -> str:
        """A Python identifier for the option (the path joined by underscores)."""
        return "_".join(p for p in self.path if p != "*")

    @property
    def help(self) -> str:
        """The option's help: the flag's own, else the field's description, with the default."""
        text = self.flag.help or self.field.description or ""
        if self.field.is_required():
            return text
        default = self.field.get_default(call_default_factory=True)
        if isinstance(default, list | tuple):
            default = ",".join(str(d) for d in default)
        if self.flag.invert or "/" in self.flag.names[0]:
            return text
        if default not in (None, "", {}, False) and not isinstance(default, BaseModel):
            text += f" (default {default})"
        return text

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The values a `Literal` field allows."""
        if get_origin(self.kind) is Literal:
            return tuple(str(a) for a in get_args(self.kind))
        return None

    def apply(self, data: dict[str, Any], value: Any) -> None:
        """Write `value` (as the command line gave it) into `data` at this field's path."""
        if self.flag.split and isinstance(value, list):
            value = [v.strip() for item in value for v in str(item).split(",") if v.strip()]
        _write(data, self.path, value, self)


def _write(data: dict[str, Any], path: tuple[str, ...], value: Any, ff: FlagField) -> None:
    head, rest = path[0], path[1:]
    if rest and rest[0] == "*":
        elements = data.get(head)
        if not isinstance(elements, list) or not elements:
            elements = [{}]
        if ff.flag.each and len(rest) == 2:  # one element per value, the others' fields taken from the first
            first = elements[0] if isinstance(elements[0], dict) else {}
            data[head] = [{**first, rest[1]: v} for v in value]
            return
        for element in elements:
            if isinstance(element, dict):
                _write(element, rest[1:], value, ff)
        data[head] = elements
        return
    if rest:
        child = data.get(head)
        if not isinstance(child, dict):
            child = {}
        _write(child, rest, value, ff)
        data[head] = child
        return
    if ff.flag.merge and isinstance(value, dict):
        old = data.get(head)
        data[head] = {**(old if isinstance(old, dict) else {}), **value}
    else:
        data[head] = value


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(annotation without None, whether None was allowed)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        optional = len(args) < len(get_args(annotation))
        return (args[0] if len(args) == 1 else Union[tuple(args)]), optional  # noqa: UP007
    return annotation, False


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model a field holds (one, or a list of them), and whether it is a list."""
    inner, _ = _unwrap(annotation)
    if get_origin(inner) is list:
        (element,) = get_args(inner) or (Any,)
        element, _ = _unwrap(element)
        if isinstance(element, type) and issubclass(element, BaseModel):
            return element, True
        return None, False
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return inner, False
    return None, False


def flag_fields(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[FlagField]:
    """Every flagged field of `model` and of the models it holds, in declaration order."""
    out: list[FlagField] = []
    hints = typing.get_type_hints(model, include_extras=False)
    for name, info in model.model_fields.items():
        annotation = hints.get(name, info.annotation)
        flags = [m for m in info.metadata if isinstance(m, Flag)]
        if flags:
            inner, optional = _unwrap(annotation)
            many = get_origin(inner) in (list, tuple)  # a list, or a tuple of any length (`tuple[str, ...]`)
            kind = (get_args(inner) or (str,))[0] if many else inner
            kind, _ = _unwrap(kind)
            out.append(FlagField(flags[0], (*prefix, name), info, kind, many or flags[0].each, optional))
        sub, is_list = _model_of(annotation)
        if sub is not None:
            out.extend(flag_fields(sub, (*prefix, name, "*") if is_list else (*prefix, name)))
    return out


def iter_flag_names(model: type[BaseModel]) -> Iterator[str]:
    """Every option name the model's flags declare (to check two flags never share one)."""
    for ff in flag_fields(model):
        yield from ff.flag.names


@dataclass(frozen=True)
class FlagValues:
    """The flags given on one command line, with the fields they write."""

    given: tuple[tuple[FlagField, Any], ...] = ()

    def apply(self, data: dict[str, Any]) -> None:
        """Write every flag given into `data` (a model's data, before it is validated)."""
        for ff, value in self.given:
            ff.apply(data, value)

    def owner(self, loc: tuple[Any, ...]) -> str | None:
        """The option that wrote the value at validation-error location `loc`, if a flag did."""
        for ff, _ in self.given:
            path = ff.path
            if len(loc) >= len(path) and all((p == "*" and isinstance(x, int)) or p == x
                                             for p, x in zip(path, loc, strict=False)):
                return ff.name
        return None


#: the largest seed any command takes (a 32-bit signed value: every backend and NumPy accept it)
MAX_SEED = 2**31 - 1
#: the most bootstrap resamples any command draws
MAX_RESAMPLES = 100_000
#: the most tokens any request may ask for
MAX_TOKENS = 1_000_000

#: pydantic error types that mean "the number given is outside what the field allows"
RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"})


def _number(x: Any) -> str:
    """`1000` -> `1,000`; `0.5` -> `0.5`; `1e-4` -> `0.0001`."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    if isinstance(x, int) or (x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    return f"{x:f}".rstrip("0").rstrip(".") if abs(x) >= 1e-6 else f"{x:g}"


def describe_range(ge: Any = None, gt: Any = None, le: Any = None, lt: Any = None) -> str | None:
    """The values a number may take, in words (`from 1 to 1,000`, `greater than 0 and at most 86,400`),
    or None when nothing bounds it."""
    low = f"at least {_number(ge)}" if ge is not None else f"greater than {_number(gt)}" if gt is not None else None
    high = f"at most {_number(le)}" if le is not None else f"less than {_number(lt)}" if lt is not None else None
    if ge is not None and le is not None:
        return f"from {_number(ge)} to {_number(le)}"
    if low and high:
        return f"{low} and {high}"
    return low or high


def field_range(field: FieldInfo) -> str | None:
    """The range a pydantic field declares (`Field(ge=1, le=1000)`), in words; None when unbounded."""
    bounds: dict[str, Any] = {}
    for m in field.metadata:
        for key in ("ge", "gt", "le", "lt"):
            value = getattr(m, key, None)
            if value is not None:
                bounds[key] = value
    return describe_range(**bounds) if bounds else None


def field_at(model: type[BaseModel], loc: tuple[Any, ...]) -> FieldInfo | None:
    """The field of `model` at validation-error location `loc` (through nested models and lists)."""
    current: Any = model
    info: FieldInfo | None = None
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        info = current.model_fields[part]
        current, _ = _model_of(info.annotation)
    return info


def refused_flag(model: type[BaseModel], flags: FlagValues, error: Any, prefix: tuple[Any, ...] = ()) -> str | None:
    """The message for a validation error (one item of `ValidationError.errors()`, located in `model`
    under `prefix`) on a value a flag set: the flag and pydantic's words, or, for a number out of
    range, the flag, the number and the whole range allowed (`--runs 0: out of range (allowed: from 1
    to 1,000)`). None when no flag set the value."""
    loc = (*prefix, *error["loc"])
    flag = flags.owner(loc)
    if flag is None:
        return None
    field = field_at(model, tuple(error["loc"])) if error["type"] in RANGE_ERRORS else None
    allowed = field_range(field) if field is not None else None
    if allowed:
        problem = "not a finite number" if error["type"] == "finite_number" else "out of range"
        return f"{flag} {error.get('input')}: {problem} (allowed: {allowed})"
    message = str(error["msg"]).removeprefix("Value error, ")  # a validator's own message reads alone
    return message if message.startswith(flag + " ") else f"{flag}: {message}"
