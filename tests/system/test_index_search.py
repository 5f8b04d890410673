"""The index is a cache of the files: reconcile, JSON contracts, batch mode, session recording."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

from conftest import index_dir, run_vb

NOTE = """---
title: {title}
tags: [{tags}]
---
{body}
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def ids(res: Any) -> list[str]:
    return [r["id"] for r in res.json()["results"]]


def test_search_json_contract(vault: Path, cli: Any) -> None:
    write(
        vault,
        "entities/projects/zephyr.md",
        NOTE.format(title="Zephyr", tags="wind", body="Zephyr ships."),
    )
    res = cli("--vault", str(vault), "search", "zephyr", "--json")
    assert res.exit_code == 0, res.stderr
    doc = res.json()
    assert doc["version"] == 2 and doc["query"] == "zephyr"
    (hit,) = doc["results"]
    assert set(hit) == {
        "id", "path", "title", "type", "category", "score", "snippet",
        "source", "line", "session", "message", "written_by", "explain",
    }  # fmt: skip
    assert hit == {
        **hit,
        "id": "entity-projects-zephyr",
        "path": "entities/projects/zephyr.md",
        "title": "Zephyr",
        "type": "entity",
        "category": "projects",
        "source": "memory",  # a note: no line, session or message
        "line": None,
        "session": None,
        "message": None,
        "written_by": "person",  # added with `vb add` by the person
        "explain": None,  # only with --explain
    }
    assert isinstance(hit["score"], float) and hit["score"] > 0
    assert "Zephyr ships." in hit["snippet"]


def test_explain_takes_each_score_apart(vault: Path, cli: Any) -> None:
    write(
        vault,
        "entities/projects/zephyr.md",
        "---\ntitle: Zephyr\ncredit: 0.9\n---\nZephyr ships in May; the zephyr team is two.\n",
    )
    write(vault, "entities/projects/kite.md", NOTE.format(title="Kite", tags="zephyr", body="x"))
    res = cli("--vault", str(vault), "search", "zephyr team", "--explain", "--json")
    assert res.exit_code == 0, res.stderr
    by_id = {hit["id"]: hit for hit in res.json()["results"]}
    zephyr, kite = (
        by_id["entity-projects-zephyr"]["explain"],
        by_id["entity-projects-kite"]["explain"],
    )
    assert set(zephyr["fields"]) == {"title", "body"} and set(kite["fields"]) == {"tagtext"}
    for hit in by_id.values():
        parts = hit["explain"]
        assert abs(sum(parts["fields"].values()) - parts["bm25"]) < 1e-3  # the fields add up
        assert parts["relevance"] == parts["bm25"]  # lexical: the relevance is the BM25
        product = parts["relevance"] * parts["credit"] * parts["recency"] * parts["superseded"]
        assert abs(product - hit["score"]) < 1e-3 * hit["score"]  # the factors multiply
    assert zephyr["credit"] > 1.0 and kite["credit"] == 1.0  # credit 0.9 lifts, none is 1
    text = cli("--vault", str(vault), "search", "zephyr team", "--explain")
    assert "[relevance " in text.stdout and "title " in text.stdout and "x credit " in text.stdout
    batch = cli("--vault", str(vault), "search", "--queries", "-", "--explain", input="{}\n")
    assert batch.exit_code != 0 and "--explain" in batch.stderr  # refused, not ignored


def test_hand_edits_are_seen_without_a_watcher(vault: Path, cli: Any) -> None:
    """Every reader reconciles first: create, edit, rename and delete behind vb's back."""
    path = write(
        vault, "entities/people/bo.md", NOTE.format(title="Bo", tags="", body="likes kayaks")
    )
    assert ids(cli("--vault", str(vault), "search", "kayaks", "--json")) == ["entity-people-bo"]

    path.write_text(NOTE.format(title="Bo", tags="", body="likes canoes now"), encoding="utf-8")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert ids(cli("--vault", str(vault), "search", "kayaks", "--json")) == []
    assert ids(cli("--vault", str(vault), "search", "canoes", "--json")) == ["entity-people-bo"]

    path.rename(vault / "entities/people/bo-renamed.md")
    assert ids(cli("--vault", str(vault), "search", "canoes", "--json")) == [
        "entity-people-bo-renamed"
    ]

    (vault / "entities/people/bo-renamed.md").unlink()
    assert ids(cli("--vault", str(vault), "search", "canoes", "--json")) == []


def test_filters_and_archive_exclusion(vault: Path, cli: Any) -> None:
    write(
        vault, "entities/people/cy.md", NOTE.format(title="Cy", tags="team/core", body="orbit plan")
    )
    write(
        vault,
        "episodes/2026-01/orbit.md",
        NOTE.format(title="Orbit", tags="misc", body="orbit plan"),
    )
    write(
        vault,
        "archive/entities/projects/old.md",
        NOTE.format(title="Old", tags="", body="orbit plan"),
    )
    base = ("--vault", str(vault), "search", "orbit", "--json")
    assert sorted(ids(cli(*base))) == ["entity-people-cy", "episode-general-orbit"]
    assert ids(cli(*base, "--type", "episode")) == ["episode-general-orbit"]
    assert ids(cli(*base, "--category", "people")) == ["entity-people-cy"]
    assert ids(cli(*base, "--tag", "team")) == ["entity-people-cy"]
    assert ids(cli(*base, "--tag", "team/core")) == ["entity-people-cy"]
    assert "entity-projects-old" in ids(cli(*base, "--include-archive"))


def test_credit_and_recency_reorder_equal_bm25_hits(vault: Path, cli: Any) -> None:
    body = "The quarterly budget review."
    write(vault, "entities/projects/low.md", f"---\ncredit: 0.05\n---\n{body}\n")
    write(vault, "entities/projects/high.md", f"---\ncredit: 0.95\n---\n{body}\n")
    write(vault, "entities/projects/plain.md", f"{body}\n")
    order = ids(cli("--vault", str(vault), "search", "budget review", "--json"))
    assert order == ["entity-projects-high", "entity-projects-plain", "entity-projects-low"]
    # recency: same text, same credit, one updated today and one two years ago
    other = "The annual harvest report."
    today = dt.date.today().isoformat()
    old = (dt.date.today() - dt.timedelta(days=730)).isoformat()
    write(vault, "entities/projects/fresh.md", f"---\nupdated: {today}\n---\n{other}\n")
    write(vault, "entities/projects/stale.md", f"---\nupdated: {old}\n---\n{other}\n")
    recent = ids(cli("--vault", str(vault), "search", "harvest report", "--json"))
    assert recent == ["entity-projects-fresh", "entity-projects-stale"]
    unweighted = vault / "STRATEGY.md"
    unweighted.write_text(
        unweighted.read_text().replace("# recency_weight: 0.1", "recency_weight: 0")
    )
    tied = cli("--vault", str(vault), "search", "harvest report", "--json").json()["results"]
    assert tied[0]["score"] == tied[1]["score"]  # without the recency weight they tie


def test_batch_queries_one_line_per_query(vault: Path, cli: Any, tmp_path: Path) -> None:
    write(vault, "entities/people/di.md", NOTE.format(title="Di", tags="", body="violin teacher"))
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "violin"}\n\n{"id": 7, "query": "nothing matches"}\n')
    res = cli("--vault", str(vault), "search", "--queries", str(queries), "-k", "3")
    assert res.exit_code == 0, res.stderr
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", 7]
    assert [r["id"] for r in lines[0]["results"]] == ["entity-people-di"]
    assert lines[1]["results"] == []


def test_session_search_records_retrieval_plain_search_does_not(vault: Path, cli: Any) -> None:
    write(vault, "entities/people/ed.md", NOTE.format(title="Ed", tags="", body="plays chess"))
    cli("--vault", str(vault), "search", "chess")
    assert not any((vault / "sessions").glob("*.jsonl"))
    res = cli("--vault", str(vault), "search", "chess", "--session", "s-1", "--json")
    assert res.exit_code == 0
    records = [json.loads(x) for x in (vault / "sessions/s-1.jsonl").read_text().splitlines()]
    assert records[-1]["type"] == "retrieval"
    assert records[-1]["ids"] == ["entity-people-ed"] and records[-1]["query"] == "chess"


def test_rebuild_equals_incremental(vault: Path, cli: Any) -> None:
    for i in range(30):
        write(
            vault,
            f"entities/projects/p{i}.md",
            NOTE.format(title=f"P{i}", tags="x", body=f"alpha {i}"),
        )
    incremental = cli("--vault", str(vault), "search", "alpha", "-k", "50", "--json").json()[
        "results"
    ]
    rebuilt = cli("--vault", str(vault), "index", "--rebuild", "--json").json()
    assert rebuilt["rebuilt"] and rebuilt["total"] == 30
    again = cli("--vault", str(vault), "search", "alpha", "-k", "50", "--json").json()["results"]
    assert sorted(r["id"] for r in incremental) == sorted(r["id"] for r in again)


def test_damaged_index_is_rebuilt_not_fatal(vault: Path, cli: Any) -> None:
    write(vault, "entities/people/fa.md", NOTE.format(title="Fa", tags="", body="sailing"))
    assert ids(cli("--vault", str(vault), "search", "sailing", "--json")) == ["entity-people-fa"]
    for seg in index_dir(vault).iterdir():
        seg.write_bytes(b"garbage")
    res = run_vb("--vault", str(vault), "search", "sailing", "--json")
    assert res.exit_code == 0, res.stderr
    assert ids(res) == ["entity-people-fa"]


def test_concurrent_writers_lose_nothing(vault: Path) -> None:
    """Several processes adding at once: no note overwrites another, ids stay unique, the
    index is complete."""
    import subprocess
    import sys

    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vault_brain",
                "--vault",
                str(vault),
                "add",
                "--name",
                "Same Name",
                "-c",
                "projects",
                f"content number {i} zebra",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    # a name a note already has is refused; two adds at the same instant may both land (the
    # later under the next free name): either way none overwrites another
    landed = [p.returncode == 0 for p in procs]
    assert all(ok or "already exists" in err for ok, (_, err) in zip(landed, outs, strict=True))
    files = sorted((vault / "entities/projects").glob("*.md"))
    assert 1 <= len(files) == sum(landed)
    texts = {f.read_text(encoding="utf-8").rsplit("---\n", 1)[1] for f in files}
    assert len(texts) == len(files)  # each its own content
    res = run_vb("--vault", str(vault), "search", "zebra", "--json")
    assert len(res.json()["results"]) == len(files)


def test_a_write_succeeds_while_another_process_holds_the_index_lock(vault: Path) -> None:
    """Files are the truth, the index a cache: `vb add`, `vb update` and `vb delete` finish
    while another process holds the index lock, and the next search (once the lock is free)
    finds exactly what the files say."""
    import filelock

    v = ("--vault", str(vault))
    assert run_vb(*v, "index").exit_code == 0
    lock = filelock.FileLock(str(vault / ".vb" / "index.lock"))
    env = {"VB_LOCK_TIMEOUT": "0.5"}
    with lock.acquire(timeout=5):
        added = run_vb(
            *v, "add", "-n", "Locked", "-c", "projects", "Pangolin notes.", "--json", env=env
        )
        assert added.exit_code == 0, added.stderr
        note = added.json()["note"]
        assert (vault / note["path"]).is_file()
        updated = run_vb(*v, "update", note["id"], "--content", "Pangolin facts.", env=env)
        assert updated.exit_code == 0, updated.stderr
        # a search has to reconcile, so it waits for the lock and says so
        waited = run_vb(*v, "search", "pangolin", env=env)
        assert waited.exit_code == 4 and "search index is locked" in waited.stderr
    found = run_vb(*v, "search", "pangolin", "--json").json()["results"]
    assert [h["id"] for h in found] == [note["id"]]
    assert "Pangolin facts." in found[0]["snippet"]
