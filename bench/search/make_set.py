#!/usr/bin/env python3
"""Builds the held-out search-quality set: Debian package synopses → package descriptions.

Real text that no lightembed model was trained on (Debian descriptions are reserved for
evaluation). A query is a package's one-line synopsis ("Advanced Intrusion Detection
Environment"); the one relevant document is that package's long description, titled with the
package name, among 10,000 descriptions. Package families that share a first paragraph
(`foo`, `foo-dynamic`, …) keep one member, and boilerplate packages (transitional, dummy, debug
symbols) are left out, so each query has exactly one right answer.

Writes bench/search/data/ (not in git; this script regenerates it, deterministically):
  docs.jsonl   {"id": package, "title": package, "url": …, "text": description}   10,000 lines
  dev.jsonl    {"id": package, "query": synopsis}   300 queries — for choosing the fusion
  test.jsonl   {"id": package, "query": synopsis}   1,000 queries — for the reported figures
  corpus-app.jsonl   the 10,000 docs as the app's bundled-corpus records (`lightembed passages`
               fields), to time the browser worker on 10k passages (bench/app_figures.mjs)

Needs apt's English translations: apt-get -o Acquire::Languages=en update
Usage: python3 bench/search/make_set.py
"""
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "train"))
from debian_text import descriptions  # noqa: E402

OUT = os.path.join(HERE, "data")
N_DOCS, N_DEV, N_TEST = 10_000, 300, 1_000
BOILERPLATE = re.compile(r"transitional|dummy|debug symbols|debugging symbols|metapackage|"
                         r"meta-package|virtual package", re.I)


def main():
    seen_first = set()
    pool = []
    for pkg, syn, paras in descriptions():
        if BOILERPLATE.search(syn) or len(syn.split()) < 2 or paras[0] in seen_first:
            continue
        seen_first.add(paras[0])
        pool.append((pkg, syn, paras))
    if len(pool) < N_DOCS:
        sys.exit(f"only {len(pool)} descriptions; run: apt-get -o Acquire::Languages=en update")
    pool.sort()
    random.Random(2026).shuffle(pool)
    docs = pool[:N_DOCS]
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "docs.jsonl"), "w") as f:
        for pkg, _, paras in docs:
            f.write(json.dumps({"id": pkg, "title": pkg,
                                "url": f"https://packages.debian.org/bookworm/{pkg}",
                                "text": "\n\n".join(paras)}, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "corpus-app.jsonl"), "w") as f:
        for pkg, _, paras in docs:
            f.write(json.dumps({"id": f"{pkg}:1", "page": pkg, "title": pkg, "page_title": pkg,
                                "heading": "",
                                "url": f"https://packages.debian.org/bookworm/{pkg}",
                                "text": " ".join(paras)}, ensure_ascii=False) + "\n")
    for name, part in (("dev", docs[:N_DEV]), ("test", docs[N_DEV:N_DEV + N_TEST])):
        with open(os.path.join(OUT, f"{name}.jsonl"), "w") as f:
            for pkg, syn, _ in part:
                f.write(json.dumps({"id": pkg, "query": syn}, ensure_ascii=False) + "\n")
    print(f"{len(pool)} usable descriptions; wrote {N_DOCS} docs, {N_DEV} dev and {N_TEST} test "
          f"queries to {OUT}")


if __name__ == "__main__":
    main()
