"""Inspect `.eval` archives read under limits, by the built-in reader and before Inspect's own.

An `.eval` log is a ZIP archive: `header.json`, one `samples/<id>_epoch_<n>.json` per sample,
journal and summary members. Members are stored, deflated or (since 2025) Zstandard-compressed
(method 93), which the standard `zipfile` of Python < 3.14 cannot unpack: the member's bytes are
read here and unpacked with `zstandard`.

An archive is hostile input twice over: its central directory may list millions of members
(each becomes an object when `zipfile` opens it), and a member may unpack to gigabytes from a few
kilobytes, whatever sizes the archive claims. So, before `zipfile` or Inspect touches it:

* `member_count` reads the entry count from the end-of-central-directory record (ZIP64 too) and
  refuses an archive with more than `ARCHIVE_MEMBERS` members;
* `unpack` inflates one member into at most `MEMBER_BYTES` (and what is left of `UNPACKED_BYTES`
  for the whole archive), stopping as soon as the output passes the bound;
* `verify` unpacks every member that way and measures the nesting of each JSON member, so that
  Inspect's reader is handed only an archive the built-in reader would accept.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mathlens.items.jsonread import within_depth
from mathlens.items.limits import ARCHIVE_MEMBERS, MEMBER_BYTES, SOURCE_NESTING, UNPACKED_BYTES
from mathlens.runs.importing.common import SourceError
from mathlens.runs.importing.lines import parse_json

ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_EOCD = struct.Struct("<IHHHHIIH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = struct.Struct("<IIQI")
_ZIP64_LOCATOR_SIGNATURE = 0x07064B50
_ZIP64_EOCD = struct.Struct("<IQHHIIQQQQ")
_ZIP64_EOCD_SIGNATURE = 0x06064B50
_CHUNK = 1 << 20


def member_count(path: Path) -> int:
    """The number of members the archive's end record declares (read without opening it)."""
    with path.open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        tail_len = min(size, _EOCD.size + 65_535)
        fh.seek(size - tail_len)
        tail = fh.read(tail_len)
        at = tail.rfind(_EOCD_SIGNATURE)
        if at < 0 or at + _EOCD.size > len(tail):
            raise SourceError(path, None, None, "not an Inspect .eval archive (no end of central directory; a log "
                                                "cut off while it was written has none)")
        total = _EOCD.unpack_from(tail, at)[4]
        if total != 0xFFFF or at < _ZIP64_LOCATOR.size:
            return int(total)
        sig, _, offset, _ = _ZIP64_LOCATOR.unpack_from(tail, at - _ZIP64_LOCATOR.size)
        if sig != _ZIP64_LOCATOR_SIGNATURE or offset + _ZIP64_EOCD.size > size:
            return int(total)
        fh.seek(offset)
        record = fh.read(_ZIP64_EOCD.size)
        if len(record) < _ZIP64_EOCD.size or _ZIP64_EOCD.unpack(record)[0] != _ZIP64_EOCD_SIGNATURE:
            return int(total)
        return int(_ZIP64_EOCD.unpack(record)[7])


def open_archive(path: Path) -> zipfile.ZipFile:
    """The archive, opened once its member count is within `ARCHIVE_MEMBERS`."""
    count = member_count(path)
    if count > ARCHIVE_MEMBERS.value:
        raise SourceError(path, None, None, "the archive lists " + ARCHIVE_MEMBERS.exceeded(f"{count:,} members"))
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(path, None, None, f"not an Inspect .eval archive ({exc}); a log cut off while it "
                                            "was written has no central directory") from None


class Budget:
    """What is left of `UNPACKED_BYTES` for one archive."""

    def __init__(self) -> None:
        self.left = UNPACKED_BYTES.value


def unpack(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> bytes:
    """A member's bytes within `MEMBER_BYTES` and the archive's remaining `budget`."""
    limit = min(MEMBER_BYTES.value, budget.left)
    which = MEMBER_BYTES if limit == MEMBER_BYTES.value else UNPACKED_BYTES

    def too_big(found: str) -> SourceError:
        what = "unpacks to " if which is MEMBER_BYTES else "unpacks past what is left of the archive's budget: "
        return SourceError(path, info.filename, None, what + which.exceeded(found))

    if info.file_size > limit:
        raise too_big(f"{info.file_size:,} bytes (as the archive says)")
    try:
        if info.compress_type == ZIP_ZSTANDARD:
            data = _unzstd(path, info, _raw_member(path, info), limit)
        elif info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with archive.open(info) as fh:
                data = fh.read(limit + 1)
        else:
            raise SourceError(path, info.filename, None, f"compression method {info.compress_type} is not "
                                                         "supported (stored, deflate and zstd are)")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise SourceError(path, info.filename, None, f"cannot unpack it ({exc})") from None
    if len(data) > limit:
        raise too_big("more bytes than the archive says")
    budget.left -= len(data)
    return data


def member_json(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> dict[str, Any]:
    """A member unpacked and parsed as one JSON object."""
    doc = parse_json(path, info.filename, unpack(path, archive, info, budget))
    if not isinstance(doc, dict):
        raise SourceError(path, info.filename, None, "expected a JSON object")
    return doc


def verify(path: Path) -> None:
    """Unpack every member under the limits and check each JSON member's nesting (nothing kept)."""
    budget = Budget()
    with open_archive(path) as archive:
        for info in archive.infolist():
            data = unpack(path, archive, info, budget)
            if info.filename.endswith(".json") and not within_depth(data, SOURCE_NESTING.value):
                parse_json(path, info.filename, data)  # raises, naming the depth and the limit


def _raw_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """The compressed bytes of a member, found through its local header."""
    with path.open("rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(head)[0] != _LOCAL_SIGNATURE:
            raise SourceError(path, info.filename, None, "the member's local header is damaged")
        name_len, extra_len = _LOCAL_HEADER.unpack(head)[-2:]
        fh.seek(name_len + extra_len, 1)
        raw = fh.read(info.compress_size)
    if len(raw) < info.compress_size:
        raise SourceError(path, info.filename, None, "the archive is cut off inside this member")
    return raw


def _unzstd(path: Path, info: zipfile.ZipInfo, raw: bytes, limit: int) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise SourceError(path, info.filename, None, "the member is Zstandard-compressed: install the "
                                                     "`zstandard` package (or inspect-ai) to read it") from None
    try:
        with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
            out = bytearray()
            while len(out) <= limit and (chunk := reader.read(min(_CHUNK, limit + 1 - len(out)))):
                out += chunk
            return bytes(out)
    except zstandard.ZstdError as exc:
        raise SourceError(path, info.filename, None, f"damaged Zstandard data ({exc})") from None


def sample_members(archive: zipfile.ZipFile) -> Iterator[zipfile.ZipInfo]:
    """The sample members, in epoch order then id (the order Inspect writes them in)."""
    infos = [i for i in archive.infolist() if i.filename.startswith("samples/") and i.filename.endswith(".json")]
    yield from sorted(infos, key=lambda i: _sample_order(i.filename))


def _sample_order(name: str) -> tuple[int, str]:
    stem = name.removeprefix("samples/").removesuffix(".json")
    sid, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, sid)
