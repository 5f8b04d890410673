"""Progress on long work (a first index, a rebuild, an extraction, an import, a sync that
changed many files): one rich progress line on stderr when stderr is a terminal, nothing
when it is piped or under `--json`.

A command either wraps its long call in `progress_bar(label, enabled)` (the line appears
at the first report), or leaves the line to the vault: `open_api` gives each vault a
`ProgressLine`, which any reconcile of the index reports to, and which appears only once
the work has lasted `DELAY` seconds, so a quick reconcile prints nothing and does not even
load rich. The line clears itself when the work is done.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Progress = Callable[[int, int], None]
"""Told `(done, total)` as long work goes on (the storage and application layers' type)."""

DELAY = 0.3  # seconds of work before the line is shown


def on_terminal(as_json: bool = False) -> bool:
    """True when progress is shown: stderr is a terminal and the output is not JSON."""
    stream = sys.stderr
    return not as_json and stream is not None and stream.isatty()


class ProgressLine:
    """A `Progress` callback drawing one line on stderr: the label, a bar, done/total and
    the time spent. Shown once the work has lasted `delay` seconds since its first report
    (so work reports `(0, total)` when it starts); closed when `done` reaches `total`, and
    shown again if more work reports later."""

    def __init__(self, label: str, delay: float = DELAY) -> None:
        self.label = label
        self.delay = delay
        self._first: float | None = None
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        finished = total > 0 and done >= total
        if self._bar is None:
            now = time.monotonic()
            if self._first is None:
                self._first = now
            if finished or now - self._first < self.delay:
                if finished:
                    self._first = None
                return
            self._start()
        self._bar.update(self._task, completed=done, total=total or None)
        if finished:
            self.close()

    def _start(self) -> None:
        # lazy: rich is loaded only when a line is drawn
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._bar = Progress(
            f"[bold]{self.label}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=sys.stderr),
            transient=True,
            redirect_stdout=False,  # results still go to stdout, never above the line
        )
        self._task = self._bar.add_task(self.label, total=None)
        self._bar.start()

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def close(self) -> None:
        """Clear the line (if it is shown); the next report starts over."""
        bar, self._bar, self._first = self._bar, None, None
        if bar is not None:
            bar.stop()


@contextmanager
def progress_bar(label: str, enabled: bool = True, delay: float = 0.0) -> Iterator[Progress | None]:
    """A `Progress` for the work inside the block: a `ProgressLine` when `enabled` (pass
    `not as_json`) and stderr is a terminal, else None; the line is cleared at the end. A
    command the person asked for long work with (`vb index`, `vb extract`, `vb import`)
    shows it at once; `delay` waits that long first."""
    if not enabled or not on_terminal():
        yield None
        return
    line = ProgressLine(label, delay)
    try:
        yield line
    finally:
        line.close()
