"""Merging episode notes into one: offline (one section per episode, repeats dropped,
sources linked) or by the model."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from vault_brain.domain.engine import METHOD_LLM, METHOD_OFFLINE, JSONChat, run_with_fallback
from vault_brain.domain.errors import LLMError, VaultBrainError
from vault_brain.domain.gate import judge, redact
from vault_brain.domain.text import STOPWORDS, split_sentences, words, wordset

MERGE_SYSTEM = (
    "You merge episode notes from an AI agent's memory vault into one note. Reply with a JSON "
    'object: {"title": str, "body": str}. title: specific, under 10 words. body: Markdown that '
    "keeps every decision, fact, date and open question of the sources, without repetition and "
    "without inventing anything. Do not add a list of sources; it is added for you."
)


@dataclass(frozen=True)
class MergedText:
    title: str
    body: str
    method: str
    sources: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)


_HEADING = re.compile(r"^(#{1,5})(?=\s)")
_ITEM_PREFIX = re.compile(r"^(\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|>\s*)?)(.*)$")


def _date_of(value: object) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()[:10]
    text = str(value or "").strip()
    return text[:10] if text else "undated"


def _tags_of(value: object) -> list[str]:
    if isinstance(value, str):
        items: Iterable[object] = value.replace(",", " ").split()
    elif isinstance(value, Iterable):
        items = value
    else:
        return []
    return [str(t).strip().lstrip("#") for t in items if str(t).strip().lstrip("#")]


def _wikilink(note_id: str, title: str) -> str:
    def clean(text: str) -> str:
        return re.sub(r"[\[\]|]", "-", text)

    target, label = clean(note_id), clean(title)
    return f"[[{target}]]" if not label or label == target else f"[[{target}|{label}]]"


def _dedupe_body(body: str, seen: set[str]) -> str:
    """Drop sentences (3+ words) already seen in an earlier section; demote headings one level."""
    out: list[str] = []
    fence: str | None = None
    for line in body.strip("\n").splitlines():
        marker = re.match(r"^\s*(```|~~~)", line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            out.append(line)
            continue
        if fence or not line.strip():
            out.append(line)
            continue
        if _HEADING.match(line):
            out.append("#" + line)
            continue
        match = _ITEM_PREFIX.match(line)
        prefix, rest = (match.group(1), match.group(2)) if match else ("", line)
        kept = []
        for part in split_sentences(rest):
            key = " ".join(part.split())
            if len(part.split()) >= 3:
                if key in seen:
                    continue
                seen.add(key)
            kept.append(part)
        if kept:
            out.append(prefix + " ".join(kept))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


_GENERIC_TITLE_WORDS = wordset(
    """meeting meetings notes note session chat call sync discussion episode update summary
    follow-up followup review daily weekly standup log"""
)


def _merge_title(episodes: Sequence[Mapping[str, Any]], titles: list[str]) -> str:
    if len(set(titles)) == 1:
        return titles[0]
    word_sets = [{w.lower() for w in words(t)} for t in titles]
    common = set.intersection(*word_sets) - STOPWORDS
    if not common - _GENERIC_TITLE_WORDS:
        common = set()
    shared_words = [w for w in words(titles[0]) if w.lower() in common]
    if shared_words:
        deduped = list(dict.fromkeys(shared_words))
        return " ".join(deduped)
    tag_lists = [[t.lower() for t in _tags_of(e.get("tags"))] for e in episodes]
    shared_tags = [t for t in dict.fromkeys(tag_lists[0]) if all(t in tl for tl in tag_lists)]
    if not shared_tags:
        counts: dict[str, int] = {}
        for tags in tag_lists:
            for tag in set(tags):
                counts[tag] = counts.get(tag, 0) + 1
        shared_tags = [
            t for t in dict.fromkeys(t for tags in tag_lists for t in tags) if counts[t] > 1
        ]
    if shared_tags:
        return ", ".join(shared_tags[:3]).capitalize()
    return f"{titles[0]} (+{len(titles) - 1} more)"


def _sorted_episodes(episodes: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(episodes, key=lambda e: (_date_of(e.get("created")), str(e.get("id", ""))))


def _episode_title(episode: Mapping[str, Any]) -> str:
    return str(episode.get("title") or episode.get("id") or "Untitled").strip()


def _all_tags(episodes: Sequence[Mapping[str, Any]]) -> list[str]:
    tags: dict[str, str] = {}
    for episode in episodes:
        for tag in _tags_of(episode.get("tags")):
            tags.setdefault(tag.lower(), tag)
    return list(tags.values())


def _source_link(episode: Mapping[str, Any]) -> str:
    """The link to a source episode: the one the caller rendered for the vault (`link`, see
    `domain/notes/links.py`), else one naming its id."""
    given = episode.get("link")
    if isinstance(given, str) and given:
        return given
    return _wikilink(str(episode.get("id") or _episode_title(episode)), _episode_title(episode))


def _sources_section(episodes: Sequence[Mapping[str, Any]]) -> str:
    links = [f"- {_source_link(e)} ({_date_of(e.get('created'))})" for e in episodes]
    return "## Sources\n" + "\n".join(links)


def merge_offline(
    episodes: Sequence[Mapping[str, Any]], method: str = METHOD_OFFLINE
) -> MergedText:
    """One section per episode (oldest first), repeated sentences dropped, then the sources."""
    if not episodes:
        raise VaultBrainError("nothing to merge: no episodes given")
    ordered = _sorted_episodes(episodes)
    titles = [_episode_title(e) for e in ordered]
    seen: set[str] = set()
    sections = []
    for episode, title in zip(ordered, titles, strict=True):
        body = _dedupe_body(str(episode.get("body") or ""), seen)
        header = f"## {title} ({_date_of(episode.get('created'))})"
        sections.append(f"{header}\n\n{body}" if body else header)
    body = "\n\n".join([*sections, _sources_section(ordered)]) + "\n"
    ids = [str(e.get("id") or _episode_title(e)) for e in ordered]
    return MergedText(_merge_title(ordered, titles), body, method, ids, _all_tags(ordered))


def merge_episodes(
    episodes: Sequence[Mapping[str, Any]],
    llm: JSONChat | None = None,
    *,
    fallback: bool = True,
) -> MergedText:
    """Merge episodes (dicts with id, title, body, tags, created, and the `link` that names
    each in the Sources section) into one note's text,
    through the gate: a part it refuses is redacted, not copied."""
    if not episodes:
        raise VaultBrainError("nothing to merge: no episodes given")

    def with_llm(model: JSONChat) -> MergedText:
        ordered = _sorted_episodes(episodes)
        parts = [
            f"### Episode {e.get('id', '')}: {_episode_title(e)} ({_date_of(e.get('created'))})\n"
            f"tags: {', '.join(_tags_of(e.get('tags'))) or '-'}\n\n"
            f"{str(e.get('body') or '').strip()}"
            for e in ordered
        ]
        data = model.chat_json(
            MERGE_SYSTEM, "Merge these episodes.\n\n" + "\n\n".join(parts), reply="merge"
        )
        title, body = data.get("title"), data.get("body")
        if not isinstance(title, str) or not title.strip():
            raise LLMError("the model's merge reply has no 'title'", hint="retry")
        if not isinstance(body, str) or not body.strip():
            raise LLMError("the model's merge reply has no 'body'", hint="retry")
        full = f"{body.strip()}\n\n{_sources_section(ordered)}\n"
        ids = [str(e.get("id") or _episode_title(e)) for e in ordered]
        return MergedText(" ".join(title.split()), full, METHOD_LLM, ids, _all_tags(ordered))

    merged = run_with_fallback(llm, with_llm, lambda m: merge_offline(episodes, m), fallback)
    body, refused = redact(merged.body)
    title = merged.title if judge(merged.title).ok else "Merged episodes"
    return replace(merged, title=title, body=body, refused=dict(refused))
