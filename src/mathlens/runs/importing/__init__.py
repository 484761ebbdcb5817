"""Import model outputs that other evaluation tools wrote, as a normal mathlens run.

`mathlens import SOURCE [--items ITEMS] --out RUN` reads an Inspect AI log, lm-evaluation-harness
samples (JSONL, or JSON per task), a mapped JSONL/CSV/JSON-records file (or one of the named
layouts: the math-evaluation harness, MathVista-style records) or an OpenAI batch output file;
takes the questions from ITEMS (matching each row by id, else by normalised question text) or,
without ITEMS, from the source itself; and writes a run directory exactly as `mathlens run` does
(`manifest.json`, `records.jsonl`, `items.json`), marked as imported in `manifest.imported`, each
record keeping the source's own verdicts (`source_scores`). Every analysis and the report then
work on it without calling a model.

Modules: one reader per format (`inspect_log` with `eval_archive`, `lm_eval`, `mapped`,
`openai_batch`), each turning a file into `common.SourceRow`s under the limits of
`mathlens.items.limits` (`lines` holds the bounded JSONL/CSV/JSON readers); `matching` pairs rows
with the questions of ITEMS, `source_items` builds the questions from the rows; `importer` detects
the format, builds the records and writes the run (into a temporary directory renamed at the end,
so a failed import leaves nothing). `provenance` holds the manifest's `ImportedFrom` and the
records' `SourceScore` (kept import-free so that `runs.records` can use it).

This package file imports nothing, so `mathlens.runs.records` can import `provenance` without a
cycle; the entry point is `mathlens.runs.importing.importer.import_run`.
"""
