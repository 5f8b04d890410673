"""A simulated week of two machines sharing one vault through a real git remote (a bare
repository, clones with their own .vb/): agents search and give feedback, add memories and
write transcripts; a person appends to notes, edits lines of one note on both machines
(sometimes the same line), archives notes; each machine syncs at random points, some while
the remote is unreachable. At the end: no conflict from counters, every counter adds up,
no text or record lost or doubled, no conflict markers, a third clone finds both machines'
notes, and the remote's history was only ever extended. Time is the project's clock
(`domain.clock.now`), moved on by the test; randomness is seeded."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_sync import clone, conflict_copies, remote

from conftest import git
from vault_brain.app.api import MemoryAPI
from vault_brain.app.memory import credit as credit_module
from vault_brain.domain import clock
from vault_brain.domain.sync.counters import COUNTER_KEYS, LATEST_SIDE_KEYS, LIST_KEYS
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter

__all__ = ["remote"]  # the fixture, shared with test_sync

DAYS = 7
SHARED = "shared-week"  # one session both machines append to
MARKERS = ("<<<<<<<", ">>>>>>>")
QUINCE = "Quinces ripen late in autumn and smell of honey."


class Week:
    """The two machines, what the test expects of them, and the simulated clock."""

    def __init__(self, bare: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bare, self.cli, self.monkeypatch = bare, cli, monkeypatch
        self.a = bare.parent / "a"
        self.b = clone(bare, "b", cli)
        self.machines = (self.a, self.b)
        self.rng = random.Random(2026)
        self.moment = dt.datetime(2026, 3, 2, 8, 0, tzinfo=dt.UTC)
        self.ticks = 0
        monkeypatch.setattr(clock, "now", self.now)
        monkeypatch.setattr(credit_module, "now", self.now)
        self.counts: Counter[str] = Counter()  # note id -> access_count expected
        self.credit: dict[str, float] = {}  # note id -> credit expected
        self.clamped: set[str] = set()  # ids whose credit touched a bound (exact sum void)
        self.texts: list[str] = []  # every line a person or an agent wrote
        self.tags: dict[int, set[str]] = {}  # topic -> the tags people added to it
        self.feedbacks = 0
        self.shared_messages: list[str] = []
        self.own_transcripts: dict[str, bytes] = {}  # session -> its one writer's bytes
        self.heads: list[str] = []  # the remote's main after each push
        self.offline = False
        self.copies: list[str] = []
        self.kiwis: list[tuple[str, Path, str, int]] = []  # memories: name, machine, path, day
        for root in self.machines:
            for meta in metas(root).values():
                self.counts[meta["id"]] = int(meta.get("access_count") or 0)
                self.credit[meta["id"]] = float(meta.get("credit", 0.5))

    def now(self) -> dt.datetime:
        """The simulated moment: one millisecond on per call, so that no two writes share
        a microsecond."""
        self.ticks += 1
        return self.moment + dt.timedelta(milliseconds=self.ticks)

    def later(self, hours: float) -> None:
        self.moment += dt.timedelta(hours=hours)

    def api(self, root: Path, session: str) -> MemoryAPI:
        return MemoryAPI.open(root, session=session)

    # -- what the agents do ---------------------------------------------------------------
    def agent_work(self, root: Path, day: int, phase: int) -> None:
        session = f"{root.name}-day{day}-{phase}"
        api = self.api(root, session)
        for _ in range(self.rng.randrange(2, 6)):
            query = f"topic{self.rng.randrange(20)} subject"
            if day and self.rng.random() < 0.3:  # a memory of yesterday morning: first reads
                query = f"kiwi{day - 1}0{self.rng.choice('ab')} likes tea"
            hits = api.search(query, k=2).results
            for hit in hits:
                self.counts[hit.id] += 1
            if hits and self.rng.random() < 0.5:
                result = api.feedback(self.rng.choice(["good", "bad", "completed", "bad"]))
                self.feedbacks += 1
                for change in result.changes:
                    self.credit[change.id] = (
                        self.credit.get(change.id, 0.5) + change.new - change.old
                    )
                    if not 0.0 < change.new < 1.0:
                        self.clamped.add(change.id)
            self.later(0.2)
        name = f"kiwi{day}{phase}{root.name}"
        text = f"On day {day} machine {root.name} learned that {name} likes tea."
        added = api.add("entity", name, text, category="projects").note
        self.counts[added.id] = 0
        self.kiwis.append((name, root, added.path, day))
        self.credit[added.id] = 0.5
        self.texts.append(text)
        message = (
            f"Day {day}, {root.name}: please remember the plan number {self.rng.random():.6f}."
        )
        api.intake(SHARED, message)
        self.shared_messages.append(message)
        own = root / "sessions" / f"{session}.jsonl"
        if own.exists():
            self.own_transcripts[session] = own.read_bytes()

    def agent_search(self, root: Path, query: str, session: str) -> None:
        for hit in self.api(root, session).search(query, k=2).results:
            self.counts[hit.id] += 1

    # -- what the person does -------------------------------------------------------------
    def person_edits(self, day: int) -> None:
        """Lines 2 and 6 of one note on a and b; on odd days line 4 of another note on
        both (a conflict copy keeps one of them); each machine appends to notes of its own."""
        same_day = self.rng.random() < 0.5
        for root, line in ((self.a, 2), (self.b, 6)):
            self.edit(root, day % 7, line, day)
        if day % 2 == 1:
            for root in self.machines:
                self.edit(root, 7 + day // 2, 4, day)
        for root, first in ((self.a, 10), (self.b, 15)):
            self.append(root, first + (day + (1 if same_day else 0)) % 5, day)
        for root in self.machines:  # a tag each on one note: merged as a union, never a copy
            self.tag(root, 3 + day % 3, day)
        for root in self.machines:
            if day:
                rel = next(k[2] for k in self.kiwis if k[1] == root and k[3] == day - 1)
                self.property(root, rel, day)

    def property(self, root: Path, rel: str, day: int) -> None:
        """A property added to a note in Obsidian (at the end of its front matter)."""
        path = root / rel
        text = path.read_text(encoding="utf-8")
        line = f"reviewed_on_{root.name}: day {day}"
        end = text.index("\n---\n") + 1
        path.write_text(text[:end] + line + "\n" + text[end:], encoding="utf-8")
        self.texts.append(line)

    def tag(self, root: Path, topic: int, day: int) -> None:
        """A tag added to a note's `tags` in Obsidian (only that key's lines change)."""
        path = find(root, topic)
        raw = path.read_bytes()
        new = f"{root.name}-day{day}"
        tags = [*(parse_text(raw).meta.get("tags") or []), new]
        path.write_bytes(edit_front_matter(raw, {"tags": tags}))
        self.tags.setdefault(topic, set()).add(new)

    def edit(self, root: Path, topic: int, line: int, day: int) -> None:
        path = find(root, topic)
        old = f"Line {line} of the note about topic{topic}."
        new = f"Line {line} of topic{topic} as {root.name}'s person put it on day {day}."
        text = path.read_text(encoding="utf-8")
        assert old in text, (path, old)
        path.write_text(text.replace(old, new), encoding="utf-8")
        self.texts.append(new)

    def append(self, root: Path, topic: int, day: int) -> None:
        path = find(root, topic)
        new = f"Appended on day {day} on {root.name} to topic{topic} ({len(self.texts)})."
        with path.open("a", encoding="utf-8") as handle:
            handle.write(new + "\n")
        self.texts.append(new)

    def archive(self, root: Path, topic: int, day: int) -> None:
        """Archived on one machine while the other's person appends to it where it is there
        (not yet moved: the merge must carry the new line into the archived note)."""
        path = find(root, topic)
        assert path.relative_to(root).parts[0] != "archive"
        self.api(root, f"{root.name}-person").archive(path.relative_to(root).as_posix(), "done")
        other = self.b if root == self.a else self.a
        assert find(other, topic).relative_to(other).parts[0] == "entities"
        self.append(other, topic, day)

    # -- syncing ----------------------------------------------------------------------------
    def sync(self, root: Path) -> dict[str, Any]:
        self.monkeypatch.setenv("VB_MACHINE", root.name)
        res = self.cli("--vault", str(root), "sync", "--json")
        assert res.exit_code == 0, res.stdout + res.stderr
        doc: dict[str, Any] = res.json()
        assert (doc["push_pending"] is not None) is self.offline, doc
        if doc["pushed"]:
            self.heads.append(git("rev-parse", "main", cwd=self.bare).strip())
        for rel in doc["conflict_copies"]:
            self.check_copy(root, rel)
        return doc

    def check_copy(self, root: Path, rel: str) -> None:
        """A conflict copy is a true text conflict: it differs from its note in more than
        what merges by rule (counters, tags, aliases, vb's scalar keys); it is a note of its
        own whose counters start where theirs stood."""
        copy = parse_text((root / rel).read_bytes())
        note = parse_text((root / copy.meta["conflict_of"]).read_bytes())
        plain = {"id", "conflict_of", *COUNTER_KEYS, *LIST_KEYS, *LATEST_SIDE_KEYS}
        assert copy.body != note.body or {k: v for k, v in copy.meta.items() if k not in plain} != {
            k: v for k, v in note.meta.items() if k not in plain
        }, rel
        self.copies.append(rel)
        self.counts[copy.meta["id"]] = int(copy.meta.get("access_count") or 0)
        self.credit[copy.meta["id"]] = float(copy.meta.get("credit", 0.5))

    def go_offline(self) -> None:
        self.bare.rename(self.bare.with_name("away.git"))
        self.offline = True

    def come_back(self) -> None:
        self.bare.with_name("away.git").rename(self.bare)
        self.offline = False


def metas(root: Path) -> dict[str, dict[str, Any]]:
    """Every note's front matter (archived ones too), by path."""
    out = {}
    for folder in ("entities", "episodes", "archive"):
        for path in sorted((root / folder).rglob("*.md")):
            out[path.relative_to(root).as_posix()] = parse_text(path.read_bytes()).meta
    return out


def find(root: Path, topic: int) -> Path:
    """Topic's note on this machine, archived or not (never a conflict copy)."""
    found = [
        p for folder in ("entities", "archive") for p in (root / folder).rglob(f"topic-{topic}.md")
    ]
    assert len(found) == 1, found
    return found[0]


def vault_text(root: Path) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".vb"} & set(p.relative_to(root).parts)
    )


def test_a_week_of_two_machines_on_one_vault(remote: Path, cli: Any, monkeypatch: Any) -> None:
    week = Week(remote, cli, monkeypatch)
    first_head = git("rev-parse", "main", cwd=remote).strip()
    start = week.moment
    archive_on = {2: (week.b, 11), 4: (week.a, 16), 5: (week.a, 19)}
    quince = MemoryAPI.open(week.a).add("entity", "Quince", QUINCE, category="projects").note
    week.counts[quince.id], week.credit[quince.id] = 0, 0.5
    for root in week.machines:
        week.sync(root)
    for day in range(DAYS):
        if day == 5:  # read for the first time on b while a's person adds a property to it
            week.property(week.a, quince.path, day)
            week.agent_search(week.b, "quinces ripen", "b-quince")
            week.sync(week.a)
            week.sync(week.b)  # ours has the new counters, theirs the new property
        week.moment = start + dt.timedelta(days=day)  # 8 o'clock
        if day == 3:
            week.go_offline()  # the remote unreachable for a day and a half
        for phase in range(3):  # morning, afternoon, evening: sync at random points
            if (day, phase) == (4, 1):
                week.come_back()
            order = list(week.machines)
            week.rng.shuffle(order)
            for root in order:
                week.agent_work(root, day, phase)
                if week.rng.random() < 0.5:
                    week.sync(root)
            if phase == 0:
                week.person_edits(day)
            if phase == 1 and day in archive_on:
                week.archive(*archive_on[day], day)
            week.later(4)
    for root in (week.a, week.b, week.a):
        week.sync(root)
    a, b = week.a, week.b
    assert git("rev-parse", "HEAD", cwd=a) == git("rev-parse", "HEAD", cwd=b)
    assert git("status", "--porcelain", cwd=a) == git("status", "--porcelain", cwd=b) == ""
    final = git("rev-parse", "main", cwd=remote).strip()
    for old in [first_head, *week.heads]:  # only ever extended
        git("merge-base", "--is-ancestor", old, final, cwd=remote)
    copies = conflict_copies(a)
    assert sorted(Path(c).name for c in week.copies) == copies
    assert len(copies) == 3  # the same line edited on both machines, odd days
    for root in (a, b):
        text = vault_text(root)
        assert not [m for m in MARKERS if m in text]
        missing = [t for t in week.texts if t not in text]
        assert not missing, missing
        for topic, tags in week.tags.items():
            assert tags <= set(parse_text(find(root, topic).read_bytes()).meta["tags"]), topic
        found = {m["id"]: m for m in metas(root).values()}
        assert {i: int(m.get("access_count") or 0) for i, m in found.items()} == dict(week.counts)
        for note_id, expected in week.credit.items():
            if note_id not in week.clamped:
                assert float(found[note_id].get("credit", 0.5)) == pytest.approx(
                    expected, abs=1e-5
                ), note_id
        assert all(0.0 <= float(m.get("credit", 0.5)) <= 1.0 for m in found.values())
        log = (root / "logs" / "credit.jsonl").read_text().splitlines()
        assert len(log) == len(set(log)) == week.feedbacks
        for session, data in week.own_transcripts.items():
            assert (root / "sessions" / f"{session}.jsonl").read_bytes() == data, session
        shared = [
            json.loads(line)
            for line in (root / "sessions" / f"{SHARED}.jsonl").read_text().splitlines()
        ]
        said = [r.get("content") for r in shared if r.get("type") == "user"]
        assert sorted(said) == sorted(week.shared_messages)
        archived = {p for p in found if found[p].get("archived")}
        assert len(archived) == len(archive_on)
        for _machine, topic in archive_on.values():  # moved, with the other's new line
            assert find(root, topic).relative_to(root).parts[0] == "archive"
    c = clone(remote, "c", cli)
    for name in ("a", "b"):
        res = cli("--vault", str(c), "search", f"kiwi62{name} likes tea", "--json")
        assert res.json()["results"][0]["title"] == f"kiwi62{name}"
