"""Generation at the server's speed: mathlens against an aiohttp floor, Inspect and lm-eval.

An OpenAI-compatible stand-in (its own process, 127.0.0.1) answers every request after a fixed
delay with unlimited capacity. Each contender sends the same N distinct GSM8K questions (the first
N of ../shared/data/gsm8k_test.jsonl, or generated questions without it) with C requests in
flight, as a fresh process, interleaved, R repeats; wall time of the whole process:

- floor: a minimal asyncio client, one aiohttp session and a semaphore, each reply appended to a
  JSONL file (what any client has to do at least);
- mathlens: `mathlens run` with no concurrency flag at all (the default: adaptive, up to its
  ceiling of 256 in flight, so it may have more in flight than the floor), with `--concurrency C`
  (fixed: the like-for-like comparison) and with `--concurrency auto -M max_concurrency=C`
  (adaptive, ceiling C), a fresh response cache each time; then the cached re-run (same cache, new
  run directory: 0 calls);
- Inspect (`inspect eval`, `--max-connections C`) and lm-eval (`local-chat-completions`,
  `num_concurrent=C`), when installed (the `interop` extra).

Goals (issue: generation at any scale): mathlens with default settings <= 1.1x the floor at 32 and
128 in flight, and faster than Inspect's and lm-eval's whole processes; adaptive within 1.1x of
fixed. The fixed limit at C is printed against the same goal, as the comparison at equal load. A second
part runs the adaptive mode against a stand-in that saturates at a known capacity (works on K at
once, queues the rest): throughput within 10 % of K / delay, no error records.

    .venv/bin/python bench/bench_generation.py [--requests 2000] [--in-flight 32,128] [--repeats 3]
        [--delay 0.2] [--skip inspect,lmeval] [--saturate 16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k_test.jsonl"

FLOOR = r"""
import asyncio, json, sys, aiohttp
url, data, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [json.loads(l) for l in open(data)]
async def main():
    sem = asyncio.Semaphore(n)
    conn = aiohttp.TCPConnector(limit=n)
    with open(out, "a") as fh:
        async with aiohttp.ClientSession(connector=conn) as session:
            async def one(r):
                async with sem:
                    body = {"model": "standin", "max_tokens": 32, "temperature": 0.0,
                            "messages": [{"role": "user", "content": r["text"]}]}
                    async with session.post(url + "/chat/completions", json=body) as resp:
                        reply = await resp.json()
                    fh.write(json.dumps({"id": r["id"], "text": reply["choices"][0]["message"]["content"]}) + "\n")
            await asyncio.gather(*(one(r) for r in rows))
asyncio.run(main())
"""

INSPECT = r"""
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate
rows = [json.loads(l) for l in open(sys.argv[1])]
ds = MemoryDataset([Sample(id=r["id"], input=r["text"]) for r in rows])
logs = eval(Task(dataset=ds, solver=generate()), model="openai-api/standin/standin", display="none",
            max_connections=int(sys.argv[2]), log_dir=sys.argv[3], max_tokens=32, temperature=0.0)
assert logs[0].status == "success", logs[0].status
"""

LMEVAL_TASK = """task: bench_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{text}}}}"
doc_to_target: "0"
generation_kwargs:
  until: ["Question:"]
  do_sample: false
  max_gen_toks: 32
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def questions(path: Path, n: int) -> Path:
    rows = []
    if DATA.is_file():
        with DATA.open() as fh:
            for i, line in zip(range(n), fh, strict=False):
                rows.append({"id": f"g{i}", "text": json.loads(line)["question"]})
    rows += [{"id": f"s{i}", "text": f"Question {i}: what is {i} + {i}?"} for i in range(n - len(rows))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def start_standin(work: Path, delay: float, serve_at_once: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port_file = work / f"port-{time.monotonic_ns()}"
    args = [sys.executable, "-m", "mathlens.testing.standin", "--delay", str(delay), "--port-file", str(port_file)]
    if serve_at_once:
        args += ["--serve-at-once", str(serve_at_once)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    while not port_file.exists() or not port_file.read_text().strip():
        time.sleep(0.02)
    return proc, port_file.read_text().strip()


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(args, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{args[:4]} failed: {done.stderr[-1500:]}")
    return elapsed, done.stdout


REQUEST_PHASE: dict[str, list[float]] = {}


def request_phase(run: Path) -> float:
    """Seconds from the first request sent to the last record written, read from the records."""
    from mathlens.runs.store import RunStore

    recs = list(RunStore(run).records())
    first = min(r.created_at.timestamp() - r.latency_s for r in recs)
    return max(r.created_at.timestamp() for r in recs) - first


def mathlens(url: str, data: Path, work: Path, name: str, concurrency: list[str], cache: Path) -> tuple[float, dict]:
    out = work / f"{name}-{time.monotonic_ns()}"
    elapsed, stdout = timed([sys.executable, "-m", "mathlens.cli.main", "run", str(data), "--format", "jsonl",
                             "--model", "openai/standin", "--base-url", url + "/v1", "--max-tokens", "32",
                             *concurrency, "--out", str(out), "--json", "-q"],
                            {"MATHLENS_CACHE_DIR": str(cache)})
    if name in ("default", "fixed", "adaptive"):
        REQUEST_PHASE.setdefault(name, []).append(request_phase(out))
    return elapsed, json.loads(stdout)


def lmeval(url: str, data: Path, work: Path, n: int) -> float:
    tasks = work / f"lm-tasks-{time.monotonic_ns()}"
    tasks.mkdir()
    (tasks / "bench_gen.yaml").write_text(LMEVAL_TASK.format(data=data))
    env = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(work / "hf"),
           "HF_HOME": str(work / "hf-home")}
    elapsed, _ = timed([sys.executable, "-m", "lm_eval", "--model", "local-chat-completions", "--model_args",
                        f"model=standin,base_url={url}/v1/chat/completions,tokenized_requests=False,"
                        f"tokenizer_backend=None,num_concurrent={n},max_retries=1", "--tasks", "bench_gen",
                        "--include_path", str(tasks), "--output_path", str(work / "lm-out"),
                        "--apply_chat_template"], env)
    return elapsed


def have(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def med(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.2f} [{min(xs):.2f}-{max(xs):.2f}]"


def bench_in_flight(n: int, requests: int, repeats: int, delay: float, skip: set[str], work: Path) -> None:
    data = questions(work / f"q{requests}.jsonl", requests)
    proc, url = start_standin(work, delay)
    times: dict[str, list[float]] = {}
    calls: list[int] = []
    contenders = ["floor", "default", "fixed", "adaptive", "cached"]
    if "inspect" not in skip and have("inspect_ai"):
        contenders.append("inspect")
    if "lmeval" not in skip and have("lm_eval"):
        contenders.append("lm-eval")
    try:
        for rep in range(repeats):
            cache = work / f"cache-{n}-{rep}"
            for name in contenders:
                if name == "floor":
                    t, _ = timed([sys.executable, "-c", FLOOR, url + "/v1", str(data), str(n),
                                  str(work / f"floor-{rep}.jsonl")])
                elif name == "default":
                    t, doc = mathlens(url, data, work, "default", [], work / f"c-d-{n}-{rep}")
                elif name == "fixed":
                    t, doc = mathlens(url, data, work, "fixed", ["--concurrency", str(n)], cache)
                elif name == "adaptive":
                    t, doc = mathlens(url, data, work, "adaptive", ["--concurrency", "auto", "-M",
                                                                    f"max_concurrency={n}"], work / f"c-a-{n}-{rep}")
                elif name == "cached":
                    t, doc = mathlens(url, data, work, "cached", ["--concurrency", str(n)], cache)
                    calls.append(int(doc["this_invocation"]["model_calls"]))
                elif name == "inspect":
                    t, _ = timed([sys.executable, "-c", INSPECT, str(data), str(n), str(work / "inspect-logs")],
                                 {"STANDIN_API_KEY": "none", "STANDIN_BASE_URL": url + "/v1"})
                else:
                    t = lmeval(url, data, work, n)
                times.setdefault(name, []).append(t)
    finally:
        proc.terminate()
        proc.wait()
    floor = times["floor"]
    ideal = requests * delay / n
    print(f"\n{requests} requests, {n} in flight, server delay {delay} s (ideal {ideal:.2f} s), {repeats} repeats; "
          "wall time of each fresh process, median [min-max]; ratio = median of per-repeat ratios")
    for name in contenders:
        ts = times[name]
        ratio = statistics.median(t / f for t, f in zip(ts, floor, strict=True))
        note = {"default": "goal <= 1.1 (no flags: adaptive, up to 256 in flight)",
                "fixed": f"goal <= 1.1 (at most {n} in flight, as the floor)",
                "cached": f"model calls {calls}"}.get(name, "")
        if name == "adaptive":
            ratio_fixed = statistics.median(a / f for a, f in zip(ts, times["fixed"], strict=True))
            note = f"vs fixed {ratio_fixed:.2f} (goal <= 1.1)"
        print(f"  {name:9} {med(ts)} s  x floor {ratio:5.2f}  {note}")
    for name, phases in REQUEST_PHASE.items():
        ratio = statistics.median(p / f for p, f in zip(phases, floor, strict=True))
        print(f"  {name:9} request phase only (first request to last record) {med(phases)} s  x floor {ratio:5.2f}")
    REQUEST_PHASE.clear()


def bench_saturating(capacity: int, delay: float, requests: int, work: Path) -> None:
    data = questions(work / f"sat{requests}.jsonl", requests)
    proc, url = start_standin(work, delay, serve_at_once=capacity)
    try:
        t, doc = mathlens(url, data, work, "saturate", ["--concurrency", "auto"], work / "c-sat")
        t0, _ = mathlens(url, data, work, "saturate-fixed", ["--concurrency", str(capacity)], work / "c-sat-f")
    finally:
        proc.terminate()
        proc.wait()
    errors = sum(g["error"] for g in doc["groups"]) if "groups" in doc else doc.get("errors")
    rate, cap = requests / t, capacity / delay
    print(f"\nsaturating server: works on {capacity} at once, {delay} s each (capacity {cap:.0f} req/s), "
          f"{requests} requests")
    print(f"  adaptive: {t:.2f} s whole process, {rate:.1f} req/s = {rate / cap:.2f} of capacity; errors {errors}")
    print(f"  fixed {capacity} (knowing the capacity): {t0:.2f} s, {requests / t0:.1f} req/s = "
          f"{requests / t0 / cap:.2f} of capacity")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--in-flight", default="32,128", help="comma list; empty for the saturating part alone")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--skip", default="", help="comma list: inspect, lmeval, saturate")
    ap.add_argument("--saturate", type=int, default=16,
                    help="capacity of the saturating stand-in (1 or more; --skip saturate leaves the part out)")
    args = ap.parse_args()
    if args.saturate < 1:
        ap.error("--saturate takes a capacity of 1 or more; to leave the part out, --skip saturate")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    work = Path(tempfile.mkdtemp(prefix="mlbench-gen-"))
    for n in (int(x) for x in args.in_flight.split(",") if x.strip()):
        bench_in_flight(n, args.requests, args.repeats, args.delay, skip, work)
    if "saturate" not in skip:
        bench_saturating(args.saturate, args.delay, args.requests // 2, work)


if __name__ == "__main__":
    main()
