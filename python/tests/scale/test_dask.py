"""lightembed.arrow.embed_dask: a Dask DataFrame embedded partition by partition through
``map_partitions`` (worker processes: only the model's path travels) gives the Arrow path's
vectors (:func:`lightembed.arrow.embed_batch` on the whole table), bit for bit, with every other
column and the row order kept. Corpus: the Rust book's first 400 passages."""

from __future__ import annotations

import json

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")

import lightembed
import lightembed.arrow as la
from conftest import ROOT, STATIC_MODEL

BOOK = ROOT / "public" / "corpus" / "rust-book.jsonl"
DIMS = 128


def test_dask_vectors_are_the_arrow_paths_bit_for_bit():
    rows = [json.loads(line) for _, line in zip(range(400), open(BOOK, encoding="utf-8"))]
    df = pd.DataFrame({k: [r[k] for r in rows] for k in ("id", "heading", "text")})
    ddf = dd.from_pandas(df, npartitions=4)
    assert ddf.npartitions == 4
    lazy = la.embed_dask(ddf, STATIC_MODEL, DIMS)
    assert list(lazy.columns) == ["id", "heading", "text", "vector", "model_sha256"]
    got = lazy.compute(scheduler="processes", num_workers=2)

    want = la.embed_batch(pa.Table.from_pandas(df, preserve_index=False), STATIC_MODEL, DIMS)
    want_vectors = np.asarray(want.column("vector").combine_chunks().flatten(), dtype=np.float32).reshape(-1, DIMS)
    got_vectors = np.stack(got["vector"].to_list()).astype(np.float32, copy=False)
    assert got_vectors.shape == (400, DIMS)
    assert list(got.index) == list(range(400))
    assert got["id"].tolist() == df["id"].tolist() and got["text"].tolist() == df["text"].tolist()
    # Bit for bit: the same float32 words.
    assert np.array_equal(got_vectors.view(np.uint32), want_vectors.view(np.uint32))
    # And real vectors: unit length (to 1e-5), not all alike.
    assert np.allclose(np.linalg.norm(got_vectors, axis=1), 1.0, atol=1e-5)
    assert len({v.tobytes() for v in got_vectors}) > 390
    model = lightembed.Model.load(STATIC_MODEL)
    assert set(got["model_sha256"]) == {model.sha256}
