"""Typed model options: every backend declares its `-M` keys; unknown or mistyped ones are clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.errors import UserError
from mathlens.models.options import split_options
from mathlens.models.providers.llamacpp import LlamaCppOptions
from mathlens.models.providers.ollama import OllamaOptions
from mathlens.models.providers.openai import OpenAIOptions
from mathlens.models.registry import get_model


@pytest.mark.parametrize(("spec", "options", "message"), [
    ("ollama/m", {"num_ctxx": 4096}, r"unknown model option 'num_ctxx'\. Did you mean 'num_ctx'\?.*Valid options: "
                                     r"api, failure_threshold, hang_s, host, latency_factor, "
                                         r"max_concurrency, num_ctx, probe_s, think, timeout_s, vision\."),
    ("ollama/m", {"api": "completions"}, r"ollama: model option api='completions'"),
    ("ollama/m", {"num_ctx": "lots"}, r"ollama: model option num_ctx='lots'"),
    ("openai/m", {"response_format": "yaml"}, r"openai: model option response_format='yaml'"),
    ("openai/m", {"timeout_s": 0}, r"timeout_s=0"),
    ("openai/m", {"base_urll": "http://127.0.0.1:1/v1"}, r"Did you mean 'base_url'"),
    ("mock/m", {"responses": "not a list"}, r"mock: model option responses="),
])
def test_unknown_or_mistyped_options_are_clear_errors(spec: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(UserError, match=message):
        get_model(spec, options)


def test_valid_options_reach_the_backend() -> None:
    model = get_model("ollama/m", {"num_ctx": 8192, "api": "generate", "host": "http://127.0.0.1:9"})
    identity = model.identity()
    assert identity["num_ctx"] == 8192 and identity["api"] == "generate"
    assert identity["base_url"] == "http://127.0.0.1:9"


def test_split_options_gives_each_backend_its_own_keys() -> None:
    classes = {"ollama/a": OllamaOptions, "openai/b": OpenAIOptions, "embedded": LlamaCppOptions}
    split = split_options(classes, {"num_ctx": 2048, "timeout_s": 30, "n_threads": 1})
    assert split == {"ollama/a": {"num_ctx": 2048, "timeout_s": 30}, "openai/b": {"timeout_s": 30},
                     "embedded": {"n_threads": 1}}
    with pytest.raises(UserError, match=r"unknown model option 'n_thread'\. Did you mean 'n_threads'"):
        split_options(classes, {"n_thread": 1})


def test_run_refuses_an_unknown_option_before_writing_anything(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", "calc1-exam1", "--model", "mock/m",
                           "-M", "respones=" + json.dumps(["x"]), "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "unknown model option 'respones'" in proc.stderr and "Did you mean 'responses'" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()
