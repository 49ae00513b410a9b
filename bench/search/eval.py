#!/usr/bin/env python3
"""Search quality of `lightembed search` on the held-out sets of `make_set.py` (Debian synopses →
package descriptions: `dev`, `test`) and `make_git_set.py` (Git command descriptions → manual
pages: `git`): nDCG@10, MRR@10 and success@10 (the one relevant document in the top 10) per model
and mode.

Builds one index per corpus and model (cached under bench/search/data/idx-<corpus>-<model>[-<tag>]/,
rebuilt when the model, the corpus or the CLI binary is newer), then runs batch search
(`lightembed search --jsonl`) for each mode and scores the hits. Standard library only.

  python3 bench/search/eval.py                       # test set, both models, all three modes
  python3 bench/search/eval.py --set dev --modes hybrid --search-arg=--fusion=rrf
  python3 bench/search/eval.py --index-arg=--keyword-stemming=none --tag nostem

Debian: a document is one passage (a hit's `id`). Git: a document is a page (a hit's URL without
its `#anchor`); a page's sections count once, at the rank of the first.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(HERE, "data")
MODELS = ["lightembed-en-static", "lightembed-en-2l"]
# set → (queries file, corpus to index, how a hit names its document)
SETS = {
    "dev": ("dev.jsonl", "docs.jsonl", "id"),
    "test": ("test.jsonl", "docs.jsonl", "id"),
    "git": ("git.jsonl", "git-html", "page"),
    "tr-dev": ("tr-dev.jsonl", "tr-docs.jsonl", "id"),  # make_tr_set.py; --models lightembed-tr-static
}


def metrics(ranked, relevant):
    """nDCG@10, MRR@10, success@10 for one query with one relevant document."""
    for i, doc in enumerate(ranked[:10]):
        if doc == relevant:
            return 1.0 / math.log2(i + 2), 1.0 / (i + 1), 1.0
    return 0.0, 0.0, 0.0


def build_index(binary, model, docs, out, extra):
    # a shipped model's name, or the path of any .bin
    model_path = model if model.endswith(".bin") else os.path.join(ROOT, "public", "models", f"{model}.bin")
    stamp = os.path.join(out, "index.bin")
    if os.path.exists(stamp) and os.path.getmtime(stamp) > max(
            os.path.getmtime(p) for p in (model_path, docs, binary)):
        return
    t = time.time()
    subprocess.run([binary, "index", "--quiet", "--model", model_path, "--out", out, *extra, docs],
                   check=True)
    print(f"built {out} in {time.time() - t:.0f} s", file=sys.stderr)


def run(binary, index, queries, mode, extra):
    out = subprocess.run([binary, "search", "--index", index, "--jsonl", queries, "-k", "10",
                          "--mode", mode, *extra], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="test", choices=sorted(SETS))
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--modes", nargs="+", default=["keyword", "vector", "hybrid"])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "lightembed"))
    ap.add_argument("--search-arg", action="append", default=[],
                    help="extra argument for `lightembed search` (repeatable)")
    ap.add_argument("--index-arg", action="append", default=[],
                    help="extra argument for `lightembed index` (repeatable; use with --tag)")
    ap.add_argument("--tag", default="", help="suffix of the cached index folder")
    ap.add_argument("--json", action="store_true", help="print one JSON line per result")
    a = ap.parse_args()
    qfile, corpus, level = SETS[a.set]
    queries, docs = os.path.join(DATA, qfile), os.path.join(DATA, corpus)
    if not (os.path.exists(queries) and os.path.exists(docs)):
        sys.exit("no data: run python3 bench/search/make_set.py and make_git_set.py first")
    n = sum(1 for _ in open(queries))
    print(f"| model | mode | nDCG@10 | MRR@10 | success@10 |  ({a.set}: {n} queries, "
          f"{' '.join(a.search_arg) or 'default options'})")
    print("|---|---|---|---|---|")
    for model in a.models:
        name = corpus.split(".")[0]
        idx = os.path.join(DATA, f"idx-{name}-{os.path.basename(model).removesuffix('.bin')}" + (f"-{a.tag}" if a.tag else ""))
        build_index(a.bin, model, docs, idx, a.index_arg)
        for mode in a.modes:
            results = run(a.bin, idx, queries, mode, a.search_arg)
            tot = [0.0, 0.0, 0.0]
            for r in results:
                if level == "id":
                    ranked = [h["id"] for h in r["hits"]]
                else:
                    ranked = []
                    for h in r["hits"]:
                        page = h["url"].split("#")[0].rsplit("/", 1)[-1]
                        if page not in ranked:
                            ranked.append(page)
                m = metrics(ranked, r["id"])
                tot = [x + y for x, y in zip(tot, m)]
            ndcg, mrr, succ = (x / len(results) for x in tot)
            if a.json:
                print(json.dumps({"set": a.set, "model": model, "mode": mode, "ndcg10": ndcg,
                                  "mrr10": mrr, "success10": succ, "args": a.search_arg}))
            else:
                print(f"| {model} | {mode} | {ndcg:.4f} | {mrr:.4f} | {succ:.3f} |")


if __name__ == "__main__":
    main()
