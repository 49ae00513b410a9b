"""Arrow in, Arrow out: embedding and page ingestion over ``pyarrow`` record batches.

Made for bulk jobs — Spark's ``DataFrame.mapInArrow``, Ray Data's ``map_batches(…,
batch_format="pyarrow")`` or a plain loop over a Parquet dataset — and for the Parquet files the
PostgreSQL loader (:mod:`lightembed.pg`) reads::

    import lightembed.arrow as la
    out = la.embed_batch(batch, dims=128)          # batch + "vector" + "model_sha256"
    df.mapInArrow(la.embedder(dims=128, list_type="list"), la.spark_schema(df.schema, 128))
    ddf2 = la.embed_dask(ddf, dims=128)            # a Dask DataFrame: map_partitions

Every function takes ``model`` as a ``.bin`` path, a :class:`lightembed.Model` or ``None`` (the
bundled model). Paths and ``None`` are loaded once per process and kept (:func:`cached_model`), so
a Spark or Ray worker reads and verifies the model once, not once per batch; only the path travels
to the workers.

Needs ``pyarrow`` (``pip install pyarrow``); the rest of the package does not. :func:`embed_pandas`
needs pandas and :func:`embed_dask` Dask (``pip install "dask[dataframe]"``).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Union

import numpy as np
import pyarrow as pa

from lightembed._lightembed import Model, _page_passages

__all__ = [
    "PASSAGE_FIELDS",
    "cached_model",
    "embed_batch",
    "embed_batches",
    "embed_dask",
    "embed_pandas",
    "embedder",
    "page_passages_batch",
    "page_passages_batches",
    "passage_schema",
    "spark_passage_schema",
    "spark_schema",
    "vector_type",
]

#: The fields of ``lightembed passages`` (its JSON keys, in its order), the index's passage fields.
PASSAGE_FIELDS = ("id", "page", "title", "page_title", "heading", "url", "text")

_ModelArg = Union[None, str, "os.PathLike[str]", Model]
_Batch = Union[pa.RecordBatch, pa.Table]

_models: Dict[Optional[str], Model] = {}
_models_lock = threading.Lock()


def cached_model(model: _ModelArg = None) -> Model:
    """The :class:`Model` for ``model``: itself when it is one, else loaded once per process
    (``None``: the bundled model; a path: the file, keyed by its absolute path) and kept."""
    if isinstance(model, Model):
        return model
    key = None if model is None else os.path.abspath(os.fspath(model))
    with _models_lock:
        found = _models.get(key)
        if found is None:
            found = Model.load(key)
            _models[key] = found
        return found


def vector_type(dims: int, list_type: str = "fixed") -> pa.DataType:
    """The Arrow type of the ``vector`` column: ``fixed_size_list<float32>[dims]`` (``"fixed"``,
    the default) or ``list<float32>`` (``"list"``, what Spark's ``array<float>`` maps to)."""
    item = pa.field("item", pa.float32(), nullable=False)
    if list_type == "fixed":
        return pa.list_(item, dims)
    if list_type == "list":
        return pa.list_(item)
    raise ValueError(f'list_type: {list_type!r} is not "fixed" or "list"')


def _vector_array(flat: np.ndarray, n: int, dims: int, list_type: str) -> pa.Array:
    values = pa.array(flat.reshape(-1), type=pa.float32())
    if list_type == "fixed":
        return pa.FixedSizeListArray.from_arrays(values, type=vector_type(dims, "fixed"))
    offsets = pa.array(np.arange(0, (n + 1) * dims, dims, dtype=np.int32), type=pa.int32())
    return pa.ListArray.from_arrays(offsets, values, type=vector_type(dims, "list"))


def _metadata(m: Model, dims: int) -> Dict[bytes, bytes]:
    return {
        b"lightembed.model_id": m.model_id.encode(),
        b"lightembed.model_version": m.version.encode(),
        b"lightembed.model_sha256": m.sha256.encode(),
        b"lightembed.dims": str(dims).encode(),
    }


def embed_batch(
    batch: _Batch,
    model: _ModelArg = None,
    dims: Optional[int] = None,
    *,
    text_column: str = "text",
    vector_column: str = "vector",
    list_type: str = "fixed",
    batch_size: int = 256,
) -> _Batch:
    """``batch`` with two columns added: ``vector`` (the embedding of ``text_column``, float32,
    L2-normalised, ``dims`` long — the values of :meth:`lightembed.Model.encode`) and
    ``model_sha256`` (the model's SHA-256, hex, the same on every row: it travels with the rows
    through Spark, which drops schema metadata). Every other column is kept as it is. The schema
    also carries ``lightembed.model_id``/``model_version``/``model_sha256``/``dims`` metadata.

    A ``pyarrow.Table`` gives a ``Table`` (Ray Data's batches). Raises ``ValueError`` when the
    text column is missing, holds a null, or ``vector_column``/``model_sha256`` already exist.
    """
    m = cached_model(model)
    dims = m.output_dim if dims is None else dims
    vector_type(dims, list_type)  # ValueError for an unknown list_type
    names = batch.schema.names
    if text_column not in names:
        raise ValueError(f"no column {text_column!r} in the batch (columns: {', '.join(names)})")
    for new in (vector_column, "model_sha256"):
        if new in names:
            raise ValueError(f"the batch already has a column {new!r}")
    col = batch.column(text_column)
    if col.null_count:
        raise ValueError(f"column {text_column!r} holds {col.null_count} null(s); every row needs a text")
    texts = col.to_pylist()
    n = len(texts)
    flat = m.encode(texts, dims=dims, batch_size=batch_size) if n else np.zeros((0, dims), np.float32)
    vectors = _vector_array(np.ascontiguousarray(flat, dtype=np.float32), n, dims, list_type)
    sha = pa.array([m.sha256] * n, type=pa.string())
    fields = list(batch.schema) + [
        pa.field(vector_column, vectors.type, nullable=False),
        pa.field("model_sha256", pa.string(), nullable=False),
    ]
    meta = dict(batch.schema.metadata or {})
    meta.update(_metadata(m, dims))
    schema = pa.schema(fields, metadata=meta)
    columns = list(batch.columns) + [vectors, sha]
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(
            [c if isinstance(c, pa.ChunkedArray) else pa.chunked_array([c]) for c in columns],
            schema=schema,
        )
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def embed_batches(
    batches: Iterable[_Batch], model: _ModelArg = None, dims: Optional[int] = None, **options: Any
) -> Iterator[_Batch]:
    """:func:`embed_batch` over an iterator of batches — the shape ``DataFrame.mapInArrow``
    calls (the model is loaded once per worker process, on the first batch)."""
    for batch in batches:
        yield embed_batch(batch, model, dims, **options)


def _model_path(model: Union[None, str, "os.PathLike[str]", Model]) -> Optional[str]:
    """What goes to other processes in place of ``model``: its path (``None``: the bundled model).

    Raises ``ValueError`` for a :class:`Model` loaded from bytes (it has no path to send)."""
    if isinstance(model, Model):
        if model.path is None:
            raise ValueError("pass the model's path (or None for the bundled model): a Model "
                             "loaded from bytes cannot be sent to other processes")
        model = model.path
    return None if model is None else os.fspath(model)


def embedder(
    model: Union[None, str, "os.PathLike[str]"] = None, dims: Optional[int] = None, **options: Any
) -> Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A function for ``DataFrame.mapInArrow``: ``embedder(path, 128, list_type="list")``. Only
    the model's path (not the model) is pickled to the workers; each loads it once."""
    path = _model_path(model)

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return embed_batches(batches, path, dims, **options)

    return run


def embed_pandas(df: Any, model: _ModelArg = None, dims: Optional[int] = None, **options: Any) -> Any:
    """A ``pandas.DataFrame`` with ``vector`` (one float32 ``numpy`` array per row) and
    ``model_sha256`` added: :func:`embed_batch` on the frame as Arrow (``list_type="list"``, index
    kept), so the vectors are the Arrow path's, bit for bit. The function Dask's
    ``map_partitions`` calls (:func:`embed_dask`); ``options`` as :func:`embed_batch`'s."""
    table = pa.Table.from_pandas(df, preserve_index=True)
    return embed_batch(table, model, dims, list_type="list", **options).to_pandas()


def embed_dask(ddf: Any, model: Union[None, str, "os.PathLike[str]"] = None, dims: Optional[int] = None,
               **options: Any) -> Any:
    """``ddf`` (a ``dask.dataframe.DataFrame``) with ``vector`` and ``model_sha256`` added, lazily:
    :func:`embed_pandas` on each partition through ``map_partitions``. As with :func:`embedder`
    only the model's path goes to the workers, and each loads it once."""
    path = _model_path(model)
    # The output's columns and dtypes: the function run on the frame's empty prototype.
    meta = embed_pandas(ddf._meta, path, dims, **options)
    return ddf.map_partitions(embed_pandas, path, dims, meta=meta, **options)


def spark_schema(input_schema: Any, dims: int, vector_column: str = "vector") -> Any:
    """The Spark ``StructType`` :func:`embedder` returns for a DataFrame with ``input_schema``:
    its fields, then ``vector array<float>`` and ``model_sha256 string`` (use
    ``list_type="list"``: Spark reads ``array<float>`` as an Arrow list). ``dims`` is not part
    of a Spark type; it is the length of every row's array. Needs ``pyspark``."""
    from pyspark.sql.types import ArrayType, FloatType, StringType, StructField, StructType

    del dims  # the length of every array; Spark has no fixed-size array type
    return StructType(
        list(input_schema.fields)
        + [
            StructField(vector_column, ArrayType(FloatType(), containsNull=False), nullable=False),
            StructField("model_sha256", StringType(), nullable=False),
        ]
    )


def spark_passage_schema(embed_text: bool = True) -> Any:
    """:func:`passage_schema` as a Spark ``StructType``, the output schema of
    :func:`page_passages_batches` in ``mapInArrow``. Needs ``pyspark``."""
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    return StructType([
        StructField(f.name, IntegerType() if f.name == "page_number" else StringType(), f.nullable)
        for f in passage_schema(embed_text)
    ])


def passage_schema(embed_text: bool = False, page_index: bool = False) -> pa.Schema:
    """The schema :func:`page_passages_batch` returns: :data:`PASSAGE_FIELDS` as strings, with
    ``page_number`` (int32, null but for PDF passages: the CLI's ``"page_number"``) after
    ``url``; then ``embed_text``, and ``page_index`` (the row of the page in the input batch)
    when asked."""
    fields = [pa.field(name, pa.string(), nullable=False) for name in PASSAGE_FIELDS]
    fields.insert(PASSAGE_FIELDS.index("url") + 1, pa.field("page_number", pa.int32(), nullable=True))
    if embed_text:
        fields.append(pa.field("embed_text", pa.string(), nullable=False))
    if page_index:
        fields.append(pa.field("page_index", pa.int64(), nullable=False))
    return pa.schema(fields)


def page_passages_batch(
    batch: _Batch,
    model: _ModelArg = None,
    *,
    path_column: str = "path",
    content_column: str = "content",
    url_prefix: str = "",
    root_selector: Optional[str] = None,
    passage_tokens: Optional[int] = None,
    embed_text: bool = True,
    page_index: bool = False,
    on_warning: Optional[Callable[[str], None]] = None,
) -> pa.RecordBatch:
    """Pages → passages, as ``lightembed passages`` cuts them: ``batch`` has one page per row,
    ``path`` (relative to the site's folder, ``/``-separated: the passage ids and ``page`` are
    made from it, and its extension picks HTML, Markdown or text) and ``content`` (``binary`` —
    charset detected as the CLI does — or ``string``; PDF, Word, OpenDocument and EPUB files
    too, by extension). Returns one row per passage with :data:`PASSAGE_FIELDS` (the CLI's
    values exactly, ``url`` with ``url_prefix`` in front), ``page_number`` (PDF passages), and
    ``embed_text`` (``heading`` + newline + ``text``: what ``lightembed index`` embeds; feed it to
    :func:`embed_batch` with ``text_column="embed_text"``).

    Ids are unique, and a passage whose text was already read (a book's all-in-one
    ``print.html``) is dropped, within one call — as within one CLI run; across Spark partitions
    they are not (split a site by folder if that matters). ``model`` sizes passages in its word
    pieces (``passage_tokens``, the CLI's ``--passage-tokens``). Skipped pages (binary) and
    charset guesses go to ``on_warning`` (default: ignored).
    """
    m = cached_model(model)
    names = batch.schema.names
    for c in (path_column, content_column):
        if c not in names:
            raise ValueError(f"no column {c!r} in the batch (columns: {', '.join(names)})")
    paths = batch.column(path_column).to_pylist()
    if any(p is None for p in paths):
        raise ValueError(f"column {path_column!r} holds a null; every page needs a path")
    contents = batch.column(content_column).to_pylist()
    rows, warnings = _page_passages(m, paths, contents, url_prefix, root_selector, passage_tokens)
    if on_warning is not None:
        for w in warnings:
            on_warning(w)
    schema = passage_schema(embed_text, page_index)
    cols = list(zip(*rows)) if rows else [()] * 10
    arrays = [pa.array(list(cols[i + 1]), type=pa.string()) for i in range(len(PASSAGE_FIELDS))]
    arrays.insert(PASSAGE_FIELDS.index("url") + 1, pa.array(list(cols[9]), type=pa.int32()))
    if embed_text:
        arrays.append(pa.array(list(cols[8]), type=pa.string()))
    if page_index:
        arrays.append(pa.array(list(cols[0]), type=pa.int64()))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def page_passages_batches(
    batches: Iterable[_Batch], model: _ModelArg = None, **options: Any
) -> Iterator[pa.RecordBatch]:
    """:func:`page_passages_batch` over an iterator of batches (``mapInArrow``'s shape)."""
    for batch in batches:
        yield page_passages_batch(batch, model, **options)
