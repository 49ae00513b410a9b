#!/usr/bin/env python3
"""Exports a running (or stopped) run's latest checkpoint as a run of its own, so `quick_eval.py`
and `ship.py` can use it while the trainer goes on: `runs/RUN/ckpt.pt` → `runs/OUT/student.npz`
(+ `meta.json`, copied from RUN). Reads the checkpoint only; the trainer is not disturbed.

  LE_VOCAB=train/data/vocab_19000.txt train/.venv/bin/python train/snapshot.py 2l_v19k_c 2l_v19k_c_snap
  LE_VOCAB=train/data/vocab_19000.txt train/.venv/bin/python train/quick_eval.py 2l_v19k_c_snap
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from common import RUNS, Student, Tok  # noqa: E402


def run_meta(src):
    """`meta.json` of a run; for a run still training (the trainer writes it at the end), the
    same fields from its log's first `steps …, layers N, emb_quant Q, …` line."""
    path = os.path.join(src, "meta.json")
    if os.path.exists(path):
        return json.load(open(path))
    m = re.search(r"layers (\d+), emb_quant (\w+)", open(os.path.join(src, "log")).read())
    return {"layers": int(m.group(1)), "emb_quant": m.group(2)} if m else None


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    run, out = sys.argv[1], sys.argv[2]
    src = os.path.join(RUNS, run)
    ckpt_path = os.path.join(src, "ckpt.pt")
    if not os.path.exists(ckpt_path):
        print(f"snapshot: {src} has no ckpt.pt (not a started run?)", file=sys.stderr)
        return 1
    meta = run_meta(src)
    if meta is None:
        print(f"snapshot: {src} has no meta.json and its log names no emb_quant", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    state = torch.load(ckpt_path, weights_only=False, map_location="cpu")
    model = Student(len(Tok().vocab), n_layers=meta["layers"])
    model.load_state_dict(state["model"])
    dst = os.path.join(RUNS, out)
    os.makedirs(dst, exist_ok=True)
    model.export_npz(os.path.join(dst, "student.npz"))
    json.dump(dict(meta, snapshot_of=run, step=state["step"]), open(os.path.join(dst, "meta.json"), "w"))
    print(f"{run} step {state['step']} → {dst}/student.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
