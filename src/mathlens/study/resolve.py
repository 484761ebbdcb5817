"""From a validated study to what a run records: item sources, generation, configurations, ablation.

Paths in a study file (item files, a system-role file, a learner-profile file) are read relative
to the file's folder, so a study and its items can move together; built-in names (exams, roles,
the `tutoring` items, the `default` and `balanced` profiles) are left as they are. An item file
that is not there is looked for in the working folder, then in each folder of `$MATHLENS_DATA`
(several separated like `PATH`), so a data set downloaded once serves every study naming it; a
built-in study (`study:NAME`) has no folder of its own and starts at the working folder. A study
file's item file found nowhere stops the run before anything is sent, naming the file and how to
point at it (`--items PATH`, or `MATHLENS_DATA`).

The resolved study (paths made absolute, every default filled in) is what `mathlens run` saves in
the run directory as `study.yaml` and names in the manifest.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from mathlens.errors import UserError
from mathlens.items.loaders import builtin_exams
from mathlens.models.base import GenerateConfig
from mathlens.runs.records import ItemSource
from mathlens.solve.prompts import DEFAULT_STOP, SYSTEM_ROLES
from mathlens.solve.tutoring import TutorDesign, condition_label
from mathlens.study.model import Study

#: the file in a run directory that holds the study it ran
STUDY_FILE = "study.yaml"
#: folders (separated by os.pathsep) where relative item files are looked for last
DATA_ENV = "MATHLENS_DATA"
#: the built-in tutoring items, a source name of tutoring studies
TUTORING_ITEMS = "tutoring"


def _local(value: str, base: Path | None) -> str:
    """`value` as a path relative to `base` when it names a file there (else unchanged)."""
    if base is None or Path(value).is_absolute():
        return value
    candidate = base / value
    return str(candidate) if candidate.exists() else value


def data_folders() -> list[Path]:
    """The folders `$MATHLENS_DATA` names, in order (none when it is unset)."""
    return [Path(p).expanduser() for p in os.environ.get(DATA_ENV, "").split(os.pathsep) if p.strip()]


def search_folders(base: Path | None) -> list[Path]:
    """Where a relative item file is looked for: `base` (the study file's folder), the working folder,
    then `$MATHLENS_DATA`'s folders (each once)."""
    out: list[Path] = []
    for folder in [*([base] if base is not None else []), Path.cwd(), *data_folders()]:
        if folder.resolve() not in [f.resolve() for f in out]:
            out.append(folder)
    return out


def find_file(value: str, base: Path | None) -> Path | None:
    """The file `value` names, looked for as `search_folders` says (an absolute path only there)."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path if path.exists() else None
    return next((f / path for f in search_folders(base) if (f / path).exists()), None)


def _missing(value: str, where: str, field: str, base: Path | None) -> UserError:
    folders = ", ".join(str(f) for f in search_folders(base))
    env = "" if data_folders() else f" (${DATA_ENV} is not set)"
    return UserError(f"{where}: field '{field}': no item file {value!r} in {folders}{env}. Point at it with "
                     f"--items PATH, or put its folder in ${DATA_ENV}")


def resolved(study: Study, base: Path | None, where: str | None = None) -> Study:
    """`study` with its item, role and profile files made absolute: looked for beside the study file
    (`base`, its folder; None for a built-in study or the command line), then in the working folder
    and `$MATHLENS_DATA`. `where` names the study file (or `study:NAME`) in the error raised for an
    item file found nowhere; without it (sources given on the command line) a missing file is left
    for the item reader to report."""
    names = set(builtin_exams())
    if study.tutoring is not None:
        names.add(TUTORING_ITEMS)
    items = []
    for i, s in enumerate(study.items):
        if s.source in names:
            items.append(s)
            continue
        found = find_file(s.source, base)
        if found is None and where is not None and ("/" in s.source or Path(s.source).suffix):
            raise _missing(s.source, where, f"items[{i}].source", base)
        items.append(s if found is None else s.model_copy(update={"source": str(found.resolve())}))
    role = study.role
    if role is not None and role not in SYSTEM_ROLES:
        role = _local(role, base)
    tutoring = study.tutoring
    if tutoring is not None and tutoring.profiles != "default" and not tutoring.profiles.startswith("balanced"):
        tutoring = tutoring.model_copy(update={"profiles": _local(tutoring.profiles, base)})
    return study.model_copy(update={"items": items, "role": role, "tutoring": tutoring})


def item_sources(study: Study) -> list[ItemSource]:
    """The run's item sources (sampling seeded with the generation seed, as before studies); in a
    tutoring study `tutoring` is the built-in tutoring items' file, and any other source must be a
    file (a tutoring item's images are read relative to it)."""
    def source(name: str) -> str:
        if study.tutoring is None:
            return name
        # the tutoring package (and its statistics: SciPy, pandas) loads only for a tutoring study
        from mathlens.analyze.adaptivity.design import resolve_items

        return str(resolve_items(name))

    return [ItemSource(source=source(s.source), format=s.format, mapping=s.fields, limit=s.limit, sample=s.sample,
                       seed=study.generation.seed) for s in study.items]


def configurations(study: Study) -> list[str]:
    """The run's configurations: a tutoring study's are its context conditions (`condition-<n>`)."""
    if study.tutoring is not None:
        return [condition_label(c) for c in study.tutoring.conditions]
    return list(study.configurations)


def tutor_design(study: Study, accepts_images: dict[str, bool]) -> TutorDesign | None:
    """The tutoring design a tutoring study's manifest keeps (None for another study): its learners,
    conditions, image mode, the objectives of the learners' grades, and for each model whether it
    reads images (`accepts_images`, from the models as built)."""
    t = study.tutoring
    if t is None:
        return None
    from mathlens.analyze.adaptivity.study import design_for  # SciPy and pandas load for a tutoring study only

    return design_for(t.profiles, t.conditions, t.images, t.match_grade, accepts_images)


def generate_config(study: Study) -> GenerateConfig:
    """The decoding settings of every request."""
    g = study.generation
    return GenerateConfig(temperature=g.temperature, seed=g.seed, max_tokens=g.max_tokens, stop=DEFAULT_STOP)


def configuration_options(study: Study) -> dict[str, Any]:
    """The options of the retrieval configurations, as the manifest keeps them."""
    r = study.retrieval
    out = dict(r.options)
    if r.kb is not None:
        out["kb"] = r.kb
    if r.top_k is not None:
        out["top_k"] = r.top_k
    return out


def ablation_options(study: Study) -> dict[str, Any] | None:
    """The ablation as the manifest keeps it (None: original prompts only)."""
    a = study.ablation
    return None if a is None else {"elements": list(a.elements), "pairs": a.pairs, "paraphrases": a.paraphrases}


def study_text(study: Study) -> str:
    """The study as YAML, every default filled in (what a run directory keeps)."""
    return yaml.safe_dump(study.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def save_study(root: Path, study: Study) -> Path:
    """Write the resolved study into the run directory `root` (`study.yaml`)."""
    path = root / STUDY_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(study_text(study), encoding="utf-8")
    tmp.replace(path)
    return path


def saved_study(root: Path) -> Study | None:
    """The study a run directory keeps (None for a run made before studies, or by `import`)."""
    from mathlens.study.load import study_from

    path = root / STUDY_FILE
    if not path.is_file():
        return None
    from mathlens.items.limits import ITEM_YAML_BYTES
    from mathlens.items.readers import load_yaml, read_text

    data, node = load_yaml(path, read_text(path, ITEM_YAML_BYTES, "study"))
    return study_from(data if isinstance(data, dict) else {}, path, node)
