"""The labelled capture corpus in tests/data/capture passes its own validator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from conftest import REPO, load_script

CORPUS = REPO / "tests" / "data" / "capture"


def _load_checker() -> Any:
    return load_script("check_capture_corpus")


def test_capture_corpus_is_valid() -> None:
    assert _load_checker().check(CORPUS) == []


def test_broken_corpus_names_the_broken_entries(tmp_path: Path) -> None:
    for name in ("conversations.jsonl", "hostile.jsonl"):
        shutil.copy(CORPUS / name, tmp_path / name)

    conversations = [
        json.loads(line)
        for line in (tmp_path / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    conversation = conversations[0]
    conversation["facts"][0]["keywords"].append("zqxjkeyword")
    (tmp_path / "conversations.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in conversations),
        encoding="utf-8",
    )

    hostile = [
        json.loads(line)
        for line in (tmp_path / "hostile.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    entry = hostile[0]
    entry["needles"] = [*entry["needles"][:2], "this needle occurs nowhere"]
    (tmp_path / "hostile.jsonl").write_text(
        "".join(json.dumps(h, ensure_ascii=False) + "\n" for h in hostile), encoding="utf-8"
    )

    problems = _load_checker().check(tmp_path)
    assert any(
        f"conversation {conversation['id']} fact 0" in p and "zqxjkeyword" in p for p in problems
    ), problems
    assert any(
        f"hostile {entry['id']}" in p and "this needle occurs nowhere" in p for p in problems
    ), problems
