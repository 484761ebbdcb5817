"""Generate the chunk contexts of the built-in knowledge base and write them to its data file.

    .venv/bin/python scripts/build_builtin_contexts.py [--model embedded/gemma3-270m] [--out PATH]

Contextualising every built-in note with the embedded model takes many minutes on two cores, too
long for a first run, so the contexts are generated once with this script and shipped in
`src/mathlens/solve/retrieval/builtin/contexts.json`. The built-in knowledge base reuses a shipped
context whenever its request (prompt version, document, passage) is unchanged and generates the
rest. The file also records what generating it cost: model calls, wall time, fallbacks.
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
    def progress(n: int, total: int) -> None:
        if n % 10 == 0 or n == total:
            print(f"  {n}/{total} chunks, {time.perf_counter() - started:.0f} s", flush=True)

    report = contextualize_sync(chunks, by_id, model, settings, progress)
    wall = time.perf_counter() - started
    contexts = {context_key(by_id[c.doc_id], c, settings): {"chunk_id": c.id, "context": report.contexts[c.id]}
                for c in chunks}
    data = {
        "prompt_version": PROMPT_VERSION, "model": args.model, "model_identity": model.identity(),
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"), "chunks": len(chunks),
        "calls": report.calls, "cache_hits": report.cache_hits, "fallbacks": report.fallbacks,
        "seconds": round(wall, 1), "prompt_tokens": model.stats.prompt_tokens,
        "completion_tokens": model.stats.completion_tokens, "contexts": contexts,
    }
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(chunks)} chunks, {report.calls} model calls ({report.cache_hits} cached), "
          f"{report.fallbacks} fallbacks, {wall:.0f} s ({wall / max(len(chunks), 1):.1f} s a chunk), "
          f"{model.stats.prompt_tokens} prompt + {model.stats.completion_tokens} completion tokens -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
