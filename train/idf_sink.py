#!/usr/bin/env python3
"""Token weights for a static model inside the unchanged format (issue 34, experiment).

A static model pools `LN(E[t])` over tokens (spec §6.1–6.2): the per-token LayerNorm gives every
token a vector of the same norm, so the table cannot weight rare words over common ones by norm
— BM25's strength on out-of-domain text (the dev set's recipes: BM25 0.54, static 0.31–0.34).
This rewrites a trained static model so that token t enters the mean pool with weight w_t ∈ [0, 1]
(idf^alpha from the training corpus, max 1), exactly, with the same file layout:

* the token states z_t = (E_t − mean)/std (256-d, mean 0) are mapped to 253 coordinates c_t = Qᵀz_t
  (Q: the 253 mean-zero directions that the projection W·γ amplifies most);
* the new row is [w_t · B c_t, +b_t, −b_t]: 254 "kept" coordinates (B: an orthonormal basis of the
  mean-zero subspace, so they sum to 0) and two sink coordinates with b_t chosen so the row has
  mean 0 and variance 1 — LayerNorm then leaves it unchanged;
* the new final LayerNorm has γ' = 1 on the kept coordinates and 0 on the sinks, β' = 0; the new
  projection is W' = κ · W γ Q Bᵀ (sink columns 0), bias W β + b (κ = 1 / mean corpus weight, so
  the constant part keeps its share of the pooled vector).

  train/.venv/bin/python train/idf_sink.py RUN|bin:PATH --name OUT [--alpha 1.0] [--special 0.0]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
from common import RUNS, ROOT, Tok, corpus_idf, idf_weights, read_corpus  # noqa: E402

import numpy as np  # noqa: E402


def load(spec):
    if spec.startswith("bin:"):
        import forward
        m = forward.load(open(os.path.join(ROOT, spec[4:]), "rb").read())
        assert m.header.n_layers == 0, "static models only"
        return {"embedding": m.embedding.astype(np.float64), "final_ln.weight": m.final_ln_weight,
                "final_ln.bias": m.final_ln_bias, "projection.weight": m.projection_weight,
                "projection.bias": m.projection_bias}
    z = np.load(os.path.join(RUNS, spec, "student.npz"))
    assert not any(k.startswith("layers.") for k in z), "static models only"
    return {k: z[k].astype(np.float64) for k in z}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("--name", required=True)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--special", type=float, default=0.0, help="weight of [CLS]/[SEP]")
    ap.add_argument("--kappa", type=float, default=None, help="projection scale (default 1/mean weight)")
    ap.add_argument("--sinks", type=int, default=2,
                    help="sink coordinates (even): more spread the sink energy, so int4 rows keep "
                         "finer steps on the kept coordinates, at the cost of kept dimensions")
    ap.add_argument("--weights-from", default=None, metavar="RUN",
                    help="the pooling weights and kappa a run learned (its token_weights.npz) "
                         "instead of idf^alpha; SRC is then that run")
    ap.add_argument("--times-idf", action="store_true",
                    help="with --weights-from: multiply the learned weights by idf^alpha")
    ap.add_argument("--kappa-mult", type=float, default=1.0, help="multiplies the default kappa")
    args = ap.parse_args()
    m = load(args.src)
    E, g, beta = m["embedding"], m["final_ln.weight"], m["final_ln.bias"]
    W, b0 = m["projection.weight"], m["projection.bias"]
    V, d = E.shape
    tok = Tok()
    assert len(tok.vocab) == V, f"vocabulary {len(tok.vocab)} vs table {V}: set LE_VOCAB"
    idf, count = corpus_idf(tok, read_corpus())
    w = idf_weights(tok, idf, args.alpha, args.special)
    learned_kappa = None
    if args.weights_from:
        # weights learned in training (train_student.py --token-weights), with that run's kappa
        tw = np.load(os.path.join(RUNS, args.weights_from, "token_weights.npz"))
        w, learned_kappa = tw["w"].astype(np.float64), float(tw["kappa"])
        assert w.shape == (V,), f"token_weights.npz: {w.shape} for a vocabulary of {V}"
        if args.times_idf:
            w = w * idf_weights(tok, idf, args.alpha, 1.0)
            learned_kappa = None  # 1 / the new mean weight
    # standardised token states (what LayerNorm sees before γ, β)
    Z = E - E.mean(1, keepdims=True)
    Z /= np.sqrt((Z ** 2).mean(1, keepdims=True) + 1e-5)
    # Q: the 253 directions of the mean-zero z-space that the projection amplifies most
    M = W * g[None, :]  # [384, 256]
    wt = count / max(count.sum(), 1)
    P = np.eye(d) - np.ones((d, d)) / d
    ev, U = np.linalg.eigh(P @ M.T @ M @ P)
    ns = args.sinks
    assert ns >= 2 and ns % 2 == 0, "--sinks: an even number ≥ 2"
    k = d - ns  # kept coordinates; they hold k - 1 directions (their mean is 0)
    Q = U[:, ::-1][:, : k - 1]  # orthonormal, orthogonal to the ones vector
    # B: orthonormal basis (k x k-1) of the mean-zero subspace of the k kept coordinates
    Bfull, _ = np.linalg.qr(np.concatenate([np.ones((k, 1)), np.random.RandomState(0).randn(k, k - 1)], 1))
    B = Bfull[:, 1:]
    c = Z @ Q  # [V, k - 1]
    kept = (c @ B.T) * w[:, None]  # [V, k], mean 0 by construction
    ss = (kept ** 2).sum(1)
    over = ss > d * 0.999
    if over.any():
        kept[over] *= np.sqrt(d * 0.999 / ss[over])[:, None]
        ss = (kept ** 2).sum(1)
    bb = np.sqrt((d - ss) / ns)
    sign = np.tile([1.0, -1.0], ns // 2)
    E2 = np.concatenate([kept, bb[:, None] * sign[None, :]], 1)
    g2 = np.concatenate([np.ones(k), np.zeros(ns)])
    be2 = np.zeros(d)
    kappa = args.kappa or learned_kappa or args.kappa_mult / float((w * wt).sum())
    W2 = np.zeros_like(W)
    W2[:, :k] = kappa * (M @ Q @ B.T)
    b2 = W @ beta + b0
    out = os.path.join(RUNS, args.name)
    os.makedirs(out, exist_ok=True)
    np.savez(os.path.join(out, "student.npz"), **{k_: v.astype(np.float32) for k_, v in {
        "embedding": E2, "final_ln.weight": g2, "final_ln.bias": be2,
        "projection.weight": W2, "projection.bias": b2}.items()})
    json.dump({"layers": 0, "emb_quant": "none", "idf_sink": {"src": args.src, "alpha": args.alpha, "sinks": ns,
               "special": args.special, "kappa": kappa,
               "weights_from": args.weights_from}}, open(os.path.join(out, "meta.json"), "w"))
    what = f"weights learned by {args.weights_from}" if args.weights_from else f"weights idf^{args.alpha}"
    print(f"{args.src} → {out}/student.npz: {what} (mean over corpus tokens "
          f"{(w * wt).sum():.3f}), kappa {kappa:.2f}, {int(over.sum())} rows clipped")


if __name__ == "__main__":
    main()
