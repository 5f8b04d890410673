"""Claude Code hooks, driven as Claude Code drives them: `vb hook <event>` as a subprocess
with a recorded payload on stdin (tests/data/hooks/), answering JSON on stdout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import filelock
import git
import pytest

from conftest import Result, run_vb, snapshot
from vault_brain.interfaces.claude_code.transcript import read_claude_transcript
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.sessions.transcript import read_records

DATA = Path(__file__).parents[1] / "data" / "hooks"
SESSION_ID = "5f0c2a9e-7b31-4d8e-9a47-2c1e8f3b6d10"
VB_SESSION = f"claude-{SESSION_ID}"


def payload(name: str, transcript: Path | None = None, **changes: Any) -> str:
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    if transcript is not None:
        data["transcript_path"] = str(transcript)
    data.update(changes)
    return json.dumps(data)


def hook(vault: Path, event: str, stdin: str) -> Result:
    return run_vb("--vault", str(vault), "hook", event, input=stdin)


def answer(res: Result) -> dict[str, Any]:
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert isinstance(data, dict)
    return data


def session_records(vault: Path) -> list[dict[str, Any]]:
    return list(read_records(vault / "sessions" / f"{VB_SESSION}.jsonl"))


def messages(vault: Path) -> list[tuple[str, str]]:
    out = []
    for r in session_records(vault):
        if r["type"] in ("user", "assistant", "tool_result"):
            out.append((r["type"], r["content"]))
        elif r["type"] == "tool_call":
            out.append(("tool_call", f"{r['name']} {json.dumps(r['arguments'])}"))
    return out


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """Claude Code's transcript of this session, as the harness left it (torn last line)."""
    path = tmp_path / "claude" / f"{SESSION_ID}.jsonl"
    path.parent.mkdir()
    shutil.copy(DATA / "transcript.jsonl", path)
    return path


def add_note(vault: Path, name: str, content: str, category: str = "people") -> str:
    res = run_vb("--vault", str(vault), "add", "--name", name, "-c", category, content, "--json")
    assert res.exit_code == 0, res.stderr
    return str(res.json()["note"]["id"])


# --------------------------------------------------------------------------- transcript


def test_transcript_reader_keeps_messages_and_skips_the_rest() -> None:
    chunk = read_claude_transcript(DATA / "transcript.jsonl")
    assert [(r["type"], r.get("content", r.get("name"))) for r in chunk.records] == [
        (
            "user",
            "I prefer meetings before 10 am on weekdays. Can you draft the agenda for Thursday?",
        ),
        ("assistant", "Sure, I will read the existing agenda notes first."),
        ("tool_call", "Read"),
        ("tool_result", "     1→# Agenda\n     2→1. Rollout status\n     3→2. Open questions\n"),
        ("assistant", "Draft for Thursday at 9:30: rollout status first, then open questions."),
        ("user", "Alice Kim works at Contoso as lead engineer. Please remember that."),
        ("assistant", "Noted: Alice Kim is the lead engineer at Contoso."),
    ]
    call, result = chunk.records[2], chunk.records[3]
    assert call["call_id"] == result["call_id"] == "toolu_01Hb9"
    assert call["arguments"] == {"file_path": "/home/dev/acme-api/docs/agenda.md"}
    assert dict(chunk.skipped) == {
        "command": 1,
        "incomplete last line": 1,
        "malformed": 1,
        "meta": 1,
        "thinking": 1,
        "type file-history-snapshot": 1,
        "type progress": 1,
        "type summary": 1,
        "type system": 1,
    }
    # the torn last line is not consumed: the next read starts at its first byte
    raw = (DATA / "transcript.jsonl").read_bytes()
    assert chunk.offset == raw.rfind(b"\n") + 1 < len(raw)
    assert read_claude_transcript(DATA / "transcript.jsonl", chunk.offset).records == []


# --------------------------------------------------------------------------- events


def test_session_start_regenerates_memory_md_and_injects_it(vault: Path) -> None:
    note_id = add_note(vault, "Alice Kim", "Alice drinks jasmine green tea.")
    stale = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert note_id not in stale
    out = answer(hook(vault, "session-start", payload("session_start")))
    assert list(out) == ["hookSpecificOutput"]
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    memory_md = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert note_id in memory_md and "jasmine green tea" in memory_md
    context = specific["additionalContext"]  # MEMORY.md, quoted as reference data
    assert memory_md.strip() in context and context.endswith("</memory>\n</vault_memories>")
    assert '<memory id="MEMORY.md" source="vb">' in context


def test_user_prompt_submit_injects_memories_and_records_them_for_credit(
    vault: Path, transcript: Path
) -> None:
    alice = add_note(vault, "Alice Kim", "Alice Kim drinks jasmine green tea every morning.")
    add_note(vault, "Build server", "The build server runs on port 8080.", "projects")
    out = answer(hook(vault, "user-prompt-submit", payload("user_prompt_submit", transcript)))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert f'<memory id="{alice}" source="person"' in context and "jasmine green tea" in context
    assert context.startswith("<vault_memories>") and "8080" not in context

    records = session_records(vault)
    prompt = json.loads(payload("user_prompt_submit"))["prompt"]
    user = [r for r in records if r["type"] == "user" and r.get("via") == "hook"]
    assert [u["content"] for u in user] == [prompt]
    retrieval = [r for r in records if r["type"] == "retrieval"]
    assert len(retrieval) == 1 and retrieval[0]["for_message"] == user[0]["id"]
    assert retrieval[0]["ids"][0] == alice and retrieval[0]["source"] == "claude-code"
    note = vault / "entities/people/alice-kim.md"
    assert parse_text(note.read_bytes()).meta["access_count"] == 1
    # the earlier conversation was imported first, so the prompt comes after it
    assert messages(vault)[-1] == ("user", prompt)
    assert messages(vault)[0][1].startswith("I prefer meetings before 10 am")

    fed = run_vb("--vault", str(vault), "feedback", "good", "--session", VB_SESSION, "--json")
    assert fed.exit_code == 0, fed.stderr
    changed = {c["id"]: c["new"] for c in fed.json()["changes"]}
    assert alice in changed and changed[alice] > 0.5
    assert parse_text(note.read_bytes()).meta["credit"] == changed[alice]


def test_a_locked_vault_still_gets_its_memories_injected(vault: Path, transcript: Path) -> None:
    alice = add_note(vault, "Alice Kim", "Alice Kim drinks jasmine green tea every morning.")
    with filelock.FileLock(str(vault / ".vb" / "vault.lock")).acquire(timeout=5):
        res = run_vb(
            "--vault",
            str(vault),
            "hook",
            "user-prompt-submit",
            input=payload("user_prompt_submit", transcript),
            env={"VB_LOCK_TIMEOUT": "0.5"},
        )
    context = answer(res)["hookSpecificOutput"]["additionalContext"]
    assert f'<memory id="{alice}"' in context
    assert res.stderr.startswith("vb hook user-prompt-submit: warning: prompt not recorded:")
    assert len(res.stderr.splitlines()) == 1
    assert not (vault / "sessions" / f"{VB_SESSION}.jsonl").exists()


def test_pre_compact_imports_the_transcript_once_and_flushes(vault: Path, transcript: Path) -> None:
    head = git.Repo(vault).head.commit.hexsha
    out = answer(hook(vault, "pre-compact", payload("pre_compact", transcript)))
    assert out["systemMessage"].startswith("vault_brain: saved durable memories to")
    # (Claude Code's flush is no person's command: it waits for the SessionEnd commit)
    assert git.Repo(vault).head.commit.hexsha == head
    assert [kind for kind, _ in messages(vault)] == [
        "user",
        "assistant",
        "tool_call",
        "tool_result",
        "assistant",
        "user",
        "assistant",
    ]
    records = session_records(vault)
    imports = [r for r in records if r["type"] == "import"]
    assert len(imports) == 1 and imports[0]["records"] == 7
    assert imports[0]["skipped"]["malformed"] == 1
    assert imports[0]["skipped"]["incomplete last line"] == 1
    flushes = [r for r in records if r["type"] == "flush"]
    assert len(flushes) == 1 and flushes[0]["through"] == 7
    people = (vault / "entities/people/alice-kim.md").read_text(encoding="utf-8")
    assert "- Alice Kim works at Contoso as lead engineer (from session claude-" in people
    preference = "\n".join(p.read_text() for p in (vault / "entities/preferences").glob("*.md"))
    assert "meetings before 10 am on weekdays" in preference

    before = snapshot(vault)
    again = answer(hook(vault, "pre-compact", payload("pre_compact", transcript)))
    assert again == {} and snapshot(vault) == before  # nothing new: nothing written

    # Claude Code finishes the torn line and writes more: only that is imported
    with open(transcript, "a", encoding="utf-8") as handle:
        handle.write((DATA / "transcript_torn_rest.txt").read_text(encoding="utf-8"))
    answer(hook(vault, "pre-compact", payload("pre_compact", transcript)))
    assert messages(vault)[-1] == ("assistant", "Anything else for the Thursday agenda?")
    assert len(messages(vault)) == 8


def test_a_prompt_recorded_by_the_hook_is_not_imported_twice(vault: Path, transcript: Path) -> None:
    first = "Alice Kim works at Contoso as lead engineer. Please remember that."
    lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "Please remember that" in line)
    transcript.write_text("".join(lines[:cut]), encoding="utf-8")  # before Claude writes it
    answer(
        hook(vault, "user-prompt-submit", payload("user_prompt_submit", transcript, prompt=first))
    )
    transcript.write_text("".join(lines), encoding="utf-8")  # now it is in the transcript
    answer(hook(vault, "pre-compact", payload("pre_compact", transcript)))
    assert [m for m in messages(vault) if m == ("user", first)] == [("user", first)]
    assert messages(vault)[-1] == ("assistant", "Noted: Alice Kim is the lead engineer at Contoso.")


def test_session_end_records_the_transcript_and_commits_the_vault(
    vault: Path, transcript: Path
) -> None:
    repo = git.Repo(vault)
    head = repo.head.commit.hexsha
    res = hook(vault, "session-end", payload("session_end", transcript))
    assert answer(res) == {} and res.stderr == ""
    commit = repo.head.commit
    assert commit.hexsha != head and commit.parents[0].hexsha == head
    assert commit.summary == f"vb: Claude Code session {SESSION_ID} ended (prompt_input_exit)"
    committed = {str(p) for p in commit.stats.files}
    assert f"sessions/{VB_SESSION}.jsonl" in committed
    assert "entities/people/alice-kim.md" in committed
    assert not repo.is_dirty(untracked_files=True)
    # nothing new: no empty commit
    assert answer(hook(vault, "session-end", payload("session_end", transcript))) == {}
    assert repo.head.commit.hexsha == commit.hexsha


def test_session_end_commits_only_when_the_policy_says_so(vault: Path, transcript: Path) -> None:
    strategy = vault / "STRATEGY.md"
    strategy.write_text(
        strategy.read_text().replace("# commit_on: [session, lifecycle, command]", "commit_on: []")
    )
    head = git.Repo(vault).head.commit.hexsha
    assert answer(hook(vault, "session-end", payload("session_end", transcript))) == {}
    repo = git.Repo(vault)
    assert repo.head.commit.hexsha == head and repo.is_dirty(untracked_files=True)


def test_session_end_never_commits_a_write_in_progress(vault: Path, transcript: Path) -> None:
    # A temp file of a writer still running (this process), in a vault whose .gitignore
    # (kept from before `vb init --adopt`) does not ignore temp files.
    (vault / ".gitignore").write_text(".vb/\n")
    temp = vault / "entities" / "people" / f".alice.md.{os.getpid()}.x1y2.vbtmp"
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_text("half a note")
    res = hook(vault, "session-end", payload("session_end", transcript))
    assert answer(res) == {} and res.stderr == ""
    committed = {str(p) for p in git.Repo(vault).head.commit.stats.files}
    assert ".gitignore" in committed and temp.exists()
    assert not any(p.endswith(".vbtmp") for p in committed)


def test_session_end_without_git_or_with_a_broken_git_still_succeeds(
    vault: Path, transcript: Path
) -> None:
    (vault / ".git" / "index.lock").write_text("")  # another git process holds the index
    res = hook(vault, "session-end", payload("session_end", transcript))
    assert res.exit_code == 0 and json.loads(res.stdout) == {}
    assert res.stderr.startswith(
        "vb hook session-end: warning: git commit skipped: another git command holds"
    )  # (a fresh lock: left alone; a stale one would be removed, see test_sync_machines)
    assert len(res.stderr.splitlines()) == 1
    assert (vault / "sessions" / f"{VB_SESSION}.jsonl").is_file()  # recorded all the same

    shutil.rmtree(vault / ".git")
    res = hook(vault, "session-end", payload("session_end", transcript))
    assert res.exit_code == 0 and res.stderr == ""


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "the UserPromptSubmit payload on stdin is not JSON"),
        ("{not json", "the UserPromptSubmit payload on stdin is not JSON"),
        ("[1, 2]", "the UserPromptSubmit payload is not a JSON object"),
        ('{"prompt": "hi"}', "the UserPromptSubmit payload has no session_id"),
        ('{"session_id": "s1"}', "the UserPromptSubmit payload has no prompt"),
        ('{"session_id": "../../x", "prompt": "hi"}', "invalid session id 'claude-../../x'"),
        (
            '{"session_id": "s1", "hook_event_name": "PreCompact", "prompt": "hi"}',
            "got a 'PreCompact' payload on `vb hook user-prompt-submit`",
        ),
    ],
)
def test_a_bad_payload_fails_on_one_line_without_blocking_the_prompt(
    vault: Path, stdin: str, message: str
) -> None:
    before = snapshot(vault)
    res = hook(vault, "user-prompt-submit", stdin)
    assert res.exit_code == 1  # never 2, which would block the user's prompt
    assert res.stdout == ""
    assert res.stderr.startswith(f"vb hook user-prompt-submit: {message}")
    assert len(res.stderr.splitlines()) == 1
    assert snapshot(vault) == before


def test_pre_compact_needs_a_transcript_path(vault: Path) -> None:
    res = hook(vault, "pre-compact", payload("pre_compact", transcript_path=None))
    assert res.exit_code == 1
    assert res.stderr.startswith("vb hook pre-compact: the PreCompact payload has no transcript")


# --------------------------------------------------------------------------- settings


def test_hooks_claude_code_prints_the_settings_snippet(vault: Path) -> None:
    res = run_vb("--vault", str(vault), "hooks", "claude-code")
    assert res.exit_code == 0, res.stderr
    hooks = json.loads(res.stdout)["hooks"]
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"]
    command = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    first = command.split()[0]
    assert Path(first).is_absolute() and Path(first).is_file()
    assert command.endswith(f"--vault {vault} hook user-prompt-submit")


def test_install_merges_into_settings_keeping_everything_else(vault: Path, tmp_path: Path) -> None:
    settings = tmp_path / "project" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    theirs = {"type": "command", "command": "~/bin/notify.sh"}
    guard = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    original = {
        "permissions": {"allow": ["Bash(npm run test:*)"]},
        "model": "sonnet",
        "hooks": {"UserPromptSubmit": [{"hooks": [theirs]}], "PreToolUse": [guard]},
    }
    settings.write_text(json.dumps(original, indent=2), encoding="utf-8")
    args = ("--vault", str(vault), "hooks", "claude-code", "--install", "--settings", str(settings))
    res = run_vb(*args, "--json")
    assert res.exit_code == 0, res.stderr
    assert set(res.json()["events"].values()) == {"added"}
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["permissions"] == original["permissions"] and merged["model"] == "sonnet"
    assert merged["hooks"]["PreToolUse"] == [guard]
    assert merged["hooks"]["UserPromptSubmit"][0] == {"hooks": [theirs]}
    ours = merged["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"]
    assert ours.endswith(f"--vault {vault} hook user-prompt-submit")

    written = settings.read_bytes()
    again = run_vb(*args, "--json")
    assert set(again.json()["events"].values()) == {"unchanged"}
    assert settings.read_bytes() == written  # idempotent: not even rewritten

    moved = vault.parent / "moved-vault"
    vault.rename(moved)
    res = run_vb("--vault", str(moved), *args[2:], "--json")
    assert set(res.json()["events"].values()) == {"updated"}
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert len(merged["hooks"]["SessionEnd"]) == 1  # replaced in place, not duplicated
    assert merged["hooks"]["SessionEnd"][0]["hooks"][0]["command"].endswith(
        f"--vault {moved} hook session-end"
    )

    # the installed command is what Claude Code will run: it works as a shell command
    command = merged["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    proc = subprocess.run(
        command, shell=True, input=payload("session_start"), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_install_refuses_a_settings_file_that_is_not_json(vault: Path, tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{ this is not json", encoding="utf-8")
    res = run_vb(
        "--vault", str(vault), "hooks", "claude-code", "--install", "--settings", str(settings)
    )
    assert res.exit_code == 1
    assert "is not valid JSON" in res.stderr and "nothing changed" in res.stderr
    assert settings.read_text(encoding="utf-8") == "{ this is not json"


def test_hook_help_does_not_need_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vault_brain", "hook", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    for slug in ("session-start", "user-prompt-submit", "pre-compact", "session-end"):
        assert slug in proc.stdout
