"""A stand-in Docker socket for tests: a unix socket that relays, byte for byte, to the real
engine's (/var/run/docker.sock), and can be stopped the way a daemon stops, or made to hang.

Point a `vb` process at it with `DOCKER_HOST=unix://<path>`; `stop()` then does to that process
what stopping dockerd does to its clients: the listening socket closes (its file is removed, as
dockerd's own listener removes it; `keep_file=True` leaves it, as a daemon that crashed does:
connecting is refused) and every open connection is cut. The real engine is untouched, so the
other Docker tests (and their containers) go on. `hang()` listens without ever accepting or
answering: a daemon that is stuck.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

REAL_SOCKET = "/var/run/docker.sock"


class DockerRelay:
    def __init__(self, path: Path, target: str = REAL_SOCKET) -> None:
        self.path, self.target = path, target
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.connections = 0

    @property
    def docker_host(self) -> str:
        return f"unix://{self.path}"

    def start(self) -> DockerRelay:
        """Listen at `path` and relay every connection to the real socket."""
        self._listener = self._listen()
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()
        return self

    def hang(self) -> DockerRelay:
        """Listen at `path`, never accept: connections succeed (the kernel queues them),
        requests are never answered."""
        self._listener = self._listen()
        return self

    def freeze(self) -> None:
        """The daemon hangs: open connections are cut, new ones are accepted and never
        answered."""
        self.stop()
        self.hang()

    def stop(self, keep_file: bool = False) -> None:
        """Close the listener and cut every open connection (see the module doc)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            listener.close()
        with self._lock:
            cut, self._open = list(self._open), set()
        for sock in cut:
            _close(sock)
        if not keep_file:
            self.path.unlink(missing_ok=True)

    def _listen(self) -> socket.socket:
        self.path.unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        listener.listen(64)
        return listener

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(self.target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:  # stopped meanwhile
                    _close(client)
                    _close(upstream)
                    return
                self._open |= {client, upstream}
                self.connections += 1
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        """Copy src to dst; src's end of stream is passed on as a half-close (docker exec's
        stdin ends that way)."""
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            _close(src)
            _close(dst)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
