"""`mathlens analyze --executor ray` writes the same documents as the local pool.

A run of real GSM8K model solutions (`../shared/data`) is analysed three times: with the
local thread pool, with a private Ray cluster the command starts itself (no address), and on a
Ray cluster this test starts with `ray start --head` on 127.0.0.1 and joins by address. The flow
and answers documents' entries must be byte-identical, and so must their envelopes apart from
the fields that name the run. (GSM8K's arithmetic keeps every symbolic check far inside its
wall-clock budget; a MATH solution whose check takes close to the 2 s budget can time out under one
executor's load and not the other's, which is the budget working, not the executor differing.)
Ray processes are stopped in a finalizer (`ray stop --force`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.testing.synthetic import write_synthetic_run

pytest.importorskip("ray")

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
RAY = Path(sys.executable).with_name("ray")
pytestmark = [pytest.mark.slow, pytest.mark.external,
              pytest.mark.skipif(not (DATA / "math500_test.jsonl").is_file(), reason="../shared/data is absent")]

DOCUMENTS = ("flow", "answers", "sensitivity")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_stop() -> None:
    subprocess.run([str(RAY), "stop", "--force"], capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, str]]:
    """A one-node Ray cluster on 127.0.0.1 (2 CPUs, 200 MB object store): its GCS address and its
    Ray Client (`ray://`) address."""
    port, client_port = _free_port(), _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    started = subprocess.run(
        [str(RAY), "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
         "--include-dashboard=false", "--object-store-memory=200000000", "--disable-usage-stats",
         f"--ray-client-server-port={client_port}"],
        capture_output=True, text=True, timeout=300, env=env, check=False)
    try:
        if started.returncode != 0:
            pytest.fail(f"ray start failed: {started.stderr[-2000:]}")
        yield f"127.0.0.1:{port}", f"ray://127.0.0.1:{client_port}"
    finally:
        _ray_stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("ray-runs")
    first = write_synthetic_run(base / "local", 48, DATA, solutions=24, seed=3, sources=("gsm8k",)).root
    out = {"local": first}
    for name in ("ray-private", "ray-address", "ray-client"):
        shutil.copytree(first, base / name)
        out[name] = base / name
    return out


def _analyze(run: Path, *extra: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["analyze", str(run), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _entries_and_envelope(run: Path, name: str) -> tuple[list[str], dict[str, object]]:
    lines = (run / "analysis" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    envelope = json.loads(lines[0])
    for key in ("run_id", "records_sha256", "mathlens_version"):
        envelope.pop(key)
    return lines[1:], envelope


def _same_documents(a: Path, b: Path) -> None:
    for name in DOCUMENTS:
        entries_a, env_a = _entries_and_envelope(a, name)
        entries_b, env_b = _entries_and_envelope(b, name)
        assert len(entries_a) == len(entries_b) > 0, name
        assert entries_a == entries_b, f"{name}: entries differ between executors"
        assert env_a == env_b, f"{name}: envelopes differ between executors"


def test_private_ray_cluster_matches_local_pool(runs: dict[str, Path]) -> None:
    _analyze(runs["local"], "--only", ",".join(DOCUMENTS))
    try:
        _analyze(runs["ray-private"], "--only", ",".join(DOCUMENTS), "--executor", "ray", "--workers", "2",
                 "--batch", "5")
    finally:
        import ray

        assert not ray.is_initialized(), "the command must shut down the cluster it started"
    _same_documents(runs["local"], runs["ray-private"])
    flow = json.loads((runs["local"] / "analysis" / "flow.jsonl").read_text().splitlines()[0])
    assert flow["summary"]["analysed"] == 48  # real work was compared, not two empty documents


@pytest.mark.parametrize("how", ["ray-address", "ray-client"])
def test_ray_cluster_joined_by_address_matches_local_pool(runs: dict[str, Path], cluster: tuple[str, str],
                                                          how: str) -> None:
    """Joined at its GCS address, or through Ray Client (`ray://HOST:PORT`)."""
    if not (runs["local"] / "analysis" / "flow.jsonl").is_file():
        _analyze(runs["local"], "--only", ",".join(DOCUMENTS))
    address = cluster[0] if how == "ray-address" else cluster[1]
    _analyze(runs[how], "--only", ",".join(DOCUMENTS), "--executor", "ray", "--address", address)
    _same_documents(runs["local"], runs[how])


def test_unreachable_address_is_a_user_error(runs: dict[str, Path]) -> None:
    port = _free_port()
    result = CliRunner().invoke(app, ["analyze", str(runs["local"]), "--only", "answers", "--executor", "ray",
                                      "--address", f"127.0.0.1:{port}"])
    assert result.exit_code != 0
    assert "Ray cluster" in result.output
