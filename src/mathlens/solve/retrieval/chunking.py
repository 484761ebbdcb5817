"""Cut documents into overlapping chunks, keeping only the segments that match the chosen topics.

Free text is split into segments at blank lines (paragraphs, and page breaks for PDFs). With a topic
selection, segments that mention none of the topics are dropped (seed 000 §4.4.1 filtered textbook
segments by topic keywords); each run of consecutive kept segments is then cut into windows of about
`size` characters that overlap by `overlap` characters, with cuts moved back to a whitespace so that
no word is split. Chunk ids are `<document id>#<index>` and every chunk keeps its character offsets
in the document, so a retrieved chunk can be found in its source.

Documents that arrive pre-cut (built-in notes) keep their passages as chunks, filtered by the
passage's own topic tags or keywords. Chunks cut from free text are tagged with the topics their
keywords mark (`topics.detect_topics`), so that retrieval can filter by a question's topics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from mathlens.errors import UserError
from mathlens.solve.retrieval.documents import Document
from mathlens.solve.retrieval.topics import check_topics, detect_topics, matches_topics

_BLANK_LINES = re.compile(r"\n[ \t]*\n+")


@dataclass(frozen=True)
class ChunkSettings:
    """Window size and overlap in characters, and the topic filter (empty keeps everything)."""

    size: int = 1200
    overlap: int = 200
    topics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.size < 50:
            raise UserError(f"chunk size must be at least 50 characters, not {self.size}")
        if not 0 <= self.overlap < self.size:
            raise UserError(f"overlap must be between 0 and the chunk size - 1, not {self.overlap}")
        check_topics(self.topics)


class Chunk(BaseModel):
    """A piece of a document, the unit that is embedded, indexed and retrieved (a knowledge base
    stores it with its context as a `store.ChunkRecord`)."""

    model_config = ConfigDict(frozen=True)

    id: str
    doc_id: str
    source: str
    index: int
    start: int
    end: int
    title: str = ""
    topics: tuple[str, ...] = ()
    text: str


def segments(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank paragraph of `text`.

    >>> segments("a b\\n\\n c\\n")
    [(0, 3), (6, 7)]
    """
    out: list[tuple[int, int]] = []
    pos = 0
    for m in [*_BLANK_LINES.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        piece = text[pos:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((pos + lead, pos + len(piece.rstrip())))
        if m is not None:
            pos = m.end()
    return out


def windows(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Overlapping windows over `text[start:end]`, cut at whitespace where one is near.

    Each window is at most `size` characters; the next starts `overlap` characters before the
    previous ended (moved forward to a word start), so consecutive windows share about `overlap`.
    """
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        stop = min(pos + size, end)
        if stop < end:
            cut = text.rfind(" ", pos + size // 2, stop)
            cut = max(cut, text.rfind("\n", pos + size // 2, stop))
            if cut > pos:
                stop = cut
        out.append((pos, stop))
        if stop >= end:
            break
        nxt = max(stop - overlap, pos + 1)
        # Start the next window on a word boundary so that no chunk opens mid-word.
        while nxt < stop and not text[nxt - 1].isspace():
            nxt += 1
        pos = nxt if nxt < stop else stop
        while pos < end and text[pos].isspace():
            pos += 1
    return out


def _kept_runs(doc: Document, topics: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans made of consecutive segments that match the topic filter."""
    runs: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for s, e in segments(doc.text):
        if matches_topics(doc.text[s:e], topics):
            current = (current[0], e) if current is not None else (s, e)
        elif current is not None:
            runs.append(current)
            current = None
    if current is not None:
        runs.append(current)
    return runs


def chunk_document(doc: Document, settings: ChunkSettings) -> list[Chunk]:
    """The chunks of one document under `settings` (see the module docstring)."""
    if doc.passages:
        chunks = []
        for i, p in enumerate(doc.passages):
            text = doc.text[p.start:p.end].strip()
            if settings.topics and not (set(p.topics) & set(settings.topics)) \
                    and not matches_topics(text, settings.topics):
                continue
            chunks.append(Chunk(id=p.id, doc_id=doc.id, source=doc.source, index=i, start=p.start,
                                end=p.end, text=text, title=p.title, topics=p.topics))
        return chunks
    out: list[Chunk] = []
    for run_start, run_end in _kept_runs(doc, settings.topics):
        for s, e in windows(doc.text, run_start, run_end, settings.size, settings.overlap):
            text = doc.text[s:e].strip()
            if not text:
                continue
            # Free text has no topic tags: the chunk's keywords give them, for the query-time filter.
            out.append(Chunk(id=f"{doc.id}#{len(out)}", doc_id=doc.id, source=doc.source, index=len(out),
                             start=s, end=e, text=text, title=doc.title, topics=detect_topics(text)))
    return out


def chunk_documents(docs: list[Document], settings: ChunkSettings) -> list[Chunk]:
    """Chunks of every document, in document order; chunk ids are unique across documents."""
    chunks = [c for d in docs for c in chunk_document(d, settings)]
    ids = [c.id for c in chunks]
    if len(ids) != len(set(ids)):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise UserError(f"two chunks share an id (note ids must be unique across files): {dup}")
    return chunks
