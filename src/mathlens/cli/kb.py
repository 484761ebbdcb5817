"""`mathlens kb build | list | query | remove`: knowledge bases for the rag and contextual configurations."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, out_console, user_errors
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.errors import UserError
from mathlens.flags import FlagValues
from mathlens.models.registry import DEFAULT_MODEL
from mathlens.solve.retrieval.build import BuildOptions, BuildSettings, EmbedderChoice, build_from_documents, build_kb
from mathlens.solve.retrieval.builtin import BUILTIN_KB, BUILTINS, open_or_build, variant_name
from mathlens.solve.retrieval.documents import Document
from mathlens.solve.retrieval.store import KBInfo, kb_path, list_kbs, remove_kb

kb_app = typer.Typer(help="Build, list and query knowledge bases (rag, contextual).\n\n"
                          "The retrieval configurations (--config rag,contextual) read them.",
                     no_args_is_help=True)


def _summary(info: KBInfo) -> dict[str, Any]:
    return {"name": info.name, "path": str(kb_path(info.name)), "chunks": info.n_chunks,
            "documents": len(info.sources), "embedder": info.embedder_identity, "contextual": info.contextual,
            "context": info.context.model_dump() if info.context else None, "topics": info.topics,
            "chunk_size": info.chunk_size, "overlap": info.overlap, "builtin": info.builtin,
            "created_at": info.created_at.isoformat(), "build_seconds": info.build_seconds}


@user_errors
@with_model_options(BuildSettings)
def build(
    sources: list[Path] = typer.Argument(None, help="Files or folders: Markdown, text, PDF, note YAML."),
    name: str = typer.Option(..., "--name", help="Knowledge base name."),
    quiet: bool = QUIET_OPTION,
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Ingest sources into a persistent knowledge base under $MATHLENS_HOME/kb/NAME."""
    settings = options_from(BuildSettings, flags)
    if not sources and not settings.builtin:
        raise UserError("give source files or folders, or --builtin for the built-in calculus notes")
    opts = settings.options()
    with console.status(f"building knowledge base {name!r}", spinner="dots") if not (as_json or quiet) else _null():
        if settings.builtin:
            # A built-in embedded with another embedder lives under a name of its own (where runs look).
            folder = variant_name(name, settings.embedder.spec) if name in BUILTINS else name
            info = build_from_documents(folder, *_builtin_sources(name, opts, settings))
        else:
            info = build_kb(name, list(sources), opts)
    doc = _summary(info)
    if as_json:
        emit_json(doc)
        return
    if quiet:
        return
    console.print(f"built [bold]{escape(info.name)}[/]: {info.n_chunks} chunks from {len(info.sources)} documents "
                  f"in {info.build_seconds:.1f} s ({escape(info.embedder_identity)})")
    if info.context:
        c = info.context
        console.print(f"contexts: {c.calls} model calls, {c.cache_hits} cached, {c.shipped} shipped, "
                      f"{c.structural} structural (document and title), {c.fallbacks} fallbacks, "
                      f"{c.seconds:.1f} s with {escape(c.model)}")


def _builtin_sources(name: str, opts: BuildOptions, settings: BuildSettings) -> tuple[list[Document], BuildOptions]:
    """The documents and options of `kb build --builtin`: the built-in of that name (its own
    chunking unless --chunk-size/--overlap say otherwise), else the calculus notes."""
    spec = BUILTINS.get(name, BUILTINS[BUILTIN_KB])
    base = spec.options()
    shipped = base.shipped_contexts if settings.context_model == DEFAULT_MODEL else None
    chunks = opts.chunks if settings.chunking_given else replace(base.chunks, topics=opts.chunks.topics)
    return spec.documents(), replace(opts, chunks=chunks, shipped_contexts=shipped, builtin=name in BUILTINS,
                                     overwrite=opts.overwrite or name in BUILTINS)


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@user_errors
def list_(as_json: bool = JSON_OPTION) -> None:
    """Knowledge bases under $MATHLENS_HOME/kb (the built-in one appears once it has been used)."""
    infos = list_kbs()
    if as_json:
        emit_json({"knowledge_bases": [_summary(i) for i in infos]})
        return
    if not infos:
        console.print(f"no knowledge bases yet; the built-in ones ({', '.join(BUILTINS)}) are built on first use")
        return
    table = Table("name", "chunks", "documents", "embedder", "contextual", "created")
    for i in infos:
        table.add_row(i.name, str(i.n_chunks), str(len(i.sources)), i.embedder_identity,
                      "yes" if i.contextual else "no", i.created_at.strftime("%Y-%m-%d %H:%M"))
    out_console.print(table)


@user_errors
@with_model_options(EmbedderChoice)
def query(
    name: str = typer.Argument(..., help="Knowledge base name."),
    text: str = typer.Argument(..., help="The query."),
    mode: str = typer.Option("embedding", "--mode", help="embedding, bm25 or hybrid (RRF of both)."),
    contextual: bool = typer.Option(False, "--contextual", help="Search the context-prefixed chunks."),
    top_k: int = typer.Option(4, "--top-k", "-k", min=1, max=1000, help="How many chunks."),
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Show the chunks a query retrieves, best first.

    --embedder must be the knowledge base's own embedder; a built-in knowledge base is built for the
    embedder named (under a name of its own) the first time it is asked for."""
    choice = options_from(EmbedderChoice, flags)
    embedder = choice.spec
    kb = open_or_build(name, embedder, choice.options()) if name in BUILTINS \
        else open_or_build(name)
    hits = kb.search(text, k=top_k, mode=mode, contextual=contextual,
                     embedder=None if name in BUILTINS else embedder)
    if as_json:
        emit_json({"kb": kb.name, "query": text, "mode": mode, "contextual": contextual,
                   "hits": [{"rank": h.rank, "id": h.id, "score": h.score, "source": h.source, "title": h.title,
                             "text": h.text, "context": h.context, "parts": h.parts} for h in hits]})
        return
    for h in hits:
        out_console.print(f"[bold]{h.rank}. {escape(h.id)}[/] ({escape(h.source)}) score {h.score:.4f}",
                          highlight=False)
        out_console.print(h.text.strip()[:600], markup=False, highlight=False)
        out_console.print()


@user_errors
def remove(name: str = typer.Argument(..., help="Knowledge base name."), as_json: bool = JSON_OPTION) -> None:
    """Delete a knowledge base."""
    remove_kb(name)
    if as_json:
        emit_json({"removed": name})
    else:
        console.print(f"removed {escape(name)}")


def register(app: typer.Typer) -> None:
    """Add the `kb` command group."""
    kb_app.command("build")(build)
    kb_app.command("list")(list_)
    kb_app.command("query")(query)
    kb_app.command("remove")(remove)
    app.add_typer(kb_app, name="kb")
