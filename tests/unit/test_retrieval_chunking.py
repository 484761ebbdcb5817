"""Chunking, paragraph segments and topic-keyword filtering, from tests/cases/retrieval/chunking.yaml."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.errors import UnknownNameError, UserError
from mathlens.solve.retrieval.chunking import ChunkSettings, chunk_document, segments, windows
from mathlens.solve.retrieval.documents import Document, load_document, load_sources
from mathlens.solve.retrieval.topics import detect_topics, matches_topics

CASES = yaml.safe_load((Path(__file__).parents[1] / "cases" / "retrieval" / "chunking.yaml").read_text())
CORPUS = Path(__file__).parents[1] / "cases" / "retrieval" / "corpus"


def _spans(text: str, pieces: list[str]) -> list[tuple[int, int]]:
    """Offsets of each expected piece, searched left to right (overlapping pieces may repeat text)."""
    out, pos = [], 0
    for p in pieces:
        i = text.index(p, pos)
        out.append((i, i + len(p)))
        pos = i + 1
    return out


@pytest.mark.parametrize("name", sorted(CASES["windows"]))
def test_windows(name: str) -> None:
    c = CASES["windows"][name]
    got = windows(c["text"], 0, len(c["text"]), c["size"], c["overlap"])
    assert [c["text"][s:e] for s, e in got] == c["pieces"]
    assert got == _spans(c["text"], c["pieces"])
    assert all(e - s <= c["size"] for s, e in got)


@pytest.mark.parametrize("name", sorted(CASES["segments"]))
def test_segments(name: str) -> None:
    c = CASES["segments"][name]
    assert segments(c["text"]) == _spans(c["text"], c["pieces"])


@pytest.mark.parametrize("case", CASES["topic_filter"]["cases"], ids=lambda c: "+".join(c["topics"]))
def test_topic_filter_keeps_matching_segments(case: dict[str, Any]) -> None:
    text = CASES["topic_filter"]["document"]
    doc = Document(id="handout", source="handout.md", title="Course handout", text=text)
    chunks = chunk_document(doc, ChunkSettings(size=400, overlap=50, topics=tuple(case["topics"])))
    assert [c.text for c in chunks] == case["chunks"]
    for i, c in enumerate(chunks):
        assert c.id == f"handout#{i}"
        assert text[c.start:c.end].strip() == c.text  # offsets point back into the source


def test_no_filter_keeps_everything_in_one_chunk() -> None:
    text = CASES["topic_filter"]["document"]
    doc = Document(id="h", source="h.md", title="t", text=text)
    [chunk] = chunk_document(doc, ChunkSettings(size=1000, overlap=100))
    assert chunk.text == text.strip()


def test_long_document_chunks_overlap_and_cover_it() -> None:
    words = [f"w{i}" for i in range(400)]
    text = " ".join(words)
    doc = Document(id="long", source="long.txt", title="long", text=text)
    chunks = chunk_document(doc, ChunkSettings(size=120, overlap=30))
    assert len(chunks) > 10
    covered = set()
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end  # consecutive windows overlap
        assert b.start > a.start
    for c in chunks:
        covered.update(c.text.split())
        assert c.text.split()[0] in words  # no window opens mid-word
    assert covered == set(words)


@pytest.mark.parametrize("case", CASES["keywords"], ids=lambda c: c["text"][:30])
def test_detect_topics(case: dict[str, Any]) -> None:
    assert list(detect_topics(case["text"])) == case["topics"]


def test_unknown_topic_is_a_user_error_with_suggestion() -> None:
    with pytest.raises(UnknownNameError, match="derivatives"):
        matches_topics("x", ["derivative"])
    with pytest.raises(UserError):
        ChunkSettings(topics=("integral",))


@pytest.mark.parametrize(("size", "overlap"), [(10, 0), (200, 200), (200, -1)])
def test_bad_chunk_settings(size: int, overlap: int) -> None:
    with pytest.raises(UserError):
        ChunkSettings(size=size, overlap=overlap)


def test_load_sources_reads_markdown_and_text_from_a_folder() -> None:
    docs = load_sources([CORPUS])
    assert sorted(d.id for d in docs) == ["derivatives", "integrals", "series"]
    md = next(d for d in docs if d.id == "derivatives")
    assert md.title == "Differentiation handout"
    assert "product rule" in md.text


def test_load_document_rejects_unknown_suffix(tmp_path: Path) -> None:
    bad = tmp_path / "notes.docx"
    bad.write_bytes(b"PK")
    with pytest.raises(UserError, match="cannot ingest"):
        load_document(bad)


def _tiny_pdf(text: str) -> bytes:
    """A one-page PDF with one line of Helvetica text, assembled by hand with a correct xref."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_pdf_text_is_extracted(tmp_path: Path) -> None:
    pdf = tmp_path / "Lecture 3.pdf"
    pdf.write_bytes(_tiny_pdf("The derivative of sin x is cos x"))
    doc = load_document(pdf)
    assert doc.id == "lecture-3"
    assert "derivative of sin x is cos x" in doc.text
    assert detect_topics(doc.text) == ("derivatives",)
