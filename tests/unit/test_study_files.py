"""Study files: `mathlens run STUDY.yaml` and `study:NAME`, the schema, flags over fields, bad files.

Every built-in study runs end to end on the mock model (`--model mock/echo`, one question), and
the run keeps the resolved study and names it in its manifest. The bad-file table
(`tests/cases/study/bad_files.yaml`) holds files that must be refused with exit 2 and one line
naming the file, the line and the field, with no traceback and no run directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.runs.store import RunStore
from mathlens.study.load import builtin_studies, load_study, study_schema
from mathlens.study.model import Study
from mathlens.study.resolve import STUDY_FILE

CASES = Path(__file__).resolve().parents[1] / "cases" / "study" / "bad_files.yaml"
BAD: dict[str, list[dict[str, Any]]] = yaml.safe_load(CASES.read_text(encoding="utf-8"))


def _invoke(*args: str) -> tuple[int, str]:
    """Exit code and output (stdout alone with --json, else stdout and stderr)."""
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stdout if "--json" in args else res.output


#: the papers' studies call a judge (and the calculus study an Ollama embedder; MAPLE's reads MATH500):
#: they run whole against the stand-in server in tests/integration/test_study_files_papers.py; here
#: the tutoring study runs on scripted models and the other two are planned (`--dry-run`)
PAPERS = {"calculus", "maple", "tutoring"}
YES = json.dumps({"rationale": "fine", "rating": "yes"})
TUTORING_TABLES = {"tutoring-table1-dimensions", "tutoring-table2-adaptivity", "tutoring-table2-profiles",
                   "tutoring-anova", "tutoring-anova-checks", "tutoring-posthoc", "tutoring-letters"}


@pytest.mark.parametrize("name", [n for n in builtin_studies() if n not in PAPERS])
def test_every_built_in_study_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    code, output = _invoke("run", f"study:{name}", "--model", "mock/echo", "--limit", "1", "--out", str(out), "-q")
    assert code == 0, output
    study, _ = load_study(f"study:{name}")
    store = RunStore(out)
    manifest = store.manifest()
    assert manifest.study == study.study and [m.spec for m in manifest.models] == ["mock/echo"]
    saved = Study.model_validate(yaml.safe_load((out / STUDY_FILE).read_text(encoding="utf-8")))
    assert saved.models[0].spec == "mock/echo" and all(s.limit == 1 for s in saved.items)
    assert manifest.configurations == study.configurations and manifest.runs == study.repeats
    for analysis in study.analyses:
        assert (out / "analysis" / f"{analysis}.jsonl").is_file(), analysis
    assert (out / "report.html").is_file() == study.report.html
    assert (out / "tables" / "index.json").is_file() == bool(study.report.tables)


def test_a_study_file_of_ones_own_with_flags_over_its_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    exam = tmp_path / "items" / "tiny.yaml"
    exam.parent.mkdir()
    exam.write_text(yaml.safe_dump({"id": "tiny", "name": "Tiny", "questions": [
        {"id": "q1", "text": "What is 2 + 3?", "answers": ["5"]},
        {"id": "q2", "text": "What is 4 * 6?", "answers": ["24"]}]}), encoding="utf-8")
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({
        "study": "mine", "items": [{"source": "items/tiny.yaml"}],  # relative to the study file
        "models": [{"spec": "mock/echo"}], "repeats": 2, "generation": {"max_tokens": 64},
        "analyses": {"answers": {}}}), encoding="utf-8")
    out = tmp_path / "run"
    code, output = _invoke("run", str(study), "--runs", "1", "--max-tokens", "32", "--limit", "1",
                           "--model", "mock/a", "--model", "mock/b", "--out", str(out), "--json")
    assert code == 0, output
    manifest = RunStore(out).manifest()
    assert manifest.runs == 1 and manifest.generate.max_tokens == 32  # the flags win
    assert [m.spec for m in manifest.models] == ["mock/a", "mock/b"]
    assert manifest.items[0].source == str(exam) and manifest.items[0].limit == 1
    assert json.loads(output)["total_tasks"] == 2  # one question, two models, one repeat
    assert (out / "analysis" / "answers.jsonl").is_file()


def test_sources_and_flags_alone_make_a_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    code, output = _invoke("run", "calc3-exam1", "--model", "mock/echo", "--limit", "2", "--config", "baseline",
                           "--exam-mode", "sequential", "--out", str(out), "-q")
    assert code == 0, output
    saved = yaml.safe_load((out / STUDY_FILE).read_text(encoding="utf-8"))
    assert saved["study"] == "command-line" and saved["exam_mode"] == "sequential"
    assert saved["items"] == [{"source": "calc3-exam1", "format": "auto", "fields": None, "limit": 2,
                               "sample": None}]


@pytest.mark.parametrize(("case",), [pytest.param(c, id=f"{group}: {c['name']}")
                                     for group, cases in BAD.items() for c in cases])
def test_a_bad_study_file_is_refused_with_file_line_and_field(case: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(case["text"], encoding="utf-8")
    out = tmp_path / "run"
    code, output = _invoke("run", str(path), "--out", str(out))
    message = " ".join(output.split())
    assert code == 2, output
    assert f"{path}:{case['line']}:" in message, message
    if "field" in case:
        assert f"field '{case['field']}'" in message, message
    for words in case["says"]:
        assert words in message, message
    assert "Traceback" not in output and not out.exists()


def test_a_bad_flag_over_a_study_names_the_flag(tmp_path: Path) -> None:
    code, output = _invoke("run", "study:quickstart", "--limit", "0", "--out", str(tmp_path / "run"))
    assert code == 2 and "--limit 0: out of range (allowed: from 1 to 10,000,000)" in " ".join(output.split())
    code, output = _invoke("run", "study:quickstart", "--exam-mode", "all", "--out", str(tmp_path / "run"))
    assert code == 2 and "all" in output
    code, output = _invoke("run", "study:nope")
    assert code == 2 and "quickstart" in output  # the known studies are listed
    code, output = _invoke("run", "study:quickstart", "calc3-exam1")
    assert code == 2 and "run it alone" in output
    assert not (tmp_path / "run").exists()


def test_resume_keeps_the_study_and_refuses_to_change_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    assert _invoke("run", "study:quickstart", "--model", "mock/echo", "--limit", "1", "--out", str(out), "-q")[0] == 0
    code, output = _invoke("run", "--resume", str(out), "--max-tokens", "9")
    assert code == 2 and "--max-tokens cannot change a run being resumed" in output
    code, output = _invoke("run", "--resume", str(out), "--attempts", "2", "--json")
    assert code == 0 and json.loads(output)["this_invocation"]["skipped"] == 1


def test_the_schema_describes_every_field_and_each_analysis_options() -> None:
    code, output = _invoke("schema", "study")
    assert code == 0
    schema = json.loads(output)
    assert set(schema["properties"]) == set(Study.model_fields)
    assert schema["required"] == ["study", "items"]
    analyses = schema["properties"]["analyses"]
    assert analyses["additionalProperties"] is False and "threads" in analyses["properties"]["flow"]["properties"]
    assert {"type": "string", "minLength": 1, "description": "provider/model"} in schema["$defs"]["ModelRef"]["anyOf"]


def test_every_built_in_study_validates_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = study_schema()
    for name in builtin_studies():
        path = Path(load_study(f"study:{name}")[1])
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)


def _pairs_by_grade(limit: int | None = None) -> int:
    """Learner x item pairs of the built-in tutoring items and default profiles, counted from the data
    files (a learner is paired with the items of their grade; an item without a grade with everyone)."""
    from importlib import resources

    folder = resources.files("mathlens")
    items = yaml.safe_load((folder / "items" / "builtin" / "tutoring" / "tutoring.yaml").read_text())["questions"]
    profiles = yaml.safe_load((folder / "analyze" / "adaptivity" / "data" / "profiles_default.yaml").read_text())
    learners = profiles["profiles"] if isinstance(profiles, dict) else profiles
    return sum(1 for q in items[:limit] for p in learners if q.get("grade") in (None, p["grade"]))


def test_study_tutoring_runs_on_scripted_models_and_writes_every_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    code, output = _invoke("run", "study:tutoring", "--model", "mock/a", "--model", "mock/b", "--judge", "mock/j",
                           "-J", f"responses=[{json.dumps(YES)}]", "--limit", "2", "--out", str(out), "-q")
    assert code == 0, output
    manifest = RunStore(out).manifest()
    assert manifest.study == "tutoring" and manifest.tutor is not None
    assert manifest.configurations == [f"condition-{c}" for c in (1, 2, 3, 4)]
    # the study's models read images (vision: true), kept when --model replaces their specs
    assert manifest.tutor.accepts_images == {"mock/a": True, "mock/b": True}
    assert manifest.total_tasks == 2 * 4 * _pairs_by_grade(limit=2)
    records = list(RunStore(out).records())
    sent = [img for r in records for m in r.messages for img in m.images]
    assert sent and all(Path(img).is_absolute() and Path(img).is_file() for img in sent)
    assert all(r.variant.kind == "profile" for r in records)
    index = json.loads((out / "tables" / "index.json").read_text())
    rows = {t["id"]: t["rows"] for t in index["tables"]}
    assert all(rows.get(t, 0) > 0 for t in TUTORING_TABLES), rows
    assert (out / "report.html").is_file()
    stats = json.loads((out / "analysis" / "tutor_stats.jsonl").read_text().splitlines()[0])
    assert stats["options"] == {"source": "judge", "alpha": 0.05, "seed": 0}


def test_tutor_run_is_the_tutoring_part_of_a_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tutor run`'s options are the study's fields: the run it makes keeps a study naming them."""
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    code, output = _invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--conditions", "3,1", "--images",
                           "describe", "--all-grades", "--profiles", "balanced:1:3", "--limit", "1", "--out", str(out),
                           "-q")
    assert code == 0, output
    saved = Study.model_validate(yaml.safe_load((out / STUDY_FILE).read_text(encoding="utf-8")))
    assert saved.tutoring is not None
    assert (saved.tutoring.conditions, saved.tutoring.images, saved.tutoring.match_grade,
            saved.tutoring.profiles) == ([1, 3], "describe", False, "balanced:1:3")
    design = RunStore(out).manifest().tutor
    assert design is not None and design.conditions == (1, 3) and not design.match_grade
    # balanced:1 is one learner per grade x performance cell (2 grades x 3 levels), each paired with the item
    assert RunStore(out).manifest().total_tasks == 2 * 6
    code, output = _invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--ablate", "all")
    assert code == 2 and "no such option" in output  # the design replaces the ablation: no such option here
    code, output = _invoke("run", "tutoring", "--conditions", "1", "--ablate", "all", "--model", "mock/echo",
                           "--dry-run")
    assert code == 2 and "--ablate: not in a tutoring study" in " ".join(output.split())


def test_the_paper_studies_plan_their_whole_design(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MATHLENS_DATA", raising=False)
    code, output = _invoke("run", "study:tutoring", "--dry-run", "--json")
    assert code == 0, output
    plan = json.loads(output)
    assert plan["models"] == ["ollama/qwen3-vl:30b", "ollama/llama3.2-vision:11b"]
    assert plan["requests"] == 2 * 4 * _pairs_by_grade()
    code, output = _invoke("run", "study:calculus", "--dry-run", "--json", "--limit", "1", "-C",
                           "embedder=local/all-MiniLM-L6-v2")
    assert code == 0, output
    plan = json.loads(output)
    assert plan["questions"] == 9 and plan["runs"] == 5 and plan["configurations"] == ["baseline", "rag", "contextual"]
    assert plan["requests"] > 9 * 3 * 5  # every ablation variant besides each original question
    rows = [{"problem": f"What is {a} + {b}?", "solution": f"$\\boxed{{{a + b}}}$", "answer": str(a + b),
             "level": "Level 1", "type": "Algebra", "unique_id": f"t/{a}.json"} for a, b in [(1, 2), (3, 4), (5, 6)]]
    data = tmp_path / "elsewhere" / "math500_test.jsonl"
    data.parent.mkdir()
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, output = _invoke("run", "study:maple", "--dry-run", "--json", "--items", str(data))
    assert code == 0, output
    assert json.loads(output)["requests"] == 3 * 2  # the whole file (sample 500 of 3), two models


def test_a_built_in_study_finds_its_data_set_or_says_how_to_point_at_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MATHLENS_DATA", raising=False)
    code, output = _invoke("run", "study:maple", "--dry-run", "--out", str(tmp_path / "run"))
    message = " ".join(output.split())
    assert code == 2 and "Traceback" not in output and not (tmp_path / "run").exists()
    assert "study:maple: field 'items[0].source': no item file 'math500_test.jsonl'" in message
    assert str(tmp_path) in message and "--items PATH" in message and "MATHLENS_DATA" in message
    data = tmp_path / "a" / "b"
    data.mkdir(parents=True)
    (data / "math500_test.jsonl").write_text(json.dumps(
        {"problem": "What is 1 + 1?", "solution": "$\\boxed{2}$", "answer": "2", "level": "Level 1",
         "type": "Algebra", "unique_id": "t/1.json"}) + "\n")
    monkeypatch.setenv("MATHLENS_DATA", f"{tmp_path / 'a'}{os.pathsep}{data}")  # searched in order
    code, output = _invoke("run", "study:maple", "--dry-run", "--json")
    assert code == 0 and json.loads(output)["questions"] == 1, output
    code, output = _invoke("run", "study:maple", "--dry-run", "--items", "calc3-exam1", "--format", "auto", "--json")
    assert code == 0 and json.loads(output)["questions"] > 1, output  # --items may name a built-in exam too
    code, output = _invoke("run", "calc3-exam1", "--items", "x.jsonl", "--dry-run")
    assert code == 2 and "not both" in output


def test_the_study_table_formats_are_the_exporters() -> None:
    """The study restates the table formats so that reading it does not load the report: the two lists
    must stay one."""
    import typing

    from mathlens.report.export.render import FORMATS
    from mathlens.study.model import TableFormat

    assert set(typing.get_args(TableFormat)) == set(FORMATS)


def test_reading_a_study_loads_no_report_and_no_analysis_it_does_not_name(tmp_path: Path) -> None:
    """Options of the analyses a study names are checked by their analyzers (so those load); nothing
    else heavy does: not the report, and with no analysis named, none of the numeric libraries."""
    import subprocess
    import sys

    bare = tmp_path / "bare.yaml"
    bare.write_text("study: bare\nitems: [{source: calc3-exam1}]\n", encoding="utf-8")
    heavy = ("mathlens.report", "sklearn", "sympy", "statsmodels", "pandas")
    for ref, allowed in ((str(bare), set()), ("study:tutoring", {"sympy", "statsmodels", "pandas"})):
        code = ("import json, sys\nfrom mathlens.study.load import load_study\nfrom mathlens.study import resolve\n"
                f"load_study({ref!r})\nprint(json.dumps([m for m in {heavy!r} if m in sys.modules]))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
        loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
        assert loaded <= allowed, (ref, loaded)


def _cached_rows(cache: Path) -> int:
    """Responses held by the cache in `cache` (0 when it was never opened)."""
    from mathlens.models.cache import ResponseCache

    if not (cache / "responses.sqlite").exists():
        return 0
    held = ResponseCache(cache / "responses.sqlite")
    try:
        return len(held)
    finally:
        held.close()


def test_no_cache_sends_every_request_and_stores_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(cache))
    args = ["run", "calc3-exam1", "--model", "mock/echo", "--limit", "2", "--json"]
    code, output = _invoke(*args, "--out", str(tmp_path / "first"))
    assert code == 0, output
    first = json.loads(output)["this_invocation"]
    assert (first["model_calls"], first["cache_hits"]) == (2, 0) and _cached_rows(cache) == 2
    code, output = _invoke(*args, "--out", str(tmp_path / "again"))
    again = json.loads(output)["this_invocation"]
    assert code == 0 and (again["model_calls"], again["cache_hits"]) == (0, 2)
    code, output = _invoke(*args, "--out", str(tmp_path / "uncached"), "--no-cache")
    uncached = json.loads(output)["this_invocation"]
    assert code == 0 and (uncached["model_calls"], uncached["cache_hits"]) == (2, 0)
    # a resume takes it too: cut after its first record (as a killed run), the run sends the second
    # question again although the cache holds its reply
    run = tmp_path / "uncached"
    records = run / "records.jsonl"
    records.write_text(records.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    code, output = _invoke("run", "--resume", str(run), "--no-cache", "--json")
    resumed = json.loads(output)["this_invocation"]
    assert code == 0 and (resumed["skipped"], resumed["model_calls"], resumed["cache_hits"]) == (1, 1, 0)
    (cache / "responses.sqlite").unlink()  # what --no-cache writes would show in an empty cache
    for side in ("-wal", "-shm"):
        (cache / f"responses.sqlite{side}").unlink(missing_ok=True)
    code, output = _invoke(*args, "--out", str(tmp_path / "into-empty"), "--no-cache")
    assert code == 0 and _cached_rows(cache) == 0


def test_no_cache_reaches_the_judge_of_the_study_analyses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A study's judge-based analysis (here the tutoring rubric scores) runs after the requests: with
    --no-cache neither the run's nor the judge's requests touch the cache; without it both are stored."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(cache))
    args = ["run", "study:tutoring", "--model", "mock/a", "--judge", "mock/j", "-J", f"responses=[{json.dumps(YES)}]",
            "--limit", "1", "--conditions", "1", "-q"]
    code, output = _invoke(*args, "--out", str(tmp_path / "uncached"), "--no-cache")
    assert code == 0, output
    assert (tmp_path / "uncached" / "analysis" / "tutor_scores.jsonl").is_file()
    assert _cached_rows(cache) == 0
    code, output = _invoke(*args, "--out", str(tmp_path / "cached"))
    assert code == 0, output
    records = len(list(RunStore(tmp_path / "cached").records()))
    assert records > 0 and _cached_rows(cache) > records  # the judge's replies as well as the model's
