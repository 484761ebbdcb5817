"""Read the key/value metadata at the head of a GGUF file, without loading any weights.

Only scalar and string values are returned; arrays (the tokenizer's vocabulary, for example) are
skipped. Used to find a file's chat template and name before llama.cpp loads it, so that a GGUF
without a template is a clear error at start-up rather than a silently wrong prompt format.

The layout (GGUF v2/v3): magic ``GGUF``, uint32 version, uint64 tensor count, uint64 key count,
then per key a string key, a uint32 value type and the value. Strings are a uint64 length and
UTF-8 bytes; arrays are a uint32 item type, a uint64 count and the items. Counts and lengths from
the file are bounded, so a damaged or hostile file cannot make the reader allocate without limit.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import IO, Any

from mathlens.errors import UserError

_SCALARS: dict[int, str] = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_STRING = 16 << 20      # a chat template is a few KB; 16 MiB is far beyond any real value
_MAX_KEYS = 100_000
_MAX_ITEMS = 50_000_000


class _Reader:
    def __init__(self, fh: IO[bytes], path: Path) -> None:
        self.fh = fh
        self.path = path

    def take(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise UserError(f"{self.path}: not a complete GGUF file (metadata ends early)")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.unpack("<Q")
        if n > _MAX_STRING:
            raise UserError(f"{self.path}: a GGUF metadata string of {n} bytes is too long")
        return self.take(n).decode("utf-8", "replace")

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, count = self.unpack("<I"), self.unpack("<Q")
            if count > _MAX_ITEMS:
                raise UserError(f"{self.path}: a GGUF metadata array of {count} items is too long")
            if item in _SCALARS:
                self.fh.seek(struct.calcsize(_SCALARS[item]) * count, 1)
            else:
                for _ in range(count):
                    self.value(item)
            return None
        raise UserError(f"{self.path}: unknown GGUF value type {kind}")


def read_metadata(path: Path) -> dict[str, Any]:
    """The scalar and string metadata of a GGUF file (arrays are left out).

    A file that is not GGUF raises `UserError` naming the file.
    """
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot open ({exc.strerror or exc})") from None
    with fh:
        reader = _Reader(fh, path)
        if fh.read(4) != b"GGUF":
            raise UserError(f"{path}: not a GGUF file (llama.cpp models are .gguf files)")
        version = reader.unpack("<I")
        if version < 2:
            raise UserError(f"{path}: GGUF version {version} is too old; convert it with a current llama.cpp")
        reader.unpack("<Q")
        n_keys = reader.unpack("<Q")
        if n_keys > _MAX_KEYS:
            raise UserError(f"{path}: {n_keys} metadata keys is not a real GGUF file")
        out: dict[str, Any] = {}
        for _ in range(n_keys):
            key = reader.string()
            value = reader.value(reader.unpack("<I"))
            if value is not None:
                out[key] = value
        return out


def chat_template(path: Path) -> str | None:
    """The chat template stored in a GGUF file, or None when it has none."""
    template = read_metadata(path).get("tokenizer.chat_template")
    return template if isinstance(template, str) and template.strip() else None
