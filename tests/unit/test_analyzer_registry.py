"""The analyzer registry: every entry is a well-formed Analyzer; order, options and judge follow one rule."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.analyze import registry
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, NoOptions, Outcome
from mathlens.cli.main import app
from mathlens.errors import UserError
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.documents import DocumentSpec
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord
from mathlens.runs.store import RunStore


def _store(tmp_path: Path, judge: str | None = None) -> RunStore:
    store = RunStore(tmp_path / "run")
    store.write_manifest(Manifest(
        run_id="t", mathlens_version="0", created_at=datetime.now(UTC), items=[ItemSource(source="calc3-exam1")],
        models=[ModelEntry(spec="mock/x")], generate=GenerateConfig(), system_role="role",
        judge=ModelEntry(spec=judge) if judge else None))
    store.append(RunRecord(key="k0", model="mock/x", configuration="baseline", exam_id="calc3-exam1",
                           question_id="q1", messages=[Message(role="user", content="q")], config=GenerateConfig(),
                           request_hash="h", content_hash="c", response="Final answer: 3",
                           created_at=datetime.now(UTC)))
    store.close()
    return store


def test_every_registered_analyzer_is_well_formed() -> None:
    names: set[str] = set()
    for name in registry.ANALYZERS:
        a = registry.get_analyzer(name)
        assert a.name == name and a.title
        assert issubclass(a.options, AnalyzerOptions)
        assert a.writes and all(isinstance(spec, DocumentSpec) for spec in a.writes)
        for spec in a.writes:
            assert spec.name not in names, f"two analyzers write {spec.name}"
            names.add(spec.name)
        assert set(a.reads) <= set(registry.ANALYZERS), (name, a.reads)


def test_a_bare_analyze_runs_only_the_analyses_that_call_no_model() -> None:
    judged = {"maple", "grades", "tutor_scores"}
    assert {n for n in registry.ANALYZERS if registry.get_analyzer(n).judge is not None} == judged
    assert registry.select() == [n for n in registry.ANALYZERS if n not in judged]
    assert registry.select(["grades", "flow"]) == ["flow", "grades"]


def test_dependencies_run_first_and_a_cycle_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.plan(["sensitivity", "flow"]) == ["flow", "sensitivity"]
    assert registry.plan(["sensitivity"]) == ["sensitivity"]  # not selected: read if present, not run

    def fake(name: str, reads: tuple[str, ...]) -> Analyzer[Any, Any]:
        return Analyzer(name=name, title=name, options=NoOptions, summary=NoOptions,
                        run=lambda job: Outcome.ok(NoOptions()), reads=reads)

    fakes = {"a": fake("a", ("b",)), "b": fake("b", ("a",))}
    monkeypatch.setattr(registry, "get_analyzer", fakes.__getitem__)
    with pytest.raises(UserError, match="cycle: a -> b -> a"):
        registry.plan(["a", "b"])


def test_judge_based_analyzers_follow_the_one_judge_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def run(job: AnalysisJob[NoOptions]) -> Outcome[NoOptions]:
        seen.append(job.require_judge())
        return Outcome.ok(NoOptions())

    judged = Analyzer(name="judged", title="t", options=NoOptions, summary=NoOptions, run=run, judge="grader")
    monkeypatch.setattr(registry, "ANALYZERS", {"judged": "x:y"})
    monkeypatch.setattr(registry, "get_analyzer", {"judged": judged}.__getitem__)
    with pytest.raises(UserError, match="no judge model for run t: pass --judge"):
        registry.run_analyzers(_store(tmp_path), ["judged"])
    registry.run_analyzers(_store(tmp_path / "a", judge="mock/recorded"), ["judged"])
    registry.run_analyzers(_store(tmp_path / "b", judge="mock/recorded"), ["judged"], judge="mock/flag",
                           judge_options={"responses": ["x"]})
    assert [(e.spec, e.options) for e in seen] == [("mock/recorded", {}), ("mock/flag", {"responses": ["x"]})]


def test_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(UserError, match="'answers' given, but it is not among the analyzers run"):
        registry.run_analyzers(store, ["flow"], {"answers": {"rel_tol": 0.1}})
    with pytest.raises(UserError, match=r"flow: unknown analyzer option 'thread'.*Did you mean 'threads'"):
        registry.run_analyzers(store, ["answers", "flow"], {"flow": {"thread": 1}})
    assert not (store.root / "analysis").exists()  # answers did not run before flow's option was refused


def test_list_analyzers_names_them_all() -> None:
    res = CliRunner().invoke(app, ["list", "analyzers", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["analyzers"]
    assert [r["name"] for r in rows] == list(registry.ANALYZERS)
    flow = next(r for r in rows if r["name"] == "flow")
    assert "threads=2" in flow["options (-O NAME.KEY=VALUE)"]


def _loose_fields(model: type[Any], seen: set[type[Any]]) -> list[str]:
    """The fields of `model` (and of the models inside it) whose type is `Any` somewhere."""
    from typing import get_args

    from pydantic import BaseModel

    if model in seen:
        return []
    seen.add(model)
    found: list[str] = []
    for field_name, info in model.model_fields.items():
        pending: list[Any] = [info.annotation]
        while pending:
            t = pending.pop()
            if t is Any:
                found.append(f"{model.__name__}.{field_name}")
            elif isinstance(t, type) and issubclass(t, BaseModel):
                found += _loose_fields(t, seen)
            else:
                pending += [a for a in get_args(t) if not isinstance(a, (str, int, float, bool))]
    return found


#: a provider's options and identity as the run manifest keeps them: each provider declares its own
#: keys (`models/providers/`), and no analysis computes or reads a figure from them
_PROVIDER_RECORDS = {"ModelEntry.options", "ModelEntry.identity"}


def test_no_stored_figure_is_an_untyped_value() -> None:
    """What an analysis hands to the CLI and the report is typed to the leaf: no `Any`, no bare dict."""
    loose: set[str] = set()
    for name in registry.ANALYZERS:
        for spec in registry.get_analyzer(name).writes:
            seen: set[type[Any]] = set()
            loose |= {f for f in _loose_fields(spec.entry, seen) + _loose_fields(spec.summary, seen)}
    assert loose - _PROVIDER_RECORDS == set(), sorted(loose - _PROVIDER_RECORDS)


def test_the_walk_finds_an_untyped_value_where_there_is_one() -> None:
    from pydantic import BaseModel

    class Inner(BaseModel):
        settings: dict[str, Any] = {}

    class Outer(BaseModel):
        rows: list[Inner] = []
        fine: dict[str, float] = {}

    assert _loose_fields(Outer, set()) == ["Inner.settings"]
