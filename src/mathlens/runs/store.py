"""A run directory: `manifest.json`, an append-only `records.jsonl`, and `analysis/`.

Each record is written as one line and flushed with fsync, so a process killed at any moment
leaves at most one partial last line. Opening a store for appending cuts such a line off (it is a
request that did not finish and will be redone), which is what makes `--resume` exact.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from mathlens.errors import UserError
from mathlens.runs.records import Manifest, RunRecord


class RunStore:
    """Read and append the records of one run directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._fh: IO[str] | None = None

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    @property
    def records_path(self) -> Path:
        return self.root / "records.jsonl"

    @property
    def analysis_dir(self) -> Path:
        return self.root / "analysis"

    # -- manifest -------------------------------------------------------------------------------
    def write_manifest(self, manifest: Manifest) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.manifest_path.with_suffix(".json.tmp")
        tmp.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        os.replace(tmp, self.manifest_path)

    def manifest(self) -> Manifest:
        if not self.manifest_path.exists():
            raise UserError(f"{self.root} is not a run directory (no manifest.json)")
        try:
            return Manifest.model_validate_json(self.manifest_path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise UserError(f"{self.manifest_path}: not a valid manifest ({exc.errors()[0]['msg']})") from None

    # -- records --------------------------------------------------------------------------------
    def records(self) -> Iterator[RunRecord]:
        """Every complete record, in the order written. A partial last line is skipped."""
        if not self.records_path.exists():
            return
        with self.records_path.open("r", encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if not line.endswith("\n"):
                    break  # torn write of a killed process
                try:
                    yield RunRecord.model_validate_json(line)
                except ValidationError as exc:
                    raise UserError(f"{self.records_path}:{n}: not a valid record "
                                    f"({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})") from None

    def done_keys(self) -> set[str]:
        return {r.key for r in self.records()}

    def _repair_tail(self) -> None:
        """Drop a partial last line left by a killed writer."""
        path = self.records_path
        if not path.exists() or path.stat().st_size == 0:
            return
        with path.open("rb+") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            pos = size - 1
            while pos > 0:
                step = min(4096, pos)
                fh.seek(pos - step)
                chunk = fh.read(step)
                idx = chunk.rfind(b"\n")
                if idx >= 0:
                    fh.truncate(pos - step + idx + 1)
                    return
                pos -= step
            fh.truncate(0)

    def append(self, record: RunRecord) -> None:
        if self._fh is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._repair_tail()
            self._fh = self.records_path.open("a", encoding="utf-8")
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    # -- analysis results -----------------------------------------------------------------------
    def write_analysis(self, name: str, data: BaseModel | dict[str, Any] | list[Any]) -> Path:
        """Write `analysis/<name>.json` atomically (re-running an analysis replaces it)."""
        self.analysis_dir.mkdir(parents=True, exist_ok=True)
        path = self.analysis_dir / f"{name}.json"
        tmp = path.with_suffix(".json.tmp")
        text = data.model_dump_json(indent=2) if isinstance(data, BaseModel) else json.dumps(data, indent=2,
                                                                                             default=str)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return path

    def read_analysis(self, name: str) -> Any | None:
        path = self.analysis_dir / f"{name}.json"
        if not path.exists():
            return None
        return json.loads(path.read_text(encoding="utf-8"))
