"""`lightembed serve` for the tests: the CLI binary started on a free loopback port, spoken to over
HTTP as a browser (or an attacker) would, and stopped with SIGTERM by its pid.

    s = Serve(cli, pg.dsn, "--cors-origin", "https://docs.example.org")
    status, payload, headers = s.request("POST", "/search", body)
    s.stop()
"""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """`lightembed serve` on a free loopback port; stopped with SIGTERM by its pid."""

    def __init__(self, cli, dsn, *args):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(cli), "serve", "--database-url", dsn, "--listen", f"127.0.0.1:{self.port}", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(self.proc.stderr.read())
                time.sleep(0.05)
        raise RuntimeError("lightembed serve did not start")

    def request(self, method, path, body=None, headers=None, raw=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        text = r.read().decode()
        conn.close()
        try:
            payload = json.loads(text)
        except ValueError:
            payload = text
        return r.status, payload, dict(r.getheaders())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read()
