"""Nothing from nothing through `vb serve` (issue 23): a proxied chat with no durable content
is recorded and captured, and leaves no note; one with a fact still writes it. The proxy
runs under uvicorn on a real socket against the project's fake upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_serve import CONFIG_KEY, kinds, serving, transcript, upstream

from fake_llm_server import FakeLLMServer, completion

__all__ = ["upstream"]  # (the fixture, shared with test_serve)


def notes(vault: Path) -> list[str]:
    return sorted(
        p.relative_to(vault).as_posix()
        for folder in ("entities", "episodes")
        for p in (vault / folder).rglob("*.md")
    )


def test_a_proxied_small_talk_chat_leaves_no_note(vault: Path, upstream: FakeLLMServer) -> None:
    replies = iter(["Hello! How can I help you today?", "You're welcome, have a nice day!"])
    upstream.responder = lambda body: completion(next(replies, "Noted."))
    with serving(vault, upstream, VB_LLM_API_KEY=CONFIG_KEY) as proxy:
        client = proxy.client()
        history: list[Any] = []
        for said in ("hello there", "thanks, that's all"):
            history.append({"role": "user", "content": said})
            reply = client.chat.completions.create(
                model="m", messages=history, extra_body={"memory_session": "chat1"}
            )
            history.append({"role": "assistant", "content": reply.choices[0].message.content})
        proxy.idle()
        assert "flush" in kinds(transcript(vault, "chat1"))  # captured, and nothing came of it
        assert notes(vault) == []
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "I live in Lisbon and work at Contoso."}],
            extra_body={"memory_session": "chat2"},
        )
        proxy.idle()
    assert "entities/people/user.md" in notes(vault)
    assert "Lisbon" in (vault / "entities/people/user.md").read_text(encoding="utf-8")
