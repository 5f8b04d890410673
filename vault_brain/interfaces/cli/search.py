"""vb search | index."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from vault_brain.domain.errors import VaultBrainError
from vault_brain.domain.notes.model import Filters
from vault_brain.domain.sessions.records import check_session_id
from vault_brain.domain.text import counted
from vault_brain.interfaces.cli import warm
from vault_brain.interfaces.cli.app import app, open_api, state
from vault_brain.interfaces.cli.options import (
    ArchiveFlag,
    CategoryFilter,
    JsonOpt,
    ScopeFilter,
    TagFilter,
    TypeFilter,
)
from vault_brain.interfaces.cli.output import emit, json_line


@app.command()
def index(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the index and build it again from the files.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the search index up to date with the files."""
    from vault_brain.interfaces.cli.progress import progress_bar

    with progress_bar("indexing", enabled=not as_json) as bar:
        result = open_api().index(rebuild, bar)
    human = (
        f"{'rebuilt' if result.rebuilt else 'reconciled'}: {counted(result.total, 'note')} "
        f"(+{result.added} ~{result.updated} -{result.removed}) in {result.seconds:.2f}s"
    )
    emit(result, as_json, human)


def _read_queries(source: str) -> list[dict[str, Any]]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultBrainError(
            f"cannot read queries from {source}: {getattr(exc, 'strerror', None) or exc}",
            hint='give a UTF-8 JSONL file with one {"id", "query"} per line',
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
    scope: ScopeFilter = None,
    include_archive: ArchiveFlag = False,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="Agent retrieval for this session: the "
            "returned ids are recorded in its transcript for credit.",
        ),
    ] = None,
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            help="Batch mode: JSONL file ('-' for stdin) of "
            '{"id", "query"} lines; prints one {"version", "id", "query", "results"} line '
            "per query.",
        ),
    ] = None,
    search_in: Annotated[
        str | None,
        typer.Option(
            "--in",
            help="What to search, comma-separated: memory (notes), items (extracted by vb "
            "extract), sources (the extracted projects' files), sessions (transcripts, "
            "without tool output), or all. Default: search_in in STRATEGY.md (memory). "
            "Several are merged by rank; the filters apply to notes.",
            show_default=False,
        ),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show what each note's score is made of: BM25 per field (title, aliases, "
            "tags, body), the embedding similarity in hybrid mode, and the credit, recency "
            "and superseded factors it is multiplied by.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Search the vault: BM25 blended with credit and recency.

    With --in, also items extracted from project files, the projects' files and session
    transcripts; each result says where it came from (file and line, session and message)."""
    if (query is None) == (queries is None):
        raise VaultBrainError(
            "give either a QUERY or --queries FILE",
            hint="vb search 'words' or vb search --queries queries.jsonl",
        )
    if explain and queries is not None:
        raise VaultBrainError(
            "--explain takes one QUERY apart, not a --queries batch",
            hint="vb search 'words' --explain",
        )
    if session is not None:
        check_session_id(session)  # before anything runs or is written
    if search_in is not None:
        from vault_brain.app.knowledge.api import check_sources

        check_sources(search_in)
    raw = warm.filter_options(type_, category, tag, include_archive, scope)
    filters = Filters.of_search(raw)
    st = state()
    if query is not None and session is None and not explain:
        request = warm.Request(st.vault, query, k, raw, search_in)
        doc = warm.ask(request, st.env)  # before the index
        if doc is not None:
            warm.render(doc, as_json)
            return
    batch = _read_queries(queries) if queries is not None else None
    api = open_api(session)
    if batch is not None:
        for line in api.search_batch(batch, k, filters):
            json_line(line)
        return
    assert query is not None
    from vault_brain.app.memory.results import envelope  # (loaded with the API already)

    warm.render(envelope(api.search(query, k, filters, search_in, explain)), as_json)
