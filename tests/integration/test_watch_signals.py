"""`vb watch` stops on SIGINT and SIGTERM without its signal handler taking a lock.

A handler runs in the main thread between two bytecodes, also while that thread holds a lock
(inside `Event.wait`, for one). A handler that set the watcher's stop `Event` took that
Event's lock, so a signal landing there hung the watcher for good: a CI run's watcher did not
stop within 60 s of SIGINT, its stack showing the handler waiting inside `Event.wait`."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from vault_brain.app.memory.vault import Vault
from vault_brain.app.runtime.watch import run_watch


class _NoSetFromHandlers(threading.Event):
    """A stop Event whose `set` fails the test when called from the main thread, where only
    a signal handler would call it (the test sets it from a timer thread as a fallback)."""

    def set(self) -> None:
        if threading.current_thread() is threading.main_thread():
            raise AssertionError("a signal handler set the stop Event (it takes a lock)")
        super().set()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_watcher_without_setting_its_event(
    vault: Path, signum: signal.Signals
) -> None:
    stop = _NoSetFromHandlers()
    before = signal.getsignal(signum)
    kill = threading.Timer(0.5, os.kill, (os.getpid(), signum))
    fallback = threading.Timer(30, stop.set)  # so a broken handler cannot hang the run
    kill.start()
    fallback.start()
    try:
        run_watch(Vault.open(vault), debounce=0.05, stop=stop, serve=False)
    finally:
        kill.cancel()
        fallback.cancel()
    assert not stop.is_set(), "the watcher ran until the fallback stopped it"
    assert signal.getsignal(signum) is before, "the watcher left its handler installed"
