"""Reading a study file: YAML within the limits of item files, validated, every error located.

A study is named by a path (`study.yaml`) or by a built-in name (`study:NAME`, the files in
`mathlens/study/builtin/`). Errors are `ItemFileError`s naming the file, the line and the field
(exit 2): an unknown key with the keys that were meant ("did you mean"), a value of the wrong
type, a missing required field, an analysis that does not exist or an option it does not take.
"""

from __future__ import annotations

import difflib
import typing
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from mathlens.errors import UnknownNameError, UserError
from mathlens.flags import FlagValues, refused_flag
from mathlens.items.errors import ItemFileError, from_validation, loc_to_field, yaml_line
from mathlens.items.limits import ITEM_YAML_BYTES
from mathlens.items.readers import load_yaml, read_text
from mathlens.study.model import Study

#: `mathlens run study:NAME` names a built-in study
PREFIX = "study:"


def builtin_studies() -> list[str]:
    """The names of the built-in studies (`study:NAME`)."""
    folder = resources.files("mathlens.study") / "builtin"
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))


def study_path(ref: str) -> Path:
    """The file a study reference names: `study:NAME` (built-in) or a path."""
    if ref.startswith(PREFIX):
        name = ref.removeprefix(PREFIX)
        names = builtin_studies()
        if name not in names:
            raise UnknownNameError("built-in study", name, names)
        return Path(str(resources.files("mathlens.study") / "builtin" / f"{name}.yaml"))
    return Path(ref)


def is_study(ref: str) -> bool:
    """True when `ref` names a study: `study:NAME`, or a YAML file whose top level has a `study` or
    an `items` key (an exam file has `questions` instead)."""
    if ref.startswith(PREFIX):
        return True
    path = Path(ref)
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return False
    try:
        head = yaml.compose(read_text(path, ITEM_YAML_BYTES, "study"))
    except (yaml.YAMLError, UserError, RecursionError):
        return False
    return isinstance(head, yaml.MappingNode) and any(getattr(k, "value", None) in ("study", "items")
                                                      for k, _ in head.value)


def load_study(ref: str, flags: FlagValues | None = None) -> tuple[Study, Path]:
    """The study `ref` names, validated, and its file. `flags` (the command line's) are written into
    the file's data before it is validated, so a flag is judged like the field it sets; a value a
    flag set that is refused names the flag."""
    path = study_path(ref)
    data, node = load_yaml(path, read_text(path, ITEM_YAML_BYTES, "study"))
    if not isinstance(data, dict):
        raise ItemFileError(path, 1, None, "a study file is a mapping with at least 'study' and 'items' "
                                           "(see `mathlens schema study`)")
    return study_from(data, path, node, flags), path


def study_from(data: dict[str, Any], path: Path | str, node: yaml.Node | None = None,
               flags: FlagValues | None = None) -> Study:
    """`data` validated as a study, after `flags` are written into it; errors located in `path`
    (through `node` when it was YAML), or naming the flag that set the value refused."""
    flags = flags or FlagValues()
    flags.apply(data)
    try:
        study = Study.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        refused = refused_flag(Study, flags, first)
        if refused is not None:
            raise UserError(refused) from None
        raise _located(path, exc, node) from None
    check_analyses(study, path, node)
    check_tutoring(study, path, node, flags)
    return study


def _set(study: Study, name: str) -> bool:
    """The study's field `name` holds something other than its default."""
    field = Study.model_fields[name]
    return bool(getattr(study, name) != field.get_default(call_default_factory=True))


#: what a tutoring study cannot also hold, and why
_NOT_WITH_TUTORING = {
    "configurations": "a tutoring study's configurations are its context conditions (tutoring.conditions)",
    "retrieval": "tutoring requests use no retrieval",
    "ablation": "tutoring requests are not ablated",
    "role": "a tutoring request's system prompt is the condition's (none, or the grade's objectives)",
    "exam_mode": "a tutoring study puts each question on its own (per-question)",
}


def check_tutoring(study: Study, path: Path | str, node: yaml.Node | None = None,
                   flags: FlagValues | None = None) -> None:
    """A tutoring study sets none of the fields its design replaces (configurations, retrieval,
    ablation, system role, sequential mode); the one that is set is named, by its flag if a flag set it."""
    if study.tutoring is None:
        return
    for name, why in _NOT_WITH_TUTORING.items():
        if not _set(study, name):
            continue
        flag = (flags or FlagValues()).owner((name,)) or next(
            (ff.name for ff, _ in (flags or FlagValues()).given if ff.path[0] == name), None)
        if flag is not None:
            raise UserError(f"{flag}: not in a tutoring study ({why})")
        raise ItemFileError(path, yaml_line(node, (name,)), name, f"not in a tutoring study ({why}); leave it out")


def check_analyses(study: Study, path: Path | str, node: yaml.Node | None = None) -> None:
    """Every analysis the study names exists and takes the options given."""
    if not study.analyses:
        return  # (the registry imports every analysis: not for a study that names none)
    from mathlens.analyze.registry import ANALYZERS, get_analyzer

    for name, options in study.analyses.items():
        loc: tuple[Any, ...] = ("analyses", name)
        if name not in ANALYZERS:
            raise ItemFileError(path, yaml_line(node, loc), loc_to_field(loc),
                                str(UnknownNameError("analysis", name, ANALYZERS)))
        analyzer = get_analyzer(name)
        for key in options:
            if key not in analyzer.options.model_fields:
                raise ItemFileError(path, yaml_line(node, (*loc, key)), loc_to_field((*loc, key)),
                                    f"unknown option{_did_you_mean(key, analyzer.options.model_fields)}")
        try:
            analyzer.parse_options(options)
        except UserError as exc:
            raise ItemFileError(path, yaml_line(node, loc), loc_to_field(loc), str(exc)) from None
        if analyzer.judge is not None and study.judge is None:
            raise ItemFileError(path, yaml_line(node, loc), loc_to_field(loc),
                                f"needs a judge model ({analyzer.judge}): add 'judge: MODEL' to the study, "
                                "or pass --judge MODEL")


def _located(path: Path | str, exc: ValidationError, node: yaml.Node | None) -> ItemFileError:
    """The first validation error, located; an unknown key also names the keys meant."""
    first = exc.errors()[0]
    if first["type"] != "extra_forbidden":
        return from_validation(path, exc, node=node)
    loc = tuple(first["loc"])
    fields = _fields_at(Study, loc[:-1])
    more = len(exc.errors()) - 1
    rest = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return ItemFileError(path, yaml_line(node, loc), loc_to_field(loc),
                         f"unknown field{_did_you_mean(str(loc[-1]), fields)}{rest}")


def _did_you_mean(key: str, known: typing.Iterable[str]) -> str:
    names = sorted(known)
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"{hint} (known: {', '.join(names)})"


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names of the model found at `loc` inside `model` (list indexes skipped)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            continue
        field = current.model_fields.get(str(part))
        if field is None:
            return []
        current = _model_in(field.annotation)
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def _model_in(annotation: Any) -> Any:
    """The model an annotation holds (`Model`, `list[Model]`, `Model | None`), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        inner = _model_in(arg)
        if inner is not None:
            return inner
    return None


def study_schema() -> dict[str, Any]:
    """The JSON Schema of a study file: the study models', with each analysis's own options under
    `analyses` (so an editor can check them too)."""
    from mathlens.analyze.registry import ANALYZERS, get_analyzer

    schema = Study.model_json_schema()
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    per_analysis: dict[str, Any] = {}
    for name in ANALYZERS:
        options = get_analyzer(name).options.model_json_schema()
        for key, value in options.pop("$defs", {}).items():
            if defs.setdefault(key, value) != value:
                raise RuntimeError(f"two definitions named {key} in the study schema")
        per_analysis[name] = options
    for name in ("ModelRef", "JudgeRef"):  # a model may be written as its spec alone
        defs[name] = {"anyOf": [{"type": "string", "minLength": 1, "description": "provider/model"}, defs[name]]}
    analyses = schema["properties"]["analyses"]
    analyses.update({"type": "object", "properties": per_analysis, "additionalProperties": False})
    return schema
