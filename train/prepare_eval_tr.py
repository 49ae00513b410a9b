#!/usr/bin/env python3
"""Held-out Turkish evaluation data from the LibreOffice help pages of the dev/test splits
(`turkish_text.help_split`; never used for training, vocabulary or tuning on test).

Writes train/data/tr/eval/
  retrieval.json      test pages: {"queries", "docs", "qrels", "kinds"}: a page title → the page's
                      lead section, and a section heading → that section (first 64 words each);
                      every section of every test page is a document (the distractors)
  retrieval_dev.json  the same from the dev pages (teacher choice, hyper-parameters)
  pairs.json          {"sentences", "pairs"}: sentences of test pages, half the pairs within a page
  parity.json         {"sentences"}: 1,000 held-out sentences (dev pages) for the parity check,
                      led by real cased Turkish that exercises the I/İ/ı/i case pairs
"""
import json
import os
import random
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import turkish_text as T  # noqa: E402
from prepare_eval import sentence_pairs  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tr", "eval")
SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-ZÇĞİÖŞÜ\"'(\[])")
CASED = ["İSTANBUL'DA ışık", "Iğdır", "ÇOCUK", "İzmir'de ılık bir İlkbahar akşamı", "IŞIK ve İĞNE",
         "Dosyayı İçe Aktar", "ışığı kapat, İstanbul'u aç"]


def sections(title, blocks):
    """`[(query, text), ...]`: the title with the text before the first heading, then each heading
    with the text under it; only Turkish blocks, sections with < 12 words dropped."""
    out, head, buf = [], title, []

    def flush():
        text = " ".join(buf).split()
        if head and T.is_turkish(head) and len(text) >= 12:
            out.append((head, " ".join(text[:64])))

    for kind, t in blocks:
        if kind == "h":
            flush()
            head, buf = t, []
        elif T.is_turkish(t):
            buf.append(t)
    flush()
    return out


def retrieval(pages, generic):
    """Queries whose text heads a section on more than one help page (`generic`: "Örnek:",
    "Sözdizimi") have no single answer and are left out; their sections stay as documents."""
    queries, docs, qrels, kinds, seen_q, seen_d = [], [], [], [], set(), set()
    for _, title, blocks in pages:
        for i, (q, d) in enumerate(sections(title, blocks)):
            if d in seen_d:
                continue
            seen_d.add(d)
            docs.append(d)
            if q.casefold() in seen_q or q.casefold() in generic or len(q.split()) > 16:
                continue  # one query text, one answer
            seen_q.add(q.casefold())
            queries.append(q)
            qrels.append(len(docs) - 1)
            kinds.append("title" if i == 0 and q == title else "heading")
    return {"queries": queries, "docs": docs, "qrels": qrels, "kinds": kinds}


def main():
    if os.path.exists(os.path.join(OUT, "parity.json")) and "--force" not in sys.argv:
        print("eval data exists; skip (use --force)")
        return
    os.makedirs(OUT, exist_ok=True)
    pages = T.help_pages()
    by = {"dev": [], "test": []}
    for p in pages:
        s = T.help_split(p[0])
        if s in by:
            by[s].append(p)
    heads = Counter()
    for _, title, blocks in pages:
        heads.update({t.casefold() for t in [title] + [b for k, b in blocks if k == "h"]})
    generic = {h for h, n in heads.items() if n > 1}
    for split, name in (("test", "retrieval.json"), ("dev", "retrieval_dev.json")):
        r = retrieval(by[split], generic)
        json.dump(r, open(os.path.join(OUT, name), "w"), ensure_ascii=False)
        print(f"{name}: {len(r['queries'])} queries ({r['kinds'].count('title')} titles) / {len(r['docs'])} docs")

    rng = random.Random(1234)

    def sents(blocks):
        return [s for _, b in blocks if T.is_turkish(b) for s in SENT_SPLIT.split(b) if 4 <= len(s.split()) <= 60]

    sentences, pairs = sentence_pairs((sents(blocks) for _, _, blocks in by["test"]), rng, 3000, 10000)
    n = len(sentences)
    json.dump({"sentences": sentences, "pairs": pairs}, open(os.path.join(OUT, "pairs.json"), "w"),
              ensure_ascii=False)
    parity = list(CASED)
    for _, title, blocks in by["dev"]:
        parity += ([title] if T.is_turkish(title) else []) + sents(blocks)[:4]
    json.dump({"sentences": parity[:1000]}, open(os.path.join(OUT, "parity.json"), "w"), ensure_ascii=False)
    print(f"pairs: {len(pairs)} over {n} sentences; parity: {len(parity[:1000])} sentences")


if __name__ == "__main__":
    main()
