#!/usr/bin/env python3
"""How many of a real vault's notes the gate redacts, for the person and for an agent.

    python scripts/bench_redaction.py --vault tests/data/kepano-vault [--json]

A copy of the vault is adopted as it is (`vb init --adopt`: vb's files added, no note
changed) in a temporary folder, then every note is looked at the ways its owner and an
agent see it:

* the person (the CLI's API): `vb search <the note's own title>`, the note's hit (its title
  and its snippet); `vb show` (title and body); `vb list` (title);
* an agent (the MCP server's API, `memory_search` and `memory_retrieve`): the same search
  hit, and the retrieved note (title and body).

A note counts as redacted on a path when what that path shows of it holds a `[redacted: ...]`
marker its file does not. Prints the figures (or one JSON document with `--json`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
from bench_common import add_record_option, save_record  # noqa: E402

from vault_brain.app.api import MemoryAPI, create_vault  # noqa: E402
from vault_brain.domain.errors import VaultBrainError  # noqa: E402

MARK = "[redacted: "


def _marked(shown: str, original: str) -> bool:
    return shown.count(MARK) > original.count(MARK)


def measure(source: Path) -> dict[str, Any]:
    """The figures for a copy of the vault at `source`."""
    with tempfile.TemporaryDirectory(prefix="vb-redaction-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(source, vault, ignore=shutil.ignore_patterns(".git", ".vb"))
        with contextlib.redirect_stdout(io.StringIO()):
            create_vault(vault, adopt=True)
        started = time.perf_counter()
        person = MemoryAPI.open(vault)
        agent = MemoryAPI.open(vault, source="mcp")
        rows = person.list_notes().notes
        counts = {
            key: 0
            for key in (
                "person_search_title",
                "person_search_snippet",
                "person_search",
                "person_show",
                "person_list",
                "person_any",
                "agent_search_title",
                "agent_search_snippet",
                "agent_search",
                "agent_retrieve",
                "agent_any",
                "not_found_by_title",
            )
        }
        examples: dict[str, list[str]] = {"person": [], "agent": []}
        for row in rows:
            shown = person.show(row.id).note
            title, body = shown.title, shown.body
            p_list = _marked(row.title, title)
            counts["person_list"] += p_list
            hit = next((h for h in person.search(title, 10).results if h.id == row.id), None)
            ahit = next((h for h in agent.search(title, 10).results if h.id == row.id), None)
            if hit is None or ahit is None:
                counts["not_found_by_title"] += 1
            p_title = hit is not None and _marked(hit.title, title)
            p_snip = hit is not None and _marked(hit.snippet, body)
            counts["person_search_title"] += p_title
            counts["person_search_snippet"] += p_snip
            counts["person_search"] += p_title or p_snip
            if p_title or p_snip:
                examples["person"].append(f"{row.path}: {hit.title if hit else ''}")
            # `vb show` prints the file's own title and body
            p_show = _marked(shown.title, title) or _marked(shown.body, body)
            counts["person_show"] += p_show
            counts["person_any"] += p_list or p_title or p_snip or p_show
            a_title = ahit is not None and _marked(ahit.title, title)
            a_snip = ahit is not None and _marked(ahit.snippet, body)
            counts["agent_search_title"] += a_title
            counts["agent_search_snippet"] += a_snip
            counts["agent_search"] += a_title or a_snip
            try:
                got = agent.retrieve(row.id).note
                a_body = _marked(got.title, title) or _marked(got.body, body)
            except VaultBrainError:
                a_body = False
            counts["agent_retrieve"] += a_body
            if a_title or a_snip or a_body:
                counts["agent_any"] += 1
                examples["agent"].append(row.path)
        person.close()
        agent.close()
        return {
            "vault": str(source),
            "notes": len(rows),
            **counts,
            "seconds": round(time.perf_counter() - started, 2),
            "examples": {k: v[:10] for k, v in examples.items()},
        }


def _share(n: int, total: int) -> str:
    return f"{n} of {total} ({100 * n / max(total, 1):.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, required=True, help="the vault to copy and adopt")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--label", help="the vault's name in --record's file (default: its folder)")
    add_record_option(parser)
    args = parser.parse_args()
    if not args.vault.is_dir():
        parser.error(f"no folder at {args.vault}")
    found = measure(args.vault)
    if args.record:
        share = found["agent_any"] / max(found["notes"], 1)
        save_record(
            f"redaction-{args.label or args.vault.name}", {**found, "agent_any_rate": share}
        )
    if args.json:
        print(json.dumps(found, indent=2))
        return
    total = found["notes"]
    print(f"{found['vault']}: {total} notes, adopted as they are ({found['seconds']} s)")
    print("person (vb search by own title, vb show, vb list):")
    print(f"  search hit title redacted   {_share(found['person_search_title'], total)}")
    print(f"  search hit snippet redacted {_share(found['person_search_snippet'], total)}")
    print(f"  vb show redacted            {_share(found['person_show'], total)}")
    print(f"  vb list title redacted      {_share(found['person_list'], total)}")
    print(f"  any of these                {_share(found['person_any'], total)}")
    print("agent (MCP memory_search by title, memory_retrieve):")
    print(f"  search hit title redacted   {_share(found['agent_search_title'], total)}")
    print(f"  search hit snippet redacted {_share(found['agent_search_snippet'], total)}")
    print(f"  retrieved note redacted     {_share(found['agent_retrieve'], total)}")
    print(f"  any of these                {_share(found['agent_any'], total)}")
    if found["not_found_by_title"]:
        print(f"  (not in the top 10 for its own title: {found['not_found_by_title']})")


if __name__ == "__main__":
    main()
