"""Retrieval quality of rag vs contextual on the labelled built-in question set, and build costs.

    .venv/bin/python bench/bench_retrieval.py [--keep-home]

Builds the built-in knowledge base in a temporary $MATHLENS_HOME (contexts from the shipped data
file), then prints recall@1/4/10 and MRR@10 for: embedding search over the bare notes (the `rag`
configuration), BM25, hybrid (RRF) over bare notes, and embedding / BM25 / hybrid over the
context-prefixed notes (hybrid is the `contextual` configuration). It also prints what generating
the shipped contexts cost (model calls, seconds), as recorded in the data file.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Run the benchmark and print one table."""
    home = tempfile.mkdtemp(prefix="mathlens-bench-kb-")
    os.environ["MATHLENS_HOME"] = home
    from mathlens.solve.retrieval.builtin import contexts_file, ensure_builtin, labelled_questions_file
    from mathlens.solve.retrieval.evaluate import evaluate, load_labelled

    t0 = time.perf_counter()
    kb = ensure_builtin()
    build_s = time.perf_counter() - t0
    questions = load_labelled(labelled_questions_file())
    print(f"knowledge base: {kb.info.n_chunks} chunks, built in {build_s:.1f} s "
          f"(embedder {kb.info.embedder_identity}); {len(questions)} labelled questions")
    rows = []
    for label, mode, contextual in (("rag (embedding, bare)", "embedding", False), ("bm25, bare", "bm25", False),
                                    ("hybrid RRF, bare", "hybrid", False),
                                    ("embedding, contextual", "embedding", True),
                                    ("bm25, contextual", "bm25", True),
                                    ("contextual (hybrid RRF)", "hybrid", True)):
        t = time.perf_counter()
        q = evaluate(questions, lambda text, m=mode, c=contextual: [  # type: ignore[misc]
            h.id for h in kb.search(text, k=10, mode=m, contextual=c)])
        rows.append((label, q, (time.perf_counter() - t) / len(questions) * 1000))
    print(f"{'configuration':26} {'R@1':>6} {'R@4':>6} {'R@10':>6} {'MRR@10':>7} {'ms/query':>9}")
    for label, q, ms in rows:
        print(f"{label:26} {q.recall[1]:6.3f} {q.recall[4]:6.3f} {q.recall[10]:6.3f} {q.mrr:7.3f} {ms:9.1f}")
    base = rows[0][1]
    ctx = rows[-1][1]
    print(f"contextual / rag: R@4 ratio {ctx.recall[4] / base.recall[4]:.3f}, MRR ratio {ctx.mrr / base.mrr:.3f}")
    cost = kb.info.context
    data = json.loads(contexts_file().read_text(encoding="utf-8")) if contexts_file().is_file() else {}
    if data:
        print(f"shipped contexts: {data['chunks']} chunks, {data['calls']} model calls with {data['model']}, "
              f"{data['seconds']:.0f} s ({data['seconds'] / max(data['calls'], 1):.1f} s a call), "
              f"{data['fallbacks']} fallbacks, {data['prompt_tokens']} prompt + "
              f"{data['completion_tokens']} completion tokens")
    if cost is not None:
        print(f"this build: {cost.shipped} contexts reused from the data file, {cost.calls} model calls, "
              f"{cost.seconds:.1f} s")
    if "--keep-home" not in sys.argv:
        import shutil

        from mathlens.solve.retrieval.store import release_clients

        release_clients()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
