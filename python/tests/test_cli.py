"""The `lightembed` console script (pip's entry point → the CLI in-process) against the binary."""

from __future__ import annotations

import subprocess
import sys

from conftest import STATIC_MODEL, run


def test_help_and_version_equal_the_binarys(cli, console_script):
    ours, theirs = run([console_script, "--help"]), run([cli, "--help"])
    assert ours.returncode == 0 and ours.stdout == theirs.stdout
    assert "Usage: lightembed" in ours.stdout
    ours = run([console_script, "--version"])
    assert (ours.returncode, ours.stdout) == (0, "lightembed 0.1.0\n")
    ours, theirs = run([console_script, "embed", "--help"]), run([cli, "embed", "--help"])
    assert ours.returncode == 0 and ours.stdout == theirs.stdout


def test_verify_the_shipped_model(cli, console_script):
    ours, theirs = run([console_script, "verify", STATIC_MODEL]), run([cli, "verify", STATIC_MODEL])
    assert ours.returncode == 0, ours.stderr
    assert (ours.stdout, ours.stderr) == (theirs.stdout, theirs.stderr)


def test_usage_error_exits_2(cli, console_script):
    ours, theirs = run([console_script, "embed"]), run([cli, "embed"])
    assert ours.returncode == theirs.returncode == 2
    assert ours.stderr == theirs.stderr
    assert "--model <MODEL>" in ours.stderr
    assert run([console_script, "no-such-command"]).returncode == 2


def test_errors_exit_1_with_the_binarys_line(cli, console_script, tmp_path):
    ours, theirs = run([console_script, "verify", tmp_path / "x.bin"]), run([cli, "verify", tmp_path / "x.bin"])
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr == theirs.stderr


def test_stdin_and_stdout(cli, console_script):
    text = "first line\nsecond line\n"
    argv = ["embed", "--model", STATIC_MODEL, "--dims", "32"]
    ours, theirs = run([console_script, *argv], input=text), run([cli, *argv], input=text)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout and len(ours.stdout.splitlines()) == 2


def test_closed_stdout_is_success(console_script):
    # `lightembed … | head -1`: the reader goes away, exit 0 and no traceback.
    p = subprocess.Popen([str(console_script), "embed", "--model", str(STATIC_MODEL)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    _, err = p.communicate(("many lines of text\n" * 20000).encode())
    assert p.returncode == 0, err
    assert b"Traceback" not in err


def test_python_dash_m(cli):
    ours = run([sys.executable, "-m", "lightembed", "--version"])
    assert (ours.returncode, ours.stdout) == (0, "lightembed 0.1.0\n")
