"""lightembed.arrow: record batches in, record batches (and Parquet) out, against Model.encode and
the CLI (`lightembed embed`, `lightembed passages`).

Vectors are compared with a tolerance of 1e-6 per component (absolute; they are unit vectors):
embed_batch calls the same Rust code as Model.encode, so they are in fact identical, and the CLI
prints its floats in JSON, shortest round-trip form."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import lightembed
import lightembed.arrow as la
from conftest import ROOT, STATIC_MODEL, jsonl, run
from test_model import cli_embed

ATOL = 1e-6
SITE = ROOT / "tests" / "fixtures" / "site"


def book_batch(n=300):
    rows = [json.loads(line) for line in open(ROOT / "public/corpus/rust-book.jsonl", encoding="utf-8")][:n]
    return pa.RecordBatch.from_pylist(
        [{"id": r["id"], "text": r["text"], "url": r["url"], "n": i} for i, r in enumerate(rows)]
    )


def vectors_of(col) -> np.ndarray:
    return np.array(col.to_pylist(), dtype=np.float32)


@pytest.mark.parametrize("dims", [None, 128])
def test_embed_batch_equals_encode(model, dims):
    batch = book_batch()
    out = la.embed_batch(batch, STATIC_MODEL, dims)
    d = dims or model.output_dim
    assert out.schema.names == ["id", "text", "url", "n", "vector", "model_sha256"]
    assert out.schema.field("vector").type == pa.list_(pa.field("item", pa.float32(), False), d)
    for name in ("id", "text", "url", "n"):
        assert out.column(name).equals(batch.column(name))
    want = model.encode(batch.column("text").to_pylist(), dims=dims)
    np.testing.assert_allclose(vectors_of(out.column("vector")), want, rtol=0, atol=ATOL)
    assert set(out.column("model_sha256").to_pylist()) == {model.sha256}
    meta = out.schema.metadata
    assert meta[b"lightembed.model_sha256"].decode() == model.sha256
    assert meta[b"lightembed.model_id"].decode() == model.model_id
    assert meta[b"lightembed.dims"] == str(d).encode()


def test_embed_batch_equals_cli(cli, model):
    batch = book_batch(120)
    out = la.embed_batch(batch, STATIC_MODEL, 128)
    want = cli_embed(cli, STATIC_MODEL, batch.column("text").to_pylist(), 128)
    np.testing.assert_allclose(vectors_of(out.column("vector")), want, rtol=0, atol=ATOL)


def test_list_type_table_input_and_batches():
    batch = book_batch(50)
    table = pa.Table.from_batches([batch.slice(0, 20), batch.slice(20)])
    out = la.embed_batch(table, None, 64, list_type="list")
    assert isinstance(out, pa.Table) and out.num_rows == 50
    assert out.schema.field("vector").type == pa.list_(pa.field("item", pa.float32(), False))
    fixed = la.embed_batch(batch, None, 64)
    np.testing.assert_array_equal(vectors_of(out.column("vector")), vectors_of(fixed.column("vector")))
    parts = list(la.embed_batches([batch.slice(0, 7), batch.slice(7)], None, 64))
    assert [p.num_rows for p in parts] == [7, 43]
    np.testing.assert_array_equal(
        np.concatenate([vectors_of(p.column("vector")) for p in parts]), vectors_of(fixed.column("vector"))
    )
    empty = la.embed_batch(batch.slice(0, 0), None, 64)
    assert empty.num_rows == 0 and empty.schema.field("vector").type.list_size == 64


def test_model_is_loaded_once_per_process():
    a = la.cached_model(STATIC_MODEL)
    assert la.cached_model(str(STATIC_MODEL)) is a
    assert la.cached_model(None) is la.cached_model(None)
    run_fn = la.embedder(STATIC_MODEL, 32)
    out = list(run_fn(iter([book_batch(5)])))
    assert out[0].schema.field("vector").type.list_size == 32


def test_embed_batch_errors():
    batch = book_batch(3)
    with pytest.raises(ValueError, match="no column 'body'"):
        la.embed_batch(batch, text_column="body")
    with pytest.raises(ValueError, match="null"):
        la.embed_batch(pa.RecordBatch.from_pylist([{"text": "a"}, {"text": None}]))
    with pytest.raises(ValueError, match="already has a column 'vector'"):
        la.embed_batch(la.embed_batch(batch))
    with pytest.raises(ValueError, match="invalid dims 100"):
        la.embed_batch(batch, None, 100)
    with pytest.raises(ValueError, match='list_type'):
        la.embed_batch(batch, list_type="dense")


def walk(folder):
    """Files under `folder` in the CLI's order (walkdir, sorted by file name, hidden skipped)."""
    out = []

    def visit(d, rel):
        for name in sorted(os.listdir(d)):
            if name.startswith("."):
                continue
            p = os.path.join(d, name)
            r = f"{rel}{name}"
            if os.path.isdir(p):
                visit(p, r + "/")
            elif name.rsplit(".", 1)[-1].lower() in (
                "html", "htm", "md", "markdown", "txt", "pdf", "docx", "odt", "epub"
            ):
                out.append((r, p))

    visit(str(folder), "")
    return out


def pages_corpus(tmp_path):
    """A real small site: the repository's own docs (Markdown), the site fixture's HTML and
    Markdown pages, a PDF, a Word file, an EPUB, and a page in Latin-1 (charset detection)."""
    root = tmp_path / "site"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(SITE / "index.html", root / "index.html")
    (root / "guide").mkdir()
    shutil.copy(SITE / "guide" / "soil.md", root / "guide" / "soil.md")
    shutil.copy(ROOT / "README.md", root / "README.md")
    # Documents (issue 33): a PDF (its passages carry page_number), Word and EPUB.
    for name in ("dps.pdf", "guide.docx", "guide.epub"):
        shutil.copy(ROOT / "tests" / "fixtures" / "documents" / name, root / name)
    (root / "notes.txt").write_bytes("Caf\xe9 cr\xe8me: na\xefve r\xe9sum\xe9 notes.\n\nSecond paragraph.".encode("latin-1"))
    return root


def test_page_passages_equal_cli(cli, tmp_path):
    root = pages_corpus(tmp_path)
    files = walk(root)
    assert len(files) >= 9
    batch = pa.RecordBatch.from_pylist(
        [{"path": r, "content": open(p, "rb").read(), "lang": "en"} for r, p in files]
    )
    prefix = "https://example.org/"
    out = la.page_passages_batch(batch, STATIC_MODEL, url_prefix=prefix)
    proc = run([cli, "passages", "--model", STATIC_MODEL, "--quiet", "--embed-text",
                "--url-prefix", prefix, root])
    assert proc.returncode == 0, proc.stderr
    want = jsonl(proc.stdout)
    assert len(want) > 100 and any("page_number" in w for w in want)
    # The CLI writes "page_number" only for PDF passages; the column is null elsewhere.
    got = [{k: v for k, v in r.items() if not (k == "page_number" and v is None)} for r in out.to_pylist()]
    assert [list(r.keys()) for r in got[:1]] == [list(want[0].keys())]
    assert got == want  # every field of every passage, in order


def test_page_passages_string_content_batches_and_index(model):
    md = "# Title\n\nFirst paragraph about soil.\n\n## Watering\n\nWater in the morning."
    batch = pa.RecordBatch.from_pylist([
        {"path": "a/b c.md", "content": md},
        {"path": "x.bin", "content": b"\x00\x01binary"},
    ])
    warnings = []
    out = la.page_passages_batch(batch, None, page_index=True, on_warning=warnings.append)
    rows = out.to_pylist()
    assert [r["id"] for r in rows] == ["a/b%20c.md#title:1", "a/b%20c.md#watering:1"]
    assert {r["page"] for r in rows} == {"a/b%20c.md"}
    assert [r["page_index"] for r in rows] == [0, 0]
    assert rows[1]["embed_text"] == "Watering\nWater in the morning."
    assert warnings == ["skipping x.bin: binary file (a NUL byte in its first 8 KiB)"]
    assert out.schema == la.passage_schema(embed_text=True, page_index=True)
    assert list(la.page_passages_batches([batch], None))[0].num_rows == 2
    with pytest.raises(ValueError, match="JSON Lines"):
        la.page_passages_batch(pa.RecordBatch.from_pylist([{"path": "a.jsonl", "content": "{}"}]))
    with pytest.raises(ValueError, match="no column 'content'"):
        la.page_passages_batch(pa.RecordBatch.from_pylist([{"path": "a.md"}]))


def test_pages_to_parquet(tmp_path, model):
    root = pages_corpus(tmp_path)
    batch = pa.RecordBatch.from_pylist([{"path": r, "content": open(p, "rb").read()} for r, p in walk(root)])
    passages = la.page_passages_batch(batch, STATIC_MODEL)
    embedded = la.embed_batch(passages, STATIC_MODEL, 128, text_column="embed_text")
    path = tmp_path / "passages.parquet"
    pq.write_table(pa.Table.from_batches([embedded]), path)
    back = pq.read_table(path)
    assert back.schema.names == ["id", "page", "title", "page_title", "heading", "url", "page_number",
                                 "text", "embed_text", "vector", "model_sha256"]
    assert back.schema.metadata[b"lightembed.model_sha256"].decode() == model.sha256
    np.testing.assert_allclose(
        vectors_of(back.column("vector")),
        model.encode(passages.column("embed_text").to_pylist(), dims=128), rtol=0, atol=ATOL,
    )
