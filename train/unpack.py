#!/usr/bin/env python3
"""Unpack a shipped static model (`.bin`, read with the normative reference/forward.py) into a
training run's `student.npz`, so `train_student.py --init-from NAME` continues from exactly the
shipped weights (embedding table dequantised as the engine sees it, final LayerNorm, projection)
on a machine where the run that produced it is gone (train/runs is not in git).

  train/.venv/bin/python train/unpack.py public/models/lightembed-en-static.bin --name static_v2
  train/.venv/bin/python train/unpack.py MODEL.bin --vocab-out VOCAB.txt   # only its vocabulary

`--vocab-out` writes the file's WordPiece vocabulary (spec §5), one token per line in id order, and
nothing else: a retrain that must keep a shipped model's token ids reads it from the file.

The students are trained in a rotated teacher frame (train/data/pca.npy, leading dims carrying the
most variance: the Matryoshka order). That file is not in git, and recomputing it from a corpus
extracted on another day gives another rotation, in which the shipped weights are nonsense. So this
also fits the frame to the shipped model (`--frame-texts`, default 20,000): the orthogonal
Procrustes rotation R minimising ‖T·R − Y‖ between the teacher vectors T of the first corpus texts
and the shipped model's vectors Y (reference forward pass) of the same texts, written to
train/data/pca.npy when that file is absent.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
from common import DATA, RUNS, read_corpus  # noqa: E402
import forward  # noqa: E402

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--name", help="the run folder to write (required without --vocab-out)")
    ap.add_argument("--frame-texts", type=int, default=20000)
    ap.add_argument("--vocab-out", metavar="FILE", help="write only the vocabulary, one token per line")
    args = ap.parse_args()
    if not args.name and not args.vocab_out:
        ap.error("give --name RUN (unpack the weights) or --vocab-out FILE (the vocabulary only)")
    m = forward.load(open(args.model, "rb").read())
    if args.vocab_out:
        with open(args.vocab_out, "w", encoding="utf-8") as f:
            f.writelines(t + "\n" for t in m.vocab)
        print(f"{args.model} → {args.vocab_out} ({len(m.vocab)} tokens)")
        return
    if m.header.n_layers != 0:
        sys.exit(f"{args.model}: {m.header.n_layers} layers; only static models are unpacked")
    out = os.path.join(RUNS, args.name)
    os.makedirs(out, exist_ok=True)
    np.savez(os.path.join(out, "student.npz"),
             embedding=m.embedding.astype(np.float32),
             **{"final_ln.weight": m.final_ln_weight, "final_ln.bias": m.final_ln_bias,
                "projection.weight": m.projection_weight, "projection.bias": m.projection_bias})
    json.dump({"layers": 0, "emb_quant": "none", "unpacked_from": os.path.basename(args.model),
               "sha256": m.sha256}, open(os.path.join(out, "meta.json"), "w"))
    print(f"{args.model} → {out}/student.npz (vocab {m.embedding.shape[0]}, d_model {m.embedding.shape[1]})")
    pca = os.path.join(DATA, "pca.npy")
    if os.path.exists(pca):
        print(f"{pca} exists: frame kept")
        return
    import glob
    n = args.frame_texts
    shards = sorted(glob.glob(os.path.join(DATA, "teacher", "shard_*.npy")))
    T = np.concatenate([np.load(p).astype(np.float64) for p in shards])[:n]
    texts = read_corpus()[: len(T)]
    Y = forward.embed_batch(m, texts).astype(np.float64)
    U, _, Vt = np.linalg.svd(T.T @ Y)
    R = U @ Vt
    cos = ((T @ R) * Y).sum(1) / (np.linalg.norm(T @ R, axis=1) * np.linalg.norm(Y, axis=1))
    np.save(pca, R)
    print(f"frame fitted on {len(T)} texts → {pca}: mean cos(T·R, shipped) {cos.mean():.4f}")


if __name__ == "__main__":
    main()
