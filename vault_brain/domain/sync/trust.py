"""What another machine may not bring through the git remote (pure: trees as values).

A remote may change notes; it may not change what this machine trusts or executes:
- nothing tracked under `.vb/` (machine-local state: approvals, journals, locks, caches), and
  no tracked `.vb` itself (git replaces an ignored folder with a tracked symlink);
- no symlink whose target leaves the vault, and no symlink at all among vb's own files
  (sessions/, logs/, policy/, agents/, items/, archive/, STRATEGY.md, tasks.json, MEMORY.md,
  .gitattributes, .gitignore);
- no symlink whose target lies where no note lives (`.git`, `.vb`, sessions/, logs/): a link
  `note.md -> ../.git/config` would make vb read this machine's git config (its remote's
  credentials) or another session's transcript as a note, and write it back as one;
- no `.gitattributes` line that changes how vb's files merge (vb's own lines win through
  `.git/info/attributes`; such a line is reported, never obeyed).

Paths here are POSIX and relative to the repository's top; `prefix` is the vault's folder
in it ('' when the vault is the repository).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass

LINK_MODE = "120000"
MACHINE_LOCAL = ".vb"
VB_FOLDERS = frozenset({MACHINE_LOCAL, "sessions", "logs", "policy", "agents", "items", "archive"})
VB_FILES = frozenset({"STRATEGY.md", "tasks.json", "MEMORY.md", ".gitattributes", ".gitignore"})
# Where no note lives, and no link may lead: this machine's own state (never synced), and
# the transcripts and logs (read only as such, under each session's and scope's rules).
NO_NOTES = frozenset({MACHINE_LOCAL, ".git", "sessions", "logs"})
MAX_HOPS = 40
# Paths of each kind vb merges (relative to the vault), to tell what an attribute line changes.
SAMPLES = (
    "note.md",
    "entities/people/someone.md",
    "MEMORY.md",
    "STRATEGY.md",
    "logs/credit.jsonl",
    "sessions/s1.jsonl",
    "sessions/2026-01-31/s1.jsonl",
    "sessions/sessions.json",
    "tasks.json",
    "items/project/items.json",
    "archive/items/project/old.jsonl",
)


@dataclass(frozen=True)
class Entry:
    """One file of a git tree: its mode ('100644', '120000' a symlink, ...) and blob."""

    mode: str
    sha: str


def vault_rel(path: str, prefix: str) -> str | None:
    """`path` relative to the vault, or None when it lies outside the vault's folder."""
    if not prefix:
        return path
    if path.startswith(prefix + "/"):
        return path[len(prefix) + 1 :]
    return None


def machine_local(rel: str) -> bool:
    """`.vb` or a path under it, in any case (`.VB/` is `.vb/` on a case-insensitive file
    system, macOS's default)."""
    return rel.split("/", 1)[0].casefold() == MACHINE_LOCAL


def in_git_folder(rel: str) -> bool:
    """A path through a `.git` folder (in any case): git refuses to check one out, and vb
    says so before git stops half-way."""
    return any(part.casefold() == ".git" for part in rel.split("/"))


def in_vb_files(rel: str) -> bool:
    """A path among vb's own folders and files, where no symlink is ever followed."""
    first = rel.split("/", 1)[0]
    return first in VB_FOLDERS or rel in VB_FILES


def where_no_note_lives(resolved: str) -> str | None:
    """The folder of `NO_NOTES` a resolved vault-relative path lies in (any `.git` on the
    way counts: git never tracks one, so it is some machine's own), or None."""
    parts = [p for p in resolved.split("/") if p]
    if not parts:
        return None
    if parts[0] in NO_NOTES or machine_local(parts[0]):
        return parts[0]
    return next((p for p in parts if p.casefold() == ".git"), None)


def resolve(rel: str, target: str, links: dict[str, str], vault_abs: str) -> str | None:
    """Where the symlink at `rel` (vault-relative) leads, following the tree's other symlinks
    (`links`: vault-relative path -> target); None when it leaves the vault (or loops)."""
    if target.startswith("/"):
        norm = posixpath.normpath(target)
        root = vault_abs.rstrip("/")
        if norm != root and not norm.startswith(root + "/"):
            return None
        start: list[str] = []
        target = norm[len(root) :].lstrip("/")
    else:
        start = rel.split("/")[:-1]
    return _walk(start, target, links, 0)


def _walk(stack: list[str], target: str, links: dict[str, str], hops: int) -> str | None:
    parts = list(stack)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
        here = "/".join(parts)
        if here in links:
            if hops >= MAX_HOPS:
                return None
            inner = links[here]
            if inner.startswith("/"):
                return None  # an absolute link inside a link: treated as leaving
            resolved = _walk(parts[:-1], inner, links, hops + 1)
            if resolved is None:
                return None
            parts = resolved.split("/") if resolved else []
    return "/".join(parts)


def refused_entries(
    incoming: dict[str, Entry],
    present: dict[str, Entry],
    targets: dict[str, str],
    prefix: str,
    vault_abs: str,
) -> list[str]:
    """Why each entry of `incoming` (a tree about to be merged) is refused, one line each:
    the entries that differ from `present` (what HEAD holds) only. `targets` holds the
    target of every symlink of both trees (repo path -> target)."""
    out: list[str] = []
    links: dict[str, str] = {}
    for path, target in targets.items():
        rel = vault_rel(path, prefix)
        if rel is not None:
            links[rel] = target
    for path, entry in sorted(incoming.items()):
        if present.get(path) == entry:
            continue
        rel = vault_rel(path, prefix)
        if rel is None:
            if entry.mode == LINK_MODE and prefix and (prefix + "/").startswith(path + "/"):
                out.append(f"replaces the vault's folder {path} with a symlink")
            continue
        link = entry.mode == LINK_MODE
        target = targets.get(path, "")
        if machine_local(rel):
            what = f"a symlink {rel} -> {target}" if link else rel
            out.append(f"tracks {what} (vb's machine-local state, never taken from a remote)")
        elif in_git_folder(rel):
            out.append(f"tracks {rel} (inside a .git folder: never taken from a remote)")
        elif link and in_vb_files(rel):
            out.append(f"adds a symlink {rel} -> {target} among vb's own files")
        elif link:
            resolved = resolve(rel, target, links, vault_abs)
            if resolved is None:
                out.append(f"adds a symlink {rel} -> {target} that leads outside the vault")
            elif (folder := where_no_note_lives(resolved)) is not None:
                out.append(
                    f"adds a symlink {rel} -> {target} that leads into {folder}/ "
                    "(no note lives there; vb never reads it as one)"
                )
    return out


# --------------------------------------------------------------------------- attributes


def _pattern_matches(pattern: str, rel: str) -> bool:
    """gitattributes' matching of `pattern` against `rel` (relative to the file's folder)."""
    if pattern.endswith("/"):
        return False  # a folder pattern matches no file in gitattributes
    if "/" not in pattern:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    regex = ""
    text = pattern.lstrip("/")
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            regex, i = regex + "(?:.*/)?", i + 3
        elif text.startswith("/**", i) and i + 3 == len(text):
            regex, i = regex + "/.*", i + 3
        elif text[i] == "*":
            regex, i = regex + "[^/]*", i + 1
        elif text[i] == "?":
            regex, i = regex + "[^/]", i + 1
        elif text[i] == "[" and "]" in text[i + 2 :]:
            end = text.index("]", i + 2)
            regex, i = regex + "[" + text[i + 1 : end].replace("!", "^", 1) + "]", end + 1
        else:
            regex, i = regex + re.escape(text[i]), i + 1
    return re.fullmatch(regex, rel) is not None


def _merge_value(attrs: list[str], macros: dict[str, str | None] | None = None) -> str | None:
    """The merge attribute a line sets ('unset', 'set', 'unspecified' or a driver), or None
    when it does not touch it (`macros`: the file's `[attr]` macros, by name)."""
    value = None
    for attr in attrs:
        if macros and macros.get(attr) is not None:
            value = macros[attr]
        elif attr == "binary" or attr == "-merge":
            value = "unset"
        elif attr == "!merge":
            value = "unspecified"
        elif attr == "merge":
            value = "set"
        elif attr.startswith("merge="):
            value = attr[len("merge=") :]
    return value


def _lines(text: str) -> list[tuple[str, str, str]]:
    """(line, pattern, merge value) of each line of a gitattributes file touching `merge`."""
    out = []
    macros: dict[str, str | None] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[attr]"):
            name, *attrs = line[len("[attr]") :].split() or [""]
            macros[name] = _merge_value(attrs, macros)
            continue
        if not line or line.startswith("#"):
            continue
        pattern, *attrs = line.split()
        value = _merge_value(attrs, macros)
        if value is not None:
            out.append((line, pattern, value))
    return out


def vb_merge_value(rel: str, vb_attributes: str) -> str:
    """The merge attribute vb's own lines give a vault-relative path ('unspecified': none)."""
    value = "unspecified"
    for _line, pattern, merge in _lines(vb_attributes):
        if _pattern_matches(pattern, rel):
            value = merge
    return value


def merge_overrides(files: dict[str, str], prefix: str, vb_attributes: str) -> list[str]:
    """The lines of tracked .gitattributes files (repo path -> text) that would change how
    vb merges its files, one report line each (vb's own lines in the vault's file are not)."""
    own = {line.strip() for line in vb_attributes.splitlines()}
    samples = [f"{prefix}/{s}" if prefix else s for s in SAMPLES]
    out: list[str] = []
    for path, text in sorted(files.items()):
        folder = posixpath.dirname(path)
        local = samples + ([f"{folder}/note.md"] if folder else [])
        for line, pattern, value in _lines(text):
            if path == (f"{prefix}/.gitattributes" if prefix else ".gitattributes") and (
                line in own
            ):
                continue
            for sample in local:
                if folder and not sample.startswith(folder + "/"):
                    continue
                rel_here = sample[len(folder) + 1 :] if folder else sample
                in_vault = vault_rel(sample, prefix)
                if in_vault is None or not _pattern_matches(pattern, rel_here):
                    continue
                if value != vb_merge_value(in_vault, vb_attributes):
                    out.append(
                        f"{path}: `{line}` would change how vb merges {in_vault} "
                        "(ignored: vb's merge rules in .git/info/attributes win)"
                    )
                    break
    return out
