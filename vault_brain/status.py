"""`vb status`: what the vault holds and how healthy its cache is, without changing anything."""

from __future__ import annotations

from collections import Counter
from typing import Any

from vault_brain.core import Vault


def vault_status(vault: Vault) -> dict[str, Any]:
    from whoosh import index as windex

    from vault_brain.events import counts as event_counts
    from vault_brain.index.store import diff_manifest, scan
    from vault_brain.index.watch import read_status
    from vault_brain.tokens import get_counter

    disk = scan(vault.paths)
    manifest = vault.index.load_manifest()
    exists = windex.exists_in(str(vault.paths.index_dir))
    by_type: Counter[str] = Counter()
    by_category: Counter[str] = Counter()
    archived = 0
    problems: list[dict[str, str]] = []
    indexed = 0
    if exists and manifest is not None:
        for _, row in vault.index.rows(include_archived=True):
            indexed += 1
            if row.get("archived"):
                archived += 1
                continue
            by_type[row.get("type", "")] += 1
            by_category[f"{row.get('type', '')}/{row.get('category', '')}"] += 1
            if row.get("problem"):
                problems.append({"path": row["path"], "problem": row["problem"]})
        diff = diff_manifest(disk, manifest)
        stale = sorted(diff.added + diff.updated + diff.removed)
    else:
        stale = sorted(disk)
    counter = get_counter()
    return {
        "vault": str(vault.paths.root),
        "notes": {
            "total": sum(by_type.values()),
            "archived": archived,
            "by_type": dict(sorted(by_type.items())),
            "by_category": dict(sorted(by_category.items())),
        },
        "index": {
            "exists": exists and manifest is not None,
            "indexed": indexed,
            "on_disk": len(disk),
            "fresh": exists and manifest is not None and not stale,
            "stale": stale[:100],
            "stale_count": len(stale),
        },
        "problems": sorted(problems, key=lambda p: p["path"]),
        "watcher": read_status(vault),
        "token_counter": {"name": counter.name, "exact": counter.exact},
        "events": event_counts(vault.paths),
    }


def render_status(report: dict[str, Any]) -> str:
    notes, index, watcher = report["notes"], report["index"], report["watcher"]
    kinds = ", ".join(f"{k} {v}" for k, v in notes["by_type"].items())
    lines = [
        f"vault:   {report['vault']}",
        f"notes:   {notes['total']} ({kinds or 'none'}), {notes['archived']} archived",
    ]
    for key, count in notes["by_category"].items():
        lines.append(f"         {key}: {count}")
    if not index["exists"]:
        lines.append("index:   not built yet (any search builds it; or run `vb index`)")
    else:
        fresh = (
            "fresh"
            if index["fresh"]
            else f"{index['stale_count']} stale (the next command reconciles)"
        )
        lines.append(
            f"index:   {index['indexed']} indexed, {index['on_disk']} notes on disk, {fresh}"
        )
        for path in index["stale"][:10]:
            lines.append(f"         stale: {path}")
    if watcher.get("alive"):
        lines.append(
            f"watcher: running (pid {watcher.get('pid')}, {watcher.get('batches', 0)} batches)"
        )
    else:
        lines.append(
            "watcher: not running (`vb watch` keeps the index live; searches reconcile anyway)"
        )
    lines.append(f"tokens:  {report['token_counter']['name']}")
    events = ", ".join(f"{k} {v}" for k, v in report["events"].items())
    lines.append(f"events:  {events}")
    if report["problems"]:
        lines.append(f"problems: {len(report['problems'])}")
        for item in report["problems"]:
            lines.append(f"         {item['path']}: {item['problem']}")
    return "\n".join(lines)
