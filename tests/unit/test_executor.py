"""The analysis executor: order, bounded reading ahead, options, and the Ray-less error."""

from __future__ import annotations

import builtins
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from mathlens.analyze.executor import ExecutorOptions, LocalExecutor, open_executor, run_batch
from mathlens.errors import UserError


def _slow_square(x: int) -> int:
    time.sleep(0.001 * (x % 5))  # later items often finish first
    return x * x


def test_results_come_back_in_input_order_with_threads() -> None:
    ex = LocalExecutor(3, batch=4, in_flight=3)
    try:
        got = list(ex.map(_slow_square, range(101)))
    finally:
        ex.close()
    assert got == [x * x for x in range(101)]


def test_one_worker_runs_in_the_calling_thread() -> None:
    seen: set[int] = set()

    def where(x: int) -> int:
        seen.add(threading.get_ident())
        return x

    assert list(LocalExecutor(1).map(where, range(10))) == list(range(10))
    assert seen == {threading.get_ident()}


def test_items_are_read_a_bounded_distance_ahead() -> None:
    """However long the input, at most in_flight batches (plus the one being formed) are read
    before the first result is consumed."""
    read = 0

    def items() -> Iterator[int]:
        nonlocal read
        for i in range(10_000):
            read += 1
            yield i

    ex = LocalExecutor(2, batch=5, in_flight=3)
    try:
        results = ex.map(lambda x: x, items())
        assert next(results) == 0
        assert read <= 5 * (3 + 1)
        for _ in range(20):
            next(results)
        assert read <= 5 * (3 + 1) + 21
    finally:
        ex.close()


def test_a_failing_item_raises_in_the_consumer() -> None:
    def boom(x: int) -> int:
        if x == 7:
            raise ValueError("seven")
        return x

    ex = LocalExecutor(2, batch=2)
    try:
        with pytest.raises(ValueError, match="seven"):
            list(ex.map(boom, range(20)))
    finally:
        ex.close()


def test_run_batch_applies_the_function_to_each_item() -> None:
    assert run_batch(str, [1, 2]) == ["1", "2"]


def test_options_are_typed_and_closed() -> None:
    with pytest.raises(ValidationError):
        ExecutorOptions(kind="dask")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ExecutorOptions(workers=0)
    with pytest.raises(ValidationError):
        ExecutorOptions.model_validate({"kind": "local", "threads": 2})
    ex = open_executor(ExecutorOptions(), default_workers=3)
    assert ex.kind == "local" and ex.workers == 3
    ex = open_executor(ExecutorOptions(workers=1), default_workers=3)
    assert ex.workers == 1


def test_an_address_without_ray_is_refused() -> None:
    with pytest.raises(UserError, match="--executor ray"):
        open_executor(ExecutorOptions(address="127.0.0.1:6379"))


@pytest.fixture
def without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing `ray` fails, as where it is not installed."""
    real_import = builtins.__import__

    def no_ray(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)


@pytest.mark.usefixtures("without_ray")
def test_ray_missing_names_the_extra() -> None:
    with pytest.raises(UserError, match=r"mathlens\[ray\]"):
        open_executor(ExecutorOptions(kind="ray"))


@pytest.mark.usefixtures("without_ray")
def test_cli_without_ray_is_a_clear_error(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from mathlens.cli.main import app
    from support.grading_run import make_run

    store = make_run(tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(store.root), "--only", "answers", "--executor", "ray"])
    assert result.exit_code != 0
    assert "mathlens[ray]" in result.output
    bad = CliRunner().invoke(app, ["analyze", str(store.root), "--executor", "spark"])
    assert bad.exit_code != 0 and "local or ray" in bad.output


class _FlakyRay:
    """Stands in for `ray.init` only: the real failure is a race inside the cluster's client proxy
    (its per-client server process dies while starting), which no test can bring about on purpose."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def init(self, **_: Any) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


def test_a_client_connection_whose_server_failed_to_start_is_tried_again(monkeypatch: Any) -> None:
    from mathlens.analyze import executor

    monkeypatch.setattr(executor.time, "sleep", lambda _s: None)
    ray = _FlakyRay([ConnectionError("Initialization failure from server:\nTraceback ...")])
    executor._join(ray, "ray://127.0.0.1:10001", {})
    assert ray.calls == 2
    ray = _FlakyRay([ConnectionError("Initialization failure from server")] * executor.CLIENT_ATTEMPTS)
    with pytest.raises(ConnectionError):
        executor._join(ray, "ray://127.0.0.1:10001", {})
    assert ray.calls == executor.CLIENT_ATTEMPTS


def test_other_join_failures_are_not_retried(monkeypatch: Any) -> None:
    from mathlens.analyze import executor

    monkeypatch.setattr(executor.time, "sleep", lambda _s: None)
    for address, error in (("ray://127.0.0.1:10001", ConnectionError("ray client connection timeout")),
                           ("127.0.0.1:6379", ConnectionError("Initialization failure from server"))):
        ray = _FlakyRay([error])
        with pytest.raises(ConnectionError):
            executor._join(ray, address, {})
        assert ray.calls == 1


@pytest.mark.parametrize("address", ["10.0.0.5:6379", "ray://10.0.0.5:10001", "auto"])
def test_a_joined_cluster_gets_the_token_at_hand(address: str, tmp_path: Any, monkeypatch: Any) -> None:
    """Both ways of joining by address send Ray's token when one is at hand and no mode was chosen
    (a GCS join without it is refused by a cluster with token authentication, Ray's default);
    a Ray already loaded reads its settings again."""
    import sys
    import types

    from mathlens.analyze.executor import token_auth

    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.setenv(name, "")  # recorded, so that what the call sets is undone after the test
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    reads: list[str] = []
    raylet = types.SimpleNamespace(Config=types.SimpleNamespace(initialize=reads.append))
    monkeypatch.setitem(sys.modules, "ray._raylet", raylet)  # a loaded Ray, whose settings are not touched
    token_auth(address)
    assert "RAY_AUTH_MODE" not in os.environ and reads == []  # no token anywhere: nothing set
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("t" * 64)
    token_auth(address)
    assert os.environ["RAY_AUTH_MODE"] == "token"
    assert reads == [""]


def test_a_chosen_auth_mode_is_left_alone(tmp_path: Any, monkeypatch: Any) -> None:
    import sys
    import types

    from mathlens.analyze.executor import token_auth

    reads: list[str] = []
    monkeypatch.setitem(sys.modules, "ray._raylet", types.SimpleNamespace(
        Config=types.SimpleNamespace(initialize=reads.append)))
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "t" * 64)
    token_auth("10.0.0.5:6379")
    assert os.environ["RAY_AUTH_MODE"] == "disabled" and reads == []
