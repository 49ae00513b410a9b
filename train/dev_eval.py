#!/usr/bin/env python3
"""nDCG@10 / MRR@10 on a dev retrieval set (issue 34), at every Matryoshka dims and per part:
the teacher, BM25, training runs (embedding table quantised as packed) and shipped files (read
with the normative reference/forward.py, exactly the packed weights). For choosing between runs;
`eval.py` stays the held-out report.

  train/.venv/bin/python train/dev_eval.py [--set eval/dev_general.json] [--quant int4] \
      [--no-bm25] [--no-teacher] [--json OUT.json] RUN|bin:PATH ...
  LE_LANG=tr train/.venv/bin/python train/dev_eval.py --set eval/general_dev.json static2

The set is read from the language's data folder (`train/data/` or `train/data/tr/`); a `part`
list in it (one label per query) gives a row per part as well as the whole. The teacher's vectors
are cached in data/eval_cache/ under the set's file name and a hash of its content (`passage: ` side for the docs of an
asymmetric teacher, as eval.py scores it).
"""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import eval as ev  # noqa: E402
from common import DATA, PREFIXES, ROOT, Tok, student_encode  # noqa: E402
from ranking import rank_metrics  # noqa: E402

import numpy as np  # noqa: E402


def norm(X, d):
    return X[:, :d] / np.linalg.norm(X[:, :d], axis=1, keepdims=True)


def ndcg_parts(Q, D, ret, dims):
    """{part: (nDCG@10, MRR@10)} at `dims`, parts = 'all' and each label of ret['part']."""
    qrels = np.array(ret["qrels"])
    S = norm(Q, dims) @ norm(D, dims).T
    return per_part(S, qrels, ret)


def per_part(S, qrels, ret):
    nd, mr = rank_metrics(S, qrels)  # ties (BM25's many equal scores) as a random order
    labels = np.array(ret.get("part") or ret.get("kinds") or ["all"] * len(qrels))
    out = {"all": (float(nd.mean()), float(mr.mean()))}
    for p in sorted(set(labels)):
        if p != "all" and len(set(labels)) > 1:
            m = labels == p
            out[p] = (float(nd[m].mean()), float(mr[m].mean()))
    return out


def bm25(ret):
    from rank_bm25 import BM25Okapi
    bm = BM25Okapi([ev.words(d) for d in ret["docs"]])
    S = np.stack([bm.get_scores(ev.words(q)) for q in ret["queries"]])
    return per_part(S, np.array(ret["qrels"]), ret)


def vectors(spec, ret, quant, tok):
    if spec.startswith("bin:"):
        import forward
        m = forward.load(open(os.path.join(ROOT, spec[4:]), "rb").read())
        return forward.embed_batch(m, ret["queries"]), forward.embed_batch(m, ret["docs"])
    m = ev.with_emb_quant(ev.load_student(spec), quant)
    return student_encode(m, tok, ret["queries"]), student_encode(m, tok, ret["docs"])


def main():
    argv = sys.argv[1:]

    def opt(name, default):
        if name in argv:
            i = argv.index(name)
            v = argv[i + 1]
            del argv[i:i + 2]
            return v
        return default

    set_path = opt("--set", "eval/dev_general.json")
    quant = opt("--quant", "int4")
    out_json = opt("--json", None)
    no_bm25 = "--no-bm25" in argv
    runs = [a for a in argv if not a.startswith("--")]
    ret = json.load(open(os.path.join(DATA, set_path)))
    # cache names carry a hash of the set (a regenerated set is never scored with old vectors)
    key = os.path.splitext(os.path.basename(set_path))[0] + "_" + hashlib.sha1(
        json.dumps(ret, ensure_ascii=False).encode()).hexdigest()[:10]
    t = None

    def teacher():
        nonlocal t
        t = t or ev.common.load_teacher()
        return t

    rows = {}
    if "--no-teacher" not in argv:  # (then percentages are of the first row's 384-d figure)
        tq = ev.cached(f"teacher_q_{key}", lambda: teacher().encode(ret["queries"], normalize_embeddings=True))
        td = ev.cached(f"teacher_d_{key}", lambda: getattr(teacher(), "encode_docs", teacher().encode)(
            ret["docs"], normalize_embeddings=True))
        rows["teacher"] = {384: ndcg_parts(tq, td, ret, 384)}
    if not no_bm25:
        rows["BM25"] = {"-": bm25(ret)}
    tok = Tok() if any(not r.startswith("bin:") for r in runs) else None
    for r in runs:
        Q, D = vectors(r, ret, quant, tok)
        rows[r] = {d: ndcg_parts(Q, D, ret, d) for d in PREFIXES}
    first = next(iter(rows.values()))
    t_all = first.get(384, first.get("-"))
    parts = list(t_all)
    print(f"{set_path}: {len(ret['queries'])} queries, {len(ret['docs'])} docs; nDCG@10 (% of the first row's at 384)")
    print("| model | dims | " + " | ".join(parts) + " |")
    print("|---|---:|" + "---:|" * len(parts))
    for name, by_d in rows.items():
        for d, res in by_d.items():
            cells = [f"{res[p][0]:.4f} ({100 * res[p][0] / t_all[p][0]:.1f}%)" for p in parts]
            print(f"| {name} | {d} | " + " | ".join(cells) + " |", flush=True)
    if out_json:
        json.dump({"set": set_path, "quant": quant, "rows": {n: {str(d): v for d, v in r.items()}
                                                             for n, r in rows.items()}},
                  open(out_json, "w"), indent=1)


if __name__ == "__main__":
    main()
