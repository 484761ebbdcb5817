"""What `mathlens import` is asked, as one model: the command's options are generated from its
flagged fields (`mathlens.flags`), so an option is declared once and checked by the model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from mathlens.flags import Flag
from mathlens.items.formats import Format
from mathlens.runs.importing.importer import ImportRequest, Reader
from mathlens.runs.importing.matching import MatchBy
from mathlens.runs.importing.provenance import ImportFormat
from mathlens.runs.records import ItemSource


class ImportOptions(BaseModel):
    """How a source is read and matched (the source file and the run directory are the command's own)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: Annotated[list[str], Flag("--items")] = Field(
        default_factory=list, description="the questions: a built-in exam name or an item file (as `mathlens run` "
                                          "takes them); repeatable. Without it the questions, gold answers and ids "
                                          "are read from the source")
    format: Annotated[Literal["auto", ImportFormat], Flag("--format")] = Field(
        "auto", description="the source's format (auto: from its name and content)")
    mapping: Annotated[dict[str, str], Flag("--map", "-F", merge=True, metavar="FIELD=KEY")] = Field(
        default_factory=dict, description="the source's key of a field: -F question=prompt -F response=output "
                                          "-F id=qid -F response=code[*] (JSONL/CSV/JSON records; lm-eval: question)")
    items_format: Annotated[Format, Flag("--items-format")] = Field("auto", description="the item files' format")
    items_fields: Annotated[dict[str, str] | None, Flag("--items-field", merge=True, metavar="FIELD=KEY")] = Field(
        None, description="the item files' keys of item fields (as `run --field`)")
    model: Annotated[str | None, Flag("--model", "-m")] = Field(
        None, description="the model's name (default: the source's)")
    configuration: Annotated[str | None, Flag("--configuration")] = Field(
        None, description="the configuration of every record (default: the source's, else baseline)")
    match: Annotated[MatchBy, Flag("--match")] = Field(
        "auto", description="how rows find their questions: auto (id, else question text), id or text")
    reader: Annotated[Reader, Flag("--reader")] = Field(
        "auto", description="Inspect logs: auto, inspect_ai (Inspect's reader) or mathlens (the built-in one)")
    requests: Annotated[str | None, Flag("--requests")] = Field(
        None, description="OpenAI batch output: the batch input file (the messages)")

    def request(self, source: Path, out: Path) -> ImportRequest:
        """The import of `source` into the run directory `out` these options describe."""
        items = [ItemSource(source=s, format=self.items_format, mapping=self.items_fields) for s in self.items]
        return ImportRequest(source=source, items=items, out=out, fmt=self.format, mapping=dict(self.mapping),
                             model=self.model, configuration=self.configuration, match=self.match,
                             reader=self.reader, requests=Path(self.requests) if self.requests else None)
