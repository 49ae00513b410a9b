"""Rotate a trained student's output frame so its Matryoshka prefixes carry the most energy.

Training targets the PCA frame of the *teacher* (train_student.py).  After training, the student's
own outputs are not exactly aligned with that frame: this script computes the second-moment matrix
(uncentered) of the student's L2-normalised outputs on the first N training texts — embedding table
quantised as it will be packed — and rotates the fp32 projection by its eigenvectors (descending
eigenvalue, deterministic signs):

    W' = Rᵀ W,  b' = Rᵀ b      (R orthogonal, 384 × 384)

A rotation leaves every full-dim cosine unchanged (so full-dim nDCG, Spearman and parity are
unchanged); only truncated prefixes change (spec §6.4).  The result is a new run directory whose
student.npz eval.py and ship.py use like any other run.  Measured effect: train/README.md.

    train/.venv/bin/python train/rotate_frame.py --run 2l_d --quant ternary --out 2l_d_rot
"""
import argparse
import json
import os

import numpy as np
import torch

import common
from common import RUNS
from eval import Tok, load_student, with_emb_quant


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True, help="run directory under train/runs with student.npz")
    ap.add_argument("--quant", required=True, choices=["fp32", "int8", "int4", "ternary"],
                    help="embedding quantisation the model will be packed with")
    ap.add_argument("--out", required=True, help="new run directory name")
    ap.add_argument("--n", type=int, default=30000, help="training texts for the second-moment matrix")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("LE_THREADS", "1")))

    src = np.load(os.path.join(RUNS, args.run, "student.npz"))
    m = with_emb_quant(load_student(args.run), args.quant)
    tok = Tok()
    texts = common.read_corpus()[: args.n]
    with torch.no_grad():
        X = np.concatenate([m(common.pad_batch(tok.encode_batch(texts[i: i + 256]))).double().numpy()
                            for i in range(0, len(texts), 256)])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w, V = np.linalg.eigh(X.T @ X / len(X))
    R = V[:, ::-1].copy()
    R *= np.sign(R[np.abs(R).argmax(0), range(R.shape[1])])
    assert np.allclose(R.T @ R, np.eye(R.shape[1]), atol=1e-9)

    out = {k: src[k] for k in src.files}
    W = src["projection.weight"].astype(np.float64)
    b = src["projection.bias"].astype(np.float64)
    out["projection.weight"] = (R.T @ W).astype(np.float32)
    out["projection.bias"] = (R.T @ b).astype(np.float32)
    d = os.path.join(RUNS, args.out)
    os.makedirs(d, exist_ok=True)
    np.savez(os.path.join(d, "student.npz"), **out)
    energy = np.cumsum(w[::-1]) / w.sum()
    info = {"from_run": args.run, "quant": args.quant, "n_texts": len(texts),
            "energy_in_prefix": {str(k): round(float(energy[k - 1]), 4) for k in common.MATRYOSHKA}}
    json.dump(info, open(os.path.join(d, "rotation.json"), "w"), indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
