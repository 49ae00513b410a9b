"""What the browser tests of remote mode share: a static site served by a thread of the test
process on a free loopback port, and the check that node, playwright-core and Chromium are there.

    site = Site(folder)     # site.origin: "http://127.0.0.1:PORT"
    site.stop()
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from conftest import ROOT


def browser_or_skip():
    """Skips (fails with LIGHTEMBED_SCALE_BROWSER=1) without node, playwright-core or Chromium."""
    missing = [what for what, ok in [
        ("node", shutil.which("node")),
        ("tests/e2e/node_modules/playwright-core", (ROOT / "tests/e2e/node_modules/playwright-core").is_dir()),
        ("Chromium", Path(os.environ.get("CHROMIUM", "/usr/bin/chromium")).is_file()),
    ] if not ok]
    if missing:
        reason = f"no {', '.join(missing)} (scripts/app-tools.sh --browser)"
        if os.environ.get("LIGHTEMBED_SCALE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)


class Site:
    """A static site on a free loopback port, served by a thread of this process."""

    def __init__(self, root: Path):
        handler = functools.partial(Quiet, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
