"""lightembed.Model: loading (bundled, files, errors), encode and tokenize against the CLI."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import lightembed
from conftest import FIXTURE_MODELS, MALFORMED, ROOT, STATIC_MODEL, cli_error, jsonl, run

SENTENCES = [
    "How do I read a file line by line?",
    "The borrow checker rejects two mutable references to the same value.",
    "Pruning shears cut cleanly only when they are sharp.",
    "Ünïcödé àccents, CJK 漢字 and emoji 🦀 are tokenized like BERT does.",
    "",
    "a " * 600,  # longer than max_seq_len (512): truncated
]


def cli_embed(cli, model_path, texts, dims=None):
    argv = [cli, "embed", "--model", model_path, "--jsonl"]
    if dims is not None:
        argv += ["--dims", dims]
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    proc = run(argv + ["-"], input=lines)
    assert proc.returncode == 0, proc.stderr
    return np.array([r["embedding"] for r in jsonl(proc.stdout)], dtype=np.float32)


def test_package_is_the_installed_wheel():
    # python/test.sh runs pytest outside the repository: the package is the wheel's, native module
    # included, not python/lightembed/ from the source tree.
    assert "site-packages" in lightembed.__file__
    assert lightembed.__version__ == "0.1.0"
    assert lightembed.BUNDLED_MODELS == ("lightembed-en-static",)


def test_bundled_model_is_the_shipped_file(cli):
    bundled = lightembed.Model.load()
    by_name = lightembed.Model.load("lightembed-en-static")
    from_file = lightembed.Model.load(STATIC_MODEL)
    assert bundled.sha256 == by_name.sha256 == from_file.sha256
    assert bundled.path is None and from_file.path == str(STATIC_MODEL)
    assert lightembed.Model().sha256 == bundled.sha256
    info = json.loads(run([cli, "inspect", "--json", STATIC_MODEL]).stdout)
    assert bundled.model_id == info["header"]["model_id"] == "lightembed-en-0l"
    assert bundled.sha256 == info["sha256"]
    assert bundled.valid_dims == info["valid_dims"]
    assert bundled.version == info["header"]["model_version"]
    assert bundled.output_dim == info["header"]["output_dim"] == 384
    assert bundled.max_seq_len == info["header"]["max_seq_len"]
    assert bundled.valid_dims == [32, 64, 128, 256, 384]
    assert bundled.file_size == STATIC_MODEL.stat().st_size
    assert "lightembed-en-0l" in repr(bundled)


def test_from_bytes():
    m = lightembed.Model.from_bytes(STATIC_MODEL.read_bytes())
    assert m.sha256 == lightembed.Model.load().sha256 and m.path is None
    bad = MALFORMED / "hash_mismatch.bin"
    with pytest.raises(lightembed.LightembedError) as e:
        lightembed.Model.from_bytes(bytearray(bad.read_bytes()))
    # The load rule's message, without the path the CLI puts before it.
    with pytest.raises(lightembed.LightembedError) as with_path:
        lightembed.Model.load(bad)
    assert str(with_path.value) == f"{bad}: {e.value}"


@pytest.mark.parametrize("dims", [None, 128, 32])
def test_encode_equals_cli(cli, model, dims):
    want = cli_embed(cli, STATIC_MODEL, SENTENCES, dims)
    got = model.encode(SENTENCES, dims=dims)
    assert got.dtype == np.float32
    assert got.shape == (len(SENTENCES), dims or 384)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_encode_layered_model_equals_cli(cli):
    # A model with transformer layers (batched forward pass) gives the CLI's vectors too.
    path = FIXTURE_MODELS / "tern_2l_cased.bin"
    m = lightembed.Model.load(path)
    texts = SENTENCES * 3
    np.testing.assert_allclose(
        m.encode(texts, batch_size=5), cli_embed(cli, path, texts), rtol=0, atol=1e-6
    )


def test_single_string_and_batching(model):
    batch = model.encode(SENTENCES)
    one = model.encode(SENTENCES[0])
    assert one.shape == (384,) and one.dtype == np.float32
    np.testing.assert_array_equal(one, batch[0])
    np.testing.assert_array_equal(model.encode(SENTENCES, batch_size=1), batch)
    np.testing.assert_array_equal(model.encode(iter(SENTENCES)), batch)  # any iterable
    # A Matryoshka prefix is the full vector's prefix, renormalised.
    prefix = batch[:, :64] / np.linalg.norm(batch[:, :64], axis=1, keepdims=True)
    np.testing.assert_allclose(model.encode(tuple(SENTENCES), dims=64), prefix, atol=1e-6)


def test_empty_list(model):
    for dims, shape in [(None, (0, 384)), (64, (0, 64))]:
        out = model.encode([], dims=dims)
        assert out.shape == shape and out.dtype == np.float32


def test_bad_dims_message_is_the_engines(cli, model):
    proc = run([cli, "embed", "--model", STATIC_MODEL, "--dims", "100", "-"], input="x\n")
    message = cli_error(proc)
    assert message == "invalid dims 100: this model's valid dims are 32, 64, 128, 256, 384"
    with pytest.raises(ValueError) as e:
        model.encode(["x"], dims=100)
    assert str(e.value) == message
    with pytest.raises(ValueError, match="invalid dims 100"):
        model.encode([], dims=100)  # checked before any text
    with pytest.raises(ValueError, match="batch_size"):
        model.encode(["x"], batch_size=0)


def test_type_errors_name_the_item(model):
    with pytest.raises(TypeError) as e:
        model.encode(["fine", 3, "also fine"])
    assert str(e.value) == "texts[1]: expected str, got int"
    with pytest.raises(TypeError, match="texts: expected a str or a sequence of str, got bytes"):
        model.encode(b"bytes")
    with pytest.raises(TypeError, match="got int"):
        model.encode(5)


def test_progress_bar_on_stderr(model, capsys):
    model.encode(SENTENCES * 100, batch_size=128, show_progress_bar=True)
    err = capsys.readouterr().err
    assert "600/600" in err and "(100%)" in err
    model.encode(SENTENCES)
    assert capsys.readouterr().err == ""


def test_threads_share_a_model(model):
    # The GIL is released while embedding: threads run at once and get the same vectors.
    want = model.encode(SENTENCES * 50)
    results = [None] * 4

    def work(i):
        results[i] = model.encode(SENTENCES * 50)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_tokenize_equals_cli(cli, model):
    proc = run([cli, "tokenize", "--model", STATIC_MODEL, "--jsonl", "-"],
               input="".join(json.dumps({"text": t}) + "\n" for t in SENTENCES))
    assert proc.returncode == 0, proc.stderr
    want = [r["ids"] for r in jsonl(proc.stdout)]
    assert [model.tokenize(t) for t in SENTENCES] == want
    assert model.tokens("Hello world") == ["[CLS]", "hello", "world", "[SEP]"]
    assert len(model.tokenize("a " * 600)) == model.max_seq_len == 512


@pytest.mark.parametrize("path", sorted(MALFORMED.glob("*.bin")), ids=lambda p: p.stem)
def test_malformed_model_message_is_the_clis(cli, path):
    message = cli_error(run([cli, "verify", path]))
    assert message.startswith(f"{path}: ")
    with pytest.raises(lightembed.LightembedError) as e:
        lightembed.Model.load(path)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)
    assert not isinstance(e.value, FileNotFoundError)


def test_missing_file(cli, tmp_path):
    path = tmp_path / "nope.bin"
    message = cli_error(run([cli, "verify", path]))
    assert message == f"cannot read {path}: No such file or directory (os error 2)"
    with pytest.raises(lightembed.LightembedFileNotFoundError) as e:
        lightembed.Model.load(path)
    assert str(e.value) == message
    assert isinstance(e.value, FileNotFoundError)
    assert isinstance(e.value, lightembed.LightembedError)
    with pytest.raises(FileNotFoundError):
        lightembed.Model.load(str(path))
    with pytest.raises(TypeError):
        lightembed.Model.load(42)


def test_relative_path_message_names_it_as_given(cli):
    rel = "tests/fixtures/malformed/bad_magic.bin"
    message = cli_error(run([cli, "verify", rel], cwd=ROOT))
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with pytest.raises(lightembed.LightembedError) as e:
            lightembed.Model.load(rel)
    finally:
        os.chdir(cwd)
    assert str(e.value) == message
