"""House conventions that docs/architecture.md states, held against the source.

Internal values are frozen dataclasses. A dataclass that is not frozen must be one of the objects
listed here, each with what it holds that changes: a tally filled while entries stream past, a
model with its running accounting, a lock, a lazily opened knowledge base, a server's state.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "mathlens"

#: module:class -> why it changes after it is made
STATEFUL = {
    "analyze/ablation/analyzer.py:_Groups": "question groups collected while records stream",
    "analyze/ablation/analyzer.py:_Stream": "the summary accumulated while entries stream",
    "analyze/breakdown/compute.py:_QuestionCell": "a question's records collected in one pass",
    "analyze/flow/analyzer.py:_ExamCell": "an exam cell's tallies while entries stream",
    "analyze/flow/analyzer.py:_Tally": "the flow summary's counts while entries stream",
    "analyze/flow/analyzer.py:_StepJudge": "a step judge opened on first use",
    "analyze/grading/analyzer.py:_Group": "a group's verdict counts while records stream",
    "analyze/maple/human.py:_CsvSolution": "a solution's rows gathered from a CSV file",
    "analyze/maple/pipeline.py:_Context": "models and caches a MAPLE run opens and closes",
    "analyze/maple/pipeline.py:_Pending": "a solution waiting for its judge replies",
    "analyze/source_agreement/analyzer.py:_Cell": "a scorer's agreement counts while entries stream",
    "analyze/verify/code.py:StepCode": "what the code blocks put in one step, filled in while they are read",
    "analyze/verify/steps.py:_Acc": "what the reasoning graph knows as steps are read",
    "cli/run.py:_SummaryLoader": "the records left to come, until the summary's modules are loaded",
    "models/model.py:Accounting": "a model's running totals of calls, tokens and errors",
    "models/model.py:Model": "an open model: its provider, cache and accounting",
    "models/providers/_http.py:_LoopSessions": "one HTTP session per event loop, opened on use",
    "models/providers/limits.py:AdaptiveLimit": "the concurrency limit learned from a server's replies",
    "models/providers/pool.py:Replica": "a replica's health and counters",
    "report/server.py:ViewState": "the viewer server's runs, read again when they change",
    "runs/importing/importer.py:_Built": "records and counts built while a source is read",
    "runs/importing/lm_eval.py:_Collector": "rows collected from lm-eval's files",
    "runs/importing/source_items.py:_Set": "questions collected from a source's rows",
    "runs/locks.py:WriterLock": "a held lock file",
    "runs/runner.py:_Sink": "the record file and its pending group commit",
    "solve/retrieval/bm25.py:BM25Index": "an index filled document by document",
    "solve/retrieval/configs.py:RagConfiguration": "its knowledge base, opened on first use",
    "solve/retrieval/configs.py:ContextualConfiguration": "its knowledge base, opened on first use",
    "solve/retrieval/contextualize.py:ContextReport": "the contexts and costs of a contextualisation as it goes",
    "testing/standin.py:StandinState": "what the stand-in server has been asked",
}


def _mutable_dataclasses(package: Path = PACKAGE) -> set[str]:
    out = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for deco in node.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                target = call.func if call else deco
                if not (isinstance(target, ast.Name) and target.id == "dataclass"):
                    continue
                frozen = call is not None and any(k.arg == "frozen" and isinstance(k.value, ast.Constant)
                                                  and k.value.value is True for k in call.keywords)
                if not frozen:
                    out.add(f"{path.relative_to(package).as_posix()}:{node.name}")
    return out


def test_internal_values_are_frozen_dataclasses() -> None:
    mutable = _mutable_dataclasses()
    assert not mutable - STATEFUL.keys(), ("not frozen, and not a listed stateful object (freeze it, or list it "
                                           f"with what changes): {sorted(mutable - STATEFUL.keys())}")
    assert not STATEFUL.keys() - mutable, f"listed but frozen or gone: {sorted(STATEFUL.keys() - mutable)}"


def test_the_check_sees_an_unfrozen_dataclass(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "m.py").write_text("from dataclasses import dataclass\n\n@dataclass\nclass Loose:\n    a: int\n\n"
                                         "@dataclass(order=True)\nclass Ordered:\n    a: int\n\n"
                                         "@dataclass(frozen=True)\nclass Tight:\n    a: int\n", encoding="utf-8")
    assert _mutable_dataclasses(tmp_path) == {"x/m.py:Loose", "x/m.py:Ordered"}
