"""`vb search` through a running `vb watch` (`storage.warm`), and the one renderer of a
search's output, whichever path answered it.

`vb search QUERY` with the plain options (`--vault PATH` first; -k, --type, --category,
--tag, --scope, --include-archive, --in, --json) is recognised here before the CLI framework
is imported (`entry.main`), so a warm answer costs the interpreter, this module and the
round trip, and a cold one the same API call the command makes, without the framework's
50 ms. Anything else (another spelling, --session, --queries, --help, a bad value, an
error) goes to the typer command, which asks the socket itself when this did not, and
searches in-process when there is no answer.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, NamedTuple

from vault_brain.storage import warm
from vault_brain.storage.env import Environment
from vault_brain.storage.vault_root import locate, warm_socket


class Request(NamedTuple):
    """One plain search, as given: `filters` as `filter_options` gives them."""

    vault: str | None
    query: str
    k: int
    filters: dict[str, Any]
    sources: str | None


_VALUES = {
    "-k": "k",
    "--limit": "k",
    "--type": "type",
    "-t": "type",
    "--category": "category",
    "-c": "category",
    "--tag": "tag",
    "--scope": "scope",
    "--in": "in",
}
_FLAGS = {"--json": "json", "--include-archive": "include_archive"}


def _parse(args: list[str]) -> dict[str, Any] | None:
    """The options of a plain `vb search QUERY ...` command line, else None."""
    vault, i = (args[1], 2) if args[:1] == ["--vault"] and len(args) > 2 else (None, 0)
    if args[i : i + 1] != ["search"]:
        return None
    opts: dict[str, Any] = {"vault": vault, "query": None}
    rest = args[i + 1 :]
    j = 0
    while j < len(rest):
        arg = rest[j]
        if arg in _FLAGS:
            opts[_FLAGS[arg]] = True
        elif arg in _VALUES and j + 1 < len(rest):
            opts[_VALUES[arg]] = rest[j + 1]
            j += 1
        elif arg.startswith("-") or opts["query"] is not None:
            return None
        else:
            opts["query"] = arg
        j += 1
    return opts if opts["query"] is not None else None


def fast_search(args: list[str]) -> int | None:
    """Answer a plain `vb search` without the CLI framework: from the warm socket, else
    in-process through the same API call the command makes; the exit status. None when
    `args` are not a plain search, or the in-process search failed: the typer command
    then runs it and says what went wrong."""
    opts = _parse(args)
    if opts is None:
        return None
    try:
        k = int(opts.get("k", 10))
    except ValueError:
        return None  # (the command says what is wrong)
    if k < 1:
        return None
    filters = filter_options(
        opts.get("type"),
        opts.get("category"),
        opts.get("tag"),
        bool(opts.get("include_archive")),
        opts.get("scope"),
    )
    request = Request(opts["vault"], opts["query"], k, filters, opts.get("in"))
    env = Environment.from_os()
    doc = ask(request, env) or _in_process(request, env, bool(opts.get("json")))
    if doc is None:
        return None
    with contextlib.suppress(BrokenPipeError):  # (the reader left: as the command does)
        render(doc, bool(opts.get("json")))
    return 0


def _in_process(request: Request, env: Environment, as_json: bool) -> dict[str, Any] | None:
    """The command's in-process search (`vb search` in `cli/search.py`), or None on any
    error: the command then runs and reports it in its own words. An index built first
    shows its progress on a terminal."""
    from vault_brain.interfaces.cli.progress import ProgressLine, on_terminal

    line = ProgressLine("indexing") if on_terminal(as_json) else None
    try:
        from vault_brain.app.api import MemoryAPI
        from vault_brain.app.memory.results import envelope
        from vault_brain.domain.notes.model import Filters

        wanted = Filters.of_search(request.filters)
        if request.sources is not None:
            from vault_brain.app.knowledge.api import check_sources

            check_sources(request.sources)
        api = MemoryAPI.open(request.vault, env)
        api.vault.progress = line
        return envelope(api.search(request.query, request.k, wanted, request.sources))
    except Exception:
        return None
    finally:
        if line is not None:
            line.close()


def filter_options(
    type_: str | None,
    category: str | None,
    tag: str | None,
    include_archive: bool,
    scope: str | None,
) -> dict[str, Any]:
    """The filter options as given, for the server to check and normalize (a bad value:
    no answer, then the in-process command says what is wrong)."""
    return {
        "type": type_,
        "category": category,
        "tag": tag,
        "include_archive": include_archive,
        "scope": scope,
    }


def ask(request: Request, env: Environment) -> dict[str, Any] | None:
    """The warm server's `--json` document for this search, or None (search in-process)."""
    root = locate(request.vault, env.vault)
    if root is None:
        return None  # (the in-process path says what is wrong)
    socket = warm_socket(root, env.cache_home)
    query, k, filters, sources = request.query, request.k, request.filters, request.sources
    return warm.search(socket, str(root), query, k, filters, sources)


def render(doc: dict[str, Any], as_json: bool) -> None:
    """Print a search's `--json` document, or the text rendered from it: the one renderer
    of the warm and the in-process path."""
    if as_json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(results_text(doc["results"]) + "\n")


def results_text(hits: list[dict[str, Any]]) -> str:
    """A header, then each result as a line of its score, id (or where it is) and title,
    whole, and its snippet indented below, wrapped to the terminal (100 columns when
    piped)."""
    if not hits:
        return "no results"
    import shutil
    import textwrap

    width = max(40, shutil.get_terminal_size((100, 24)).columns)
    notes_only = all(h["source"] == "memory" for h in hits)
    rows = [
        [f"{h['score']:.3f}", *([h["id"]] if notes_only else [h["source"], _where(h)])]
        for h in hits
    ]
    headers = ["score", "id"] if notes_only else ["score", "from", "where"]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    indent = " " * (widths[0] + 2)
    blocks = ["  ".join([*(h.ljust(w) for h, w in zip(headers, widths, strict=True)), "title"])]
    for h, row in zip(hits, rows, strict=True):
        cells = [row[0].rjust(widths[0])] + [
            c.ljust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        title = " ".join(str(h["title"]).split())
        lines = ["  ".join([*cells, title]).rstrip()]
        if h.get("explain"):
            lines.append(indent + explained(h["explain"]))
        snippet = " ".join(str(h["snippet"]).split())
        if snippet:
            lines += textwrap.wrap(
                snippet,
                max(20, width - 1),
                initial_indent=indent,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def explained(parts: dict[str, Any]) -> str:
    """One line of what a score is made of: `relevance (bm25 = field parts[, similarity])
    x credit x recency x superseded`."""
    fields = " + ".join(f"{name} {value:.2f}" for name, value in parts["fields"].items())
    lexical = f"bm25 {parts['bm25']:.2f}" + (f" = {fields}" if fields else "")
    if "similarity" in parts:
        lexical += f", similarity {parts['similarity']:.3f}"
    factors = " x ".join(
        f"{name} {parts[name]:.2f}" for name in ("credit", "recency", "superseded")
    )
    return f"[relevance {parts['relevance']:.3f} ({lexical}) x {factors}]"


def _where(hit: dict[str, Any]) -> str:
    """Where a result can be opened: a note's path, a file and line, a transcript message."""
    if hit["source"] == "sessions":
        return f"{hit['session']} {hit['message']}"
    project = f"{hit['category']}:" if hit["category"] and hit["source"] != "memory" else ""
    return f"{project}{hit['path']}" + (f":{hit['line']}" if hit["line"] else "")
