#!/usr/bin/env python3
"""Probe (issue 34, a negative result): would a static model rank better with its pooled vectors
centred, or with their top principal directions removed, as SIF embeddings do? Both changes fit
the unchanged format (a new projection bias; a projection (I − UUᵀ)W), so this measures them
before any file is written: the dev set's nDCG@10 at 384-d and 256-d, per part.

The mean and directions come from the un-normalised outputs (`reference/forward.py`'s `forward`)
of 6,000 corpus lines and 4,000 general-text lines drawn with seed 0, never from the dev set.

  train/.venv/bin/python train/probe_center.py [bin:PATH]   # default: the shipped English static file
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import dev_eval  # noqa: E402
import forward  # noqa: E402
from common import DATA, ROOT, read_corpus  # noqa: E402

import numpy as np  # noqa: E402


def main():
    spec = sys.argv[1] if len(sys.argv) > 1 else "bin:public/models/lightembed-en-static.bin"
    m = forward.load(open(os.path.join(ROOT, spec.removeprefix("bin:")), "rb").read())
    ret = json.load(open(os.path.join(DATA, "eval", "dev_general.json"), encoding="utf-8"))

    def raw(texts):
        return np.stack([forward.forward(m, forward.tokenize(m, t)) for t in texts])

    rs = np.random.RandomState(0)
    lines = read_corpus(max_words=float("inf"))  # every line, long passages too
    gen = [l.strip() for l in open(os.path.join(DATA, "general_en.txt"), encoding="utf-8") if l.strip()]
    sample = [lines[i] for i in rs.choice(len(lines), 6000, replace=False)]
    sample += [gen[i] for i in rs.choice(len(gen), 4000, replace=False)]
    C, Q, D = raw(sample), raw(ret["queries"]), raw(ret["docs"])
    mu = C.mean(0)

    def report(tag, Q, D):
        full, cut = dev_eval.ndcg_parts(Q, D, ret, 384), dev_eval.ndcg_parts(Q, D, ret, 256)
        parts = " ".join(f"{p} {v[0]:.4f}" for p, v in full.items() if p != "all")
        print(f"| {tag} | {full['all'][0]:.4f} | {cut['all'][0]:.4f} | {parts} |", flush=True)

    print("| change | 384-d | 256-d | parts at 384-d |\n|---|---:|---:|---|")
    report("none", Q, D)
    for lam in (0.5, 1.0):
        report(f"centred × {lam}", Q - lam * mu, D - lam * mu)
    _, _, Vt = np.linalg.svd(C - mu, full_matrices=False)
    for k in (1, 2, 4, 8):
        P = np.eye(len(mu), dtype=np.float32) - Vt[:k].T @ Vt[:k]
        report(f"centred, top {k} removed", (Q - mu) @ P, (D - mu) @ P)


if __name__ == "__main__":
    main()
