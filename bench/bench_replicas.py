"""Benchmark of replica pools against local stand-in replicas (separate processes on 127.0.0.1).

Each replica answers after a fixed delay D and takes at most C requests at once (a 429 with
`Retry-After` past that), so a pool of n replicas can at best serve n*C/D requests per second.

1. throughput with 1, 2 and 4 replicas: a run through the run layer (`execute`, records written)
   with `--concurrency C`, against (a) the ideal n*C/D and (b) a minimal async httpx client that
   knows the capacities and keeps exactly C requests in flight on each replica (the oracle),
   measured in the same script. Rows for the adaptive limit (`--concurrency auto`: it probes above
   C and meets 429s) and for a fixed limit of n*C over the pool (`--concurrency n*C`).
2. a dead replica: 3 replicas, one killed (SIGKILL) during the run. Reported: records lost or
   duplicated (must be 0), seconds from the kill to the last request the pool sent to it, and
   seconds until the completion rate over 1 s is back to 90% of what the two survivors serve.

    .venv/bin/python bench/bench_replicas.py [--delay 0.25] [--capacity 4] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, Manifest, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore


def start_replicas(n: int, delay: float, capacity: int, retry_after: float, work: Path) -> list[subprocess.Popen[str]]:
    procs = []
    for i in range(n):
        port_file = work / f"port{i}-{time.monotonic_ns()}"
        procs.append(subprocess.Popen([sys.executable, "-m", "mathlens.testing.standin", "--delay", str(delay),
                                       "--capacity", str(capacity), "--retry-after", str(retry_after),
                                       "--port-file", str(port_file)], stdout=subprocess.DEVNULL, text=True))
        for _ in range(500):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.02)
        procs[-1].url = port_file.read_text().strip() + "/v1"  # type: ignore[attr-defined]
    return procs


def stop(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


def dataset(path: Path, n: int, tag: str) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "text": f"{tag} question {i}: compute {i} + 1."}) + "\n"
                            for i in range(n)))
    return path


def manifest_for(data: Path, urls: list[str]) -> Manifest:
    opts: dict[str, object] = {"base_urls": urls} if len(urls) > 1 else {"base_url": urls[0]}
    return base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec="openai/standin", options=opts)],
                         generate=GenerateConfig(max_tokens=32), system_role="S")


async def run_pool(work: Path, name: str, urls: list[str], n: int, capacity: int, fixed: bool,
                   kill: subprocess.Popen[str] | None = None, kill_after: float = 0.0) -> dict[str, object]:
    data = dataset(work / f"{name}.jsonl", n, name)
    manifest = manifest_for(data, urls)
    store = RunStore(work / name)
    store.write_manifest(manifest)
    retry = RetryPolicy(max_attempts=6, base_delay=0.05, max_delay=1.0, timeout_s=60)
    # fixed: the sum of the capacities over the pool; adaptive: each replica finds its own
    models = build_models(manifest, None, retry, concurrency=capacity * len(urls) if fixed else "auto")
    pool = models["openai/standin"].provider.pool  # type: ignore[attr-defined]
    victim_url = getattr(kill, "url", None)
    last_sent_to_victim: list[float] = []

    async def watch() -> None:
        seen = 0
        while True:
            for r in pool.replicas:
                if r.url == victim_url and r.requests > seen:
                    seen = r.requests
                    last_sent_to_victim.append(time.perf_counter())
            await asyncio.sleep(0.005)

    async def killer() -> float:
        await asyncio.sleep(kill_after)
        assert kill is not None
        kill.send_signal(signal.SIGKILL)
        return time.perf_counter()

    watcher = asyncio.ensure_future(watch())
    killing = asyncio.ensure_future(killer()) if kill is not None else None
    start = time.perf_counter()
    result = await execute(store, manifest, models)
    elapsed = time.perf_counter() - start
    watcher.cancel()
    for m in models.values():
        await m.aclose()
    recs = list(store.records())
    counts = Counter(r.key for r in recs)
    out: dict[str, object] = {
        "elapsed": elapsed, "rate": n / elapsed, "records": len(recs), "errors": sum(r.status == "error" for r in recs),
        "lost": n - len(counts), "duplicated": sum(c - 1 for c in counts.values() if c > 1),
        "overloaded": sum(s.overloaded for s in pool.stats()),
    }
    if killing is not None:
        killed_at = await killing
        after = [t for t in last_sent_to_victim if t >= killed_at]
        out["route_around_s"] = (max(after) - killed_at) if after else 0.0
        done = sorted(r.created_at.timestamp() for r in recs)
        wall0 = time.time() - time.perf_counter()  # perf_counter -> epoch seconds
        out["recovery_s"] = recovery(done, killed_at + wall0, survivors_rate=2 * capacity / DELAY)
        out["victim_state"] = next(s.state for s in result.replicas["openai/standin"] if s.url == victim_url)
    return out


def recovery(done: list[float], kill_time: float, survivors_rate: float) -> float | None:
    """Seconds from the kill to the end of the first window of one delay length, wholly after the kill,
    in which completions reach 90% of what the survivors can serve (None: never)."""
    bin_s = DELAY
    end = kill_time + bin_s
    while end <= (max(done) if done else kill_time):
        count = sum(1 for x in done if end - bin_s < x <= end)
        if count >= 0.9 * survivors_rate * bin_s:
            return end - kill_time
        end += bin_s / 5
    return None


async def oracle(urls: list[str], n: int, capacity: int, tag: str) -> float:
    """A client that knows each replica's capacity: C requests in flight on each, round robin."""
    limits = httpx.Limits(max_connections=1024, max_keepalive_connections=256)
    async with httpx.AsyncClient(timeout=60, limits=limits, trust_env=False) as client:
        sems = [asyncio.Semaphore(capacity) for _ in urls]

        async def one(i: int) -> None:
            k = i % len(urls)
            async with sems[k]:
                body = {"model": "standin", "max_tokens": 32, "temperature": 0.0,
                        "messages": [{"role": "system", "content": "S"},
                                     {"role": "user", "content": f"{tag} question {i}: compute {i} + 1."}]}
                resp = await client.post(f"{urls[k]}/chat/completions", json=body)
                resp.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return n / (time.perf_counter() - start)


DELAY = 0.25


async def main() -> None:
    global DELAY
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.25)
    parser.add_argument("--capacity", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0, help="ideal length of each throughput run")
    parser.add_argument("--retry-after", type=float, default=0.5)
    args = parser.parse_args()
    DELAY = args.delay
    os.environ.setdefault("MATHLENS_CACHE_DIR", tempfile.mkdtemp(prefix="mlbench-cache-"))
    work = Path(tempfile.mkdtemp(prefix="mlbench-replicas-"))
    c, d = args.capacity, args.delay
    print(f"replicas: delay {d} s, capacity {c} each (429 + Retry-After {args.retry_after} s past it); "
          f"fixed rows: --concurrency {c} x replicas")
    print(f"{'replicas':>8} {'limit':>9} {'requests':>8} {'ideal/s':>8} {'oracle/s':>8} {'pool/s':>7} "
          f"{'/ideal':>7} {'/oracle':>7} {'429s':>5} {'lost':>4} {'dup':>4}")
    for n in (1, 2, 4):
        procs = start_replicas(n, d, c, args.retry_after, work)
        try:
            urls = [p.url for p in procs]  # type: ignore[attr-defined]
            ideal = n * c / d
            requests = int(args.seconds * ideal)
            best = await oracle(urls, requests, c, f"oracle{n}")
            for fixed in (False, True):
                res = await run_pool(work, f"pool{n}{'f' if fixed else 'a'}", urls, requests, c, fixed)
                rate = float(res["rate"])  # type: ignore[arg-type]
                label = f"fixed {n * c}" if fixed else "auto"
                print(f"{n:>8} {label:>9} {requests:>8} {ideal:>8.1f} {best:>8.1f} {rate:>7.1f} {rate / ideal:>7.2f} "
                      f"{rate / best:>7.2f} {res['overloaded']!s:>5} {res['lost']!s:>4} {res['duplicated']!s:>4}")
        finally:
            stop(procs)
    procs = start_replicas(3, d, c, args.retry_after, work)
    try:
        urls = [p.url for p in procs]  # type: ignore[attr-defined]
        requests = int(args.seconds * 2 * 3 * c / d)
        res = await run_pool(work, "dead", urls, requests, c, fixed=True, kill=procs[2], kill_after=args.seconds / 2)
        print(f"\ndead replica: 3 replicas, {requests} requests, one killed (SIGKILL) after {args.seconds / 2:.1f} s")
        print(f"  records {res['records']}, errors {res['errors']}, lost {res['lost']}, "
              f"duplicated {res['duplicated']}, victim state {res['victim_state']}")
        rec = res["recovery_s"]
        print(f"  last request sent to it {1000 * float(res['route_around_s']):.0f} ms after the kill; "  # type: ignore[arg-type]
              f"throughput back to 90% of the survivors' {2 * c / d:.0f}/s after "
              f"{'never' if rec is None else f'{float(rec):.2f} s'}")  # type: ignore[arg-type]
    finally:
        stop(procs)


if __name__ == "__main__":
    asyncio.run(main())
