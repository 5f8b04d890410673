"""The front-matter keys (Obsidian's "properties") vb writes into notes.

What a person sees in Obsidian's properties panel and may show in a base (the memory
dashboard, `vb/Memory.base` of a new or adopted vault, names only these).
"""

from __future__ import annotations

WRITTEN_PROPERTIES = (
    # what a note is: vb writes them into the notes it creates
    "id",
    "type",
    "category",
    "title",
    "tags",
    "scope",
    "source",
    "created",
    "updated",
    # what memory learned of it: credit from outcomes, reads, a person's pin
    "credit",
    "access_count",
    "last_accessed",
    "pinned",
    # its lifecycle: merges, promotion, supersession, the archive, sync's conflict copies
    "merged_from",
    "merged_into",
    "promoted",
    "supersedes",
    "superseded_by",
    "archived",
    "archive_reason",
    "archived_from",
    "conflict_of",
)
