#!/usr/bin/env python3
"""Held-out evaluation data from Debian package descriptions (never used for training).

Needs apt's English translations:  apt-get -o Acquire::Languages=en update
Writes train/data/eval/
  retrieval.json  {"queries": [synopsis...], "docs": [long description...], "qrels": [doc index per query]}
  pairs.json      {"sentences": [...], "pairs": [[i, j], ...]}   (>= 10,000 pairs)
  parity.json     {"sentences": [...]}   1,000 held-out sentences for the engine parity check
The three sets come from disjoint packages.
"""
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA  # noqa: E402
from debian_text import descriptions  # noqa: E402

OUT = os.path.join(DATA, "eval")
N_DOCS, N_QUERIES, N_PAIR_SENTS, N_PAIRS, N_PARITY = 2000, 1000, 3000, 10000, 1000
SENT_SPLIT = re.compile(r'(?<=[.!?])\s+(?=[A-Z"\'(\[])')


def sentence_pairs(groups, rng, n_sentences, n_pairs):
    """`(sentences, pairs)` for the Spearman figure: every pair among the first 4 sentences of
    each group (related: one description, one page) until `n_sentences` are taken, then random
    pairs of distinct sentences (mostly unrelated) up to `n_pairs`. A sentence seen twice keeps
    its first index."""
    sentences, pairs, index = [], [], {}

    def idx(t):
        if t not in index:
            index[t] = len(sentences)
            sentences.append(t)
        return index[t]

    for g in groups:
        if len(sentences) >= n_sentences:
            break
        ids = [idx(t) for t in g[:4]]
        pairs += [[ids[a], ids[b]] for a in range(len(ids)) for b in range(a + 1, len(ids))]
    n = len(sentences)
    while len(pairs) < n_pairs:
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            pairs.append([a, b])
    return sentences, pairs


def main():
    if os.path.exists(os.path.join(OUT, "parity.json")) and "--force" not in sys.argv:
        print("eval data exists; skip (use --force)")
        return
    os.makedirs(OUT, exist_ok=True)
    d = descriptions()
    print(f"{len(d)} unique package descriptions")
    rng = random.Random(1234)
    rng.shuffle(d)
    ret, rest = d[:N_DOCS], d[N_DOCS:]
    docs = [" ".join(" ".join(p) for p in [paras]).split() for _, _, paras in ret]
    docs = [" ".join(w[:64]) for w in docs]  # first 64 words: every model sees the same text
    queries = [syn for _, syn, _ in ret[:N_QUERIES]]
    json.dump({"queries": queries, "docs": docs, "qrels": list(range(N_QUERIES)),
               "packages": [p for p, _, _ in ret]}, open(os.path.join(OUT, "retrieval.json"), "w"))

    def sents_of(paras):
        s = []
        for p in paras:
            s += [x for x in SENT_SPLIT.split(p) if 4 <= len(x.split()) <= 60]
        return s

    # pairs: half within one description (related), half across descriptions (mostly unrelated)
    half = len(rest) // 2
    groups, pool = [], []
    for _, syn, paras in rest[:half]:
        s = [syn] + sents_of(paras)
        if len(s) >= 2:
            groups.append(s)
    sentences, pairs = sentence_pairs(groups, rng, N_PAIR_SENTS, N_PAIRS)
    json.dump({"sentences": sentences, "pairs": pairs}, open(os.path.join(OUT, "pairs.json"), "w"))

    parity = []
    for _, syn, paras in rest[half:]:
        parity += [syn] + sents_of(paras)[:1]
        if len(parity) >= N_PARITY:
            break
    json.dump({"sentences": parity[:N_PARITY]}, open(os.path.join(OUT, "parity.json"), "w"))
    print(f"retrieval: {len(queries)} queries / {len(docs)} docs; pairs: {len(pairs)} over "
          f"{len(sentences)} sentences; parity: {len(parity[:N_PARITY])} sentences")


if __name__ == "__main__":
    main()
