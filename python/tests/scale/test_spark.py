"""Spark (local[2]) with lightembed.arrow: a real corpus embedded with DataFrame.mapInArrow and
pages cut into passages from Spark's binaryFile reader, checked against the CLI.

Vectors: within 1e-6 per component of `lightembed embed` (see test_arrow.py); passages: equal to
`lightembed passages`, field by field."""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pyspark")

import lightembed.arrow as la
from conftest import ROOT, STATIC_MODEL, jsonl, run

ATOL = 1e-6
BOOK = ROOT / "public" / "corpus" / "rust-book.jsonl"


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    # The workers must run this venv's Python (it has pyarrow and lightembed).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lightembed-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.local.dir", str(tmp_path_factory.mktemp("spark-local")))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "500")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_book_embedded_with_map_in_arrow_equals_cli(spark, cli, tmp_path):
    df = spark.read.json(str(BOOK)).select("id", "title", "url", "text").repartition(2)
    out = df.mapInArrow(
        la.embedder(STATIC_MODEL, 128, list_type="list"), la.spark_schema(df.schema, 128)
    )
    target = tmp_path / "book.parquet"
    t = time.perf_counter()
    out.write.parquet(str(target))
    seconds = time.perf_counter() - t
    table = pq.read_table(target)
    records = [json.loads(line) for line in open(BOOK, encoding="utf-8")]
    assert table.num_rows == len(records) > 3000
    print(f"\nSpark local[2]: {table.num_rows} passages read, embedded (128 dims) and written as "
          f"Parquet in {seconds:.1f} s ({table.num_rows / seconds:.0f} passages/s)")
    assert set(table.column("model_sha256").to_pylist()) == {la.cached_model(STATIC_MODEL).sha256}
    got = dict(zip(table.column("id").to_pylist(), table.column("vector").to_pylist()))
    proc = run([cli, "embed", "--model", STATIC_MODEL, "--dims", "128", "--jsonl", BOOK])
    assert proc.returncode == 0, proc.stderr
    want = jsonl(proc.stdout)
    assert [w["id"] for w in want] == [r["id"] for r in records]
    np.testing.assert_allclose(
        np.array([got[w["id"]] for w in want], dtype=np.float32),
        np.array([w["embedding"] for w in want], dtype=np.float32),
        rtol=0, atol=ATOL,
    )


def test_pages_cut_in_spark_equal_cli(spark, cli):
    from pyspark.sql import functions as F

    docs = ROOT / "docs"
    pages = (
        spark.read.format("binaryFile").option("pathGlobFilter", "*.md").load(str(docs))
        # Spark's path is a URI (file:/…/docs/NAME.md): the page path is the part under docs/.
        .select(F.regexp_extract("path", r"/docs/(.+)$", 1).alias("path"), "content")
        .orderBy("path")
        .coalesce(1)  # one batch, in the CLI's order: ids and repeats are per call
    )
    out = pages.mapInArrow(
        lambda it: la.page_passages_batches(it, STATIC_MODEL, embed_text=True),
        la.spark_passage_schema(embed_text=True),
    )
    got = [{k: v for k, v in r.asDict().items() if not (k == "page_number" and v is None)}
           for r in out.collect()]
    proc = run([cli, "passages", "--model", STATIC_MODEL, "--quiet", "--embed-text", docs])
    assert proc.returncode == 0, proc.stderr
    want = jsonl(proc.stdout)
    assert len(want) > 100
    assert got == want
