"""lightembed.Index: built, saved and searched exactly as `lightembed index` / `lightembed search`."""

from __future__ import annotations

import json
import shutil

import pytest

import lightembed
from conftest import FIXTURE_MODELS, ROOT, STATIC_MODEL, cli_error, run

QUERIES = [
    "how do I read a file line by line",
    "ownership and borrowing rules",
    "install rustup on linux",
    "what is a crate",
    "cargo new project",
    "zzzz qqqq",  # no passage holds these words: hybrid falls back to meaning alone
]


def write_jsonl(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def cli_search(cli, index_dir, query, mode="hybrid", k=5, model=None):
    argv = [cli, "search", "--index", index_dir, "--json", "-k", k, "--mode", mode]
    if model is not None:
        argv += ["--model", model]
    proc = run(argv + [query])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["results"]


@pytest.fixture(scope="module")
def cli_index(cli, book_records, tmp_path_factory):
    """The book records indexed by the CLI from a JSONL file."""
    d = tmp_path_factory.mktemp("cli-index")
    write_jsonl(d / "book.jsonl", book_records)
    proc = run([cli, "index", "--model", STATIC_MODEL, "--out", d / "index", "--quiet", d / "book.jsonl"])
    assert proc.returncode == 0, proc.stderr
    return d / "index"


@pytest.fixture(scope="module")
def py_index(model, book_records):
    return lightembed.Index.build(book_records, model)


def test_index_bytes_equal_the_clis(cli_index, py_index, tmp_path):
    assert py_index.to_bytes() == (cli_index / "index.bin").read_bytes()
    folder = py_index.save(tmp_path / "py-index")
    assert folder == tmp_path / "py-index"
    assert (folder / "index.bin").read_bytes() == (cli_index / "index.bin").read_bytes()
    ours, theirs = (json.loads((d / "index.json").read_text()) for d in (folder, cli_index))
    # Same manifest, model (absolute path), parameters and hash; inputs and timings differ.
    for key in ["index_file", "index_sha256", "index_version", "model_id", "model_version", "dims",
                "count", "metric", "model_sha256", "model_absolute", "model_bytes",
                "keyword_stemming", "params", "bytes"]:
        assert ours[key] == theirs[key], key
    assert not ours["model"].startswith("/")  # relative to the folder, as the CLI records it
    assert (folder / ours["model"]).resolve() == STATIC_MODEL


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_search_ranks_as_the_cli(cli, py_index, tmp_path, mode):
    folder = py_index.save(tmp_path / "py-index")
    for q in QUERIES:
        ours = py_index.search(q, k=5, mode=mode)
        theirs = cli_search(cli, folder, q, mode=mode)  # the CLI reads the folder Python wrote
        assert [h["id"] for h in ours] == [h["id"] for h in theirs], (q, mode)
        for a, b in zip(ours, theirs):
            assert a["rank"] == b["rank"]
            assert a["title"] == b["title"] and a["url"] == b["url"]
            assert a["snippet"] == b["snippet"]
            assert a["score"] == pytest.approx(b["score"], abs=1e-6)
            # Highlights: byte offsets in the CLI, str indices here.
            enc = b["snippet"].encode()
            assert [a["snippet"][s:e] for s, e in a["highlights"]] == [
                enc[s:e].decode() for s, e in b["highlights"]
            ]
    if mode != "vector":
        hit = py_index.search("borrowing", k=1, mode=mode)[0]
        assert any(hit["snippet"][s:e].lower().startswith("borrow") for s, e in hit["highlights"])


def test_load_cli_index_and_search(cli, cli_index):
    index = lightembed.Index.load(cli_index)
    assert len(index) == 400 and index.dims == 384
    assert index.model_id == "lightembed-en-0l"
    assert index.model_path == str(STATIC_MODEL)  # recorded in index.json
    assert index.keyword_stemming is True
    for q in QUERIES[:3]:
        ours = [h["id"] for h in index.search(q, k=8)]  # model: the recorded one
        assert ours == [h["id"] for h in cli_search(cli, cli_index, q, k=8)]
    assert lightembed.Index.load(cli_index / "index.bin").to_bytes() == index.to_bytes()


def test_all_passages_and_ef_search(cli, py_index, tmp_path):
    folder = py_index.save(tmp_path / "i")
    proc = run([cli, "search", "--index", folder, "--json", "-k", 10, "--all-passages",
                "--ef-search", 20, "ownership"])
    want = [h["id"] for h in json.loads(proc.stdout)["results"]]
    assert [h["id"] for h in py_index.search("ownership", all_passages=True, ef_search=20)] == want


def test_records_as_strings_and_defaults(model):
    texts = ["Red apples are sweet.", "Bananas are yellow.", "Cherries are small and red."]
    index = lightembed.Index.build(texts)  # the bundled model
    assert index.ids() == ["0", "1", "2"]
    assert index.model_path is None
    hits = index.search("yellow fruit", k=2)
    assert hits[0]["id"] == "1" and hits[0]["rank"] == 1
    assert set(hits[0]) == {"rank", "score", "id", "title", "url", "snippet", "highlights"}
    # The same index built from records with the file's model (same vectors).
    same = lightembed.Index.build([{"id": str(i), "text": t} for i, t in enumerate(texts)], model)
    assert same.to_bytes() == index.to_bytes()


def test_bundled_model_index_round_trip(cli, tmp_path):
    index = lightembed.Index.build(["Red apples are sweet.", "Bananas are yellow."], dims=128)
    folder = index.save(tmp_path / "bundled")
    sidecar = json.loads((folder / "index.json").read_text())
    assert sidecar["model"] is None and sidecar["dims"] == 128
    loaded = lightembed.Index.load(folder)
    # No model file recorded: the bundled model is used (its SHA-256 is the index's).
    assert loaded.search("banana")[0]["id"] == "1"
    # The CLI needs --model for it.
    assert "pass --model" in cli_error(run([cli, "search", "--index", folder, "banana"]))
    hits = cli_search(cli, folder, "banana", model=STATIC_MODEL)
    assert hits[0]["id"] == "1"


def test_from_files_equals_lightembed_index(cli, model, tmp_path):
    site = ROOT / "tests" / "fixtures" / "site"
    proc = run([cli, "index", "--model", STATIC_MODEL, "--out", tmp_path / "cli", "--quiet", site])
    assert proc.returncode == 0, proc.stderr
    index = lightembed.Index.from_files([site], model)
    assert index.to_bytes() == (tmp_path / "cli" / "index.bin").read_bytes()
    with pytest.raises(lightembed.LightembedError) as e:
        lightembed.Index.from_files([tmp_path / "cli"], model)
    message = cli_error(run([cli, "index", "--model", STATIC_MODEL, "--out", tmp_path / "o2", tmp_path / "cli"]))
    assert str(e.value) == message


def test_model_mismatch_is_refused_with_the_specs_message(cli, py_index, tmp_path):
    folder = py_index.save(tmp_path / "i")
    other = FIXTURE_MODELS / "static_fp32_uncased.bin"
    message = cli_error(run([cli, "search", "--index", folder, "--model", other, "borrow"]))
    with pytest.raises(lightembed.LightembedError) as e:
        py_index.search("borrow", lightembed.Model.load(other))
    assert str(e.value) == message


def test_record_errors(model):
    with pytest.raises(ValueError, match=r'records\[1\]: "text" is empty'):
        lightembed.Index.build(["ok", {"text": "   "}], model)
    with pytest.raises(ValueError, match=r'records\[0\]: missing "text"'):
        lightembed.Index.build([{"title": "t"}], model)
    with pytest.raises(TypeError, match=r'records\[0\]: "title" must be a str, got int'):
        lightembed.Index.build([{"text": "x", "title": 3}], model)
    with pytest.raises(TypeError, match=r"records\[1\]: expected a str or a dict"):
        lightembed.Index.build(["x", 4], model)
    with pytest.raises(lightembed.LightembedError, match=r'records\[1\]: duplicate id "a"'):
        lightembed.Index.build([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], model)
    with pytest.raises(lightembed.LightembedError, match="--dims: "):
        lightembed.Index.build(["x"], model, dims=100)
    with pytest.raises(ValueError, match="no records"):
        lightembed.Index.build([], model)
    index = lightembed.Index.build([{"id": 7, "text": "integer ids are kept as written"}], model)
    assert index.ids() == ["7"]


def test_search_errors(py_index):
    with pytest.raises(ValueError, match="the query is empty"):
        py_index.search("   ")
    with pytest.raises(ValueError, match='unknown search mode "fuzzy"'):
        py_index.search("x", mode="fuzzy")
    with pytest.raises(ValueError, match="k must be at least 1"):
        py_index.search("x", k=0)


def test_load_errors(cli, tmp_path):
    with pytest.raises(lightembed.LightembedFileNotFoundError) as e:
        lightembed.Index.load(tmp_path)
    assert str(e.value) == f"cannot read {tmp_path / 'index.bin'}: No such file or directory (os error 2)"
    (tmp_path / "index.bin").write_bytes(b"not an index")
    message = cli_error(run([cli, "search", "--index", tmp_path, "--model", STATIC_MODEL, "x"]))
    with pytest.raises(lightembed.LightembedError) as e:
        lightembed.Index.load(tmp_path)
    assert str(e.value) == message


def test_save_over_a_file_fails(py_index, tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(lightembed.LightembedError, match="exists and is not a directory"):
        py_index.save(tmp_path / "f")
    # Saving twice replaces the pair.
    py_index.save(tmp_path / "again")
    py_index.save(tmp_path / "again")
    assert lightembed.Index.load(tmp_path / "again").to_bytes() == py_index.to_bytes()
    shutil.rmtree(tmp_path / "again")
