#!/usr/bin/env python3
"""Builds the documentation-site search set: Git's manual pages (Debian `git-doc`), each command's
one-line description → that command's page.

The Git docs are reserved for evaluation (no lightembed model is trained on them). A query is the
NAME line of a `git-*.html` manual page without the command name ("Use binary search to find the
commit that introduced a bug"); the relevant document is the page (any of its sections). The NAME
block is removed from the copy that gets indexed, so the answer is never the query's own text;
everything else of the page (synopsis, options, examples, the page chrome) stays as shipped.

Writes bench/search/data/ (not in git; deterministic):
  git-html/git-*.html   the pages, NAME block removed
  git.jsonl             {"id": "git-bisect.html", "query": "Use binary search to …"}

Needs: apt-get install git-doc
Usage: python3 bench/search/make_git_set.py
"""
import glob
import html
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
SRC = "/usr/share/doc/git/html"
NAME = re.compile(r'<h2>NAME</h2>\s*<div class="sectionbody">\s*<p>(.*?)</p>\s*</div>', re.S)


def main():
    pages = sorted(glob.glob(os.path.join(SRC, "git-*.html")))
    if not pages:
        sys.exit(f"no {SRC}/git-*.html: apt-get install git-doc")
    dst = os.path.join(OUT, "git-html")
    os.makedirs(dst, exist_ok=True)
    queries = []
    for path in pages:
        page = open(path, encoding="utf-8").read()
        m = NAME.search(page)
        if not m:
            continue
        name_line = " ".join(html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).split())
        cmd, sep, desc = name_line.partition(" - ")
        if not sep or len(desc.split()) < 3:
            continue
        base = os.path.basename(path)
        with open(os.path.join(dst, base), "w", encoding="utf-8") as f:
            f.write(page[:m.start()] + page[m.end():])
        queries.append({"id": base, "query": desc})
    with open(os.path.join(OUT, "git.jsonl"), "w") as f:
        for q in queries:
            f.write(json.dumps(q) + "\n")
    print(f"{len(queries)} pages and queries → {dst}, {OUT}/git.jsonl")


if __name__ == "__main__":
    main()
