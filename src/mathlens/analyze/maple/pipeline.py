"""The MAPLE analysis of a run: answer check, reflection, step labels, score, tables.

Stages (seed 001_c607caa65db8a290.txt, sections 3.1-3.3), for every solution of the run:

1. The final answer is checked against the reference (grading's `check_answer`); a correct answer
   scores MAPLE = 0 and is not judged (unless `judge_correct`), as the seed labels wrong ones only.
2. Each wrong solution's model reflects on it in the seed's multi-turn loop (`reflection.py`:
   self-check against the correct answer, then one failing point per round), or in one request.
3. The labels are settled (`procedure.py`): the fixed label set, optionally with a discovery that
   clusters the failing points into a draft to review; or, under the paper's procedure, a label
   set compiled from those clusters (`naming.py`), which the judge then applies.
4. The judge labels the erroneous steps of the solution as segmented by the flow analysis; judge-free
   detectors add "incoherent output" and "no solution".
5. e, v, r and MAPLE are computed and stored, with the label counts, per solution.

Before stage 1, a degenerate response (empty, an echo of the prompt or system role, a loop, the
wrong script; see `mathlens.analyze.quality`) is left out with status `degenerate`, unless
`include_degenerate`: it is neither checked nor judged, enters no figure, and is counted
(`excluded_degenerate`, and `n_degenerate` on every table row).

`score_run` computes all of this in memory; the `maple` analyzer (`analyzer.py`) runs it with the
judge `run_analyzers` resolved and writes the `MAPLE` document.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from mathlens.analyze.flow import analyze_solution, segment_steps
from mathlens.analyze.flow.models import FlowResult
from mathlens.analyze.grading.equivalence import check_answer
from mathlens.analyze.maple.aggregate import CHECKED, BootstrapConfig, figure_data, group_rows
from mathlens.analyze.maple.judge import judge_steps
from mathlens.analyze.maple.labels import LabelSet, default_labels, load_label_set
from mathlens.analyze.maple.naming import LabelNaming
from mathlens.analyze.maple.procedure import LabelProcedure, discover, labels_note, paper_labels
from mathlens.analyze.maple.reflection import ReflectionMode, reflect_loop, reflect_once
from mathlens.analyze.maple.results import DiscoveryOutcome, MapleSummary, SolutionMaple
from mathlens.analyze.maple.score import DEFAULT_FLOOR, Formula, maple_score
from mathlens.analyze.maple.steplabels import detector_labels, label_counts, merge_labels
from mathlens.analyze.maple.vr import VR, RedundancyMode, ValidityMode, VRSource, vr_from_flow
from mathlens.analyze.protocol import AnalyzerOptions
from mathlens.analyze.quality import DEGENERATE_FLAGS, record_quality
from mathlens.analyze.quality.detect import IncoherenceConfig, has_final_answer
from mathlens.errors import UserError
from mathlens.flags import MAX_TOKENS, Flag
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig
from mathlens.models.cache import ResponseCache
from mathlens.models.model import Model
from mathlens.models.registry import get_model
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import ModelEntry, RunRecord
from mathlens.runs.store import RunStore


class MapleOptions(AnalyzerOptions):
    """Everything that shapes a MAPLE analysis except the judge (stored in the document's envelope).

    The judge that labels the steps is not an option: `run_analyzers` resolves it (`--judge`, else
    the run's recorded judge) and hands it to the analyzer.
    """

    reflector: Annotated[str | None, Flag("--reflector")] = Field(
        None, description="model that reflects on wrong answers (default: the solver)")
    labels: Annotated[LabelSet | None, Flag("--labels", metavar="FILE")] = Field(
        None, description="label set, or the path of a label set file (YAML/JSON; default: the seven defaults)")
    formula: Annotated[Formula, Flag("--formula", "--variant")] = Field(
        "printed", description="printed: tanh(e·v/r); prose: tanh(e·r/v)")
    vr_source: Annotated[VRSource, Flag("--vr")] = Field("flow", description="source of v and r")
    validity_mode: Annotated[ValidityMode, Flag("--validity")] = Field(
        "share", description="flow v: share of decidable steps valid, or min")
    redundancy_mode: Annotated[RedundancyMode, Flag("--redundancy")] = Field(
        "share", description="flow r: share of steps off the path, or max (min/max: ReasonEval's rule)")
    reasoneval_path: Annotated[str | None, Flag("--reasoneval")] = Field(
        None, description="local ReasonEval checkpoint folder (--vr reasoneval)")
    floor: Annotated[float, Flag("--floor")] = Field(DEFAULT_FLOOR, gt=0, le=1,
                                                     description="lower bound of the divisor (r or v)")
    discover: Annotated[int | Literal["auto"] | None, Flag("--discover-labels", metavar="K|auto")] = Field(
        None, description="cluster reflections: K clusters, or 'auto'")
    embedder: Annotated[str | None, Flag("--embedder")] = Field(
        None, description="embedder for label discovery (default: local MiniLM)")
    reflect: Annotated[bool, Flag("--no-reflect", invert=True)] = Field(
        True, description="skip the self-reflection stage")
    reflection: Annotated[ReflectionMode, Flag("--reflection")] = Field(
        "loop", description="loop: the seed's multi-turn reflection; single: one request")
    reflect_rounds: Annotated[int, Flag("--reflect-rounds")] = Field(
        3, ge=1, le=10, description="most rounds of a reflection loop")
    label_procedure: Annotated[LabelProcedure, Flag("--label-procedure")] = Field(
        "fixed", description="fixed: the given label set; paper: labels compiled from the clustered reflections")
    judge_correct: Annotated[bool, Flag("--judge-correct")] = Field(
        False, description="also judge solutions with a right answer")
    judge_limit: Annotated[int | None, Flag("--judge-limit")] = Field(
        None, ge=0, le=10_000_000, description="judge at most N solutions (the rest: unjudged)")
    judge_tokens: Annotated[int, Flag("--max-tokens")] = Field(384, ge=1, le=MAX_TOKENS,
                                                                     description="token cap of each judge reply")
    reflect_tokens: Annotated[int, Flag("--reflect-tokens")] = Field(
        160, ge=1, le=MAX_TOKENS, description="token cap of each reflection")
    include_degenerate: Annotated[bool, Flag("--include-degenerate")] = Field(
        False, description="also score empty, echoed, looping or wrong-script responses")
    #: a judge for the steps SymPy cannot decide: v then comes from the hybrid step check
    step_judge: Annotated[str | None, Flag("--step-judge")] = Field(
        None, description="judge for the steps SymPy cannot decide (v from the hybrid check)")
    step_judge_options: Annotated[dict[str, Any], Flag("--step-judge-option", "-S", merge=True)] = Field(
        default_factory=dict, description="step judge model option key=value")
    boot: BootstrapConfig = Field(default_factory=BootstrapConfig)
    incoherence: IncoherenceConfig = Field(default_factory=IncoherenceConfig)

    @field_validator("labels", mode="before")
    @classmethod
    def _label_file(cls, value: Any) -> Any:
        return load_label_set(Path(value)) if isinstance(value, str | Path) else value

    @field_validator("discover")
    @classmethod
    def _clusters(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("give a number of clusters of at least 1, or 'auto'")
        return value

    def check(self) -> None:
        """Refuse combinations that cannot work, before any model is called."""
        if self.vr_source == "reasoneval":
            from mathlens.analyze.maple.reasoneval import check_path

            check_path(self.reasoneval_path)
        if self.step_judge and self.vr_source != "flow":
            raise UserError("--step-judge gives v from the flow analysis: use it with --vr flow")
        if (self.discover is not None or self.label_procedure == "paper") and not self.reflect:
            raise UserError("label discovery clusters reflections: it cannot be combined with --no-reflect")


def segment(text: str) -> list[str]:
    """The solution's steps as the flow analysis segments them."""
    return [s.text for s in segment_steps(text)]


def flow_analysis(text: str, question: str, *, cut: bool = False) -> tuple[FlowResult | None, str]:
    """The flow analysis of a solution (`cut`: by the token cap), or None and the reason it failed."""
    try:
        return analyze_solution(text, question=question, cut=cut), ""
    except Exception as exc:  # analyze_solution should not raise; if it does, the solution records why
        return None, f"flow analysis failed: {type(exc).__name__}: {exc}"


@dataclass
class _Context:
    options: MapleOptions
    labels: LabelSet | None  # None until the paper's procedure has compiled them
    judge: Model
    reflectors: dict[str, Model]
    judged: int = 0
    step_judge: Model | None = None


@dataclass
class _Pending:
    """A wrong (or, with judge_correct, any) solution prepared for the judge."""

    sol: SolutionMaple
    question: str
    text: str
    reference_solution: str | None
    has_final: bool
    from_flow: VR | None


def _base(rec: RunRecord, q: Question | None) -> SolutionMaple:
    return SolutionMaple(
        record=RecordRef.of(rec),
        level=q.level if q else None,
        subject=q.subject if q else None,
        answer_status="error",
        truncated=rec.truncated,
    )


def _vr(ctx: _Context, sol: SolutionMaple, question: str, from_flow: VR | None) -> VR:
    source = ctx.options.vr_source
    if source == "flow":
        return from_flow or VR(v=None, r=None, source="flow", error="no flow analysis")
    if source == "judge":
        j = sol.judgement
        if j is None or j.validity is None or j.redundancy is None:
            return VR(v=None, r=None, source="judge", error="the judge gave no validity/redundancy")
        return VR(v=j.validity, r=j.redundancy, source="judge", v_basis="judge estimate", r_basis="judge estimate")
    from mathlens.analyze.maple.reasoneval import score_solution

    s = score_solution(ctx.options.reasoneval_path, question, sol.steps)
    return VR(
        v=s.validity, r=s.redundancy, source="reasoneval", v_basis="min step validity", r_basis="max step redundancy"
    )


async def prepare_record(ctx: _Context, rec: RunRecord, q: Question | None) -> SolutionMaple | _Pending:
    """Every MAPLE stage of one run record before the step judge: a finished entry when no judging
    is needed, else what the judge needs."""
    sol = _base(rec, q)
    if rec.status != "ok" or rec.response is None or q is None:
        why = rec.error or ("no response" if q is not None else "question not found in the run's items")
        return sol.model_copy(update={"status": "error", "error": why})
    text, question = rec.response, rec.variant.question_text or q.prompt_text()
    opts = ctx.options
    quality = record_quality(rec, q)
    sol = sol.model_copy(update={"quality": quality})
    if quality is not None and quality.degenerate and not opts.include_degenerate:
        why = "; ".join(d for d in quality.details if d.split(":")[0] in DEGENERATE_FLAGS)
        return sol.model_copy(update={"status": "degenerate", "answer_status": "degenerate",
                                      "error": f"left out: degenerate response ({why})"})
    verdict = check_answer(text, q, cut=rec.truncated)
    from_flow: VR | None = None
    if opts.vr_source == "flow":
        # One flow analysis gives both the numbered steps and v/r, so they refer to the same steps.
        flow, why = flow_analysis(text, question, cut=rec.truncated)
        steps = [s.text for s in flow.steps] if flow is not None else segment(text)
        hybrid = None
        if flow is not None and ctx.step_judge is not None:
            from mathlens.analyze.flow.hybrid import hybrid_check

            hybrid = await hybrid_check(flow, question, ctx.step_judge)
            sol = sol.model_copy(update={"hybrid": hybrid})
        from_flow = VR(None, None, "flow", error=why) if flow is None else \
            vr_from_flow(flow, opts.validity_mode, hybrid, opts.redundancy_mode, cut=rec.truncated)
    else:
        steps = segment(text)
    has_final = has_final_answer(verdict.how, verdict.predicted)
    # Under the paper's procedure the label set is not known yet: detectors run after it is compiled.
    detected = detector_labels(steps, text, has_final, ctx.labels, opts.incoherence) if ctx.labels else []
    sol = sol.model_copy(
        update={
            "answer_status": verdict.status,
            "predicted": verdict.predicted,
            "reference": verdict.reference or (q.answers[0] if q.answers else None),
            "steps": steps,
            "detected": detected,
        }
    )
    if verdict.status not in CHECKED:
        return sol.model_copy(update={"status": "unverifiable", "error": f"answer check: {verdict.status}"})
    correct = verdict.status == "correct"
    if correct and not opts.judge_correct:
        vr = from_flow or VR(None, None, "")
        return sol.model_copy(
            update={
                "e": 0.0,
                "maple": 0.0,
                "v": vr.v,
                "r": vr.r,
                "vr_source": vr.source,
                "v_basis": vr.v_basis or "not needed: correct answer",
                "r_basis": vr.r_basis or "not needed: correct answer",
            }
        )
    if opts.judge_limit is not None:
        # Counted before the first await, so the first N solutions in record order are the judged ones.
        if ctx.judged >= opts.judge_limit:
            return sol.model_copy(
                update={"status": "unjudged", "error": f"not judged: over --judge-limit {opts.judge_limit}"}
            )
        ctx.judged += 1
    if not correct and opts.reflect:
        reflector = ctx.reflectors.get(rec.model) or ctx.judge
        config = GenerateConfig(max_tokens=opts.reflect_tokens)
        if opts.reflection == "loop":
            sol.reflection = await reflect_loop(reflector, question, text, q.solution, sol.reference, config,
                                                opts.reflect_rounds)
        else:
            sol.reflection = await reflect_once(reflector, question, text, q.solution, sol.reference, config)
    return _Pending(sol=sol, question=question, text=text, reference_solution=q.solution, has_final=has_final,
                    from_flow=from_flow)


async def finish_record(ctx: _Context, p: _Pending) -> SolutionMaple:
    """The step judge's labels and the score of a prepared solution."""
    assert ctx.labels is not None
    opts, sol, question = ctx.options, p.sol, p.question
    if not sol.detected:
        sol.detected = detector_labels(sol.steps, p.text, p.has_final, ctx.labels, opts.incoherence)
    sol.judgement = await judge_steps(
        ctx.judge,
        ctx.labels,
        question,
        sol.steps,
        p.reference_solution,
        sol.reference,
        GenerateConfig(max_tokens=opts.judge_tokens),
        estimate_vr=opts.vr_source == "judge",
    )
    if sol.judgement.status != "ok":
        return sol.model_copy(update={"status": "unjudged", "error": sol.judgement.error})
    merged = merge_labels(sol.judgement.steps, sol.detected)
    counts = label_counts(merged)
    try:
        vr = _vr(ctx, sol, question, p.from_flow)
    except UserError:
        raise
    except Exception as exc:  # a backend failure on one solution is data
        vr = VR(v=None, r=None, source=opts.vr_source, error=f"{type(exc).__name__}: {exc}")
    update: dict[str, Any] = {
        "step_labels": merged,
        "counts": counts,
        "vr_source": vr.source,
        "v": vr.v,
        "r": vr.r,
        "v_basis": vr.v_basis,
        "r_basis": vr.r_basis,
    }
    if vr.v is None or vr.r is None:
        return sol.model_copy(update={**update, "status": "error", "error": vr.error or "no v/r"})
    parts = maple_score(counts, ctx.labels.weights(), vr.v, vr.r, opts.formula, opts.floor)
    return sol.model_copy(
        update={
            **update,
            "e": parts.e,
            "maple": parts.maple,
            "v_used": parts.v_used,
            "r_used": parts.r_used,
            "status": "ok",
        }
    )


@dataclass(frozen=True)
class MapleResult:
    """A MAPLE analysis in memory: what the document holds, and the draft label set of a discovery."""

    summary: MapleSummary
    solutions: list[SolutionMaple]
    draft: LabelSet | None = None


class _Models:
    """The models one analysis opens (judge, reflectors, step judge); `aclose` closes each once."""

    def __init__(self, cache: ResponseCache | None) -> None:
        self.cache = cache
        self.opened: list[Model] = []

    def open(self, spec: str, options: dict[str, Any]) -> Model:
        model = get_model(spec, dict(options), cache=self.cache)
        self.opened.append(model)
        return model

    async def aclose(self) -> None:
        for model in {id(m): m for m in self.opened}.values():
            await model.aclose()


def _reflectors(store: RunStore, options: MapleOptions, models: _Models) -> dict[str, Model]:
    """Solving model spec -> the model that reflects on its wrong answers (none without reflection)."""
    if not options.reflect:
        return {}
    solvers = store.manifest().models
    if options.reflector:
        shared = models.open(options.reflector, {})
        return {m.spec: shared for m in solvers}
    return {m.spec: models.open(m.spec, m.options) for m in solvers}


async def score_run(store: RunStore, options: MapleOptions, judge: ModelEntry, *, no_cache: bool = False,
                    on_solution: Callable[[SolutionMaple], None] | None = None) -> MapleResult:
    """Run every MAPLE stage over `store`'s records with the step judge `judge` (writes nothing).

    Every solution is first prepared (answer check, flow, reflection), then the labels are settled
    (`procedure.py`), then the prepared solutions are judged and scored. Every model opened here
    (judge, reflectors, step judge) is closed before this returns, also when a stage fails."""
    options.check()
    paper = options.label_procedure == "paper"
    fixed = options.labels or default_labels()
    start = time.perf_counter()
    questions = store.questions()
    models = _Models(None if no_cache else ResponseCache())
    discovery: DiscoveryOutcome | None = None
    naming: LabelNaming | None = None
    try:
        judge_model = models.open(judge.spec, judge.options)
        reflectors = _reflectors(store, options, models)
        step_judge = models.open(options.step_judge, options.step_judge_options) if options.step_judge else None
        ctx = _Context(options=options, labels=None if paper else fixed, judge=judge_model, reflectors=reflectors,
                       step_judge=step_judge)
        records = list(store.records())
        prepared = list(await asyncio.gather(*(
            prepare_record(ctx, r, questions.get((r.exam_id, r.question_id))) for r in records)))
        reflections = [(p.sol if isinstance(p, _Pending) else p).reflection for p in prepared]
        if options.discover is not None or paper:
            discovery = discover(reflections, options.embedder, options.discover)
        if paper:
            compiled = await paper_labels(judge_model, discovery) if discovery is not None else None
            ctx.labels, naming = compiled if compiled is not None else (fixed, None)

        async def one(p: SolutionMaple | _Pending) -> SolutionMaple:
            sol = await finish_record(ctx, p) if isinstance(p, _Pending) else p
            if on_solution is not None:
                on_solution(sol)
            return sol

        solutions = list(await asyncio.gather(*(one(p) for p in prepared)))
    finally:
        await models.aclose()
    labels = ctx.labels or fixed
    draft = None
    if not paper and discovery is not None and discovery.result is not None:
        from mathlens.analyze.maple.discover import draft_label_set

        draft = draft_label_set(discovery.result)
    by_level = group_rows(solutions, "level", options.boot)
    by_subject = group_rows(solutions, "subject", options.boot)
    summary = MapleSummary(
        labels=labels,
        label_procedure=options.label_procedure,
        labels_note=labels_note(options.label_procedure, discovery, naming),
        naming=naming,
        reflection=options.reflection if options.reflect else "none",
        reflect_rounds=options.reflect_rounds if options.reflection == "loop" else 1,
        self_checks=dict(Counter(s.reflection.self_check_verdict for s in solutions
                                 if s.reflection is not None and s.reflection.self_check_verdict)),
        judge=judge.spec,
        reflector=options.reflector or "the solving model",
        formula=options.formula,
        vr_source=options.vr_source,
        floor=options.floor,
        include_degenerate=options.include_degenerate,
        excluded_degenerate=sum(s.status == "degenerate" for s in solutions),
        statuses=dict(Counter(s.status for s in solutions)),
        answers=dict(Counter(s.answer_status for s in solutions)),
        overall=group_rows(solutions, "all", options.boot),
        by_level=by_level,
        by_subject=by_subject,
        figure3=figure_data(by_level, "level"),
        figure5=figure_data(by_subject, "subject"),
        discovery=discovery,
        seconds=time.perf_counter() - start,
    )
    return MapleResult(summary=summary, solutions=solutions, draft=draft)
