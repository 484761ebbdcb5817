"""Generate the chunk contexts of the built-in knowledge base and write them to its data file.

    .venv/bin/python scripts/build_builtin_contexts.py --model ollama/gemma3:4b [--out PATH]

Contextualising every built-in note with a local model takes many minutes, too long for a first
run, so model-written contexts are generated once with this script and shipped in
`src/mathlens/solve/retrieval/builtin/contexts.json`. When that file exists, the built-in knowledge
base takes a note's context from it whenever its request (prompt version, document, passage) is
unchanged, and gives the rest their structural context (document and title); without the file
every note has its structural context. No file is shipped at present: the small embedded models
do not write reliable contexts (docs/retrieval.md). The file also records what generating it cost:
model calls, wall time, fallbacks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from mathlens.models.cache import ResponseCache
from mathlens.models.registry import DEFAULT_MODEL, get_model
from mathlens.solve.retrieval.build import context_key
from mathlens.solve.retrieval.builtin import builtin_documents, contexts_file
from mathlens.solve.retrieval.chunking import ChunkSettings, chunk_documents
from mathlens.solve.retrieval.contextualize import PROMPT_VERSION, ContextSettings, contextualize_sync


def main(argv: list[str] | None = None) -> int:
    """Generate all contexts and write the data file; prints the cost."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=contexts_file())
    args = ap.parse_args(argv)
    docs = builtin_documents()
    by_id = {d.id: d for d in docs}
    chunks = chunk_documents(docs, ChunkSettings())
    settings = ContextSettings()
    model = get_model(args.model, cache=ResponseCache())
    started = time.perf_counter()
    contexts: dict[str, dict[str, str]] = {}
    calls = hits = fallbacks = 0
    # One document at a time, writing the file after each, so that an interrupted run keeps what it
    # made (and a rerun takes the finished requests from the response cache).
    for doc in docs:
        part = [c for c in chunks if c.doc_id == doc.id]
        report = contextualize_sync(part, by_id, model, settings)
        calls, hits, fallbacks = calls + report.calls, hits + report.cache_hits, fallbacks + report.fallbacks
        for c in part:
            contexts[context_key(doc, c, settings)] = {"chunk_id": c.id, "context": report.contexts[c.id]}
        wall = time.perf_counter() - started
        data = {
            "prompt_version": PROMPT_VERSION, "model": args.model, "model_identity": model.identity(),
            "generated_at": datetime.now(UTC).isoformat(timespec="seconds"), "chunks": len(contexts),
            "calls": calls, "cache_hits": hits, "fallbacks": fallbacks, "seconds": round(wall, 1),
            "prompt_tokens": model.stats.prompt_tokens, "completion_tokens": model.stats.completion_tokens,
            "contexts": contexts,
        }
        args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{doc.id}: {len(contexts)}/{len(chunks)} chunks, {calls} calls, {hits} cached, {wall:.0f} s",
              flush=True)
    wall = time.perf_counter() - started
    print(f"{len(chunks)} chunks, {calls} model calls ({hits} cached), {fallbacks} fallbacks, {wall:.0f} s "
          f"({wall / max(len(chunks), 1):.1f} s a chunk), {model.stats.prompt_tokens} prompt + "
          f"{model.stats.completion_tokens} completion tokens -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
