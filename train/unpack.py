#!/usr/bin/env python3
"""Unpack a shipped static model (`.bin`, read with the normative reference/forward.py) into a
training run's `student.npz`, so `train_student.py --init-from NAME` continues from exactly the
shipped weights (embedding table dequantised as the engine sees it, final LayerNorm, projection)
on a machine where the run that produced it is gone (train/runs is not in git).

  train/.venv/bin/python train/unpack.py public/models/lightembed-en-static.bin --name static_v2
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
from common import RUNS  # noqa: E402
import forward  # noqa: E402

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--name", required=True)
    args = ap.parse_args()
    m = forward.load(open(args.model, "rb").read())
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


if __name__ == "__main__":
    main()
