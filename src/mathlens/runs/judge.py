"""Which model judges a run: one rule for every command that asks a judge.

`mathlens grade`, `mathlens maple` and `mathlens tutor score` all resolve their judge here: the
`--judge` flag if given (with its `-J` options), else the judge recorded when the run was made
(`mathlens run ... --judge MODEL`, kept in the manifest with its options, to which `-J` options are
added), else a clear error saying how to name one. A judge is never chosen silently: the model
being evaluated grading itself is a choice the user makes by naming it.
"""

from __future__ import annotations

from typing import Any

from mathlens.errors import UserError
from mathlens.runs.records import Manifest, ModelEntry

NO_JUDGE = ("no judge model for run {run}: pass --judge MODEL (for example --judge ollama/qwen2.5:7b, or "
            "--judge embedded for the small model shipped with mathlens), or record one when making the run "
            "(mathlens run ... --judge MODEL)")


def judged_command(command: str, manifest: Manifest) -> str:
    """`command` as a hint names it: with `--judge MODEL` when the run records no judge, since the
    command would otherwise stop at once asking for one."""
    return command if manifest.judge is not None else f"{command} --judge MODEL"


def resolve_judge(manifest: Manifest, spec: str | None, options: dict[str, Any] | None = None) -> ModelEntry:
    """The judge for a command on the run of `manifest` (see the module notes)."""
    if spec:
        return ModelEntry(spec=spec, options=dict(options or {}))
    if manifest.judge is not None:
        return ModelEntry(spec=manifest.judge.spec, options={**manifest.judge.options, **(options or {})})
    raise UserError(NO_JUDGE.format(run=manifest.run_id))
