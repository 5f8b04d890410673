"""`vb import`: memory files of other tools (OpenClaw, Claude Code, basic-memory, a plain
folder of Markdown) as vb notes.

1. Find the source's files (`source_files`) and, unless told, which kind of source it is
   (`domain.knowledge.imports.detect`); parse each file into drafts (facts, daily logs as
   episodes, whole notes).
2. Plan: a draft whose key a note of the vault already holds (`import_key`, in archive/ too)
   is already imported; every line of a draft is judged by the gate and a refused line is
   left out (the plan says which and why); what is left is judged whole, as `guard.admit`
   judges text that is not a person's own (imported text was not written in this vault by the
   person's hand: `source: import`, redacted for agents like extraction's).
3. Apply (not with `dry_run`): each note passes `guard.admit` and is created in one
   transaction, with `imported_from` (file and line) and `import_key`; the index is
   refreshed for exactly those paths. A run again finds every key and creates nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_brain.app.memory.guard import MAX_MEMORY_CHARS, MIN_MEMORY_WORDS, admit
from vault_brain.app.memory.notes import new_note_bytes, unique_path
from vault_brain.app.memory.results import Result, result
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.clock import now_iso
from vault_brain.domain.errors import LockedError, RefusedError, UsageError, VaultBrainError
from vault_brain.domain.gate import Verdict, judge
from vault_brain.domain.knowledge.imports import (
    CLAUDE_FILES,
    KINDS,
    Draft,
    Piece,
    detect,
    fact_drafts,
    log_date,
    log_draft,
    note_draft,
)
from vault_brain.domain.text import clip_words, slugify
from vault_brain.storage.events import refused
from vault_brain.storage.files import note_path
from vault_brain.storage.index.scan import scan
from vault_brain.storage.knowledge.project_files import walk
from vault_brain.storage.notes.frontmatter import decode, parse_text
from vault_brain.storage.paths import episode_folder
from vault_brain.storage.regular import read_regular

Progress = Callable[[int, int], None]
SOURCE = "import"  # the `source` of an imported note (`domain.notes.model.SOURCES`)
WHERE = "import"  # where the gate's refusals are counted (the memory events)
KEY = "import_key"
FROM = "imported_from"
MAX_SOURCE_BYTES = 1_000_000
NOTHING_LEFT = "nothing is left once the gate's refusals are out"
SLUG_CHARS = 48  # a file name of a fact's first words


@result
class ImportEntry(Result):
    """One draft of the plan and what became of it."""

    action: str
    """create (created, or would be with --dry-run), exists (imported before), refused (by
    the gate), duplicate (the same as another draft of this import), skipped (not a memory)."""
    type: str
    title: str
    origin: str
    """The source file (relative to the source folder) and line: `MEMORY.md#L4`."""
    path: str | None = None
    """The note created, that would be created, or that holds it already."""
    reason: str | None = None
    """Why it was refused or skipped."""
    kept_out: list[str] = field(default_factory=list)
    """Lines of this note the gate refused, each `file#Lline: why`."""


@result
class ImportResult(Result):
    kind: str
    detected: str | None
    """Why the source was taken for this kind, when it was not named."""
    source: str
    dry_run: bool
    files: int
    new: int
    existing: int
    refused: int
    """Drafts refused whole, plus lines kept out of the notes made."""
    entries: list[ImportEntry]


@dataclass
class _Planned:
    draft: Draft
    entry: ImportEntry
    body: str = ""
    kept: list[Piece] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)


# -- the source's files -----------------------------------------------------------------------
def _listing(root: Path) -> list[str]:
    """The names detection looks at: the folder's files, memory/ and .claude/CLAUDE.md."""
    names: list[str] = []
    for sub in ("", "memory/", ".claude/"):
        with contextlib.suppress(OSError), os.scandir(root / sub) as entries:
            names += [sub + e.name for e in entries if e.is_file(follow_symlinks=False)]
    return names


def _permalinks(root: Path, rels: list[str]) -> int:
    """How many of (the first 50) notes open with front matter naming a permalink."""
    found = 0
    for rel in rels[:50]:
        with contextlib.suppress(OSError), open(root / rel, "rb") as handle:
            head = handle.read(4096)
            if head.startswith(b"---") and b"\npermalink:" in head:
                found += 1
    return found


def _markdown(root: Path, vault: Vault) -> list[str]:
    files, _ = walk(root, [root], [vault.root])
    return [f.rel for f in files if f.rel.lower().endswith(".md")]


def source_files(vault: Vault, kind: str, root: Path, names: list[str]) -> list[str]:
    """The files of a source that an import of `kind` reads (relative to `root`)."""
    if kind in ("basic-memory", "markdown"):
        return _markdown(root, vault)
    in_memory = sorted(n for n in names if n.startswith("memory/") and n.endswith(".md"))
    if kind == "openclaw":
        return [n for n in ("MEMORY.md", "memory.md") if n in names][:1] + in_memory
    if any(n in names for n in CLAUDE_FILES):  # a project: its memory files, no other doc
        return [n for n in (*CLAUDE_FILES, "MEMORY.md") if n in names] + in_memory
    # Claude Code's memory folder: MEMORY.md and the topic files beside it
    return sorted(n for n in names if "/" not in n and n.endswith(".md")) + in_memory


def _resolve(vault: Vault, source: str) -> tuple[Path, list[str] | None]:
    """The source's folder, and the one file named (None: the whole folder)."""
    path = Path(source).expanduser()
    if not path.exists():
        raise UsageError(
            f"no such file or folder: {source}",
            hint="give the workspace, project or memory folder (or one Markdown file)",
        )
    path = path.resolve()
    vault_root = vault.root.resolve()
    if path == vault_root or vault_root in path.parents:
        raise UsageError(
            f"{source} is inside this vault: its notes are memory already",
            hint="import from a folder outside the vault",
        )
    if path.is_file():
        return path.parent, [path.name]
    return path, None


def _read(path: Path) -> tuple[dict[str, Any], str, int]:
    """A source file's front matter, body, and the line its body starts on."""
    raw = read_regular(path)
    if len(raw) > MAX_SOURCE_BYTES:
        raise VaultBrainError(f"{path.name} is over 1 MB")
    text = decode(raw).replace("\r\n", "\n")
    parsed = parse_text(text)
    body = parsed.body.replace("\r\n", "\n")
    head = text[: len(text) - len(body)] if parsed.has_front_matter and text.endswith(body) else ""
    meta = parsed.meta if isinstance(parsed.meta, dict) else {}
    return meta, body, head.count("\n") + 1


def drafts_of(kind: str, rel: str, meta: dict[str, Any], body: str, first: int) -> list[Draft]:
    """The drafts a file of a source of `kind` gives."""
    day = log_date(rel)
    if kind == "openclaw":
        if day:  # (in memory/, or one log named alone)
            return [log_draft(kind, rel, body, day, first)]
        return fact_drafts(kind, rel, body, first)
    if kind == "claude-code":
        return fact_drafts(kind, rel, body, first)
    if kind == "markdown" and day:
        return [log_draft(kind, rel, body, day, first)]
    return [note_draft(kind, rel, meta, body, first)]


# -- the vault's side -------------------------------------------------------------------------
def imported_keys(vault: Vault) -> dict[str, str]:
    """`import_key` -> the note holding it (archived notes too: an import never brings back
    what the person archived)."""
    keys: dict[str, str] = {}
    for rel in sorted(scan(vault.paths)):
        with contextlib.suppress(OSError, ValueError):
            raw = read_regular(vault.paths.note(rel))
            if KEY.encode() not in raw[:8192]:
                continue
            key = parse_text(raw).meta.get(KEY)
            if isinstance(key, str):
                keys.setdefault(key, rel)
    return keys


class _Links:
    """Link targets as Obsidian resolves them: by file name, else by path."""

    def __init__(self, rels: list[str]) -> None:
        self.by_stem: dict[str, list[str]] = {}
        for rel in rels:
            self.add(rel)

    def add(self, rel: str, name: str | None = None) -> None:
        stem = Path(rel).stem
        for word in {stem.lower(), (name or stem).lower(), slugify(name or stem)}:
            self.by_stem.setdefault(word, []).append(rel)

    def link(self, target: str) -> str | None:
        found = self.by_stem.get(target.lower()) or self.by_stem.get(slugify(target))
        if not found:
            return None
        rel = found[0]
        stem = Path(rel).stem
        unique = len({r for rels in self.by_stem.values() for r in rels if Path(r).stem == stem})
        name = stem if unique == 1 else rel[: -len(".md")]
        return f"[[{name}]]" if name == target else f"[[{name}|{target}]]"


def _render(pieces: list[Piece], links: _Links) -> str:
    lines = []
    for piece in pieces:
        text = piece.text
        if piece.target is not None:
            link = links.link(piece.target)
            text = text.replace(f"[[{piece.target}]]", link or piece.target)
        lines.append(text)
    return "\n".join(lines).strip()


def _judged_text(text: str, title: str) -> Verdict:
    """What `guard.admit` finds in text not the person's own (without counting it)."""
    found = judge(text, min_words=MIN_MEMORY_WORDS, max_chars=MAX_MEMORY_CHARS).reasons
    return Verdict(tuple(dict.fromkeys(found + judge(title).reasons)))


def _folder(vault: Vault, draft: Draft) -> str:
    if draft.type == "episode" and draft.date:
        return episode_folder(vault.paths, draft.date)
    return f"entities/{draft.category}"


def _free(vault: Vault, draft: Draft, taken: set[str]) -> str:
    """A free path for the draft whose id no other note uses (the index reconciled before)."""
    slug = slugify(clip_words(draft.title, SLUG_CHARS).rstrip("…"))
    while True:
        rel, name = unique_path(vault.paths, _folder(vault, draft), slug, taken)
        if (
            not vault.index.exists()
            or vault.index.stored_by_id(f"{draft.type}-{draft.category}-{name}") is None
        ):
            return rel


# -- plan and apply ---------------------------------------------------------------------------
def _plan(vault: Vault, drafts: list[Draft], progress: Progress | None) -> list[_Planned]:
    keys = imported_keys(vault)
    with contextlib.suppress(LockedError):  # (a cache never stalls an import)
        vault.reconcile(timeout=0)
    seen: dict[str, str] = {}
    taken: set[str] = set()
    planned: list[_Planned] = []
    for draft in drafts:
        entry = ImportEntry("create", draft.type, draft.title, draft.where)
        planned.append(_Planned(draft, entry))
        if draft.skip:
            entry.action, entry.reason = "skipped", draft.skip
        elif draft.key in keys:
            entry.action, entry.path = "exists", keys[draft.key]
        elif draft.key in seen:
            entry.action, entry.reason = "duplicate", f"the same as {seen[draft.key]}"
        else:
            seen[draft.key] = draft.where
            entry.path = _free(vault, draft, taken)
    total = len(planned)
    for done, item in enumerate(planned, 1):
        if item.entry.action == "create":
            _judge_pieces(item)
        if progress is not None:
            progress(done, total)
    links = _Links(sorted(scan(vault.paths)))  # (only to notes that are, or will be)
    for item in planned:
        if item.entry.action == "create" and item.entry.path:
            links.add(item.entry.path, item.draft.title)
    for item in planned:
        if item.entry.action == "create":
            _judge_note(item, links)
    return planned


def _judge_pieces(item: _Planned) -> None:
    """Each piece through the gate: a refused one is left out (a fact, refused whole)."""
    item.kept = []
    for piece in item.draft.pieces:
        verdict = judge(piece.text) if piece.text.strip() else Verdict()
        if verdict.ok:
            item.kept.append(piece)
            continue
        item.reasons.update(verdict.reasons)
        item.entry.kept_out.append(f"{item.draft.origin}#L{piece.line}: {verdict.why()}")
    if len(item.draft.pieces) == 1 and item.entry.kept_out:
        item.entry.action = "refused"
        item.entry.reason = item.entry.kept_out.pop().split(": ", 1)[1]
    elif item.entry.kept_out and not any(p.text.strip() for p in item.kept):
        item.entry.action, item.entry.reason = "refused", NOTHING_LEFT


def _judge_note(item: _Planned, links: _Links) -> None:
    """The note as it would be written, judged whole as `guard.admit` judges it."""
    item.body = _render(item.kept, links)
    verdict = _judged_text(item.body, item.draft.title)
    if not verdict.ok:
        item.reasons.update(verdict.reasons)
        item.entry.action = "refused"
        item.entry.reason = (
            NOTHING_LEFT
            if verdict.reasons == ("fragment",) and item.entry.kept_out
            else verdict.why()
        )


def _meta(vault: Vault, draft: Draft, rel: str, now: str) -> dict[str, Any]:
    slug = Path(rel).stem
    created = f"{draft.date}T00:00:00{now[19:]}" if draft.date else now
    return {
        "id": f"{draft.type}-{draft.category}-{slug}",
        "type": draft.type,
        "category": draft.category,
        "title": draft.title,
        "tags": draft.tags,
        "created": created,
        "updated": now,
        "credit": vault.policy.initial_score,
        "source": SOURCE,
        FROM: draft.where,
        KEY: draft.key,
    }


def _apply(vault: Vault, planned: list[_Planned]) -> None:
    """Every planned note through `guard.admit`, then created in one transaction."""
    reasons: Counter[str] = Counter()
    made: list[tuple[_Planned, str]] = []
    for item in planned:
        if item.entry.action != "create" or item.entry.path is None:
            continue
        try:
            admit(vault, item.body, source=SOURCE, where=WHERE, title=item.draft.title)
        except RefusedError as exc:
            item.entry.action, item.entry.reason = "refused", exc.message
            continue
        made.append((item, item.entry.path))
    for item in planned:
        reasons.update(item.reasons)
    now = now_iso()
    with vault.transaction() as tx:
        for item, rel in made:
            meta = _meta(vault, item.draft, rel, now)
            tx.create(note_path(vault.paths, rel), new_note_bytes(meta, item.body))
    vault.refresh([rel for _, rel in made])
    refused(vault.paths, WHERE, dict(reasons))


def import_source(
    vault: Vault,
    kind: str | None,
    source: str,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportResult:
    """Import `source` as `kind` (None: detect it); see the module's docstring."""
    if kind is not None and kind not in KINDS:
        raise UsageError(
            f"unknown kind of source {kind!r}: choose from {', '.join(KINDS)}",
            hint="or give only the folder and vb tells the kind by its files",
        )
    root, named = _resolve(vault, source)
    names = named if named is not None else _listing(root)
    detected = None
    if kind is None:
        markdown = _markdown(root, vault) if named is None else names
        found, why = detect(
            [*names, *markdown], _permalinks(root, [r for r in markdown if r.endswith(".md")])
        )
        if found is None:
            raise UsageError(
                f"cannot tell what kind of source {source} is: {why}",
                hint=f"name it: vb import {{{'|'.join(KINDS)}}} {source}",
            )
        kind, detected = found, "a Markdown file" if named and found == "markdown" else why
    rels = names if named is not None else source_files(vault, kind, root, names)
    drafts: list[Draft] = []
    for rel in rels:
        try:
            meta, body, first = _read(root / rel)
        except (OSError, VaultBrainError) as exc:
            drafts.append(Draft(kind, "file", "", rel, rel, 1, "", [], skip=f"not read: {exc}"))
            continue
        drafts += drafts_of(kind, rel, meta, body, first)
    planned = _plan(vault, drafts, progress)
    if not dry_run:
        _apply(vault, planned)
    entries = [p.entry for p in planned]
    return ImportResult(
        kind=kind,
        detected=detected,
        source=str(root / named[0]) if named else str(root),
        dry_run=dry_run,
        files=len(rels),
        new=sum(e.action == "create" for e in entries),
        existing=sum(e.action == "exists" for e in entries),
        refused=sum(e.action == "refused" for e in entries)
        + sum(len(e.kept_out) for e in entries if e.action == "create"),
        entries=entries,
    )
