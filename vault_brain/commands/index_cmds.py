"""vb index | search."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from vault_brain.cli import (
    ArchiveFlag,
    CategoryFilter,
    JsonOpt,
    TagFilter,
    TypeFilter,
    app,
    emit,
    open_vault,
)
from vault_brain.errors import VaultBrainError
from vault_brain.render import progress_bar, table


@app.command()
def index(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the index and build it again from the files.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the search index up to date with the files (only changed notes are re-read)."""
    vault = open_vault()
    started = time.perf_counter()
    with progress_bar("indexing", enabled=not as_json) as bar:
        result = vault.index.rebuild(bar) if rebuild else vault.reconcile(bar)
    seconds = time.perf_counter() - started
    payload = {
        "added": len(result.added),
        "updated": len(result.updated),
        "removed": len(result.removed),
        "total": result.total,
        "rebuilt": result.rebuilt,
        "seconds": round(seconds, 3),
    }
    human = (
        f"{'rebuilt' if result.rebuilt else 'reconciled'}: {result.total} notes "
        f"(+{len(result.added)} ~{len(result.updated)} -{len(result.removed)}) in {seconds:.2f}s"
    )
    emit(payload, as_json, human)


def _read_queries(source: str) -> list[dict[str, Any]]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise VaultBrainError(
            f"cannot read queries from {source}: {exc.strerror}",
            hint='give a JSONL file with one {"id", "query"} per line',
        ) from None
    queries = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            raise VaultBrainError(
                f'{source}:{n}: expected a JSON object with a string "query"',
                hint='each line looks like {"id": "q1", "query": "words to find"}',
            )
        queries.append(item)
    return queries


@app.command()
def search(
    query: Annotated[
        str | None, typer.Argument(help="Words to find (BM25; stemmed, any order).")
    ] = None,
    k: Annotated[int, typer.Option("-k", "--limit", min=1, help="How many results.")] = 10,
    type_: TypeFilter = None,
    category: CategoryFilter = None,
    tag: TagFilter = None,
    include_archive: ArchiveFlag = False,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="Agent retrieval for this session: the "
            "returned ids are recorded in its transcript for credit.",
        ),
    ] = None,
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            help="Batch mode: JSONL file ('-' for stdin) of "
            '{"id", "query"} lines; prints one {"id", "results"} line per query.',
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the vault; ranking blends BM25 with effective credit and recency."""
    from vault_brain.index.search import Filters

    if (query is None) == (queries is None):
        raise VaultBrainError(
            "give either a QUERY or --queries FILE",
            hint="vb search 'words' or vb search --queries queries.jsonl",
        )
    if session is not None:
        from vault_brain.sessions.transcript import check_session_id

        check_session_id(session)  # before anything runs or is written
    vault = open_vault()
    filters = Filters(type_, category, tag, include_archive)
    batch = _read_queries(queries) if queries is not None else None
    vault.reconcile()
    searcher = vault.searcher
    if batch is not None:
        out = sys.stdout
        for item in batch:
            hits = searcher.search(item["query"], k, filters)
            out.write(
                json.dumps(
                    {"id": item.get("id"), "results": [h.to_json() for h in hits]},
                    ensure_ascii=False,
                )
                + "\n"
            )
        return
    assert query is not None
    hits = searcher.search(query, k, filters)
    from vault_brain.events import emit as emit_event

    emit_event(vault.paths, "search", {"query": query, "results": [h.id for h in hits]})
    if session is not None:
        from vault_brain.lifecycle.feedback import record_retrieval

        record_retrieval(vault, session, query, hits, source="search")
    human = (
        table(
            ["score", "id", "title", "snippet"],
            [[f"{h.score:.3f}", h.id, h.title, h.snippet] for h in hits],
        )
        if hits
        else "no results"
    )
    emit({"query": query, "results": [h.to_json() for h in hits]}, as_json, human)
