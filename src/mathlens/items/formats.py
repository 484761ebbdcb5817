"""The formats an item file can be read in (a name only: the readers are in `mathlens.items.loaders`)."""

from __future__ import annotations

from typing import Literal

Format = Literal["auto", "exam", "math", "gsm8k", "jsonl"]
