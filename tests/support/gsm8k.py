"""The first rows of the shared GSM8K model solutions and their questions, as files to import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def solutions_and_items(shared_data: Path, folder: Path, rows: int) -> tuple[list[dict[str, Any]], Path, Path]:
    """(the first `rows` solution rows, their JSONL file, the GSM8K test questions file) in `folder`."""
    lines = (shared_data / "gsm8k_model_solutions.jsonl").read_text(encoding="utf-8").splitlines()[:rows]
    solutions = [json.loads(line) for line in lines]
    source = folder / "solutions.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in solutions), encoding="utf-8")
    items = folder / "gsm8k.jsonl"
    questions = (shared_data / "gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines()[:rows]
    items.write_text("".join(line + "\n" for line in questions), encoding="utf-8")
    return solutions, source, items
