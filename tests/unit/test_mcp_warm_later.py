"""`vb mcp` starts its index keeper after the first tool call (or `WARM_AFTER` seconds
after starting): once, on a thread of its own, whichever comes first."""

from __future__ import annotations

import threading

import pytest

from vault_brain.interfaces.mcp import server


def test_the_first_call_starts_it_once_on_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "WARM_AFTER", 60.0)
    ran: list[str] = []
    done = threading.Event()

    def work() -> None:
        ran.append(threading.current_thread().name)
        done.set()

    later = server._Later(work)
    assert not done.wait(0.2)  # nothing before a call
    later.start()
    later.start()
    assert done.wait(5)
    later.start()
    assert ran == ["vb-warm-up"]


def test_without_a_call_it_starts_after_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "WARM_AFTER", 0.1)
    done = threading.Event()
    server._Later(done.set)
    assert done.wait(5)


def test_nothing_to_start_is_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    monkeypatch.setattr(server.threading, "Timer", lambda *a, **k: made.append("timer"))
    monkeypatch.setattr(server.threading, "Thread", lambda *a, **k: made.append("thread"))
    server._Later(None).start()
    assert made == []  # no timer, no thread
