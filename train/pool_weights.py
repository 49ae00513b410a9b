#!/usr/bin/env python3
"""Experiment (issue 14): would weighting tokens in the mean pool help? A layer could learn to
weight tokens (attention that gives every token the same weighted average); this scores a run's
own final-LayerNorm states pooled with idf^alpha weights (idf from the training corpus, [CLS]/[SEP]
at 0 or at the median weight) on the held-out retrieval set. Nothing shipped uses it.

  train/.venv/bin/python train/pool_weights.py static_v3f
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eval as ev  # noqa: E402
from common import DATA, Tok, pad_batch  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def main():
    tok = Tok()
    texts = [l.rstrip("\n").split("\t", 1)[1] for l in open(os.path.join(DATA, "corpus.tsv"), encoding="utf-8")]
    df = np.zeros(len(tok.vocab), np.int64)
    for i in range(0, len(texts), 20000):
        for s in tok.encode_batch(texts[i:i + 20000]):
            df[np.unique(s)] += 1
    idf = torch.from_numpy(np.log((len(texts) + 1) / (df + 1)).astype(np.float32))
    ret = json.load(open(os.path.join(ev.EV, "retrieval.json")))
    m = ev.with_emb_quant(ev.load_student(sys.argv[1]), "int4")

    @torch.no_grad()
    def encode(txts, alpha, special):
        out = []
        for i in range(0, len(txts), 256):
            ids = pad_batch(tok.encode_batch(txts[i:i + 256]))
            mask = ids != 0
            x = m.embed_rows(ids)
            for layer in m.layers:
                x = layer(x, mask)
            h = m.final_ln(x)
            w = idf[ids] ** alpha
            w[(ids == tok.cls) | (ids == tok.sep)] = special
            w = w * mask
            out.append(F.normalize(m.projection((h * w[..., None]).sum(1) / w.sum(1, keepdim=True)), dim=-1))
        return torch.cat(out).numpy()

    for alpha in (0.0, 0.5, 1.0, 1.5, 2.0):
        for special in ((1.0,) if alpha == 0 else (0.0, float(idf.median()) ** alpha)):
            Q, D = encode(ret["queries"], alpha, special), encode(ret["docs"], alpha, special)
            print(f"idf^{alpha} ([CLS]/[SEP] weight {special:.2f}): nDCG@10 "
                  f"{ev.ndcg_mrr(Q, D, ret['qrels'])[0]:.4f}", flush=True)


if __name__ == "__main__":
    main()
