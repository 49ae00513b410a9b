"""The PostgreSQL + pgvector loader: Parquet of embedded passages → the tables `lightembed serve`
searches (``serve/sql/schema.sql``, shipped in the wheel as its text)::

    import lightembed.pg
    lightembed.pg.load("passages.parquet", "postgresql://…", model="model.bin")

The Parquet files hold the passage fields (:data:`lightembed.arrow.PASSAGE_FIELDS`, and
``page_number`` when present), ``vector``
(float32 lists of one length) and ``model_sha256`` — what :func:`lightembed.arrow.embed_batch`
writes. Every row's ``model_sha256`` must be the model's: vectors of another model file are
refused before anything is written. The loader fills ``{prefix}_passages`` (``COPY`` of CSV that
Arrow writes, a batch at a time: only the keyword tsvector is made row by row), writes the
one-row ``{prefix}_model`` (the spec's §8 identity: model id, version, dims, SHA-256, whether
the keyword side is stemmed, and BM25's N and avgdl), then builds ``{prefix}_postings`` (each
term's passages in BM25 impact order, in blocks), ``{prefix}_terms`` (document frequencies) and
the HNSW index, all in one transaction: a
failed load leaves the database as it was.

Needs ``pyarrow`` and ``psycopg`` (3.x: ``pip install "psycopg[binary]"``).
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Dict, Iterable, Optional, Union

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.dataset as ds

from lightembed._lightembed import (
    _BM25_B,
    _BM25_K1,
    _PG_SCHEMA_SQL,
    Model,
    _default_stemming,
    _keyword_tsvector,
)
from lightembed.arrow import PASSAGE_FIELDS, cached_model

__all__ = ["SCHEMA_VERSION", "load", "schema_sql"]

#: The table layout written here and read by ``lightembed serve`` (``schema_version``).
SCHEMA_VERSION = 1

_PREFIX = re.compile(r"[a-z_][a-z0-9_]{0,39}\Z")
_PathLike = Union[str, "os.PathLike[str]"]


def schema_sql(dims: int, prefix: str = "lightembed", vector_type: str = "vector") -> tuple:
    """``(tables, indexes)``: the two halves of ``serve/sql/schema.sql`` filled in."""
    if not _PREFIX.match(prefix):
        raise ValueError(f"prefix {prefix!r}: expected 1 to 40 of a-z, 0-9 and _, not starting with a digit")
    if vector_type not in ("vector", "halfvec"):
        raise ValueError(f'vector_type {vector_type!r} is not "vector" or "halfvec"')
    if not (isinstance(dims, int) and 1 <= dims <= (16000 if vector_type == "vector" else 4000)):
        raise ValueError(f"dims {dims}: pgvector's HNSW index takes 1..2000 vector / 4000 halfvec dims")
    text = (_PG_SCHEMA_SQL.replace("{prefix}", prefix).replace("{dims}", str(dims))
            .replace("{vector_type}", vector_type)
            .replace("{k1}", repr(float(_BM25_K1))).replace("{b}", repr(float(_BM25_B))))
    tables, indexes = text.split("-- @@INDEXES@@")
    return tables, indexes


def _vector_texts(vectors: pa.Array, dims: int) -> pa.Array:
    """pgvector's text form (``[x,y,…]``) of each row of a list column of ``dims`` floats, built by
    Arrow's compute functions (no Python per value). Each value is cast to float32 and written in
    its shortest round-trip form, so pgvector reads back the same float32."""
    values = pc.cast(pc.list_flatten(vectors), pa.float32()).cast(pa.string())
    offsets = pa.array(range(0, len(values) + 1, dims), pa.int32())
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, values), ",")
    return pc.binary_join_element_wise("[", joined, "]", "")


def load(
    parquet: Union[_PathLike, Iterable[_PathLike]],
    dsn: str,
    model: Union[None, _PathLike, Model] = None,
    *,
    prefix: str = "lightembed",
    vector_type: str = "vector",
    replace: bool = False,
    keyword_stemming: str = "auto",
    batch_rows: int = 2000,
    maintenance_work_mem: str = "256MB",
    work_mem: str = "256MB",
) -> Dict[str, Any]:
    """Loads embedded passages from Parquet (a file, a folder of them, or a list) into
    PostgreSQL at ``dsn``.

    Args:
        model: the model the vectors were made with (a ``.bin`` path, a :class:`Model`, or
            ``None`` for the bundled one): its identity goes into ``{prefix}_model``, and its
            SHA-256 must be every row's ``model_sha256``.
        prefix: table names ``{prefix}_passages``, ``{prefix}_model``.
        vector_type: ``"vector"`` (float32) or ``"halfvec"`` (float16, half the space and memory).
        replace: drop existing tables of that prefix first; without it, existing tables are an error.
        keyword_stemming: ``"auto"`` (by the model's language, as ``lightembed index``),
            ``"english"`` or ``"none"``.
        batch_rows: rows read from Parquet and sent per COPY chunk.
        maintenance_work_mem: the server's memory for building the indexes (HNSW: keep it above
            the graph's size, about 0.9 KB per passage at 128 dims, or pgvector slows down).
        work_mem: the server's memory for the postings' sort (every term of every passage,
            ranked): below the sort's size it spills to disk.

    Returns ``{"count", "dims", "model_id", "model_version", "model_sha256", "seconds": {...}}``.
    Raises ``ValueError`` for missing fields, vectors of mixed length or another model, and
    psycopg's errors for the database's refusals.
    """
    import psycopg

    m = cached_model(model)
    stem = {"auto": _default_stemming(m.model_id), "english": True, "none": False}.get(keyword_stemming)
    if stem is None:
        raise ValueError(f'keyword_stemming: {keyword_stemming!r} is not "auto", "english" or "none"')
    if isinstance(parquet, (str, os.PathLike)):
        sources = os.fspath(parquet)
    else:
        sources = [os.fspath(p) for p in parquet]
    dataset = ds.dataset(sources, format="parquet")
    names = dataset.schema.names
    missing = [f for f in (*PASSAGE_FIELDS, "vector", "model_sha256") if f not in names]
    if missing:
        raise ValueError(f"the Parquet data lacks {', '.join(missing)} (columns: {', '.join(names)})")
    vtype = dataset.schema.field("vector").type
    dims = vtype.list_size if pa.types.is_fixed_size_list(vtype) else None
    # First pass: model SHA-256 and vector length of every row, before anything is written.
    shas = set()
    lengths = set()
    for batch in dataset.to_batches(columns=["model_sha256", "vector"]):
        shas.update(batch.column("model_sha256").unique().to_pylist())
        vec = batch.column("vector")
        if vec.null_count:
            raise ValueError("a row has a null vector")
        if dims is None:
            lengths.update(pc.list_value_length(vec).unique().to_pylist())
    if shas - {m.sha256}:
        other = sorted(str(s) for s in shas - {m.sha256})
        raise ValueError(
            f"the vectors were made by a model file with SHA-256 {other[0][:16]}…, not the model "
            f"given ({m.model_id} v{m.version}, {m.sha256[:16]}…): load them with that model"
        )
    if dims is None:
        if len(lengths) > 1:
            raise ValueError(f"vectors of different lengths: {sorted(lengths)}")
        dims = lengths.pop() if lengths else m.output_dim
    if dims not in m.valid_dims:
        raise ValueError(f"vectors of {dims} values, not one of the model's dims {m.valid_dims}")
    tables, indexes = schema_sql(dims, prefix, vector_type)
    seconds: Dict[str, float] = {}
    count = 0
    with psycopg.connect(dsn) as conn:
        with conn.transaction():
            t = time.perf_counter()
            if replace:
                conn.execute(f"DROP TABLE IF EXISTS {prefix}_passages, {prefix}_model, "
                             f"{prefix}_postings, {prefix}_terms")
            conn.execute(tables)
            columns = ("pid", *PASSAGE_FIELDS, "page_number", "embedding", "keywords", "kw_len")
            has_page = "page_number" in names
            total_len = 0
            csv_options = pacsv.WriteOptions(include_header=False, quoting_style="needed")
            with conn.cursor().copy(f"COPY {prefix}_passages ({', '.join(columns)}) FROM STDIN "
                                    "WITH (FORMAT csv)") as copy:
                wanted = [*PASSAGE_FIELDS, "vector"] + (["page_number"] if has_page else [])
                for batch in dataset.to_batches(columns=wanted, batch_size=batch_rows):
                    n = batch.num_rows
                    if n == 0:
                        continue
                    fields = [pc.fill_null(batch.column(name), "") for name in PASSAGE_FIELDS]
                    keywords = []
                    kw_lens = []
                    for title, heading, text in zip(*(batch.column(name).to_pylist()
                                                      for name in ("page_title", "heading", "text"))):
                        kw, kw_len = _keyword_tsvector(title or "", heading or "", text or "", stem)
                        keywords.append(kw)
                        kw_lens.append(kw_len)
                        total_len += kw_len
                    pages = (pc.cast(batch.column("page_number"), pa.int32()) if has_page
                             else pa.nulls(n, pa.int32()))
                    rows = pa.table(
                        [pa.array(range(count, count + n), pa.int32()), *fields, pages,
                         _vector_texts(batch.column("vector"), dims), pa.array(keywords, pa.string()),
                         pa.array(kw_lens, pa.int32())],
                        names=list(columns),
                    )
                    sink = pa.BufferOutputStream()
                    pacsv.write_csv(rows, sink, csv_options)
                    copy.write(memoryview(sink.getvalue()))
                    count += n
            seconds["copy"] = time.perf_counter() - t
            conn.execute(
                f"INSERT INTO {prefix}_model (schema_version, model_id, model_version, dims, "
                "model_sha256, keyword_stemming, vector_type, count, avgdl) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (SCHEMA_VERSION, m.model_id, m.version, dims, m.sha256, stem, vector_type, count,
                 total_len / count if count else 0.0),
            )
            t = time.perf_counter()
            conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (maintenance_work_mem,))
            conn.execute("SELECT set_config('work_mem', %s, true)", (work_mem,))
            conn.execute(indexes)
            seconds["indexes"] = time.perf_counter() - t
        conn.execute(f"ANALYZE {prefix}_passages")
    return {
        "count": count,
        "dims": dims,
        "model_id": m.model_id,
        "model_version": m.version,
        "model_sha256": m.sha256,
        "keyword_stemming": stem,
        "seconds": seconds,
    }
