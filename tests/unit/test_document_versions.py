"""Stored documents of earlier versions: refused by name, or still read.

* Every analysis document whose schema version was bumped: a file of the version before is refused
  with `DocumentVersionError` naming the file, the version found, the version read and the command
  that rewrites it; the report notes it and goes on. So is a version this mathlens does not know yet,
  and the unversioned layout of older releases (`analysis/<name>.json`).
* Fields added without a bump are optional: a document written before them (they are stripped from
  a real run's files here) still reads, and the report still renders it.
* The record-count cache of an older layout is rebuilt, not trusted.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from mathlens.api import DOCUMENTS, document_spec
from mathlens.report import make_report
from mathlens.runs.documents import DocumentSpec, DocumentVersionError
from support import report_run as fx

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "mathlens"


def _declared_versions() -> dict[str, object]:
    """Every `DocumentSpec("name", VERSION, ...)` declared in the package: name -> the version as written."""
    found: dict[str, object] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "DocumentSpec"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                version = node.args[1] if len(node.args) > 1 else None
                found[str(node.args[0].value)] = version.value if isinstance(version, ast.Constant) else version
    return found


def _specs_in_source() -> set[str]:
    """Names of every `DocumentSpec("name", ...)` declared in the package."""
    return set(_declared_versions())


#: documents that are not a run's analyses (`mathlens compare --out DIR` writes a comparison's)
NOT_A_RUNS = {"compare"}


def test_every_document_is_registered() -> None:
    assert _specs_in_source() == set(DOCUMENTS) | NOT_A_RUNS


def _read_by_report() -> set[str]:
    from mathlens.report.registry import load_sections

    return {name for section in load_sections() for name in section.analyses}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run with every document: flow, answers, sensitivity, breakdown from the analyzers,
    the judge-based ones from the report fixtures."""
    out = fx.make_run(tmp_path_factory.mktemp("versions") / "run", [fx.SOLUTION, fx.WRONG], ablate=True)
    fx.add_judged_analyses(out)
    return out


def _with_version(spec: DocumentSpec[Any, Any], root: Path, version: int) -> Path:
    """The run's document of `spec` with its envelope saying `version` (an envelope alone when the
    fixture run has no such document: versions are checked before anything else is read)."""
    path = spec.path(root)
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        envelope, rest = json.loads(lines[0]), lines[1:]
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        envelope, rest = {"format": "mathlens.analysis", "analysis": spec.name, "run_id": "r",
                          "records_sha256": "0" * 64}, []
    envelope["schema_version"] = version
    path.write_text(json.dumps(envelope) + "\n" + "".join(rest), encoding="utf-8")
    return path


def _spec(name: str) -> DocumentSpec[Any, Any]:
    return document_spec(name)


def _copy_run(run: Path, tmp: Path) -> Path:
    import shutil

    shutil.copytree(run, tmp / "run")
    return tmp / "run"


def test_every_version_history_is_covered_by_the_refusal_cases() -> None:
    # the version cases below run over the registered documents: a bumped document declared
    # elsewhere (as `compare` is) would have no case; the versions are read from the source as written
    declared = _declared_versions()
    assert all(isinstance(v, int) for v in declared.values()), declared
    bumped = {name for name, version in declared.items() if isinstance(version, int) and version > 1}
    assert bumped <= set(DOCUMENTS), bumped - set(DOCUMENTS)


@pytest.mark.parametrize("name", sorted(n for n in DOCUMENTS if document_spec(n).version > 1))
def test_a_bumped_document_of_the_version_before_is_refused_by_name(name: str, run: Path, tmp_path: Path) -> None:
    spec = _spec(name)
    copy = _copy_run(run, tmp_path)
    path = _with_version(spec, copy, spec.version - 1)
    with pytest.raises(DocumentVersionError) as caught:
        spec.read(copy)
    message = str(caught.value)
    assert str(path) in message and f"schema version {spec.version - 1}" in message
    assert f"{name!r} schema version {spec.version}" in message and spec.rerun in message
    report = make_report([copy])  # the report goes on without it, and says so when it reads it
    if name in _read_by_report():
        assert any(name in n and f"schema version {spec.version}" in n for n in report.notes), report.notes


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_newer_or_unversioned_document_is_refused_by_name(name: str, run: Path, tmp_path: Path) -> None:
    spec = _spec(name)
    copy = _copy_run(run, tmp_path)
    path = _with_version(spec, copy, spec.version + 1)
    with pytest.raises(DocumentVersionError, match=f"schema version {spec.version + 1}"):
        spec.read(copy)
    path.unlink()
    spec.legacy_path(copy).write_text("{}", encoding="utf-8")
    with pytest.raises(DocumentVersionError, match="unversioned layout") as caught:
        spec.read(copy)
    assert str(spec.legacy_path(copy)) in str(caught.value) and spec.rerun in str(caught.value)


def test_a_comparison_document_of_another_version_or_layout_is_refused_by_name(tmp_path: Path) -> None:
    """`mathlens compare --out DIR` writes a document outside any run: the same refusals hold."""
    from mathlens.analyze.compare.models import COMPARE

    for version in (COMPARE.version + 1, COMPARE.version - 1):
        path = _with_version(COMPARE, tmp_path, version)
        with pytest.raises(DocumentVersionError) as caught:
            COMPARE.read(tmp_path)
        message = str(caught.value)
        assert str(path) in message and f"schema version {version}" in message and COMPARE.rerun in message
        path.unlink()
    COMPARE.legacy_path(tmp_path).write_text("{}", encoding="utf-8")
    with pytest.raises(DocumentVersionError, match="unversioned layout") as caught:
        COMPARE.read(tmp_path)
    assert str(COMPARE.legacy_path(tmp_path)) in str(caught.value)


#: fields added to stored models without a version bump: (document, where in it, field)
ADDED = [
    ("flow", "summary.exams[]", "steps_ci"),
    ("flow", "summary.exams[]", "complexity_ci"),
    ("flow", "summary.exams[]", "sd_steps"),
    ("sensitivity", "entries[].details[]", "impact"),
    ("grades", "summary", "by_grader"),
    ("flow", "envelope", "records"),
    ("flow", "envelope", "records_bytes"),
]


def _strip(value: Any, where: list[str], field: str) -> int:
    """Remove `field` at `where` (keys, `[]` for every element of a list); how many were removed."""
    if not where:
        if isinstance(value, dict) and field in value:
            del value[field]
            return 1
        return 0
    head, rest = where[0], where[1:]
    if head.endswith("[]"):
        items = value.get(head[:-2]) if isinstance(value, dict) else None
        return sum(_strip(item, rest, field) for item in items or [])
    return _strip(value.get(head), rest, field) if isinstance(value, dict) else 0


@pytest.mark.parametrize(("name", "where", "field"), ADDED, ids=[f"{n}:{f}" for n, _, f in ADDED])
def test_a_document_written_before_an_added_field_still_reads(name: str, where: str, field: str, run: Path,
                                                               tmp_path: Path) -> None:
    spec = _spec(name)
    copy = _copy_run(run, tmp_path)
    path = spec.path(copy)
    lines = path.read_text(encoding="utf-8").splitlines()
    envelope, entries = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    part, *rest = where.split(".")
    if part == "envelope":
        removed = _strip(envelope, [], field)
    elif part == "summary":
        removed = _strip(envelope["summary"], rest, field)
    else:
        removed = sum(_strip(e, rest, field) for e in entries)
    assert removed, f"the fixture run's {name} document has no {where}.{field} to strip"
    path.write_text("".join(json.dumps(x) + "\n" for x in [envelope, *entries]), encoding="utf-8")
    assert spec.read(copy) is not None
    assert len(list(spec.entries(copy))) == len(entries)
    report = make_report([copy])
    assert not any(name in n and "skipped" in n for n in report.notes), report.notes


def test_a_record_count_cache_of_an_older_layout_is_rebuilt(run: Path, tmp_path: Path) -> None:
    from mathlens.runs.counts import CACHE_NAME, count_records

    copy = _copy_run(run, tmp_path)
    want = count_records(copy)  # writes the cache for this copy of the records file
    cache = copy / CACHE_NAME
    doc = json.loads(cache.read_text(encoding="utf-8"))
    doc["counts"]["errors_total"] = want.errors_total + 7  # a count no record supports
    cache.write_text(json.dumps(doc), encoding="utf-8")
    assert count_records(copy).errors_total == want.errors_total + 7  # the cache is read when current
    doc["version"] -= 1
    cache.write_text(json.dumps(doc), encoding="utf-8")
    assert count_records(copy) == want
