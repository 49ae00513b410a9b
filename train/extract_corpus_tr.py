#!/usr/bin/env python3
"""Extract Turkish training text from Debian packages (issue 16).

Writes train/data/tr/corpus.tsv (source \\t text): sentences and short paragraphs, deduplicated,
shuffled (seed 0), train/data/tr/spans.tsv (a short word span of each line: query-like
inputs), and train/data/tr/vocab_text.txt (every Turkish training paragraph, one per
line: the text the WordPiece vocabulary is trained on). Only the script is committed.

Sources (`turkish_text.py`): LibreOffice help pages of the `train` split, manpages-tr, the Turkish
gettext catalogues and Firefox's Turkish strings. Held out and never read here: the help pages of
the `dev`/`test` splits, the Turkish WordNet KeNet and the `sadedegel` news sample.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import turkish_text as T  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tr")
SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-ZÇĞİÖŞÜ\"'(\[])")


def good(t, lo=3, hi=90):
    w = t.split()
    if not (lo <= len(w) <= hi):
        return False
    return sum(c.isalpha() for c in t) >= 0.6 * len(t) and T.is_turkish(t)


def sentences_and_passages(par, out):
    """Each good sentence of a paragraph, plus the paragraph itself when it has ≥ 2 (≤ 90 words)."""
    sents = [s for s in SENT_SPLIT.split(par) if good(s)]
    out.extend(sents)
    if len(sents) >= 2 and good(par, 8, 90):
        out.append(par)


def write_spans(corpus, out, passes=2):
    """Query-like training texts: random spans of 2–8 consecutive words from every corpus line of
    ≥ 6 words (`spans.tsv`, one per line), one pass over the corpus per seed (1, 2, …), passes
    one after the other. The held-out queries are titles and headings of 2–6 words; the corpus
    lines are sentences, so without these the student rarely sees short input."""
    lines = [l.rstrip("\n").split("\t", 1)[1].split() for l in open(corpus, encoding="utf-8")]
    n = 0
    with open(out + ".tmp", "w", encoding="utf-8") as g:
        for seed in range(1, passes + 1):
            rng = random.Random(seed)
            for w in lines:
                if len(w) < 6 or len(w) > 48:
                    continue
                k = rng.randint(2, min(8, len(w) - 2))
                i = rng.randint(0, len(w) - k)
                g.write(" ".join(w[i:i + k]).strip(".,;:()") + "\n")
                n += 1
    os.replace(out + ".tmp", out)
    print(f"wrote {n} spans to {out}")


def main():
    corpus = os.path.join(OUT, "corpus.tsv")
    spans = os.path.join(OUT, "spans.tsv")
    if os.path.exists(corpus) and ("--spans" in sys.argv or not os.path.exists(spans)):
        write_spans(corpus, spans)
    if os.path.exists(corpus) and "--force" not in sys.argv:
        if "--spans" in sys.argv:
            return
        print(f"{corpus} exists; skip (use --force)")
        return
    os.makedirs(OUT, exist_ok=True)
    vocab_text = []
    sources = {}
    out = []
    for path, title, blocks in T.help_pages():
        if T.help_split(path) != "train":
            continue
        for t in [title] + [b for _, b in blocks]:
            if T.is_turkish(t):
                vocab_text.append(t)
                sentences_and_passages(t, out)
                if 2 <= len(t.split()) < 3:
                    out.append(t)  # headings: short, but what users type
    sources["libreoffice-help"] = out
    out = []
    for _, paras in T.manpages():
        for p in paras:
            if T.is_turkish(p):
                vocab_text.append(p)
                sentences_and_passages(p, out)
    sources["manpages-tr"] = out
    out = []
    for _, strings in T.catalogues():
        for s in strings:
            if T.is_turkish(s):
                vocab_text.append(s)
                if good(s, 2, 90):
                    out.append(s)
    sources["catalogues"] = out

    rng = random.Random(0)
    seen, rows = set(), []
    for name, items in sources.items():
        kept = 0
        for t in items:
            t = t.replace("\t", " ")
            k = t.casefold()
            if k in seen:
                continue
            seen.add(k)
            rows.append((name, t))
            kept += 1
        print(f"{name:18s} {len(items):7d} extracted, {kept:7d} kept")
    rng.shuffle(rows)
    with open(corpus, "w", encoding="utf-8") as f:
        for s, t in rows:
            f.write(f"{s}\t{t}\n")
    with open(os.path.join(OUT, "vocab_text.txt"), "w", encoding="utf-8") as f:
        for t in vocab_text:
            f.write(t.replace("\n", " ") + "\n")
    print(f"wrote {len(rows)} lines to {corpus}; {len(vocab_text)} paragraphs for the vocabulary")
    write_spans(corpus, spans)


if __name__ == "__main__":
    main()
