"""git's per-file note merge driver: the light merge (no YAML library) gives the bytes the full
merge gives, the process git runs imports nothing heavy, and `vb sync` replaces an older
driver command line in a clone's git config."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git
from vault_brain.storage.git.sync import driver_command
from vault_brain.storage.notes.merge import merge_note
from vault_brain.storage.notes.merge_light import merge_note_light, read

DRIVER = [sys.executable, "-m", "vault_brain.interfaces.git_merge"]

# front matter lines in the forms people and vb write, a few that the light merge declines
OTHER_LINES = [
    "id: entity-projects-topic",
    "type: entity",
    "category: projects",
    "title: Topic about things",
    'title: "Quoted: with a colon"',
    "title: 'single quoted'",
    "tags: [bench, sync-test]",
    "tags: []",
    "aliases:\n  - First alias\n  - second",
    "aliases:\n- zero indent",
    "created: 2026-01-01T10:00:00+00:00",
    "created: 2026-01-01",
    "pinned: false",
    "source: http://example.org/x",
    "note: 12:30",
    "due: 2023-02-30",  # not a date YAML reads: the full merge decides
    "weird: &anchor value",  # an anchor: declined
    "nested:\n  key: value",  # a nested mapping: declined
    'title: "escaped \\" quote"',  # an escape: declined
]
COUNTS = ["1", "3", "7", "12", "0"]
CREDITS = ["0.5", "0.62", "0.41", "1", "0.9999", "0.0"]
TIMES = [
    "2026-01-01T10:00:00+00:00",
    "2026-01-02T09:30:00+01:00",
    "2026-01-02T09:30:00.250000+01:00",
    "2026-01-03T10:00:00Z",  # declined (YAML reads it back as +00:00)
    "2026-01-01",
    "'2026-01-04T10:00:00+00:00'",  # quoted: declined
]


def front(rng: random.Random, plain: bool, base: dict[str, str] | None = None) -> dict[str, str]:
    """Counter values of one version: a base's, each changed (or dropped) at random."""
    times = TIMES[:3] if plain else TIMES
    keys = {"access_count": COUNTS, "credit": CREDITS, "last_accessed": times, "updated": times}
    out = dict(base or {})
    for key, choices in keys.items():
        roll = rng.random()
        if (base is None and roll < 0.8) or (base is not None and roll < 0.4):
            out[key] = rng.choice(choices)
        elif base is not None and roll < 0.45:
            out.pop(key, None)
    return out


def note(other: list[str], counters: dict[str, str], body: list[str], order: int) -> bytes:
    lines = list(other)
    items = [f"{k}: {v}" for k, v in counters.items()]
    lines[order % (len(lines) + 1) : order % (len(lines) + 1)] = items
    return ("---\n" + "".join(x + "\n" for x in lines) + "---\n" + "".join(body)).encode()


def body_of(rng: random.Random, base: list[str], side: str) -> list[str]:
    lines = list(base)
    for _ in range(rng.randrange(3)):
        lines[rng.randrange(len(lines))] = f"Line changed on {side} {rng.random():.3f}.\n"
    if rng.random() < 0.2:
        lines.append(f"Added on {side}.\n")
    return lines


def triple(rng: random.Random) -> tuple[bytes, bytes, bytes]:
    other = rng.sample(OTHER_LINES, rng.randrange(2, 7))
    plain = rng.random() < 0.7  # most notes: only the forms vb writes
    if plain:
        other = [x for x in other if OTHER_LINES.index(x) < 15]
    counters = front(rng, plain)
    body = [f"Line {n} about the topic.\n" for n in range(10)]
    order = rng.randrange(8)
    base = note(other, counters, body, order)
    sides = []
    for side in ("ours", "theirs"):
        mine = list(other)
        if rng.random() < 0.15:
            mine.append(f"{side}_key: added by {side}")
        sides.append(note(mine, front(rng, plain, counters), body_of(rng, body, side), order))
    return base, sides[0], sides[1]


def test_the_light_merge_gives_the_bytes_of_the_full_merge_or_declines() -> None:
    rng = random.Random(13)
    merged = declined = 0
    for _ in range(400):
        base, ours, theirs = triple(rng)
        if rng.random() < 0.05:
            ours = ours.replace(b"\n", b"\r\n")
        light = merge_note_light(base, ours, theirs)
        full = merge_note(base, ours, theirs)
        if light is None:
            declined += 1
            continue
        merged += 1
        assert full.conflict is None, (base, ours, theirs)
        assert light == full.data, (base, ours, theirs)
    assert merged > 120 and declined > 120  # both branches were exercised


def test_the_light_reader_reads_what_vb_writes_and_declines_the_rest() -> None:
    plain = b"---\nid: x\ntags: [a, b]\naccess_count: 3\ncredit: 0.5\n---\nbody\n"
    found = read(plain)
    assert found is not None and found.counters == {"access_count": 3, "credit": 0.5}
    assert read(b"no front matter\n") is not None
    for text in (
        b"---\nid: x\n",  # no closing line
        b"\xef\xbb\xbf---\nid: x\n---\n",  # a BOM
        b"---\nid: x\r\n---\r\n",  # CRLF
        b"---\naccess_count: '3'\n---\n",  # a quoted counter
        b"---\naccess_count: 3\naccess_count: 4\n---\n",  # twice
        b"---\nk: {a: 1}\n---\n",  # a flow mapping
        b"---\nk: a: b\n---\n",  # invalid YAML
    ):
        assert read(text) is None, text


def run_driver(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> Any:
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
    return subprocess.run(
        [*DRIVER, "note", "base", "ours", "theirs", "notes/topic.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_driver_process_merges_counters_and_lines(tmp_path: Path) -> None:
    base = b"---\nid: t\naccess_count: 1\ncredit: 0.5\n---\none\ntwo\nthree\n"
    ours = b"---\nid: t\naccess_count: 3\ncredit: 0.6\n---\none (ours)\ntwo\nthree\n"
    theirs = b"---\nid: t\naccess_count: 2\ncredit: 0.45\n---\none\ntwo\nthree (theirs)\n"
    proc = run_driver(tmp_path, base, ours, theirs)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ours").read_bytes() == merge_note(base, ours, theirs).data
    assert b"access_count: 4\ncredit: 0.55\n" in (tmp_path / "ours").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "ours", "theirs"]


def test_the_driver_process_writes_a_conflict_copy_through_the_full_merge(tmp_path: Path) -> None:
    base = b"---\nid: t\naccess_count: 1\n---\none\n"
    ours = b"---\nid: t\naccess_count: 2\n---\none (ours)\n"
    theirs = b"---\nid: t\naccess_count: 3\n---\none (theirs)\n"
    (tmp_path / "notes").mkdir()
    proc = run_driver(tmp_path, base, ours, theirs)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ours").read_bytes() == b"---\nid: t\naccess_count: 4\n---\none (ours)\n"
    copies = list((tmp_path / "notes").iterdir())
    assert len(copies) == 1 and b"one (theirs)" in copies[0].read_bytes()
    assert "conflicting lines" in proc.stderr


def test_a_driver_that_cannot_read_its_files_exits_non_zero(tmp_path: Path) -> None:
    (tmp_path / "base").write_bytes(b"---\nid: t\n---\nx\n")
    proc = subprocess.run(
        [*DRIVER, "note", "base", "missing", "theirs", "notes/topic.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and "notes/topic.md" in proc.stderr
    assert not (tmp_path / "missing").exists()


def test_the_driver_process_imports_no_yaml_cli_or_git_for_a_plain_note(tmp_path: Path) -> None:
    base = b"---\nid: t\naccess_count: 1\n---\none\ntwo\nthree\n"
    ours = b"---\nid: t\naccess_count: 2\n---\none (ours)\ntwo\nthree\n"
    theirs = b"---\nid: t\naccess_count: 3\n---\none\ntwo\nthree (theirs)\n"
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
    code = (
        "import sys; from vault_brain.interfaces.git_merge import main; "
        "rc = main(['note', 'base', 'ours', 'theirs', 'x.md']); "
        "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in "
        "('yaml', 'frontmatter', 'typer', 'git', 'whoosh', 'pydantic', 'subprocess', 'typing')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == "0 []", proc.stdout + proc.stderr
    assert b"access_count: 4" in (tmp_path / "ours").read_bytes()


def test_sync_replaces_an_older_driver_command_in_the_clone(
    tmp_path: Path, git_env: dict[str, str], cli: Any
) -> None:
    root = tmp_path / "v"
    assert cli("init", str(root)).exit_code == 0
    bare = tmp_path / "remote.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    git("remote", "add", "origin", str(bare), cwd=root)
    old = f"{sys.executable} -m vault_brain merge-driver note %O %A %B %P"
    git("config", "merge.vb-note.driver", old, cwd=root)
    res = cli("--vault", str(root), "sync", "--json")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert git("config", "merge.vb-note.driver", cwd=root).strip() == driver_command("note")
    assert "vault_brain.interfaces.git_merge note %O %A %B %P" in driver_command("note")


# a counter the ancestor lacks, added on both sides at different places in the front matter
ADDED_BASE = b"---\nid: t\ntitle: T\ntags: [a]\n---\none\n\nmiddle\n\ntwo\n"
ADDED_OURS = b"---\nid: t\naccess_count: 2\ntitle: T\ntags: [a]\n---\none\n\nmiddle\n\ntwo (ours)\n"
ADDED_THEIRS = (
    b"---\nid: t\ntitle: T\ntags: [a]\naccess_count: 3\n---\none (theirs)\n\nmiddle\n\ntwo\n"
)
ADDED_MERGED = (
    b"---\nid: t\naccess_count: 5\ntitle: T\ntags: [a]\n---\none (theirs)\n\nmiddle\n\ntwo (ours)\n"
)


def test_a_counter_both_sides_added_is_written_once_at_our_place() -> None:
    """Both machines add `access_count` (absent in the ancestor) at different places: the
    merge writes it once, where ours has it, with both sides' increments from 0."""
    full = merge_note(ADDED_BASE, ADDED_OURS, ADDED_THEIRS)
    assert full.conflict is None and full.data == ADDED_MERGED
    assert merge_note_light(ADDED_BASE, ADDED_OURS, ADDED_THEIRS) == ADDED_MERGED
    # theirs first: theirs' place now
    swapped = merge_note(ADDED_BASE, ADDED_THEIRS, ADDED_OURS).data
    assert swapped.count(b"access_count") == 1 and b"[a]\naccess_count: 5\n---" in swapped
    # every counter key at once, and one side alone adding a key: still once each
    ours = ADDED_OURS.replace(b"title: T\n", b"title: T\ncredit: 0.6\nlast_accessed: 2026-01-02\n")
    theirs = ADDED_THEIRS.replace(b"id: t\n", b"id: t\ncredit: 0.7\nupdated: 2026-01-03\n")
    for merged in (
        merge_note(ADDED_BASE, ours, theirs).data,
        merge_note_light(ADDED_BASE, ours, theirs),
    ):
        assert merged is not None
        head = merged.split(b"---\n")[1].decode()
        assert [line.split(":")[0] for line in head.splitlines()] == [
            "id",
            "access_count",
            "title",
            "credit",
            "last_accessed",
            "tags",
            "updated",
        ]
        assert "credit: 0.8\n" in head and "access_count: 5\n" in head


def test_the_driver_process_writes_a_counter_both_sides_added_once(tmp_path: Path) -> None:
    """The same through git's per-file driver: the light merge, and the full merge (a front
    matter form the light one declines)."""
    proc = run_driver(tmp_path, ADDED_BASE, ADDED_OURS, ADDED_THEIRS)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ours").read_bytes() == ADDED_MERGED
    anchored = [
        x.replace(b"id: t\n", b"id: t\nweird: &anchor value\n")
        for x in (ADDED_BASE, ADDED_OURS, ADDED_THEIRS)
    ]
    assert merge_note_light(*anchored) is None  # declined: the full merge runs
    proc = run_driver(tmp_path, *anchored)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ours").read_bytes() == ADDED_MERGED.replace(
        b"id: t\n", b"id: t\nweird: &anchor value\n"
    )


def test_counters_read_first_here_and_a_property_added_there_do_not_clash(
    tmp_path: Path,
) -> None:
    """One machine's first read adds access_count and last_accessed at the end of the front
    matter while a person adds a property there on the other: no conflict copy, both kept,
    whichever side is ours (in-process and through git's per-file driver)."""
    base = b"---\nid: q\ntitle: Quince\ncredit: 0.5\n---\nQuinces ripen late.\n"
    read = base.replace(
        b"credit: 0.5\n",
        b"credit: 0.5\naccess_count: 1\nlast_accessed: 2026-03-07T08:00:00+00:00\n",
    )
    prop = base.replace(b"credit: 0.5\n", b"credit: 0.5\nreviewed: yes\n")
    both = base.replace(
        b"credit: 0.5\n",
        b"credit: 0.5\naccess_count: 1\nlast_accessed: 2026-03-07T08:00:00+00:00\nreviewed: yes\n",
    )
    # ours without the counters: they go where a new key goes, after the property
    after = prop.replace(
        b"reviewed: yes\n",
        b"reviewed: yes\naccess_count: 1\nlast_accessed: 2026-03-07T08:00:00+00:00\n",
    )
    for ours, theirs, merged in ((read, prop, both), (prop, read, after)):
        full = merge_note(base, ours, theirs)
        assert full.conflict is None and full.data == merged
        assert merge_note_light(base, ours, theirs) == merged
        proc = run_driver(tmp_path, base, ours, theirs)
        assert proc.returncode == 0 and (tmp_path / "ours").read_bytes() == merged
