#!/usr/bin/env python3
"""Builds the big site's question set: Java SE 17 API classes, each class's one-sentence summary →
that class's page (bench/search/questions/big.jsonl), like make_git_set.py's NAME lines.

Source: openjdk-17-doc's javadoc as unpacked by make_big_site.sh (bench/search/data/big-src/,
untouched). Javadoc's "All Classes and Interfaces" page (allclasses-index.html) lists every class
with the first sentence of its description — javadoc's own cut, e.g. "Resizable-array
implementation of the Deque interface." for java/util/ArrayDeque.html. That sentence is the query;
the class page is the one relevant page (page level, any of its sections). The ranking is over
the whole big site (C++, Qt and Boost pages too), but every question is about a Java class.

A class is kept when
  - its page's description starts with the same sentence (text compared, markup ignored),
  - the sentence has 5 to 40 words and does not name the class itself (its simple name, e.g.
    "ArrayDeque" or "Entry" of Map.Entry, as a word — its words spelt apart, "file descriptor"
    for FileDescriptor, are allowed), nor says "Deprecated",
  - no other class has the same sentence (an ambiguous query has no single answer).
Of those (about 3,000), 400 are drawn by SHA-1 of the page path (deterministic, spread over all
modules and packages).

So that a question is never answered by its own text, the sentence is removed from the site copy
(bench/search/data/big-site/) wherever javadoc repeats it as the start of a description block
(`<div class="block">`): the class page, the package summary, the "Use" pages, the A–Z index, the
All Classes page, and any other class or member whose description starts with the same sentence.
The rest of each page stays as shipped (the class name, its signature, the rest of its
description, its methods). What remains findable is what a reader would use: the class's
name and the meaning of its other text. The sentence's words may of course still occur
elsewhere (a paraphrase in another class's prose, or the same words in a longer sentence): that
is left as is, and is the honest residue of the method.

Writes (deterministic): bench/search/questions/big.jsonl, and the edited pages in
bench/search/data/big-site/openjdk-17-doc/ (each file replaced, never edited in place, so the
unpacked copy in big-src/ stays untouched even if the two share inodes).

Usage: bash bench/search/make_big_site.sh && python3 bench/search/make_big_set.py
       python3 bench/search/make_big_set.py --check   # the questions equal the committed file?
"""
import argparse
import hashlib
import html
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
SRC_API = os.path.join(DATA, "big-src", "openjdk-17-doc", "usr", "share", "doc", "openjdk-17-jre-headless", "api")
SITE_PKG = "openjdk-17-doc"
SITE_API = os.path.join(DATA, "big-site", SITE_PKG, "api")
OUT = os.path.join(HERE, "questions", "big.jsonl")
N = 400

BLOCK = re.compile(r'<div class="block">(.*?)</div>', re.S)
ROW = re.compile(r'<div class="col-first[^"]*all-classes-table[^"]*"><a href="([^"]+)"[^>]*>([^<]+)</a>.*?</div>\s*'
                 r'<div class="col-last[^"]*">\s*(?:<div class="block">(.*?)</div>)?', re.S)
DESCRIPTION = re.compile(r'<section class="class-description" id="class-description">.*?<div class="block">(.*?)</div>', re.S)
TOKEN = re.compile(r'<[^>]*>|&[#A-Za-z0-9]+;|[^<&]+|[<&]', re.S)


def text(fragment):
    """The normalised text of an HTML fragment: tags dropped, entities decoded, whitespace runs
    collapsed to one space, trimmed."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", "", fragment)).split())


def cut_after_text(fragment, n):
    """The offset in `fragment` (HTML) right after the markup that makes up the first `n`
    characters of text(fragment) (n ≥ 1, ending on a non-space); None if its text is shorter."""
    length = 0
    space = False   # whitespace seen since the last character counted
    for m in TOKEN.finditer(fragment):
        tok = m.group(0)
        if tok.startswith("<") and len(tok) > 1:
            continue
        entity = tok.startswith("&") and len(tok) > 1
        for i, ch in enumerate(html.unescape(tok) if entity else tok):
            if ch.isspace():
                space = length > 0
                continue
            length += 1 + space
            space = False
            if length >= n:
                return m.end() if entity else m.start() + i + 1
    return None


def candidates():
    idx = os.path.join(SRC_API, "allclasses-index.html")
    if not os.path.exists(idx):
        sys.exit(f"no {idx}: run bench/search/make_big_site.sh first")
    rows = ROW.findall(open(idx, encoding="utf-8").read())
    counts = {}
    for _, _, block in rows:
        t = text(block or "")
        counts[t] = counts.get(t, 0) + 1
    kept = []
    for href, name, block in rows:
        q = text(block or "")
        simple = name.split(".")[-1]
        words = q.split()
        if not (5 <= len(words) <= 40) or counts[q] != 1 or "deprecated" in q.lower():
            continue
        if re.search(r"\b" + re.escape(simple) + r"\b", q):
            continue
        page = open(os.path.join(SRC_API, href), encoding="utf-8").read()
        m = DESCRIPTION.search(page)
        if not m or not text(m.group(1)).startswith(q):
            continue
        kept.append((href, q))
    return rows, kept


def choose(kept):
    kept = sorted(kept, key=lambda hq: hashlib.sha1(hq[0].encode()).hexdigest())[:N]
    return sorted(kept)


def remove_sentences(chosen):
    """Drops each chosen sentence from every description block that starts with it, in the site
    copy of the Java API. Returns {sentence: blocks edited}."""
    by_start = {}
    for _, q in chosen:
        by_start.setdefault(" ".join(q.split()[:3]), []).append(q)
    removed = {q: 0 for _, q in chosen}

    def edit(m):
        body = m.group(1)
        t = text(body)
        for q in by_start.get(" ".join(t.split()[:3]), []):
            if t.startswith(q) and (len(t) == len(q) or t[len(q)] == " "):
                at = cut_after_text(body, len(q))
                removed[q] += 1
                return '<div class="block">' + body[at:] + "</div>"
        return m.group(0)

    for dirpath, dirnames, filenames in os.walk(SRC_API):
        dirnames.sort()
        for f in sorted(filenames):
            if not f.endswith(".html"):
                continue
            src = os.path.join(dirpath, f)
            page = open(src, encoding="utf-8").read()
            if 'class="block"' not in page:
                continue
            new = BLOCK.sub(edit, page)
            if new != page:
                dst = os.path.join(SITE_API, os.path.relpath(src, SRC_API))
                tmp = dst + ".tmp"
                with open(tmp, "w", encoding="utf-8") as w:
                    w.write(new)
                os.replace(tmp, dst)
    return removed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare the questions with the committed file")
    args = ap.parse_args()
    rows, kept = candidates()
    chosen = choose(kept)
    lines = [json.dumps({"kind": "mechanical", "query": q, "relevant": [f"{SITE_PKG}/api/{href}"]}) + "\n"
             for href, q in chosen]
    if args.check:
        same = os.path.exists(OUT) and open(OUT).read() == "".join(lines)
        print(f"{OUT}: {'identical' if same else 'DIFFERENT'} ({len(lines)} questions regenerated)")
        sys.exit(0 if same else 1)
    if not os.path.isdir(SITE_API):
        sys.exit(f"no {SITE_API}: run bench/search/make_big_site.sh first")
    removed = remove_sentences(chosen)
    missing = [q for q, n in removed.items() if n == 0]
    if missing:
        sys.exit(f"{len(missing)} sentences not found to remove, e.g. {missing[0]!r}")
    # Each class page must not contain its question's sentence any more.
    for href, q in chosen:
        if q in text(open(os.path.join(SITE_API, href), encoding="utf-8").read()):
            sys.exit(f"{href} still holds {q!r}")
    with open(OUT, "w") as w:
        w.writelines(lines)
    blocks = sum(removed.values())
    print(f"{len(rows)} classes, {len(kept)} eligible, {len(chosen)} questions → {OUT}; "
          f"the sentences removed from {blocks} description blocks in {SITE_API}")


if __name__ == "__main__":
    main()
