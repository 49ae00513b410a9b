#!/usr/bin/env python3
"""Builds the app's bundled demo corpus from the Rust book in Debian's `rust-doc` package.

Reads every chapter and appendix page of the current edition
(`/usr/share/doc/rust-doc/html/book/ch*.html`, `appendix*.html`), keeps the prose inside
`<main>` (paragraphs, list items (also inside block quotes), table cells and short code blocks), and cuts it
into passages of about 100–300 words that never cross a heading. Writes one JSON object per line:

    {"id": "ch04-01-what-is-ownership#the-stack-and-the-heap/0",
     "title": "What Is Ownership?",            # the page's chapter title
     "heading": "The Stack and the Heap",       # nearest h1–h4 above the passage
     "url": "https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html#the-stack-and-the-heap",
     "text": "..."}

Passages are ordered by chapter, so `?limit=N` in the app (first N passages) is a coherent
slice of the book. Deterministic: the same input produces the same bytes.

Usage: .venv/bin/python scripts/make_corpus.py [--src DIR] [--out public/corpus/rust-book.jsonl]
"""

from __future__ import annotations

import argparse
import glob
import html.parser
import json
import os
import re
import sys

BOOK_URL = "https://doc.rust-lang.org/book/"
MIN_WORDS = 100
TARGET_WORDS = 120
MAX_WORDS = 300
# Code blocks longer than this many words are dropped: they dominate a passage and say little
# in prose.
MAX_CODE_WORDS = 60

BLOCK_TAGS = {"p", "li", "td", "th", "dt", "dd", "pre"}
HEADING_TAGS = {"h1", "h2", "h3", "h4"}


class BookPage(html.parser.HTMLParser):
    """Collects `(kind, anchor, text)` blocks from an mdBook page's `<main>` element.

    `kind` is `"heading"` or `"text"` or `"code"`; `anchor` is the heading's `id` (headings only).
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_main = False
        self.depth_ignore = 0  # inside <script>/<style>/<nav>
        self.blocks: list[tuple[str, str, str]] = []
        self.cur: list[str] | None = None
        self.cur_kind = ""
        self.cur_anchor = ""
        self.cur_tag = ""
        self.block_depth = 0
        self.page_title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "title":
            self.in_title = True
        if tag == "main":
            self.in_main = True
            return
        if not self.in_main:
            return
        if tag in ("script", "style", "nav", "button"):
            self.depth_ignore += 1
            return
        if tag in HEADING_TAGS and self.cur is None:
            self.cur, self.cur_kind, self.cur_anchor, self.cur_tag = [], "heading", a.get("id", ""), tag
            self.block_depth = 1
            return
        if tag in BLOCK_TAGS:
            if self.cur is None:
                kind = "code" if tag == "pre" else "text"
                self.cur, self.cur_kind, self.cur_anchor, self.cur_tag = [], kind, "", tag
                self.block_depth = 1
            elif tag == self.cur_tag:
                self.block_depth += 1
            else:
                # A block nested in a block (e.g. <p> inside <li>): separate with a space.
                self.cur.append(" ")
        if tag == "br" and self.cur is not None:
            self.cur.append(" ")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag == "main":
            self._flush()
            self.in_main = False
            return
        if not self.in_main:
            return
        if tag in ("script", "style", "nav", "button"):
            self.depth_ignore = max(0, self.depth_ignore - 1)
            return
        if self.cur is not None and tag == self.cur_tag:
            self.block_depth -= 1
            if self.block_depth == 0:
                self._flush()

    def handle_data(self, data):
        if self.in_title:
            self.page_title += data
        if self.in_main and self.depth_ignore == 0 and self.cur is not None:
            self.cur.append(data)

    def _flush(self):
        if self.cur is None:
            return
        raw = "".join(self.cur)
        if self.cur_kind == "code":
            text = "\n".join(line.rstrip() for line in raw.strip("\n").splitlines())
        else:
            text = re.sub(r"\s+", " ", raw).strip()
        if text:
            self.blocks.append((self.cur_kind, self.cur_anchor, text))
        self.cur = None


def words(s: str) -> int:
    return len(s.split())


def page_passages(path: str) -> list[dict]:
    parser = BookPage()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    stem = os.path.splitext(os.path.basename(path))[0]
    title = ""
    sections: list[tuple[str, str, list[str]]] = []  # (heading, anchor, blocks)
    for kind, anchor, text in parser.blocks:
        if kind == "heading":
            if not title:
                title = text
            sections.append((text, anchor, []))
            continue
        if kind == "code" and words(text) > MAX_CODE_WORDS:
            continue
        if not sections:
            sections.append((title or stem, "", []))
        sections[-1][2].append(text)
    if not title:
        title = parser.page_title.split(" - ")[0].strip() or stem

    out = []
    for heading, anchor, blocks in sections:
        chunks: list[list[str]] = []
        cur: list[str] = []
        n = 0
        for b in blocks:
            bw = words(b)
            if bw > MAX_WORDS:
                # A very long block: split it on sentence ends.
                parts = re.split(r"(?<=[.!?])\s+", b)
            else:
                parts = [b]
            for part in parts:
                pw = words(part)
                if cur and (n + pw > MAX_WORDS or n >= TARGET_WORDS):
                    chunks.append(cur)
                    cur, n = [], 0
                cur.append(part)
                n += pw
        if cur:
            # A short tail joins the previous chunk when that stays under MAX_WORDS.
            if chunks and n < MIN_WORDS and words(" ".join(chunks[-1])) + n <= MAX_WORDS:
                chunks[-1].extend(cur)
            else:
                chunks.append(cur)
        for i, chunk in enumerate(chunks):
            text = "\n".join(chunk).strip()
            if words(text) < 25:  # headings with a line under them: nothing to search for
                continue
            url = f"{BOOK_URL}{stem}.html" + (f"#{anchor}" if anchor else "")
            out.append(
                {
                    "id": f"{stem}#{anchor}/{i}",
                    "title": title,
                    "heading": heading,
                    "url": url,
                    "text": text,
                }
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default="/usr/share/doc/rust-doc/html/book")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "public", "corpus", "rust-book.jsonl"))
    args = ap.parse_args()

    pages = sorted(glob.glob(os.path.join(args.src, "ch*.html"))) + sorted(
        glob.glob(os.path.join(args.src, "appendix*.html"))
    )
    if not pages:
        print(f"no chapter pages under {args.src} (apt-get install rust-doc)", file=sys.stderr)
        return 1
    passages = []
    for p in pages:
        passages.extend(page_passages(p))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for rec in passages:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    wc = [words(r["text"]) for r in passages]
    wc.sort()
    size = os.path.getsize(args.out)
    print(
        f"{len(passages)} passages from {len(pages)} pages → {args.out} ({size / 1e6:.2f} MB); "
        f"words min {wc[0]} median {wc[len(wc) // 2]} max {wc[-1]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
