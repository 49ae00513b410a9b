"""The loader's COPY rate before and after a change to python/lightembed/pg.py: rows/s of
`lightembed.pg.load` into a throwaway PostgreSQL + pgvector (python/tests/scale/pgtemp.py) for
the same embedded passages, with the pg.py of a git revision (`--before`, default HEAD) and with
the one in the worktree. A benchmark, not a test: prints figures for bench/RESULTS.md.

    target/scale-venv/bin/python bench/scale/load_bench.py [--before REV] [--site DIR] [--rows N]

The passages are the first N (default 30,000) that lightembed.arrow.page_passages_batch cuts from
the HTML pages under --site (default: the Python 3.11 docs as Debian ships them), embedded with
the bundled static model at 128 dims, written once to target/load-bench/passages.parquet. Each
loader runs into its own table prefix, each twice, alternating; the copy and index seconds of
every run are printed. Run it at `nice` on a shared machine and quote the load average.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import lightembed
import lightembed.arrow as la
import lightembed.pg

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "public" / "models" / "lightembed-en-static.bin"
sys.path.insert(0, str(ROOT / "python" / "tests" / "scale"))
from pgtemp import TempPostgres  # noqa: E402


def sample(site: Path, rows: int, out: Path) -> None:
    if out.exists():
        return
    model = lightembed.Model.load(MODEL)
    paths = sorted(p for p in site.rglob("*.html") if p.is_file())
    batches = []
    n = 0
    for i in range(0, len(paths), 50):
        chunk = paths[i:i + 50]
        pages = pa.RecordBatch.from_pydict({"path": [str(p.relative_to(site)) for p in chunk],
                                           "content": [p.read_bytes() for p in chunk]})
        got = la.page_passages_batch(pages, model)
        batches.append(la.embed_batch(got, model, 128, text_column="embed_text").drop_columns(["embed_text"]))
        n += got.num_rows
        if n >= rows:
            break
    table = pa.Table.from_batches(batches).slice(0, rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="HEAD")
    ap.add_argument("--site", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    ap.add_argument("--rows", type=int, default=30000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    parquet = ROOT / "target" / "load-bench" / f"passages-{args.rows}.parquet"
    sample(args.site, args.rows, parquet)
    rows = pq.read_metadata(parquet).num_rows
    old_src = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.before}:python/lightembed/pg.py"],
                             check=True, capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(old_src)
    spec = importlib.util.spec_from_file_location("lightembed_pg_before", f.name)
    before = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(before)
    print(f"{rows} passages from {args.site}; load average {open('/proc/loadavg').read().split()[:3]}")
    with TempPostgres() as pg:
        for r in range(args.repeat):
            for name, mod in ((f"before ({args.before})", before), ("after (worktree)", lightembed.pg)):
                t = time.perf_counter()
                info = mod.load(parquet, pg.dsn, MODEL, prefix=f"b{r}_{'a' if mod is before else 'b'}")
                s = info["seconds"]
                print(f"{name:18} copy {s['copy']:6.1f} s = {rows / s['copy']:7.0f} rows/s; "
                      f"indexes {s['indexes']:6.1f} s; all {time.perf_counter() - t:6.1f} s; "
                      f"load average {open('/proc/loadavg').read().split()[:3]}", flush=True)


if __name__ == "__main__":
    main()
