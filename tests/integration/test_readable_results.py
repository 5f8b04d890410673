"""Readable search results: the snippet is the passage that matched, wikilinks shown as
their text; ids are printed whole, so one pasted into `vb show` opens the note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vault_brain.storage.index.schema import analyzer
from vault_brain.storage.index.snippets import Snippets, readable

INTRO = (
    "This note opens with a long introduction about nothing in particular, padding that "
    "goes on for a while so that the passage we want is far beyond the first two hundred "
    "characters of the text, and then some more words to be sure of it.\n\n"
)


def stems(text: str) -> set[str]:
    return {t.text for t in analyzer()(text)}


def test_snippet_is_the_matched_passage_with_links_as_text() -> None:
    body = (
        INTRO + "Later we deploy with [[Helm Charts|helm charts]] to the [[Kubernetes]] "
        "cluster and [[Runbooks#Rollback|roll back]] when a pod fails.\n"
    )
    snippet = Snippets(analyzer()).snippet(body, stems("helm charts rollback"))
    assert "helm charts" in snippet and "Kubernetes" in snippet
    assert "[[" not in snippet and "]]" not in snippet and "|" not in snippet
    assert snippet.startswith("…Later we deploy")  # (the sentence's start)
    assert "introduction" not in snippet


def test_snippet_prefers_the_passage_with_most_query_words() -> None:
    body = (
        "Coffee is mentioned once here. "
        + INTRO
        + "A grinder setting for espresso coffee: fine, and the espresso shot pulls in 28 s."
    )
    snippet = Snippets(analyzer()).snippet(body, stems("espresso coffee grinder"))
    assert "grinder setting for espresso coffee" in snippet


def test_snippet_without_a_match_is_the_start() -> None:
    snippet = Snippets(analyzer()).snippet("# Title\n\nPlain [[a|words]] here.", {"zzz"})
    assert snippet == "Title Plain words here."


def test_readable() -> None:
    text = "# Head\nSee [[folder/Note]], [[Note#Part]], ![[img.png]], [[x|shown]] and [md](u)."
    assert readable(text) == "Head\nSee folder/Note, Note > Part, img.png, shown and md."


def test_text_search_prints_whole_ids_and_passages(cli: Any, vault: Path) -> None:
    name = "A very long title for a note about deploying services with helm charts everywhere"
    body = INTRO + "We deploy services with [[Helm Charts|helm charts]] on every cluster."
    added = cli("--vault", str(vault), "add", body, "-n", name, "-c", "projects", "--json")
    assert added.exit_code == 0, added.stderr
    doc = json.loads(added.stdout)
    note_id = doc.get("id") or doc["note"]["id"]
    assert len(note_id) > 60  # (the old table cut it at 60 characters)

    found = cli("--vault", str(vault), "search", "helm charts deploy")
    assert found.exit_code == 0, found.stderr
    assert note_id in found.stdout.split()
    assert "[[" not in found.stdout and "helm charts" in found.stdout
    assert "…" not in found.stdout.splitlines()[1]  # the id's line is not cut
    assert cli("--vault", str(vault), "show", note_id).exit_code == 0

    listed = cli("--vault", str(vault), "list")
    assert note_id in listed.stdout.split()


def test_snippet_finds_other_forms_of_the_words() -> None:
    body = INTRO + "Mostly she was studying how happily the [[Runners|runners]] ran."
    snippet = Snippets(analyzer()).snippet(body, stems("studies happiness running"))
    assert "studying how happily the runners" in snippet
    non_ascii = INTRO + "Die Straße führt zum Übergang, dann weiter."
    assert "Übergang" in Snippets(analyzer()).snippet(non_ascii, stems("übergang"))


def test_a_short_note_s_snippet_is_all_of_it_though_the_match_is_at_its_end() -> None:
    """What an agent is given of a short note is the note, not its matched line alone."""
    body = "- We relocated to York in May.\n- The retro got pushed to 5pm.\n"
    snippet = Snippets(analyzer()).snippet(body, stems("retro"))
    assert snippet == "- We relocated to York in May. - The retro got pushed to 5pm."
