"""Image files as the model APIs take them: base64 text, or OpenAI `image_url` content parts.

Images come from item files (a tutoring item's diagram); each is read whole, so its size is
bounded (`MAX_IMAGE_BYTES`) and a file that cannot be read is an error naming it.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from mathlens.errors import PermanentModelError

#: Largest image file sent (OpenAI takes up to 20 MB per image).
MAX_IMAGE_BYTES = 20 * 1024 * 1024


def image_base64(path: str) -> str:
    """The file at `path` as base64 text, or `PermanentModelError` naming the file."""
    file = Path(path)
    try:
        if file.stat().st_size > MAX_IMAGE_BYTES:
            raise PermanentModelError(f"image {path} is larger than {MAX_IMAGE_BYTES} bytes")
        return base64.b64encode(file.read_bytes()).decode("ascii")
    except OSError as exc:
        raise PermanentModelError(f"cannot read image {path} ({exc.strerror or exc})") from None


def image_parts(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    """OpenAI `image_url` content parts for image files, as base64 data URLs (type from the name).

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile(suffix=".png", delete=False); _ = f.write(b"PNG"); f.close()
    >>> image_parts((f.name,))[0]["image_url"]["url"]
    'data:image/png;base64,UE5H'
    >>> os.unlink(f.name)
    """
    parts = []
    for path in paths:
        mime = mimetypes.guess_type(path)[0] or "image/png"
        parts.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{image_base64(path)}"}})
    return parts
