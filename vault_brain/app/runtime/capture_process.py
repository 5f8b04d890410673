"""The capture of `vb serve` (a conversation's flush and rolling summary, see
`app.runtime.turns`), and the writing of the access counters its retrievals add up, in a
process of its own, so that they do not compete with the requests' retrieval for the
interpreter: in the server's own process a capture holds the interpreter for 50-150 ms at a
time (a batch of counters, a Whoosh commit, as long), and on a busy proxy captures run most
of the time.

The server sends the child one request at a time (a conversation to capture, or a batch of
access counters) and waits for its answer; the child writes the notes, indexes them and
answers. Its writes are announced
to the server before they land (the child waits for the server's reply) and once they
are indexed, as the server's own threads do (`Vault.writing`), so reads neither wait for
them nor miss a change of someone else's. The protocol is one JSON document per line on
the child's stdin and stdout; its log goes to the server's stderr. The child runs at a
lower CPU priority (nice 10): where both want a core, the requests get it. A child that
dies is started again for the next capture; what it did not capture is in the
transcripts (the conversation's next flush captures it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from vault_brain.domain.errors import VaultBrainError

log = logging.getLogger("vault_brain.serve")
CHILD_NICENESS = 10


@dataclass(frozen=True)
class CaptureSpec:
    """What the child opens: the vault, the environment, the agent served as."""

    root: str
    env: dict[str, str] = field(repr=False)
    agent: str | None = None


def capture(api: Any, session: str) -> str | None:
    """Flush a conversation into memories, roll its summary (each failure logged), then
    commit what it wrote (`ProxyAPI.commit_capture`); returns the summary's query text, or
    None. `api` is a `ProxyAPI`."""
    written = 0
    try:
        written = len(api.flush(session).plan.actions)
    except VaultBrainError as exc:
        log.warning("flush of %s failed: %s", session, exc.one_line())
    except Exception:
        log.exception("flush of %s failed (internal error)", session)
    summary = _summary(api, session)
    api.commit_capture(session, written)  # (never raises: a git problem is its answer)
    return summary


def _summary(api: Any, session: str) -> str | None:
    try:
        summary: str | None = api.roll_summary(session)
    except VaultBrainError as exc:
        log.warning("summary of %s failed: %s", session, exc.one_line())
        return None
    except Exception:
        log.exception("summary of %s failed (internal error)", session)
        return None
    return summary


class CaptureProcess:
    """The child process, seen from the server: `capture(session)` (one caller at a time)."""

    def __init__(
        self,
        spec: CaptureSpec,
        writing: Callable[[list[str]], None] | None = None,
        indexed: Callable[[list[str], dict[str, list[int] | None]], None] | None = None,
    ) -> None:
        self.spec = spec
        self.writing, self.indexed = writing, indexed
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the child now (it imports while the server warms up)."""
        with self._lock:
            self._started()

    def _started(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        paths = os.pathsep.join(p for p in sys.path if p)  # the server's own imports
        proc = subprocess.Popen(
            [sys.executable, "-m", "vault_brain.app.runtime.capture_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env={**os.environ, "PYTHONPATH": paths},
        )
        assert proc.stdin is not None
        spec = {"root": self.spec.root, "env": self.spec.env, "agent": self.spec.agent}
        proc.stdin.write(json.dumps(spec) + "\n")
        proc.stdin.flush()
        self._proc = proc
        return proc

    def capture(self, session: str) -> str | None:
        """Capture one conversation in the child; its summary's query text, or None."""
        try:
            summary = self._ask({"capture": session})
        except (OSError, ValueError) as exc:
            log.error("capture of %s not done (%s): starting the process again", session, exc)
            return None
        return summary if isinstance(summary, str) else None

    def record_access(self, accessed: dict[str, tuple[int, str]]) -> list[str]:
        """`ProxyAPI.record_access` in the child (a batch re-indexes its notes: a Whoosh
        commit of 50-300 ms that held the server's interpreter). A VaultBrainError of the
        child's is raised here with its message; a child that died, as an OSError: the
        caller keeps the counters for the next batch either way."""
        answer = self._ask({"access": {rel: list(value) for rel, value in accessed.items()}})
        if isinstance(answer, dict) and "error" in answer:
            raise VaultBrainError(str(answer["error"]), hint=str(answer.get("hint") or ""))
        return [str(rel) for rel in answer or []]

    def _ask(self, request: dict[str, Any]) -> Any:
        """Send one request and relay the child's write announcements until its answer
        (`done`); a child that fails is stopped (the next request starts another)."""
        with self._lock:
            proc = self._started()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                _send(proc.stdin, request)
                while True:
                    line = proc.stdout.readline()
                    if not line:
                        raise OSError("the capture process ended")
                    message = json.loads(line)
                    if "writing" in message:
                        if self.writing is not None:
                            self.writing(message["writing"])
                        _send(proc.stdin, {"ok": True})
                    elif "indexed" in message:
                        if self.indexed is not None:
                            self.indexed(message["indexed"], message.get("stamps") or {})
                    else:
                        return message.get("done")
            except (OSError, ValueError):
                self._stop(proc)
                raise

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._stop(self._proc)

    def _stop(self, proc: subprocess.Popen[str]) -> None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # the child finishes what it does, then ends
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        if self._proc is proc:
            self._proc = None


def _send(stream: IO[str], message: dict[str, Any]) -> None:
    stream.write(json.dumps(message, ensure_ascii=False) + "\n")
    stream.flush()


def child() -> None:
    """The child's loop: read the spec, then capture each conversation asked for until
    stdin ends."""
    from vault_brain.app.memory.vault import Vault
    from vault_brain.app.runtime.proxy import ProxyAPI  # lazy: only the child needs them
    from vault_brain.storage.env import Environment

    with contextlib.suppress(OSError):
        os.nice(CHILD_NICENESS)  # the server's requests first, when both want a core
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything printed goes to the log, never into the protocol
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="vb serve: %(message)s")
    spec = json.loads(sys.stdin.readline())
    api = ProxyAPI(Vault.open(spec["root"], Environment(spec["env"])))
    if spec.get("agent"):
        api.act_as(spec["agent"])

    def writing(rels: list[str]) -> None:
        with contextlib.suppress(OSError):  # (a write never fails for the announcement)
            _send(out, {"writing": rels})
            sys.stdin.readline()  # the server knows: the write may land

    def indexed(rels: list[str], stamps: dict[str, list[int] | None]) -> None:
        with contextlib.suppress(OSError):
            _send(out, {"indexed": rels, "stamps": stamps})

    api.vault.writing, api.vault.indexed = writing, indexed
    try:
        while line := sys.stdin.readline():
            request = json.loads(line)
            if isinstance(request.get("capture"), str):
                _send(out, {"done": capture(api, request["capture"])})
            elif isinstance(request.get("access"), dict):
                _send(out, {"done": _access(api, request["access"])})
    finally:
        api.close()


def _access(api: Any, accessed: dict[str, Any]) -> Any:
    """Write access counters (the child's side of `CaptureProcess.record_access`)."""
    try:
        return api.record_access({rel: (int(n), str(at)) for rel, (n, at) in accessed.items()})
    except VaultBrainError as exc:
        return {"error": exc.message, "hint": exc.hint}
    except Exception as exc:  # a bug: say so; the server keeps the counters for next time
        log.exception("access counters not written (internal error)")
        return {"error": f"internal error ({type(exc).__name__})", "hint": ""}


if __name__ == "__main__":
    child()
