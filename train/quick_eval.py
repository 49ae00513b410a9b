#!/usr/bin/env python3
"""nDCG@10 of runs on the held-out retrieval set, as `eval.py` scores them (same data, same
embedding quantisation), without rewriting RESULTS.md: for comparing runs while training.

  train/.venv/bin/python train/quick_eval.py static_v2 static_v3 [--quant int4]
  LE_LANG=tr train/.venv/bin/python train/quick_eval.py static --dev   # the dev split (tuning)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eval as ev  # noqa: E402
from common import Tok, student_encode  # noqa: E402

import numpy as np  # noqa: E402


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quant = sys.argv[sys.argv.index("--quant") + 1] if "--quant" in sys.argv else "int4"
    args = [a for a in args if a != quant and a != "--dev"]
    dev = "--dev" in sys.argv
    ret = json.load(open(os.path.join(ev.EV, "retrieval_dev.json" if dev else "retrieval.json")))
    if dev:  # the teacher as eval.py scores it, on the dev split
        t = ev.common.load_teacher()
        tq = ev.cached("teacher_q_dev", lambda: t.encode(ret["queries"], normalize_embeddings=True))
        td = ev.cached("teacher_d_dev", lambda: getattr(t, "encode_docs", t.encode)(ret["docs"], normalize_embeddings=True))
    else:
        tq = ev.cached("teacher_q", None)
        td = ev.cached("teacher_d", None)
    tn, _ = ev.ndcg_mrr(tq, td, ret["qrels"])
    print(f"teacher nDCG@10 {tn:.4f}")
    tok = Tok()
    for run in args:
        m = ev.with_emb_quant(ev.load_student(run), quant)
        Q = student_encode(m, tok, ret["queries"])
        D = student_encode(m, tok, ret["docs"])
        out = []
        for d in (128, 384):
            nrm = lambda X: X[:, :d] / np.linalg.norm(X[:, :d], axis=1, keepdims=True)
            n, _ = ev.ndcg_mrr(nrm(Q), nrm(D), ret["qrels"])
            out.append(f"@{d} {n:.4f} ({100 * n / tn:.1f}% of teacher)")
        print(run, quant, " ".join(out), flush=True)


if __name__ == "__main__":
    main()
