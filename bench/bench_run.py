"""Benchmarks of the run layer, printed as ratios against a baseline measured in the same script.

1. orchestration: `mathlens run` on a built-in exam vs a plain loop calling llama.cpp directly with
   the same prompts and settings (both as fresh processes, alternated). Goal: <= 1.05x.
2. cached re-run: the same exam again into a new run directory. Goal: < 2% of the first run, 0 calls.
3. concurrency: 32 requests in flight against a local OpenAI-compatible stand-in that answers after a
   fixed delay, mathlens vs a minimal async httpx client sending the same requests. Goal: >= 0.9x.

    .venv/bin/python bench/bench_run.py [--exam calc1-exam1] [--limit 4] [--max-tokens 64] [--repeats 2]
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

import httpx

#: the embedded model timed: the smallest instruction-tuned one, named so the benchmark does not follow
#: the default model (it measures mathlens' own overhead, not a model)
MODEL = "embedded/qwen2.5-coder-0.5b"

PLAIN_LOOP = r"""
import json, sys
from llama_cpp import Llama
from mathlens.models.providers.llamacpp import embedded_model_path, merge_system
from mathlens.models.embedded import get_embedded
from mathlens.models.base import Message
tasks = json.load(open(sys.argv[1]))
name = "qwen2.5-coder-0.5b"
fmt = get_embedded(name).chat_format
llm = Llama(model_path=str(embedded_model_path(name)), n_ctx=4096, n_threads=2, chat_format=fmt, verbose=False,
            seed=0)
for t in tasks:
    c = t["config"]
    msgs = [Message(**m) for m in t["messages"]]
    llm.create_chat_completion(
        messages=merge_system(msgs) if fmt == "gemma" else [{"role": m.role, "content": m.content} for m in msgs],
        temperature=c["temperature"], top_p=c["top_p"], max_tokens=c["max_tokens"],
        repeat_penalty=c["repeat_penalty"], seed=c["seed"], stop=list(c["stop"]) or None)
"""


def _mathlens(args: list[str], cache: Path) -> tuple[float, dict]:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args, "--json", "-q"], env=env,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, json.loads(proc.stdout)


def bench_orchestration(exam: str, limit: int, max_tokens: int, repeats: int) -> None:
    from mathlens.models.base import GenerateConfig
    from mathlens.runs.plan import plan_tasks
    from mathlens.runs.records import ItemSource, ModelEntry
    from mathlens.runs.runner import base_manifest
    from mathlens.solve.prompts import DEFAULT_STOP, EXAM_SYSTEM_ROLE

    manifest = base_manifest(items=[ItemSource(source=exam, limit=limit)], models=[ModelEntry(spec=MODEL)],
                             generate=GenerateConfig(max_tokens=max_tokens, stop=DEFAULT_STOP),
                             system_role=EXAM_SYSTEM_ROLE)
    tasks = [t.model_dump(mode="json") for t in plan_tasks(manifest)]
    work = Path(tempfile.mkdtemp(prefix="mlbench-"))
    (work / "tasks.json").write_text(json.dumps(tasks))
    plain_times, ml_times, cached_times = [], [], []
    calls_cached = []
    for i in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", PLAIN_LOOP, str(work / "tasks.json")], check=True,
                       capture_output=True)
        plain_times.append(time.perf_counter() - start)
        cache = work / f"cache{i}"
        args = ["run", exam, "--model", MODEL, "--limit", str(limit), "--max-tokens", str(max_tokens)]
        t, _ = _mathlens([*args, "--out", str(work / f"run{i}")], cache)
        ml_times.append(t)
        t2, doc = _mathlens([*args, "--out", str(work / f"rerun{i}")], cache)
        cached_times.append(t2)
        calls_cached.append(doc["this_invocation"]["model_calls"])
    ratios = [m / p for m, p in zip(ml_times, plain_times, strict=True)]
    print(f"orchestration ({len(tasks)} requests, max_tokens={max_tokens}, {repeats} alternated pairs)")
    print(f"  plain llama.cpp loop  median {statistics.median(plain_times):7.2f} s")
    print(f"  mathlens run          median {statistics.median(ml_times):7.2f} s")
    print(f"  ratio mathlens/plain  median {statistics.median(ratios):.3f}  (goal <= 1.05)  "
          f"all {[round(r, 3) for r in ratios]}")
    cr = [c / m for c, m in zip(cached_times, ml_times, strict=True)]
    print(f"cached re-run: median {statistics.median(cached_times):.2f} s, ratio to first run "
          f"{statistics.median(cr):.4f} (goal < 0.02), model calls {calls_cached}")


async def _plain_httpx(url: str, payloads: list[dict], concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=256), trust_env=False) as client:
        async def one(p: dict) -> None:
            async with sem:
                r = await client.post(f"{url}/chat/completions", json=p)
                r.raise_for_status()
                r.json()["choices"][0]["message"]["content"]

        start = time.perf_counter()
        await asyncio.gather(*(one(p) for p in payloads))
        return time.perf_counter() - start


async def _mathlens_execute(url: str, n: int, concurrency: int, work: Path) -> float:
    from mathlens.models.base import GenerateConfig
    from mathlens.models.model import RetryPolicy
    from mathlens.runs.records import ItemSource, ModelEntry
    from mathlens.runs.runner import base_manifest, build_models, execute
    from mathlens.runs.store import RunStore

    data = work / "conc.jsonl"
    data.write_text("".join(json.dumps({"id": f"c{i}", "text": f"Compute {i} + {i}."}) + "\n" for i in range(n)))
    manifest = base_manifest(items=[ItemSource(source=str(data))],
                             models=[ModelEntry(spec="openai/standin", options={"base_url": url})],
                             generate=GenerateConfig(max_tokens=32), system_role="S")
    store = RunStore(work / f"conc-run-{time.time_ns()}")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RetryPolicy(), concurrency)
    start = time.perf_counter()
    await execute(store, manifest, models)
    return time.perf_counter() - start


def bench_concurrency(n: int, concurrency: int, delay: float, repeats: int) -> None:
    from mathlens.testing.standin import StandinServer

    work = Path(tempfile.mkdtemp(prefix="mlbench-conc-"))
    payloads = [{"model": "standin", "messages": [{"role": "system", "content": "S"},
                                                  {"role": "user", "content": f"Compute {i} + {i}."}],
                 "max_tokens": 32, "temperature": 0.0} for i in range(n)]
    # The stand-in runs in its own process so its threads do not share the clients' interpreter.
    port_file = work / "port"
    srv = subprocess.Popen([sys.executable, "-m", "mathlens.testing.standin", "--delay", str(delay),
                            "--port-file", str(port_file)], stdout=subprocess.DEVNULL)
    try:
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        url = port_file.read_text().strip() + "/v1"
        plain, ml = [], []
        for _ in range(repeats):
            plain.append(asyncio.run(_plain_httpx(url, payloads, concurrency)))
            ml.append(asyncio.run(_mathlens_execute(url, n, concurrency, work)))
        ratio = [p / m for p, m in zip(plain, ml, strict=True)]  # throughput ratio = time ratio inverted
        print(f"concurrency {concurrency}, {n} requests, server delay {delay}s, {repeats} alternated pairs")
        print(f"  httpx client  median {statistics.median(plain):.2f} s ({n / statistics.median(plain):.1f} req/s)")
        print(f"  mathlens      median {statistics.median(ml):.2f} s ({n / statistics.median(ml):.1f} req/s)")
        print(f"  throughput ratio mathlens/httpx median {statistics.median(ratio):.3f} (goal >= 0.9)  "
              f"all {[round(r, 3) for r in ratio]}")
    finally:
        srv.terminate()
        srv.wait()
    _ = StandinServer  # imported to fail early if the package is broken


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exam", default="calc1-exam1")
    ap.add_argument("--limit", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--requests", type=int, default=640)
    ap.add_argument("--delay", type=float, default=0.25)
    ap.add_argument("--skip-embedded", action="store_true")
    args = ap.parse_args()
    bench_concurrency(args.requests, 32, args.delay, args.repeats)
    if not args.skip_embedded:
        bench_orchestration(args.exam, args.limit, args.max_tokens, args.repeats)


if __name__ == "__main__":
    main()
