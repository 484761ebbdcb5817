"""Replies of the wrong shape become records, never an exception that ends the run; Retry-After is
honoured; a run where nothing succeeded exits non-zero and `--retry-errors` sends those requests again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mathlens.errors import MalformedReplyError, TransientModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.models.providers._http import retry_after_seconds
from mathlens.models.registry import get_model
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from mathlens.testing.standin import MALFORMED, StandinServer, default_reply
from support.runs import run_on_standin

#: marker -> (behaviour, expected status, words expected in the error)
CASES: dict[str, tuple[str, str, list[str]]] = {
    "MARK-USAGE-TEXT": ("usage-text", "error", ["usage.prompt_tokens", "whole number", "'abc'"]),
    "MARK-USAGE-HUGE": ("usage-huge", "error", ["usage.prompt_tokens", "finite"]),
    "MARK-USAGE-NAN": ("usage-nan", "error", ["usage.prompt_tokens", "finite"]),
    "MARK-CONTENT-NUM": ("content-number", "error", ["choices.0.message.content", "string"]),
    "MARK-NO-CHOICES": ("no-choices", "error", ["choices is empty"]),
    "MARK-DEEP": ("deep", "error", ["nested too deeply"]),
    "MARK-PARTS": ("content-parts", "ok", []),
}


def _dataset(path: Path, markers: list[str], n_plain: int) -> Path:
    rows = [{"id": f"m{i}", "text": f"Question {m}: compute 2+2."} for i, m in enumerate(markers)]
    rows += [{"id": f"p{i}", "text": f"Plain question {i}: compute {i}+1."} for i in range(n_plain)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_every_malformed_shape_is_named() -> None:
    assert {b for b, _, _ in CASES.values()} == set(MALFORMED) | {"deep"}


@pytest.mark.server
async def test_wrong_type_replies_become_records(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", list(CASES), 5)
    faults = {marker: [behaviour] * 5 for marker, (behaviour, _, _) in CASES.items()}
    with StandinServer(faults=faults) as srv:
        store, result = await run_on_standin(srv.url, data, tmp_path / "run", timeout_s=10.0)
        attempts = dict(srv.state.attempts)
    recs = {r.question_id: r for r in store.records()}
    assert result.written == len(recs) == len(CASES) + 5
    for i, (marker, (_, status, words)) in enumerate(CASES.items()):
        rec = recs[f"m{i}"]
        assert rec.status == status, (marker, rec.error)
        for word in words:
            assert word in (rec.error or ""), (marker, rec.error)
    parts = recs[f"m{list(CASES).index('MARK-PARTS')}"]
    expected = default_reply([{"role": "user", "content": parts.messages[-1].content}])
    assert parts.response == expected and parts.usage.completion_tokens == 7
    assert all(recs[f"p{i}"].status == "ok" for i in range(5))
    # a malformed reply is not worth retrying: each was asked once
    assert all(attempts[m] == 1 for m in CASES)


@pytest.mark.server
async def test_retry_after_is_honoured_and_capped() -> None:
    msgs = [Message(role="user", content="MARK-RA: 1+1")]
    with StandinServer(faults={"MARK-RA": ["429:1"]}) as srv:
        model = get_model("openai/standin", {"base_url": srv.url + "/v1"},
                          retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02, timeout_s=5))
        start = time.perf_counter()
        out = await model.generate(msgs, GenerateConfig(max_tokens=8))
        waited = time.perf_counter() - start
        await model.aclose()
    assert out.text.startswith("Step 1") and waited >= 1.0
    capped = RetryPolicy(base_delay=0.01, max_delay=0.02, max_retry_after=0.5)
    import random

    assert capped.delay(1, random.Random(0), retry_after=3600) == 0.5
    assert capped.delay(1, random.Random(0), retry_after=None) <= 0.02


def test_retry_after_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("-4") == 0.0
    assert retry_after_seconds("nan") is None and retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


@pytest.mark.server
async def test_secret_echoed_in_error_body_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-" + "q7Zx" * 8
    monkeypatch.setenv("MATHLENS_TEST_KEY", key)
    data = _dataset(tmp_path / "q.jsonl", ["MARK-ECHO"], 0)
    with StandinServer(faults={"MARK-ECHO": ["echo-headers"] * 5}) as srv:
        manifest = base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(
            spec="openai/standin", options={"base_url": srv.url + "/v1", "api_key_env": "MATHLENS_TEST_KEY"})],
            generate=GenerateConfig(max_tokens=8), system_role="S")
        store = RunStore(tmp_path / "run")
        store.write_manifest(manifest)
        retry = RetryPolicy(max_attempts=1, timeout_s=5)
        models = build_models(manifest, None, retry, concurrency=1)
        await closing_all(execute(store, manifest, models), models.values())
    text = store.records_path.read_text()
    assert "HTTP 500" in text and "request_headers" in text
    assert key not in text and "q7Zxq7Zx" not in text and "[REDACTED]" in text


def test_api_key_option_is_refused() -> None:
    from mathlens.errors import UserError

    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        get_model("openai/x", {"api_key": "sk-abc", "base_url": "http://127.0.0.1:1/v1"})


def test_malformed_reply_error_is_permanent() -> None:
    assert not issubclass(MalformedReplyError, TransientModelError)


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], env=env, text=True,
                          capture_output=True, timeout=120)


@pytest.mark.server
def test_all_errors_exit_nonzero_then_retry_errors_completes(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "q.jsonl", [], 3)
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    run_dir = tmp_path / "run"
    with StandinServer(faults={"Plain question": ["400"] * 3}) as srv:
        first = _cli("run", str(data), "--model", "openai/standin", "--base-url", srv.url + "/v1",
                     "--out", str(run_dir), "-q", env=env)
        assert first.returncode == 1, first.stderr
        assert "no request succeeded" in first.stderr and "--retry-errors" in first.stderr
        assert "Traceback" not in first.stderr
        plain = _cli("run", "--resume", str(run_dir), "-q", env=env)  # errors count as done
        assert plain.returncode == 1
        again = _cli("run", "--resume", str(run_dir), "--retry-errors", "-q", env=env)
        assert again.returncode == 0, again.stderr
    recs = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert sorted(r["question_id"] for r in recs) == ["p0", "p1", "p2"]
    assert all(r["status"] == "ok" for r in recs)
