"""Nothing from nothing (issue 23): a conversation with nothing durable leaves no note,
merging and promotion create no credit no outcome earned, promotion feeds entities facts
(never links), MEMORY.md lists no note without content of its own, and `vb doctor` repairs
vaults that already hold such notes. Real vaults, the real CLI, real files and git."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import snapshot
from vault_brain.domain.sessions.summarize import summarize_offline

SMALL_TALK = [
    ("hello there", "Hello! How can I help you today?"),
    ("thanks, that's all", "You're welcome. Have a great day!"),
    ("hi", "Hi! What can I do for you?"),
    ("nothing really, just saying hi", "Sounds good, I'm here if you need anything."),
    ("good morning", "Good morning! How are you?"),
    ("fine thanks, bye", "Bye, take care!"),
    ("hey, how's it going?", "All good here. Anything on your mind?"),
    ("no, all good. cheers", "Cheers!"),
    ("hello", "Hello! How can I help?"),
    ("ok thanks, that's all for now", "You're welcome! Anything else on your mind?"),
]
FACTS = [
    ("I live in Lisbon and I work at Contoso as a data engineer.", "Noted."),
    ("We decided to move the release to Friday.", "Got it, the release moves to Friday."),
]


def notes(vault: Path) -> dict[str, str]:
    return {
        p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8")
        for folder in ("entities", "episodes")
        for p in sorted((vault / folder).rglob("*.md"))
    }


def chat(cli: Any, vault: Path, session: str, turns: list[tuple[str, str]]) -> None:
    """A conversation as a harness drives vb: intake, context, persist per turn."""
    v = ("--vault", str(vault))
    for user, assistant in turns:
        assert cli(*v, "loop", "intake", "-s", session, user).exit_code == 0
        assert cli(*v, "loop", "context", "-s", session, "--json").exit_code == 0
        reply = json.dumps({"role": "assistant", "content": assistant})
        assert cli(*v, "loop", "persist", "-s", session, input=reply).exit_code == 0


def says_something(summary: str) -> bool:
    """A MEMORY.md entry's one-line summary, without links, provenance, headings' marks and
    vb's episode boilerplate, still has three words."""
    for pattern in (
        r"\[\[[^\]]*\]\]",
        r"\(from [^)]*\)",
        r"\(\d{4}-\d{2}-\d{2}\)",
        r"Session `[^`]*`, messages \S+ ?[–-] ?\S+\.",
        r"No decisions, facts or open questions in \d+ messages?\.",
        r"#+|\b(?:Sources|Decisions|Facts|Open questions):",
    ):
        summary = re.sub(pattern, " ", summary)
    return len(re.findall(r"[^\W\d_]{2,}", summary)) >= 3


def credit_of(text: str) -> float:
    return float(text.split("\ncredit: ", 1)[1].split("\n", 1)[0])


# ----------------------------------------------------------------------------- flush


def test_small_talk_sessions_leave_no_note_only_their_transcripts(vault: Path, cli: Any) -> None:
    for n in range(5):
        chat(cli, vault, f"s{n + 1}", SMALL_TALK[2 * n : 2 * n + 2])
        flushed = cli("--vault", str(vault), "flush", "-s", f"s{n + 1}", "--json").json()
        assert flushed["plan"]["actions"] == []
        assert any("no episode" in note for note in flushed["plan"]["notes"])
    assert notes(vault) == {}
    for n in range(5):  # the words are kept where they were said
        assert (vault / f"sessions/s{n + 1}.jsonl").is_file()
    flushes = [
        json.loads(line)
        for line in (vault / ".vb/events.jsonl").read_text().splitlines()
        if '"flush"' in line
    ]
    assert len(flushes) == 5 and all(f.get("notes") == [] for f in flushes)


def test_compacting_small_talk_leaves_a_summary_record_and_no_note(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    (vault / "STRATEGY.md").write_text(
        (vault / "STRATEGY.md").read_text().replace("---\n", "---\ncompaction_keep_recent: 2\n", 1)
    )
    chat(cli, vault, "c1", SMALL_TALK[:6])
    res = cli(*v, "compact", "-s", "c1", "--force", "--json").json()
    assert res["applied"] and res["flush"]["plan"]["actions"] == []
    kinds = [
        json.loads(ln)["type"] for ln in (vault / "sessions/c1.jsonl").read_text().splitlines()
    ]
    assert "compaction" in kinds and "flush" in kinds
    assert notes(vault) == {}


def test_a_session_with_facts_and_a_decision_still_writes_them(vault: Path, cli: Any) -> None:
    chat(cli, vault, "s6", FACTS)
    cli("--vault", str(vault), "flush", "-s", "s6")
    found = notes(vault)
    user = found["entities/people/user.md"]
    assert "User lives in Lisbon" in user and "Contoso" in user
    (episode,) = [t for p, t in found.items() if p.startswith("episodes/")]
    assert "We decided to move the release to Friday." in episode


def test_transcript_records_are_summarised_by_their_type() -> None:
    """A transcript's records carry `type`, not `role`: the assistant's question answered by
    the user is no open question, nor is an assistant's offer ("Anything on your mind?")."""
    records = [
        {"id": "m0001", "type": "user", "content": "hey, how's it going?"},
        {"id": "m0002", "type": "assistant", "content": "All good here. Anything on your mind?"},
        {"id": "m0003", "type": "user", "content": "no, all good. cheers"},
        {"id": "m0004", "type": "assistant", "content": "Anything else on your mind?"},
        {"id": "m0005", "type": "tool_result", "content": "Which backup server is down again?"},
    ]
    summary = summarize_offline(records)
    assert summary.open_questions == [] and summary.decisions == []
    asked = [*records, {"id": "m0006", "type": "user", "content": "Which office hosts the demo?"}]
    assert summarize_offline(asked).open_questions == ["Which office hosts the demo?"]
    real = "Is there something wrong with the staging database?"  # not an offer: still open
    said = [records[0], {"id": "m0002", "type": "assistant", "content": real}]
    assert summarize_offline(said).open_questions == [real]


# ----------------------------------------------------------------------------- credit


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.floats(0.05, 0.95))
def test_merged_credit_is_the_initial_score_plus_the_parts_gains(
    parts: list[float], initial: float
) -> None:
    from vault_brain.domain.notes.credit import earned_transfer, merged_score  # (new in issue 23)

    merged = merged_score(parts, initial)
    assert 0.0 <= merged <= 1.0
    assert merged == pytest.approx(min(1.0, max(0.0, initial + sum(p - initial for p in parts))))
    assert merged_score([initial] * len(parts), initial) == pytest.approx(initial)  # no credit
    assert earned_transfer(initial, initial, 0.5) == 0.0


EPISODE = """---
id: episode-general-{name}
type: episode
category: general
title: {title}
tags: [{tags}]
created: 2026-03-02T{hour}:00:00
credit: {credit}
{extra}---
{body}
"""


def write_episode(vault: Path, name: str, **fields: Any) -> Path:
    values = {"title": name, "tags": "session", "hour": "09", "credit": 0.5, "extra": ""}
    values.update(fields)
    path = vault / "episodes/2026-03" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EPISODE.format(name=name, **values), encoding="utf-8")
    return path


NOTHING = (
    "Session `{s}`, messages m0001–m0004.\n\nNo decisions, facts or open questions in 4 messages."
)


def test_consolidation_creates_no_credit_and_merges_nothing_empty(vault: Path, cli: Any) -> None:
    write_episode(vault, "a", body="We decided to ship Apollo on Friday.", hour="09")
    write_episode(vault, "b", body="Apollo has two open bugs.", hour="10")
    for n, hour in ((1, "11"), (2, "12")):
        write_episode(vault, f"chat{n}", body=NOTHING.format(s=f"s{n}"), hour=hour)
    res = cli("--vault", str(vault), "consolidate", "--json").json()
    (create,) = [a for a in res["actions"] if a["op"] == "create"]
    merged = (vault / create["path"]).read_text(encoding="utf-8")
    assert credit_of(merged) == 0.5  # two parts no outcome scored: the initial score
    assert "merged_from: [episode-general-a, episode-general-b]" in merged
    assert (vault / "episodes/2026-03/chat1.md").exists()  # nothing made from nothing
    assert any("says nothing of its own" in n for n in res["notes"])


def test_promotion_feeds_facts_never_links_titles_or_unearned_credit(vault: Path, cli: Any) -> None:
    body = (
        "## Session s1: hello there (2026-03-02)\n\nSession `s1`, messages m0001–m0004.\n\n"
        "No decisions, facts or open questions in 4 messages.\n\n"
        "## Session s6: Bob works at Initech (2026-03-02)\n\nSession `s6`, messages m0001–m0004."
        "\n\nFacts:\n- Bob works at Initech as a tester.\n\n## Sources\n"
        "- [[episode-general-session-s1-m0001-m0004|Session s1: hello there]] (2026-03-02)\n"
        "- [[episode-general-session-s6-m0001-m0004|Session s6: Bob]] (2026-03-02)\n"
    )
    today = dt.date.today().isoformat()  # (credit decays with the days since last access)
    write_episode(vault, "merged", body=body, credit=0.9, extra=f"last_accessed: {today}\n")
    res = cli("--vault", str(vault), "promote", "--json").json()
    created = [a for a in res["actions"] if a["op"] in ("create", "append")]
    assert created
    for action in created:
        text = (vault / action["path"]).read_text(encoding="utf-8")
        lines = [ln for ln in text.split("---\n", 2)[2].splitlines() if ln.strip()]
        assert all(not ln.startswith("- [[") and "Session s" not in ln for ln in lines), text
    bob = (vault / "entities/people/bob.md").read_text(encoding="utf-8")
    assert "Bob works at Initech as a tester" in bob
    # half of what outcomes earned the episode (0.9 - 0.5), not half of its whole credit
    assert credit_of(bob) == pytest.approx(0.7)
    assert credit_of((vault / "episodes/2026-03/merged.md").read_text()) == pytest.approx(0.7)


# ----------------------------------------------------------------------------- MEMORY.md


def test_memory_file_never_lists_a_note_of_links_alone(vault: Path, cli: Any) -> None:
    links = vault / "entities/people/user.md"
    links.parent.mkdir(parents=True, exist_ok=True)
    links.write_text(
        "---\nid: entity-people-user\ntype: entity\ncategory: people\ntitle: User\ncredit: 1.0\n"
        "---\n- [[episode-general-session-s1-m0001-m0004|Session s1: hello there]] (2026-03-02)"
        " (from [[episodes/2026-03/session-hello|Session hello]])\n",
        encoding="utf-8",
    )
    moc = vault / "entities/projects/index.md"
    moc.parent.mkdir(parents=True, exist_ok=True)
    moc.write_text("# Index\n\n- [[apollo]]\n- [[Zeus plan|Zeus]]\n", encoding="utf-8")
    write_episode(vault, "chat1", body=NOTHING.format(s="s1"), credit=0.9)
    write_episode(vault, "real", body="We decided to ship Apollo on Friday.")
    res = cli("--vault", str(vault), "memory-file", "--json").json()
    assert res["included"] == ["episode-general-real"]
    text = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "entity-people-user" not in text and "Index" not in text and "chat1" not in text
    assert "3 more memories are not shown" in text
    from vault_brain.domain.notes.substance import has_own_content, own_lines  # (issue 23)

    assert has_own_content("- Bob works at Initech (from session s1, m0001)")
    assert own_lines("## Sources\n- [[a|A]] (2026-03-02)\n") == []


# ----------------------------------------------------------------------------- vb doctor

OLD_USER = """---
id: entity-people-user
type: entity
category: people
title: User
tags: []
created: 2026-03-02T13:35:20+00:00
updated: 2026-03-02T13:35:20+00:00
credit: 1.0
---
- Session s1: hello there (2026-03-02) (from [[episodes/2026-03/session-hello|Session hello]])
- [[episode-general-session-s1-m0001-m0004|Session s1: hello there]] (2026-03-02) (from [[episodes/2026-03/session-hello|Session hello]])
- [[episode-general-session-s2-m0001-m0004|Session s2: hello there]] (2026-03-02) (from [[episodes/2026-03/session-hello|Session hello]])
"""  # noqa: E501  (the exact shape an older `vb promote` wrote, issue 23)

OLD_MERGED_BODY = (
    "## Session s1: hello there (2026-03-02)\n\nSession `s1`, messages m0001–m0004.\n\n"
    "No decisions, facts or open questions in 4 messages.\n\n"
    "## Session s2: hello there (2026-03-02)\n\nSession `s2`, messages m0001–m0004.\n\n"
    "## Sources\n- [[episode-general-session-s1-m0001-m0004|Session s1: hello there]] "
    "(2026-03-02)\n- [[episode-general-session-s2-m0001-m0004|Session s2: hello there]] "
    "(2026-03-02)\n"
)


def manufactured_vault(vault: Path) -> None:
    """What older vb versions left after two trivial chats, a consolidation and a promotion,
    beside notes a person wrote and one with real content but summed credit."""
    user = vault / "entities/people/user.md"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(OLD_USER, encoding="utf-8")
    merged_from = "merged_from: [episode-general-session-s1-m0001-m0004, x]\n"
    write_episode(vault, "session-hello", body=OLD_MERGED_BODY, extra=merged_from)
    write_episode(
        vault,
        "session-s3-m0001-m0004",
        body=NOTHING.format(s="s3") + "\n",
        extra="session: s3\npinned: true\n",
    )
    write_episode(
        vault,
        "apollo",
        body="We decided to ship Apollo on Friday.\n",
        credit=1.0,
        extra="merged_from: [episode-general-p, episode-general-q]\nmine: kept as written\n",
    )
    mine = vault / "entities/people/links.md"  # a person's own note of links: never touched
    mine.write_text("---\ncredit: 0.9\n---\n- [[apollo]]\n- [[Zeus plan|Zeus]]\n")
    (vault / "entities/projects").mkdir(parents=True, exist_ok=True)
    (vault / "entities/projects/stub.md").write_text("")  # empty, by hand: never touched


def test_doctor_shows_the_plan_then_archives_and_lowers_only_what_vb_made(
    vault: Path, cli: Any
) -> None:
    manufactured_vault(vault)
    v = ("--vault", str(vault))
    cli(*v, "memory-file")
    before = snapshot(vault)
    plan = cli(*v, "doctor", "--json")
    assert plan.exit_code == 0, plan.stderr
    shown = plan.json()
    assert snapshot(vault) == before  # the plan first: nothing written
    assert shown["operation"] == "doctor" and shown["dry_run"] is True and "version" in shown
    assert {(a["op"], a["path"]) for a in shown["actions"]} == {
        ("archive", "entities/people/user.md"),
        ("archive", "episodes/2026-03/session-hello.md"),
        ("set", "episodes/2026-03/apollo.md"),
    }
    human = cli(*v, "doctor")
    assert "vb doctor --fix" in human.stdout and "archive entities/people/user.md" in human.stdout

    applied = cli(*v, "doctor", "--fix", "--json").json()
    assert applied["dry_run"] is False and applied["applied"] == 3
    assert not (vault / "entities/people/user.md").exists()
    assert (vault / "archive/entities/people/user.md").exists()  # archived, never deleted
    assert (vault / "archive/episodes/2026-03/session-hello.md").exists()
    after = snapshot(vault)
    old, new = before["episodes/2026-03/apollo.md"], after["episodes/2026-03/apollo.md"]
    changed = [(a, b) for a, b in zip(old.splitlines(), new.splitlines(), strict=True) if a != b]
    assert changed == [(b"credit: 1.0", b"credit: 0.5")]  # only the credit line
    for untouched in (
        "entities/people/links.md",
        "entities/projects/stub.md",
        "episodes/2026-03/session-s3-m0001-m0004.md",  # pinned
    ):
        assert after[untouched] == before[untouched]
    memory = after["MEMORY.md"].decode()
    assert "entity-people-user" not in memory and "session-hello" not in memory
    again = cli(*v, "doctor", "--json").json()
    assert again["actions"] == []
    restored = cli(*v, "restore", "entity-people-user")
    assert restored.exit_code == 0 and (vault / "entities/people/user.md").exists()


def test_doctor_keeps_credit_that_outcomes_earned(vault: Path, cli: Any) -> None:
    v = ("--vault", str(vault))
    chat(cli, vault, "s1", [("We decided to freeze the Apollo release on Friday.", "Noted.")])
    cli(*v, "flush", "-s", "s1")
    hits = cli(*v, "search", "Apollo release freeze", "--session", "s2", "--json").json()
    assert hits["results"]
    for _ in range(3):
        cli(*v, "feedback", "good", "-s", "s2")
        cli(*v, "search", "Apollo release freeze", "--session", "s2", "--json")
    earned = {p: credit_of(t) for p, t in notes(vault).items() if credit_of(t) > 0.5}
    assert earned  # outcomes raised some note above the initial score
    assert cli(*v, "doctor", "--json").json()["actions"] == []


# ----------------------------------------------------------------------------- end to end


def test_five_small_talk_sessions_leave_nothing_and_the_sixth_is_remembered(
    vault: Path, cli: Any
) -> None:
    """Issue 23's Done-when, the way a harness drives vb: each session's turns through the
    loop stages, the outcome and the flush at its end; then consolidate, promote, MEMORY.md."""
    v = ("--vault", str(vault))
    for n in range(5):
        session = f"s{n + 1}"
        chat(cli, vault, session, SMALL_TALK[2 * n : 2 * n + 2])
        cli(*v, "feedback", "completed", "-s", session)
        assert cli(*v, "flush", "-s", session).exit_code == 0
    assert notes(vault) == {}  # nothing from nothing
    chat(cli, vault, "s6", FACTS)
    cli(*v, "feedback", "completed", "-s", "s6")
    cli(*v, "flush", "-s", "s6")
    chat(cli, vault, "s7", [("Where do I live and where do I work?", "In Lisbon, at Contoso.")])
    cli(*v, "feedback", "good", "-s", "s7")  # an outcome: the memories s7 retrieved earn it
    cli(*v, "flush", "-s", "s7")
    for step in ("consolidate", "promote", "memory-file"):
        assert cli(*v, step).exit_code == 0
    found = notes(vault)
    everything = "\n".join(found.values())
    assert not any(f"session: s{n}\n" in everything for n in range(1, 6))
    assert "hello there" not in everything and "No decisions" not in everything
    user = found["entities/people/user.md"]
    assert "User lives in Lisbon" in user and "Contoso" in user
    memory = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "User lives in Lisbon" in memory and "release to Friday" in memory
    # no note's credit exceeds the initial score plus what outcomes gave it and its parts
    gains: dict[str, float] = {}
    for line in (vault / "logs/credit.jsonl").read_text().splitlines():
        for change in json.loads(line).get("changes", []):
            gains[change["id"]] = gains.get(change["id"], 0.0) + change["new"] - change["old"]
    assert any(g > 0 for g in gains.values())  # (s7's /good did credit something)
    for path, text in found.items():
        note_id = text.split("\nid: ", 1)[1].split("\n", 1)[0]
        parts = (
            text.split("merged_from: [", 1)[1].split("]")[0].split(", ")
            if ("merged_from: [" in text)
            else []
        )
        earned = sum(max(0.0, gains.get(i, 0.0)) for i in [note_id, *parts])
        assert credit_of(text) <= 0.5 + earned + 1e-4, (path, credit_of(text), earned)
    # no entry of MEMORY.md is links alone
    entries = [ln for ln in memory.splitlines() if ln.startswith("- **")]
    assert entries
    for entry in entries:
        summary = entry.split("`: ", 1)[1].split(" <!-- score:", 1)[0] if "`: " in entry else ""
        assert says_something(summary), entry
