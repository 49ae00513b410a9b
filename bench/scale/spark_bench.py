"""Embedding throughput at scale (issue 32, item 5): Spark local[2] (`DataFrame.mapInArrow` with
lightembed.arrow.embedder) against `lightembed embed` (the CLI, all cores) on the same passages —
the big docs site's, as bench/scale/serve_bench.py cut them (WORK/passages.jsonl, its step 1).
A benchmark, not a test: it prints the figures and adds them to WORK/figures.json.

    target/scale-venv/bin/python bench/scale/spark_bench.py [--work DIR] [--cli BIN] [--limit N]

Both read the same JSON Lines file and embed `embed_text` (heading + text) at 128 dims with the
shipped static model: Spark writes Parquet (id + vector + model_sha256), the CLI writes its JSON
lines to /dev/null. Wall-clock times, JVM start and Python workers included for Spark.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import lightembed.arrow as la

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "public" / "models" / "lightembed-en-static.bin"
DIMS = 128


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=ROOT / "target/bench-scale")
    ap.add_argument("--cli", type=Path, default=ROOT / "target/debug/lightembed")
    ap.add_argument("--limit", type=int, default=0, help="only the first N passages (0: all)")
    args = ap.parse_args()
    src = args.work / "passages.jsonl"
    figures_path = args.work / "figures.json"
    figures = json.loads(figures_path.read_text()) if figures_path.exists() else {}
    tmp = Path(tempfile.mkdtemp(prefix="lightembed-spark-bench-"))
    if args.limit:
        cut = tmp / "passages.jsonl"
        with open(src) as f, open(cut, "w") as out:
            for _, line in zip(range(args.limit), f):
                out.write(line)
        src = cut
    n = sum(1 for _ in open(src))
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"{n} passages; load average {load}", flush=True)

    # The CLI reads {"text": …}: the embedded text goes in that field.
    cli_in = tmp / "cli.jsonl"
    with open(src) as f, open(cli_in, "w") as out:
        for line in f:
            r = json.loads(line)
            out.write(json.dumps({"id": r["id"], "text": r["embed_text"]}) + "\n")
    t = time.perf_counter()
    subprocess.run([str(args.cli), "embed", "--model", str(MODEL), "--dims", str(DIMS), "--jsonl", str(cli_in)],
                   stdout=subprocess.DEVNULL, check=True)
    cli_s = time.perf_counter() - t
    print(f"lightembed embed: {cli_s:.1f} s ({n / cli_s:.0f} passages/s)", flush=True)

    from pyspark.sql import SparkSession

    t = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("lightembed-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.local.dir", str(tmp / "spark-local")).config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = spark.read.json(str(src)).select("id", "embed_text").repartition(2)
        out = df.mapInArrow(la.embedder(str(MODEL), DIMS, text_column="embed_text", list_type="list"),
                            la.spark_schema(df.schema, DIMS))
        out.drop("embed_text").write.parquet(str(tmp / "out.parquet"))
        spark_s = time.perf_counter() - t
    finally:
        spark.stop()
    print(f"Spark local[2]: {spark_s:.1f} s ({n / spark_s:.0f} passages/s, JVM start included)", flush=True)
    figures["embedding_throughput"] = {"passages": n, "loadavg": load, "cli_s": round(cli_s, 1),
                                       "cli_per_s": round(n / cli_s), "spark_s": round(spark_s, 1),
                                       "spark_per_s": round(n / spark_s)}
    figures_path.write_text(json.dumps(figures, indent=1))
    subprocess.run(["rm", "-rf", str(tmp)], check=True)


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    main()
