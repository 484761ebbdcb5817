"""Knowledge-augmented solving: knowledge bases, retrieval, and the `rag` / `contextual` configurations.

Entry points: `build.build_kb` (ingest sources), `store.open_kb(name).search(query, k, mode)`,
`builtin.ensure_builtin()` (the project's calculus notes), `embed.get_embedder(spec)`, and
`configs.RagConfiguration` / `configs.ContextualConfiguration`. See docs/retrieval.md.
"""
