"""From a validated study to what a run records: item sources, generation, configurations, ablation.

Paths in a study file (item files, a system-role file) are read relative to the file's folder, so
a study and its items can move together; built-in names (exams, roles) are left as they are.
The resolved study (paths made absolute, every default filled in) is what `mathlens run` saves in
the run directory as `study.yaml` and names in the manifest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mathlens.items.loaders import builtin_exams
from mathlens.models.base import GenerateConfig
from mathlens.runs.records import ItemSource
from mathlens.solve.prompts import DEFAULT_STOP, SYSTEM_ROLES
from mathlens.study.model import Study

#: the file in a run directory that holds the study it ran
STUDY_FILE = "study.yaml"


def _local(value: str, base: Path | None) -> str:
    """`value` as a path relative to `base` when it names a file there (else unchanged)."""
    if base is None or Path(value).is_absolute():
        return value
    candidate = base / value
    return str(candidate) if candidate.exists() else value


def resolved(study: Study, base: Path | None) -> Study:
    """`study` with its item and role files made absolute against `base` (the study file's folder)."""
    names = set(builtin_exams())
    items = [s if s.source in names else s.model_copy(update={"source": _local(s.source, base)})
             for s in study.items]
    role = study.role
    if role is not None and role not in SYSTEM_ROLES:
        role = _local(role, base)
    return study.model_copy(update={"items": items, "role": role})


def item_sources(study: Study) -> list[ItemSource]:
    """The run's item sources (sampling seeded with the generation seed, as before studies)."""
    return [ItemSource(source=s.source, format=s.format, mapping=s.fields, limit=s.limit, sample=s.sample,
                       seed=study.generation.seed) for s in study.items]


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
