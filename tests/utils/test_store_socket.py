"""paddle_pfc.utils.store_socket: the store's endpoint, waiting for it to listen, TCP_NODELAY on its client."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import pytest

from launcher import free_port, launch_env
from paddle_pfc.utils.store_socket import master_endpoint, set_no_delay, wait_until_listening


@pytest.mark.parametrize("env, expected", [
    ({"PADDLE_MASTER": "10.0.0.7:6170", "PADDLE_TRAINER_ENDPOINTS": "10.0.0.8:1,10.0.0.9:2"}, ("10.0.0.7", 6170)),
    ({"PADDLE_TRAINER_ENDPOINTS": "10.0.0.8:6171,10.0.0.9:6172"}, ("10.0.0.8", 6171)),
    ({"PADDLE_MASTER": "node-a:x"}, None),
    ({}, None),
])
def test_master_endpoint_is_the_one_paddle_chooses(monkeypatch, env, expected):
    for name in ("PADDLE_MASTER", "PADDLE_TRAINER_ENDPOINTS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert master_endpoint() == expected


def test_waits_until_the_endpoint_listens_and_gives_up_after_the_timeout():
    port = free_port()
    assert wait_until_listening("127.0.0.1", port, timeout=0.2) is False  # nobody listens
    started = time.monotonic()
    assert wait_until_listening("no-such-host.invalid", port, timeout=60) is False
    assert time.monotonic() - started < 30  # a name that does not resolve is not waited for
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def listen_later():
        time.sleep(0.3)
        server.bind(("127.0.0.1", port))
        server.listen()

    later = threading.Thread(target=listen_later)
    later.start()
    try:
        assert wait_until_listening("127.0.0.1", port, timeout=30) is True
    finally:
        later.join()
        server.close()


def test_no_delay_is_set_on_the_sockets_connected_to_the_port_only():
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_server(("127.0.0.1", 0)) as other:
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        bystander = socket.create_connection(("127.0.0.1", other.getsockname()[1]))
        accepted, _ = server.accept()
        try:
            assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
            assert set_no_delay(port) == 1  # not the accepted end (its peer is the client's port)
            assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            assert bystander.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
            client.sendall(b"still works")
            assert accepted.recv(64) == b"still works"
        finally:
            for end in (client, bystander, accepted):
                end.close()


STORE = ("import socket, sys\n"
         "from paddle.base import core\n"
         "from paddle_pfc.utils.store_socket import set_no_delay\n"
         "port = int(sys.argv[1])\n"
         "store = core.TCPStore('127.0.0.1', port, True, 1, 30)\n"
         "print(set_no_delay(port), set_no_delay(port), store.add('k', 2), store.add('k', 0), flush=True)\n")


def test_paddles_store_client_socket_is_found_and_the_store_still_answers():
    """Paddle's own TCPStore (master and client in one process): one client socket found, and
    requests answer as before."""
    proc = subprocess.run([sys.executable, "-c", STORE, str(free_port())], env=launch_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["1", "1", "2", "2"], proc.stdout
