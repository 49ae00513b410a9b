#!/usr/bin/env python3
"""Typo tolerance (issue 30 #4): success@10 and MRR@10 of `lightembed search` on a `lightembed site`
bundle, clean questions against the same questions with one typo per query
(questions/<set>-typos.jsonl, written by add_typos.py), keyword-only and hybrid, page level (a hit
on any relevant page counts; a page's sections count once, at the rank of the first) — the
ranking pagefind_vs.mjs takes from `lightembed search` on the bundle, without the browser.

  cargo build --release -p lightembed-cli
  python3 bench/search/typo_eval.py                       # book and python, both modes
  python3 bench/search/typo_eval.py --sets book --bin /path/to/other/lightembed

The bundle is built once per binary and set under bench/search/data/typo-<set>-<tag>/ (rebuilt
when the binary is newer). Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SITES = {
    "book": ("/usr/share/doc/rust-doc/html/book", ["print.html"]),
    "python": ("/usr/share/doc/python3.11/html", []),
}


def page_key(url, set_name):
    p = urllib.parse.unquote(re.sub(r"^https?://[^/]+", "", url.split("#")[0]).lstrip("/"))
    if p == "" or p.endswith("/"):
        p += "index.html"
    if set_name == "book":
        p = re.sub(r"^(2018-edition|second-edition)/", "", p)
    return p


def build(binary, set_name, out):
    stamp = os.path.join(out, "lightembed", "manifest.json")
    if os.path.exists(stamp) and os.path.getmtime(stamp) > os.path.getmtime(binary):
        return os.path.join(out, "lightembed")
    src, remove = SITES[set_name]
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(src, out, symlinks=False)
    for f in remove:
        p = os.path.join(out, f)
        if os.path.exists(p):
            os.remove(p)
    subprocess.run([binary, "site", "--site", out, "--quiet"], check=True)
    return os.path.join(out, "lightembed")


def rank(binary, bundle, queries, mode):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for i, q in enumerate(queries):
            f.write(json.dumps({"id": i, "query": q["query"]}) + "\n")
        name = f.name
    try:
        out = subprocess.run([binary, "search", "--index", bundle, "-k", "30", "--jsonl", name,
                              "--mode", mode], check=True, capture_output=True, text=True).stdout
    finally:
        os.remove(name)
    return [[h["url"] for h in json.loads(line)["hits"]] for line in out.splitlines() if line]


def quality(ranked, queries, set_name):
    s10 = mrr = 0.0
    for urls, q in zip(ranked, queries):
        pages = []
        for u in urls:
            p = page_key(u, set_name)
            if p not in pages:
                pages.append(p)
        for r, p in enumerate(pages[:10]):
            if p in q["relevant"]:
                s10 += 1
                mrr += 1 / (r + 1)
                break
    return s10 / len(queries), mrr / len(queries)


def read(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def with_typos(queries, seed):
    """Fallback when questions/<set>-typos.jsonl is absent: each query with one typo (seeded) in
    one of its words of 4+ letters — a swapped, dropped, doubled or wrong letter."""
    import random
    rng = random.Random(seed)
    out = []
    for q in queries:
        words = [m for m in re.finditer(r"[A-Za-z]{4,}", q["query"])]
        if not words:
            out.append(dict(q))
            continue
        m = rng.choice(words)
        w = list(m.group())
        i = rng.randrange(len(w))
        kind = rng.choice(["swap", "drop", "double", "wrong"])
        if kind == "swap":
            i = min(i, len(w) - 2)
            w[i], w[i + 1] = w[i + 1], w[i]
        elif kind == "drop":
            del w[i]
        elif kind == "double":
            w.insert(i, w[i])
        else:
            w[i] = rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != w[i].lower()])
        t = dict(q)
        t["query"] = q["query"][:m.start()] + "".join(w) + q["query"][m.end():]
        out.append(t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=["book", "python"])
    ap.add_argument("--modes", nargs="+", default=["keyword", "hybrid"])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "lightembed"))
    ap.add_argument("--tag", default="", help="suffix of the bundle folder (default: the binary's name)")
    ap.add_argument("--typos", default="{set}-typos.jsonl", help="typo questions file in questions/")
    ap.add_argument("--seed", type=int, default=30, help="seed of the fallback typo maker")
    ap.add_argument("--misses", action="store_true", help="list typo queries the clean one finds and it does not")
    a = ap.parse_args()
    tag = a.tag or os.path.basename(a.bin)
    print("| set | mode | clean s@10 / MRR@10 | typos s@10 / MRR@10 | Δ s@10 |")
    print("|---|---|---|---|---:|")
    for s in a.sets:
        bundle = build(a.bin, s, os.path.join(HERE, "data", f"typo-{s}-{tag}"))
        clean = read(os.path.join(HERE, "questions", f"{s}.jsonl"))
        tpath = os.path.join(HERE, "questions", a.typos.format(set=s))
        if os.path.exists(tpath):
            typos = read(tpath)
        else:
            print(f"({tpath} absent: typos made here, seed {a.seed})", file=sys.stderr)
            typos = with_typos(clean, a.seed)
        for m in a.modes:
            rc, rt = rank(a.bin, bundle, clean, m), rank(a.bin, bundle, typos, m)
            (cs, cm), (ts, tm) = quality(rc, clean, s), quality(rt, typos, s)
            print(f"| {s} | {m} | {cs:.3f} / {cm:.3f} | {ts:.3f} / {tm:.3f} | {100 * (ts - cs):+.1f} |")
            if a.misses:
                for q, c, t in zip(typos, rc, rt):
                    hit = lambda urls: any(page_key(u, s) in q["relevant"] for u in urls[:10])
                    if hit(c) and not hit(t):
                        print(f"    miss: {q['query']!r}", file=sys.stderr)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
