"""Post-hoc output-frame experiments for the 128-d Matryoshka target (train/README.md).

Scores a trained student (embedding table quantised as packed) on the held-out retrieval set and
the sentence pairs at every Matryoshka prefix, then the same student with its fp32 projection
changed after training:

* rotation by the PCA of the student's own outputs on N training texts (centered covariance and
  uncentered second moment). A rotation leaves full-dim cosines unchanged; only prefixes move.
* bias centring (b - frac * mean output), with and without the rotation. Changes every cosine.

    train/.venv/bin/python train/prefix_frame.py --run static_c --quant int4 [--n 30000]

Prints one line per variant: {dims: (nDCG@10, Spearman vs teacher)} and the 128-d / full ratio.
Nothing is written; the shipped models do not use any of these variants (train/README.md): the
rotation gains ~1 point of 128-d nDCG but moves all of the rank-256 output into dims 1-256, leaving
dims 257-384 numerically zero (a dead tail, and a degenerate last block for the fingerprint's
per-block Procrustes, docs/fingerprinting.md).
"""
import argparse
import json
import os

import numpy as np
import torch
from scipy.stats import spearmanr

import common
from eval import EV, Tok, cached, load_student, ndcg_mrr, with_emb_quant


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--quant", default="int4", choices=["fp32", "int8", "int4", "ternary"])
    ap.add_argument("--n", type=int, default=30000, help="training texts for the PCA (0: score only)")
    args = ap.parse_args()
    torch.set_num_threads(1)

    base = load_student(args.run)
    m = with_emb_quant(base, args.quant)
    tok = Tok()
    ret = json.load(open(os.path.join(EV, "retrieval.json")))
    pairs = json.load(open(os.path.join(EV, "pairs.json")))
    P = np.array(pairs["pairs"])
    ts = cached("teacher_s", None)  # written by eval.py
    t_cos = (ts[P[:, 0]] * ts[P[:, 1]]).sum(1)

    def score(model, tag):
        Q = common.student_encode(model, tok, ret["queries"])
        D = common.student_encode(model, tok, ret["docs"])
        S = common.student_encode(model, tok, pairs["sentences"])
        out = {}
        for d in common.MATRYOSHKA:
            def nrm(X):
                return X[:, :d] / np.linalg.norm(X[:, :d], axis=1, keepdims=True)
            Sd = nrm(S)
            sp = spearmanr((Sd[P[:, 0]] * Sd[P[:, 1]]).sum(1), t_cos).correlation
            out[d] = (round(ndcg_mrr(nrm(Q), nrm(D), ret["qrels"])[0], 4), round(float(sp), 4))
        full = max(common.MATRYOSHKA)  # rank of the output is d_model: 256 == 384 here
        print(f"{tag}: {out}  128/full {out[128][0] / out[full][0]:.4f}", flush=True)

    score(m, "as trained")
    if args.n == 0:
        return

    texts = common.read_corpus()[: args.n]
    with torch.no_grad():
        m.eval()
        raw = np.concatenate([m(common.pad_batch(tok.encode_batch(texts[i: i + 256]))).double().numpy()
                              for i in range(0, len(texts), 256)])

    def variant(mu, R, tag):
        m2 = with_emb_quant(base, args.quant)
        with torch.no_grad():
            Rt = torch.from_numpy(R.T.astype(np.float32))
            m2.projection.weight.copy_(Rt @ m.projection.weight)
            m2.projection.bias.copy_(Rt @ (m.projection.bias - torch.from_numpy(mu.astype(np.float32))))
        score(m2, tag)

    def axes(C):
        _, V = np.linalg.eigh(C)
        return V[:, ::-1].copy()

    Xn = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    zero = np.zeros(raw.shape[1])
    variant(zero, axes(np.cov(Xn, rowvar=False)), "rotation: PCA of outputs (centered)")
    variant(zero, axes(Xn.T @ Xn / len(Xn)), "rotation: PCA of outputs (uncentered)")
    for frac in (0.5, 1.0):
        mu = raw.mean(0) * frac
        variant(mu, np.eye(raw.shape[1]), f"bias centring {frac}")
        variant(mu, axes(np.cov(raw - mu, rowvar=False)), f"bias centring {frac} + PCA rotation")


if __name__ == "__main__":
    main()
