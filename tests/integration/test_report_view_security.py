"""`mathlens view` answers only requests addressed to itself and serves only runs inside its folder."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mathlens.models.base import GenerateConfig
from mathlens.report.server import ViewServer, ViewState, find_runs
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest
from mathlens.runs.store import RunStore


def _run(path: Path) -> Path:
    manifest = base_manifest(items=[ItemSource(source="calc1-exam1")], models=[ModelEntry(spec="mock/echo")],
                             generate=GenerateConfig(), system_role="S")
    RunStore(path).write_manifest(manifest)
    return path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ViewServer, Path]]:
    runs = tmp_path / "runs"
    runs.mkdir()
    _run(runs / "inside")
    outside = _run(tmp_path / "elsewhere" / "secret-run")
    (runs / "linked").symlink_to(outside, target_is_directory=True)
    _run(runs / "partly")
    (runs / "partly" / "records.jsonl").symlink_to(tmp_path / "elsewhere" / "secret-run" / "manifest.json")
    server = ViewServer(ViewState(runs), port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server, runs
    finally:
        server.shutdown()
        server.server_close()


def _get(server: ViewServer, path: str, host: str | None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
    conn.putrequest("GET", path, skip_host=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read().decode("utf-8", "replace")
    conn.close()
    return resp.status, body


def test_symlinks_leading_outside_are_not_runs(served: tuple[ViewServer, Path]) -> None:
    server, runs = served
    assert set(find_runs(runs)) == {"inside"}
    port = server.server_address[1]
    status, body = _get(server, "/", f"127.0.0.1:{port}")
    assert status == 200 and "inside" in body and "secret-run" not in body and "linked" not in body
    assert _get(server, "/run/linked", f"127.0.0.1:{port}")[0] == 404
    assert _get(server, "/run/partly", f"localhost:{port}")[0] == 404


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1",
                                  "localhost.evil.example:{port}", None])
def test_foreign_host_is_refused(served: tuple[ViewServer, Path], host: str | None) -> None:
    server, _ = served
    port = server.server_address[1]
    status, body = _get(server, "/", host.format(port=port) if host else None)
    assert status == 421 and "inside" not in body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_own_host_is_served(served: tuple[ViewServer, Path], host: str) -> None:
    server, _ = served
    status, body = _get(server, "/", host.format(port=server.server_address[1]))
    assert status == 200 and "inside" in body
