"""Inside the OpenCode sandbox (no network): reach the host's vb through unix sockets.

    bridge.py tcp PORT SOCKET   listen on 127.0.0.1:PORT; each connection goes to SOCKET
                                (OpenCode's model provider is `vb serve` on the host)
    bridge.py stdio SOCKET      relay stdin/stdout to SOCKET (OpenCode's local MCP server
                                command: `vb mcp`, run on the host for each connection)

The sockets are bind-mounted from the host; nothing here holds a key. Standard library only:
it runs with the image's python3 (`python3 -I -S`), and vb never imports it.
"""

import contextlib
import io
import socket
import sys
import threading
from collections.abc import Callable


def pump(
    read: Callable[[int], bytes], write: Callable[[bytes], object], done: Callable[[], None]
) -> None:
    """Copy until the reading side ends (or fails), then `done()`."""
    try:
        while data := read(65536):
            write(data)
    except OSError:
        pass
    finally:
        done()


def _shut(sock: socket.socket) -> Callable[[], None]:
    def close() -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)

    return close


def splice(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways between two sockets until both directions end."""
    there = threading.Thread(target=pump, args=(a.recv, b.sendall, _shut(b)), daemon=True)
    there.start()
    pump(b.recv, a.sendall, _shut(a))
    there.join()
    a.close()
    b.close()


def _connect(path: str) -> socket.socket | None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError as exc:
        sys.stderr.write(f"bridge: cannot reach {path}: {exc}\n")
        upstream.close()
        return None
    return upstream


def tcp(port: int, path: str) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    while True:
        client, _ = server.accept()
        upstream = _connect(path)
        if upstream is None:
            client.close()
            continue
        threading.Thread(target=splice, args=(client, upstream), daemon=True).start()


def stdio(path: str) -> int:
    upstream = _connect(path)
    if upstream is None:
        return 1
    stdout = sys.stdout.buffer

    def write(data: bytes) -> None:
        stdout.write(data)
        stdout.flush()

    stdin = sys.stdin.buffer
    assert isinstance(stdin, io.BufferedReader)
    read = stdin.read1  # what has arrived, without waiting for more
    threading.Thread(
        target=pump, args=(read, upstream.sendall, _shut(upstream)), daemon=True
    ).start()
    pump(upstream.recv, write, lambda: None)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "tcp":
        tcp(int(argv[1]), argv[2])
        return 0
    if len(argv) == 2 and argv[0] == "stdio":
        return stdio(argv[1])
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
