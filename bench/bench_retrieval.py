"""Retrieval quality of every retrieval configuration on the labelled built-in question set.

    .venv/bin/python bench/bench_retrieval.py [--embedder SPEC] [--embedder-url URL] [--keep-home]

Builds the built-in knowledge bases in a temporary $MATHLENS_HOME (`calculus`: one note per chunk,
contexts from the shipped data file; `calculus-study`: the note files as longer documents in
overlapping windows) and prints recall@1/4/6/10, MRR@10 and the characters the first four chunks
put in the prompt, for each configuration as `mathlens run` would retrieve (the configuration
classes themselves do the retrieving):

- on `calculus`: rag (embedding over bare notes), BM25 and hybrid over bare notes, embedding, BM25
  and hybrid over the context-prefixed notes (hybrid = the `contextual` configuration), and the
  study's inline variant;
- on `calculus-study`: rag without and with the question's topic filter (the calculus study's RAG),
  and the study's inline contextual variant (the same ranking, `inline_k` = 6 passages shown).

On `calculus-study` a chunk counts as retrieving a note when it holds at least half of the note's
characters (`evaluate.covered_notes`). `--embedder ollama/nomic-embed-text --embedder-url HOST`
measures the study's embedder where an Ollama server runs (the default is the offline MiniLM).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KS = (1, 4, 6, 10)


def main() -> int:
    """Build the knowledge bases, measure every configuration, print one table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--embedder-url", default=None)
    ap.add_argument("--keep-home", action="store_true")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="mathlens-bench-kb-")
    os.environ["MATHLENS_HOME"] = home
    from mathlens.items.schema import Question
    from mathlens.solve.retrieval.builtin import (
        BUILTIN_KB,
        STUDY_KB,
        builtin_documents,
        ensure_builtin,
        labelled_questions_file,
    )
    from mathlens.solve.retrieval.configs import ContextualConfiguration, RagConfiguration, question_topics
    from mathlens.solve.retrieval.evaluate import Quality, Shown, covered_notes, evaluate_shown, load_labelled
    from mathlens.solve.retrieval.store import Hit, KnowledgeBase

    emb: dict[str, str] = {}
    if args.embedder:
        emb["embedder"] = args.embedder
    if args.embedder_url:
        emb["embedder_url"] = args.embedder_url
    questions = load_labelled(labelled_questions_file())
    spans = {d.id: [(p.id, p.start, p.end) for p in d.passages] for d in builtin_documents()}

    def shown(kb: KnowledgeBase, hits: list[Hit]) -> list[Shown]:
        out = []
        for h in hits:
            c = kb.by_id[h.id]
            notes = frozenset([c.id]) if kb.name.split(".")[0] == BUILTIN_KB else \
                covered_notes(c.start, c.end, spans[c.doc_id])
            out.append(Shown(notes, len(c.text)))
        return out

    def rag(kb_name: str, **opts: object) -> Callable[[str], list[Shown]]:
        conf = RagConfiguration(options={"kb": kb_name, "top_k": max(KS), **emb, **opts})
        filtered = opts.get("topic_filter") == "question"

        def run(text: str) -> list[Shown]:
            topics = question_topics(Question(id="q", text=text), text) if filtered else None
            return shown(conf.kb(), conf.retrieve(text, topics)[0])
        return run

    def contextual(kb_name: str, **opts: object) -> Callable[[str], list[Shown]]:
        conf = ContextualConfiguration(options={"kb": kb_name, "top_k": max(KS), **emb, **opts})

        def run(text: str) -> list[Shown]:
            return shown(conf.kb(), conf.retrieve(text)[0])
        return run

    def inline(kb_name: str) -> Callable[[str], list[Shown]]:
        # The ranking the inline variant takes its passages from (it shows the first inline_k).
        conf = ContextualConfiguration(options={"kb": kb_name, "inline": True, "inline_k": max(KS), **emb})

        def run(text: str) -> list[Shown]:
            return shown(conf.kb(), conf.curated(Question(id="q", text=text), text)[0])
        return run

    t0 = time.perf_counter()
    notes_kb = ensure_builtin(BUILTIN_KB, args.embedder, _emb_opts(args))
    t1 = time.perf_counter()
    study_kb = ensure_builtin(STUDY_KB, args.embedder, _emb_opts(args))
    t2 = time.perf_counter()
    print(f"{BUILTIN_KB}: {notes_kb.info.n_chunks} chunks, built in {t1 - t0:.1f} s; {STUDY_KB}: "
          f"{study_kb.info.n_chunks} chunks from {len(study_kb.info.sources)} documents, built in {t2 - t1:.1f} s; "
          f"embedder {notes_kb.info.embedder_identity}; {len(questions)} labelled questions")
    cost = notes_kb.info.context
    if cost is not None:
        print(f"contexts of {BUILTIN_KB}: {cost.shipped} shipped (model-written), {cost.structural} structural "
              f"(document and title), {cost.fallbacks} fallbacks")
    configs: list[tuple[str, Callable[[str], list[Shown]]]] = [
        (f"{BUILTIN_KB}: rag (embedding, bare notes)", rag(BUILTIN_KB)),
        (f"{BUILTIN_KB}: BM25, bare", rag(BUILTIN_KB, mode="bm25")),
        (f"{BUILTIN_KB}: hybrid RRF, bare", rag(BUILTIN_KB, mode="hybrid")),
        (f"{BUILTIN_KB}: embedding, contexts", contextual(BUILTIN_KB, mode="embedding")),
        (f"{BUILTIN_KB}: BM25, contexts", contextual(BUILTIN_KB, mode="bm25")),
        (f"{BUILTIN_KB}: contextual (hybrid, contexts)", contextual(BUILTIN_KB)),
        (f"{BUILTIN_KB}: inline (study's variant)", inline(BUILTIN_KB)),
        (f"{STUDY_KB}: rag, no topic filter", rag(STUDY_KB)),
        (f"{STUDY_KB}: rag, topic filter (study)", rag(STUDY_KB, topic_filter="question")),
        (f"{STUDY_KB}: inline (study's contextual)", inline(STUDY_KB)),
    ]
    rows: list[tuple[str, Quality, float]] = []
    for label, fn in configs:
        t = time.perf_counter()
        q = evaluate_shown(questions, fn, KS)
        rows.append((label, q, (time.perf_counter() - t) / len(questions) * 1000))
    head = " ".join(f"{'R@' + str(k):>6}" for k in KS)
    print(f"{'configuration':46} {head} {'MRR@10':>7} {'chars@4':>8} {'ms/query':>9}")
    for label, q, ms in rows:
        cells = " ".join(f"{q.recall[k]:6.3f}" for k in KS)
        print(f"{label:46} {cells} {q.mrr:7.3f} {q.chars[4]:8.0f} {ms:9.1f}")
    if not args.keep_home:
        import shutil

        from mathlens.solve.retrieval.store import release_clients

        release_clients()
        shutil.rmtree(home, ignore_errors=True)
    return 0


def _emb_opts(args: argparse.Namespace) -> dict[str, str]:
    if not args.embedder_url:
        return {}
    return {"host" if (args.embedder or "").startswith("ollama/") else "base_url": args.embedder_url}


if __name__ == "__main__":
    sys.exit(main())
