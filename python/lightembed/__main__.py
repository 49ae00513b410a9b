"""The ``lightembed`` console script: the native CLI, run in-process (``python -m lightembed``)."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    """Runs ``lightembed`` with ``sys.argv[1:]`` and exits with its exit code (0 success, 1 error,
    2 usage error, 3 no fingerprint match, 4 inputs skipped), as the native binary does."""
    from lightembed._lightembed import _run_cli

    # Ctrl-C stops the CLI at once, as it stops the native binary (the CLI runs with the GIL
    # released and never returns to Python's signal handler while it works).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_run_cli(["lightembed", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
