"""`mathlens view` under load: 1,000 concurrent requests on 127.0.0.1, against the server as it was.

Two servers answer the same runs folder (a small analysed run made here), each in a process of
its own, measured one after the other in the same run:

- `mathlens view` as shipped: a listen backlog of 1,024, a fixed pool of threads, and an
  immediate `503` (with Retry-After) for connections beyond the pool's queue;
- the baseline: the same request handler on the standard library's `ThreadingHTTPServer`
  (a thread per connection, a listen backlog of 5), as the viewer was before.

A client opens N connections at once (default 1,000; asyncio, one process), sends `GET` for the
index page or a run's report page, and waits up to `--timeout` seconds for each answer. Printed per
server and page: answered (200), refused (503), failed (reset, refused connection, timeout), the
median / 99th percentile / slowest answer, and the wall time until every request had its outcome.
The goal: every request answered or refused, none failing or hanging, all within seconds. Asserts
nothing; the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BASELINE = """
import sys
from http.server import ThreadingHTTPServer
from pathlib import Path
from mathlens.report.server import ViewState, _Handler, serve

class Baseline(ThreadingHTTPServer):
    daemon_threads = True
    def __init__(self, state):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state

server = Baseline(ViewState(Path(sys.argv[1])))
print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
serve(server, float(sys.argv[2]))
"""


def make_runs(root: Path) -> str:
    """A runs folder with one small analysed run; returns the run's name."""
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(root / "cache")}
    run = root / "runs" / "demo"
    responses = json.dumps(["Step 1: f'(x) = 2x + 3 = 0.\nStep 2: x = -3/2.\nFinal answer: -9/4"])
    for args in (["run", "calc3-exam1", "--model", "mock/bench", "-M", f"responses={responses}", "--limit", "3",
                  "--out", str(run), "-q"], ["analyze", str(run)]):
        subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return run.name


def start(kind: str, runs: Path, lifetime: float) -> tuple[subprocess.Popen[str], str]:
    """Start a server process; returns it and its URL."""
    if kind == "viewer":
        cmd = [sys.executable, "-m", "mathlens.cli.main", "view", str(runs), "--port", "0", "--lifetime",
               str(lifetime), "--json"]
    else:
        cmd = [sys.executable, "-c", BASELINE, str(runs), str(lifetime)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    if kind != "viewer":
        return proc, proc.stdout.readline().strip()
    text = ""
    while True:  # `view --json` prints one indented document
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the viewer stopped before printing its address")
        text += line
        if line.rstrip() == "}":
            return proc, str(json.loads(text)["url"])


async def _one(host: str, port: int, path: str, timeout: float) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readline(), timeout)
        await asyncio.wait_for(reader.read(), timeout)
        writer.close()
        parts = head.split()
        status = parts[1].decode() if len(parts) > 1 else "no status"
    except TimeoutError:
        status = "timeout"
    except OSError as exc:
        status = type(exc).__name__
    return status, time.perf_counter() - start


async def storm(url: str, path: str, n: int, timeout: float) -> dict[str, Any]:
    """N requests at once; counts by outcome and latency figures."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    start = time.perf_counter()
    results = await asyncio.gather(*(_one(host, int(port), path, timeout) for _ in range(n)))
    wall = time.perf_counter() - start
    by: dict[str, int] = {}
    for status, _ in results:
        by[status] = by.get(status, 0) + 1
    times = sorted(t for _, t in results)
    return {"answered": by.get("200", 0), "refused": by.get("503", 0),
            "failed": n - by.get("200", 0) - by.get("503", 0),
            "outcomes": by, "median_s": round(statistics.median(times), 3),
            "p99_s": round(times[int(0.99 * (len(times) - 1))], 3), "max_s": round(times[-1], 3),
            "wall_s": round(wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="concurrent requests")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        name = make_runs(Path(tmp))
        runs = Path(tmp) / "runs"
        for kind in ("viewer", "baseline"):
            proc, url = start(kind, runs, lifetime=3 * args.timeout + 60)
            try:
                for page, path in (("index", "/"), ("report", f"/run/{name}")):
                    asyncio.run(storm(url, path, 1, args.timeout))  # warm: the report is built once, then cached
                    got = asyncio.run(storm(url, path, args.n, args.timeout))
                    rows.append({"server": kind, "page": page, **got})
            finally:
                proc.kill()
                proc.wait()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.n} concurrent requests on 127.0.0.1 (timeout {args.timeout:.0f} s each)")
    print(f"{'server':<9} {'page':<7} {'200':>5} {'503':>5} {'failed':>6} {'median s':>9} {'p99 s':>7} {'max s':>7} "
          f"{'wall s':>7}")
    for r in rows:
        print(f"{r['server']:<9} {r['page']:<7} {r['answered']:>5} {r['refused']:>5} {r['failed']:>6} "
              f"{r['median_s']:>9.3f} {r['p99_s']:>7.3f} {r['max_s']:>7.3f} {r['wall_s']:>7.2f}"
              + (f"  {r['outcomes']}" if r["failed"] else ""))


if __name__ == "__main__":
    main()
