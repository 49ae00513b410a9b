#!/usr/bin/env python3
"""Score the Turkish general-text dev set (train/data/tr/eval/general_dev.json, written by
extract_corpus_tr_general.py): BM25, the e5 teacher and packed `.bin` models, nDCG@10 / MRR@10
overall and per query kind, every Matryoshka dims for a model. The same scoring as eval.py
(`ndcg_mrr`, `bm25_scores`); a packed model is read with the normative reference reader and forward
pass (reference/forward.py), so its vectors are what users get.

  LE_LANG=tr train/.venv/bin/python train/score_dev_tr.py [--set general_dev] \\
      [--model public/models/lightembed-tr-static.bin ...] [--run RUN ...] [--quant int4] [--no-teacher]

`--run RUN` scores a training run (train/runs/tr/RUN/student.npz, its embedding table quantised as
the packer stores it, `--quant`, like quick_eval.py) with the vocabulary of `common.vocab_path()`.

The teacher's vectors are cached in train/data/tr/eval_cache/teacher_{q,d}_SET_HASH.npy (1,898
texts for general_dev: ~1 min at 46 texts/s on an idle core, 8 min on the shared machine at load 9).
"""
import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
os.environ.setdefault("LE_LANG", "tr")
import common  # noqa: E402
import eval as ev  # noqa: E402
import forward  # noqa: E402

import numpy as np  # noqa: E402


def by_kind(Q, D, ret):
    """`{"all": (nDCG@10, MRR@10), kind: (...), ...}` of unit query vectors Q over doc vectors D."""
    kinds = ret.get("kinds") or ["all"] * len(ret["queries"])
    out = {"all": ev.ndcg_mrr(Q, D, ret["qrels"])}
    for k in sorted(set(kinds)):
        idx = [i for i, x in enumerate(kinds) if x == k]
        out[k] = ev.ndcg_mrr(Q[idx], D, [ret["qrels"][i] for i in idx])
    return out


def bm25_by_kind(ret):
    kinds = ret.get("kinds") or ["all"] * len(ret["queries"])
    out = {"all": ev.bm25_scores(ret)}
    for k in sorted(set(kinds)):
        idx = [i for i, x in enumerate(kinds) if x == k]
        out[k] = ev.bm25_scores({"queries": [ret["queries"][i] for i in idx], "docs": ret["docs"],
                                 "qrels": [ret["qrels"][i] for i in idx]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="general_dev", help="a file train/data/tr/eval/SET.json")
    ap.add_argument("--model", action="append", default=[], help="a packed .bin (repeatable)")
    ap.add_argument("--run", action="append", default=[], help="a run under train/runs/tr (repeatable)")
    ap.add_argument("--quant", default="int4", help="embedding quantisation for --run (as packed)")
    ap.add_argument("--no-teacher", action="store_true")
    args = ap.parse_args()
    ret = json.load(open(os.path.join(ev.EV, args.set + ".json")))
    kinds = ret.get("kinds") or ["all"] * len(ret["queries"])
    counts = {k: kinds.count(k) for k in sorted(set(kinds))}
    print(f"{args.set}: {len(ret['queries'])} queries {counts}, {len(ret['docs'])} docs")
    rows = [("BM25 (rank-bm25 Okapi)", "-", bm25_by_kind(ret))]
    teacher_all = None
    if not args.no_teacher:
        t = common.load_teacher(threads=int(os.environ.get("LE_THREADS", "1")))
        # cache names carry a hash of the set, so a regenerated set is never scored with old vectors
        key = hashlib.sha1(json.dumps(ret, ensure_ascii=False).encode()).hexdigest()[:10]
        tq = ev.cached(f"teacher_q_{args.set}_{key}", lambda: t.encode(ret["queries"], normalize_embeddings=True))
        td = ev.cached(f"teacher_d_{args.set}_{key}", lambda: t.encode_docs(ret["docs"]))
        r = by_kind(tq, td, ret)
        teacher_all = r["all"][0]
        rows.insert(0, (common.PROFILE["teacher_row"], 384, r))
    for path in args.model:
        m = forward.load(open(path, "rb").read())
        Q = forward.embed_batch(m, ret["queries"])
        D = forward.embed_batch(m, ret["docs"])
        for d in common.PREFIXES:
            nrm = lambda X: X[:, :d] / np.linalg.norm(X[:, :d], axis=1, keepdims=True)  # noqa: E731
            rows.append((os.path.basename(path), d, by_kind(nrm(Q), nrm(D), ret)))
    if args.run:
        tok = common.Tok()
        for run in args.run:
            m = ev.with_emb_quant(ev.load_student(run), args.quant)
            Q = common.student_encode(m, tok, ret["queries"])
            D = common.student_encode(m, tok, ret["docs"])
            for d in common.PREFIXES:
                nrm = lambda X: X[:, :d] / np.linalg.norm(X[:, :d], axis=1, keepdims=True)  # noqa: E731
                rows.append((f"run {run} ({args.quant})", d, by_kind(nrm(Q), nrm(D), ret)))
    ks = ["all"] + [k for k in counts if k != "all"]
    print("| model | dims | " + " | ".join(f"nDCG@10 {k}" for k in ks) + " | MRR@10 all | % of teacher (all) |")
    print("|---|---:|" + "---:|" * (len(ks) + 2))
    for name, d, r in rows:
        pct = f"{100 * r['all'][0] / teacher_all:.1f} %" if teacher_all else "-"
        print(f"| {name} | {d} | " + " | ".join(f"{r[k][0]:.4f}" for k in ks) + f" | {r['all'][1]:.4f} | {pct} |")


if __name__ == "__main__":
    main()
