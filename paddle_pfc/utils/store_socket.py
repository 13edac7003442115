"""The job's TCP store as a socket: its endpoint, waiting for it to listen, and the client's delays.

Paddle's TCP store (the key-value server rank 0 runs for a multi-rank job, at ``PADDLE_MASTER``)
has two fixed costs this module removes without touching the store's protocol:

- a rank that connects before rank 0 listens sleeps 3 s before it tries again (Paddle's
  ``tcp_connect`` retry delay): :func:`wait_until_listening` probes the endpoint every few
  milliseconds first, so Paddle's own connect then succeeds at once;
- the client socket lacks ``TCP_NODELAY`` while every request is several small writes followed by
  a read, so each request waits for the server's delayed acknowledgement (~40 ms on Linux):
  :func:`set_no_delay` sets the option on that socket (found by its peer's port).
"""
from __future__ import annotations

import os
import socket
import time


def master_endpoint() -> tuple[str, int] | None:
    """``(host, port)`` of the job's TCP store as Paddle chooses it (``PADDLE_MASTER``, else the
    first of ``PADDLE_TRAINER_ENDPOINTS``); None when neither is set or readable."""
    value = os.environ.get("PADDLE_MASTER") or os.environ.get("PADDLE_TRAINER_ENDPOINTS", "").split(",")[0]
    host, _, port = value.strip().rpartition(":")
    if not host or not port.isdigit():
        return None
    return host, int(port)


def wait_until_listening(host: str, port: int, timeout: float) -> bool:
    """Probe ``host:port`` with TCP connections (each closed at once) until one is accepted or
    ``timeout`` seconds pass; whether one was accepted. False at once when ``host`` does not
    resolve (Paddle's own connect then names it)."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return True
        except (socket.gaierror, UnicodeError):  # not a host name that resolves
            return False
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


def set_no_delay(port: int) -> int:
    """Set ``TCP_NODELAY`` on every connected TCP socket of this process whose peer's port is
    ``port`` (the store's client socket); how many were set. Linux (``/proc/self/fd``) only: 0
    elsewhere."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return 0
    count = 0
    for name in names:
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            duplicate = socket.socket(fileno=os.dup(int(name)))  # shares the socket, not its descriptor
        except (OSError, ValueError):
            continue
        with duplicate:
            try:
                if duplicate.type == socket.SOCK_STREAM and duplicate.family in (socket.AF_INET, socket.AF_INET6) \
                        and duplicate.getpeername()[1] == port:
                    duplicate.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    count += 1
            except OSError:  # not connected
                continue
    return count
