"""What a study file holds: a run described once, in YAML, validated by these models.

A study names its items, the models that answer them, the judge, the solving configurations,
the ablations, the repeats, the system role and exam mode, the generation settings, the analyses
to run afterwards with their options, and the tables to export. `mathlens run STUDY.yaml` runs it;
`mathlens schema study` prints the JSON Schema of the file (these models'). Options of `mathlens
run` are generated from the fields marked with a `Flag` (`mathlens.flags`), so a flag and a
field are one declaration and are checked alike; a flag given overrides the file's value.

Every model refuses unknown keys (with a "did you mean" in the error, `load.py`), so a misspelt
field is an error naming its file, line and path, never a silent default.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mathlens.flags import MAX_SEED, MAX_TOKENS, Flag
from mathlens.items.formats import Format
from mathlens.models.admission import check_concurrency
from mathlens.runs.records import ExamMode
from mathlens.solve.tutoring import CONDITIONS, ImageMode

#: the formats of the publication tables (`mathlens.report.export.render.Format`, restated here so that
#: reading a study does not load the report and the analyses behind it; a test keeps the two equal)
TableFormat = Literal["csv", "markdown", "latex"]

#: study files name the model when none is given
DEFAULT_MODEL_SPEC = "embedded/qwen2.5-coder-1.5b"

# The ranges of the numeric settings (a value outside is refused with the range named, exit 2).
#: questions taken from one item file (--limit, --sample)
MAX_QUESTIONS = 10_000_000
#: sampling temperature (--temperature); providers accept 0-2, a few up to 5
MAX_TEMPERATURE = 10.0
#: seconds one request may take (--timeout): a day
MAX_TIMEOUT_S = 86_400.0
#: retrieved chunks per question (--top-k)
MAX_TOP_K = 1_000


class StudyPart(BaseModel):
    """Base of every part of a study: unknown keys refused, values validated, no NaN."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ItemSet(StudyPart):
    """One set of questions: a built-in exam, or a file (exam YAML, MATH, GSM8K, JSONL).

    A relative file is looked for beside the study file (a built-in study: in the working folder),
    then in each folder of `$MATHLENS_DATA` (`mathlens.study.resolve`)."""

    source: Annotated[str, Flag("--items", each=True, metavar="PATH")] = Field(
        min_length=1, description="a built-in exam (`mathlens list exams`) or an item file; as a flag, replaces "
                                  "the study's item sets (one per --items, each keeping the first set's format, "
                                  "limit and sample)")
    format: Annotated[Format, Flag("--format")] = Field("auto", description="the item file's format")
    fields: Annotated[dict[str, str] | None, Flag("--field", merge=True, metavar="FIELD=KEY")] = Field(
        None, description="JSONL mapping of item fields to the file's keys (field=KEY)")
    limit: Annotated[int | None, Flag("--limit")] = Field(None, ge=1, le=MAX_QUESTIONS,
                                                          description="the first K questions")
    sample: Annotated[int | None, Flag("--sample")] = Field(None, ge=1, le=MAX_QUESTIONS,
                                                            description="a seeded random sample of N questions")


class SpecRef(StudyPart):
    """A model named by its spec alone (`embedded`) or with its options (`{spec: ..., options: ...}`)."""

    @model_validator(mode="before")
    @classmethod
    def _spec_alone(cls, value: Any) -> Any:
        return {"spec": value} if isinstance(value, str) else value


class ModelRef(SpecRef):
    """A model that answers (or judges): provider/model, its options, its servers."""

    spec: Annotated[str, Flag("--model", "-m", each=True)] = Field(
        DEFAULT_MODEL_SPEC, min_length=1, description="provider/model, repeatable")
    options: dict[str, Any] = Field(default_factory=dict, description="this model's options (its backend's keys)")


class JudgeRef(SpecRef):
    """The judge model of the judge-based analyses (grades, maple, tutor scores)."""

    spec: Annotated[str, Flag("--judge")] = Field(min_length=1, description="judge model for later grading")
    options: Annotated[dict[str, Any], Flag("-J", merge=True, metavar="KEY=VALUE")] = Field(
        default_factory=dict, description="judge model option key=value (the judge backend's keys)")


class Ablation(StudyPart):
    """Prompt ablation: which element types are masked, and what is sent besides."""

    elements: Annotated[list[str], Flag("--ablate", split=True)] = Field(
        default_factory=lambda: ["all"], min_length=1, description="ablation variants: all, or element types a,b")
    pairs: Annotated[bool, Flag("--ablate-pairs")] = Field(False, description="also ablate pairs of elements")
    paraphrases: Annotated[bool, Flag("--paraphrases")] = Field(
        False, description="also send meaning-preserving paraphrases")


class Generation(StudyPart):
    """Decoding settings of every request."""

    max_tokens: Annotated[int, Flag("--max-tokens")] = Field(512, ge=1, le=MAX_TOKENS,
                                                                 description="token cap per response")
    temperature: Annotated[float, Flag("--temperature")] = Field(0.0, ge=0, le=MAX_TEMPERATURE,
                                                                       description="sampling temperature")
    seed: Annotated[int, Flag("--seed")] = Field(1234, ge=0, le=MAX_SEED,
                                                     description="generation seed (and sampling seed)")


class Execution(StudyPart):
    """How requests are sent (none of this changes what is recorded)."""

    concurrency: Annotated[int | Literal["auto"] | None, Flag("--concurrency", metavar="N|auto")] = Field(
        None, description="requests in flight per model: N is a fixed limit (at most N at once, over all of a "
                          "model's servers); auto adapts to the server (starts at 32 per server, grows while it "
                          "answers well, backs off on 429/503, Retry-After, timeouts and rising latency; ceiling "
                          "-M max_concurrency, default 256). Default: auto for openai/, 2 for ollama/, 1 for "
                          "embedded")
    timeout: Annotated[float, Flag("--timeout")] = Field(300.0, gt=0, le=MAX_TIMEOUT_S,
                                                             description="seconds per request before a retry")
    attempts: Annotated[int, Flag("--attempts")] = Field(4, ge=1, le=100,
                                                         description="attempts per request on transient failures")


    @field_validator("concurrency", mode="before")
    @classmethod
    def _concurrency(cls, value: Any) -> Any:
        return check_concurrency(value)


class Retrieval(StudyPart):
    """Options of the retrieval configurations (rag, contextual)."""

    kb: Annotated[str | None, Flag("--kb")] = Field(None,
                                                    description="knowledge base for rag/contextual (default calculus)")
    top_k: Annotated[int | None, Flag("--top-k")] = Field(None, ge=1, le=MAX_TOP_K,
                                                             description="retrieved chunks per question")
    options: Annotated[dict[str, Any], Flag("--configuration-option", "-C", merge=True, metavar="KEY=VALUE")] = Field(
        default_factory=dict, description="configuration option key=value")


class Tutoring(StudyPart):
    """A tutoring study (the learner-adaptivity design): each item put to each learner paired with it,
    under each context condition; the conditions are the run's configurations (`condition-<n>`)."""

    profiles: Annotated[str, Flag("--profiles")] = Field(
        "default", min_length=1, description="learner profiles: default | balanced[:PER_CELL[:SEED]] | a profile "
                                             "YAML file")
    conditions: Annotated[list[int], Flag("--conditions", split=True)] = Field(
        default_factory=lambda: [1, 2, 3, 4], min_length=1, description="context conditions to run (1-4)")
    images: Annotated[ImageMode, Flag("--images")] = Field(
        "auto", description="how diagrams reach models: auto (images to models that read them, the written "
                            "description to the others), send (images only), describe (the description only)")
    match_grade: Annotated[bool, Flag("--all-grades", invert=True,
                                      help="pair every learner with every item (not only their grade's)")] = Field(
        True, description="pair each learner with the items of their own grade (an item without a grade goes "
                          "to every learner)")

    @field_validator("conditions")
    @classmethod
    def _conditions(cls, value: list[int]) -> list[int]:
        for c in value:
            if c not in CONDITIONS:
                raise ValueError(f"unknown context condition {c}: choose from {', '.join(map(str, CONDITIONS))}")
        repeated = sorted({c for c in value if value.count(c) > 1})
        if repeated:
            raise ValueError(f"context condition {repeated[0]} is listed twice")
        return sorted(value)


class ReportTables(StudyPart):
    """What is written after the analyses: the HTML report and the publication tables."""

    html: bool = Field(False, description="write RUN/report.html")
    tables: list[TableFormat] = Field(default_factory=list,
                                      description="write RUN/tables/ in these formats (latex, csv, markdown)")


class Study(StudyPart):
    """A study file (see the module notes)."""

    study: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="the study's name")
    description: str = Field("", description="what the study is for, in words")
    items: list[ItemSet] = Field(min_length=1, description="the questions")
    models: list[ModelRef] = Field(default_factory=lambda: [ModelRef()], min_length=1,
                                   description="the models that answer")
    model_options: Annotated[dict[str, Any], Flag("-M", merge=True, metavar="KEY=VALUE")] = Field(
        default_factory=dict, description="model option key=value for every model (each model takes the keys its "
                                          "backend declares; a key no model of the run declares is an error)")
    base_urls: Annotated[list[str], Flag("--base-url")] = Field(
        default_factory=list, description="server URL of the openai/ and ollama/ models; repeat it for a pool of "
                                          "openai/ replicas (with --resume: the servers to use now)")
    judge: JudgeRef | None = Field(None, description="judge model for the judge-based analyses")
    configurations: Annotated[list[str], Flag("--configuration", "--config", split=True)] = Field(
        default_factory=lambda: ["baseline"], min_length=1,
        description="solving configurations: baseline, rag, contextual")
    retrieval: Retrieval = Field(default_factory=Retrieval)
    ablation: Ablation | None = Field(None, description="prompt ablation (none: the original prompts only)")
    repeats: Annotated[int, Flag("--runs")] = Field(1, ge=1, le=1000, description="repeat each question N times "
                                                                                   "(seed + k)")
    role: Annotated[str | None, Flag("--system-role")] = Field(
        None, description="a named system role, or a text file replacing it (default exam)")
    exam_mode: Annotated[ExamMode, Flag("--exam-mode")] = Field(
        "per-question", description="per-question (a request each) or sequential (an exam in one conversation)")
    tutoring: Tutoring | None = Field(
        None, description="a tutoring study: learner profiles x context conditions (the conditions replace the "
                          "configurations; no ablation, retrieval, system role or sequential mode)")
    generation: Generation = Field(default_factory=Generation)
    execution: Execution = Field(default_factory=Execution)
    analyses: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="analyses run after the responses, by name, with their options "
                                          "(`mathlens list analyzers`)")
    report: ReportTables = Field(default_factory=ReportTables)

    @field_validator("generation")
    @classmethod
    def _finite(cls, value: Generation) -> Generation:
        if not math.isfinite(value.temperature):
            raise ValueError("temperature must be a finite number")
        return value
