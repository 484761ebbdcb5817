"""Import model outputs that other evaluation tools wrote, as a normal mathlens run.

`mathlens import SOURCE --items ITEMS --out RUN` reads an Inspect AI log, an lm-evaluation-harness
samples file, a mapped JSONL/CSV file or an OpenAI batch output file, matches each row to a
question of ITEMS (by id, else by normalised question text) and writes a run directory exactly as
`mathlens run` does (`manifest.json`, `records.jsonl`, `items.json`), marked as imported in
`manifest.imported`. Every analysis and the report then work on it without calling a model.

Modules: one reader per format (`inspect_log`, `lm_eval`, `mapped`, `openai_batch`), each turning a
file into `common.SourceRow`s; `common` holds the limits, the row and error types; `matching` pairs
rows with questions; `importer` detects the format, builds the records and writes the run (into a
temporary directory renamed at the end, so a failed import leaves nothing). `provenance` holds the
manifest's `ImportedFrom` (kept import-free so that `runs.records` can use it).

This package file imports nothing, so `mathlens.runs.records` can import `provenance` without a
cycle; the entry point is `mathlens.runs.importing.importer.import_run`.
"""
