"""Analysis documents: envelope, streamed entries, offsets, and the refusal of other layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from mathlens import __version__
from mathlens.runs.documents import (
    DocumentError,
    DocumentSpec,
    DocumentVersionError,
    RecordRef,
    read_envelope,
    records_digest,
)


class Entry(BaseModel):
    record: RecordRef
    score: float


class Summary(BaseModel):
    mean: float | None = None
    n: int = 0


SPEC = DocumentSpec("toy", 2, Entry, Summary, rerun="mathlens toy RUN")


def _ref(i: int, configuration: str = "baseline") -> RecordRef:
    return RecordRef(key=f"k{i}", model="mock/m", configuration=configuration, exam_id="e", question_id=f"q{i}")


def _write(root: Path, n: int = 3) -> Path:
    seen: list[float] = []

    def entries():  # type: ignore[no-untyped-def]
        for i in range(n):
            seen.append(float(i))
            yield Entry(record=_ref(i), score=float(i))

    return SPEC.write(root, run_id="r1", records_sha256="abc", entries=entries(),
                      summary=lambda: Summary(mean=sum(seen) / len(seen) if seen else None, n=len(seen)),
                      options={"threshold": 0.5})


def test_round_trip_with_envelope_and_summary_computed_after_the_stream(tmp_path: Path) -> None:
    path = _write(tmp_path)
    assert path == tmp_path / "analysis" / "toy.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4  # envelope + three entries, one per line
    doc = SPEC.read(tmp_path)
    assert doc is not None
    env = doc.envelope
    assert (env.analysis, env.schema_version, env.mathlens_version, env.run_id, env.records_sha256) == \
        ("toy", 2, __version__, "r1", "abc")
    assert env.entries == 3 and doc.options == {"threshold": 0.5}
    assert doc.summary == Summary(mean=1.0, n=3)  # the summary saw every entry before it was written
    assert [e.score for e in SPEC.entries(tmp_path)] == [0.0, 1.0, 2.0]
    assert read_envelope(path).analysis == "toy"


def test_index_fetches_single_entries_by_record_key(tmp_path: Path) -> None:
    _write(tmp_path, 5)
    index = SPEC.index(tmp_path)
    assert set(index) == {f"k{i}" for i in range(5)}
    [offset] = index["k3"]
    assert SPEC.entry_at(tmp_path, offset).score == 3.0


def test_absent_document_reads_as_none_and_no_entries(tmp_path: Path) -> None:
    assert SPEC.read(tmp_path) is None and list(SPEC.entries(tmp_path)) == []
    assert not SPEC.exists(tmp_path)


def test_rewrite_is_atomic_and_replaces_an_older_layout_file(tmp_path: Path) -> None:
    legacy = tmp_path / "analysis" / "toy.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text('{"records": []}', encoding="utf-8")
    _write(tmp_path, 2)
    assert not legacy.exists()
    # no temporary files left; the document's lock file (empty but for the last writer's PID) stays
    assert sorted(p.name for p in (tmp_path / "analysis").iterdir()) == [".toy.lock", "toy.jsonl"]


def test_an_older_unversioned_file_is_refused_with_the_expected_version(tmp_path: Path) -> None:
    legacy = tmp_path / "analysis" / "toy.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text('{"records": [{"key": "k0"}]}', encoding="utf-8")
    with pytest.raises(DocumentVersionError) as err:
        SPEC.read(tmp_path)
    msg = str(err.value)
    assert str(legacy) in msg and "schema version 2" in msg and "mathlens toy RUN" in msg
    with pytest.raises(DocumentVersionError):
        list(SPEC.entries(tmp_path))


def test_another_schema_version_is_refused(tmp_path: Path) -> None:
    _write(tmp_path)
    newer = DocumentSpec("toy", 3, Entry, Summary)
    with pytest.raises(DocumentVersionError, match=r"schema version 2 .*reads 'toy' schema version 3"):
        newer.read(tmp_path)


def test_a_foreign_or_mislabelled_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "analysis" / "toy.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(DocumentVersionError, match="not a mathlens analysis document"):
        SPEC.read(tmp_path)
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(DocumentError, match="line 1 is not JSON"):
        SPEC.read(tmp_path)
    _write(tmp_path)
    other = DocumentSpec("other", 2, Entry, Summary)
    (tmp_path / "analysis" / "toy.jsonl").rename(other.path(tmp_path))
    with pytest.raises(DocumentError, match="holds analysis 'toy', expected 'other'"):
        other.read(tmp_path)


def test_a_damaged_entry_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[2])
    bad["score"] = "high"
    lines[2] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    entries = SPEC.entries(tmp_path)
    assert next(entries).score == 0.0  # entries before the damage are read
    with pytest.raises(DocumentError) as err:
        next(entries)
    assert f"{path}: line 3: field score" in str(err.value)


def test_writing_the_wrong_entry_type_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not Entry"):
        SPEC.write(tmp_path, run_id="r", records_sha256="", entries=[Summary()],  # type: ignore[list-item]
                   summary=Summary())
    assert not SPEC.path(tmp_path).exists()


def test_records_digest_tracks_the_records_file(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    assert records_digest(path) == ""
    path.write_text('{"a": 1}\n', encoding="utf-8")
    first = records_digest(path)
    path.write_text('{"a": 1}\n{"a": 2}\n', encoding="utf-8")
    assert len(first) == 64 and records_digest(path) != first


def test_record_ref_groups_by_configuration_and_variant() -> None:
    a = _ref(1)
    b = RecordRef(key="k2", model="mock/m", configuration="rag", exam_id="e", question_id="q1",
                  variant="coordinate-1", variant_kind="ablation")
    assert a.original and not b.original
    assert a.group == ("mock/m", "baseline", "original") and b.group == ("mock/m", "rag", "coordinate-1")
