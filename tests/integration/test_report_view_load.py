"""`mathlens view` holds under load: many connections at once are each answered or refused at once
(503 with Retry-After), none hangs or is reset, and the threads answering them stay a fixed pool.
bench/bench_viewer.py measures 1,000 concurrent requests against the server as it was."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.models.base import GenerateConfig
from mathlens.report.server import BACKLOG, ViewOptions, ViewServer, ViewState
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest
from mathlens.runs.store import RunStore

N = 400


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ViewServer]:
    runs = tmp_path / "runs"
    manifest = base_manifest(items=[ItemSource(source="calc1-exam1")], models=[ModelEntry(spec="mock/echo")],
                             generate=GenerateConfig(), system_role="S")
    RunStore(runs / "one").write_manifest(manifest)
    server = ViewServer(ViewState(runs), options=ViewOptions(port=0, workers=4, queued=32))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def _get(port: int) -> str:
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
    writer.write(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    head = await asyncio.wait_for(reader.readline(), 30)
    body = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    status = head.split()[1].decode()
    if status == "503":
        assert b"busy" in body
    return status


async def _storm(port: int, n: int) -> list[str]:
    return list(await asyncio.gather(*(_get(port) for _ in range(n)), return_exceptions=False))


def test_a_storm_of_requests_is_answered_or_refused_and_threads_stay_bounded(served: ViewServer) -> None:
    port = served.server_address[1]
    assert served.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
    assert served.request_queue_size == BACKLOG
    peak = [threading.active_count()]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], threading.active_count())
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    before = threading.active_count()
    start = time.perf_counter()
    statuses = asyncio.run(_storm(port, N))
    took = time.perf_counter() - start
    stop.set()
    watcher.join()
    assert set(statuses) <= {"200", "503"}  # none reset, none timed out (a failure raises above)
    assert statuses.count("200") >= 36  # at least the pool and its queue were served
    assert took < 60
    # the pool's 4 threads (and this watcher) at most; a thread per connection would be hundreds
    assert peak[0] <= before + 4 + 1, (before, peak[0])


@pytest.mark.parametrize(("args", "named"), [
    (["--port", "-1"], "--port"), (["--port", "70000"], "--port"), (["--lifetime", "-5"], "--lifetime"),
    (["--lifetime", "nan"], "--lifetime")])
def test_bad_view_options_are_one_line_and_exit_2(tmp_path: Path, args: list[str], named: str) -> None:
    res = CliRunner().invoke(app, ["view", str(tmp_path), *args])
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert line.startswith("error:") and named in line and "Traceback" not in res.output
