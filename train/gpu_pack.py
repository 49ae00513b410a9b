#!/usr/bin/env python3
"""Pack what `gpu_distill.py` needs into one folder small enough to travel to a GPU machine that
has PyTorch but no network and no copy of this repository's ignored data (issue 14).

  LE_VOCAB=train/data/vocab_19000_v6.txt train/.venv/bin/python train/gpu_pack.py \
      --pca train/data/pca_v2frame.npy [--init 2l_v19k_b] [--out gpu_pack]

Writes (about 35 MB; the folder is git-ignored):
  teacher.npz      all-MiniLM-L6-v2 with its large matrices as int8 (absmax per output row) and
                   the rest as fp16, rows of the word table that no corpus or eval text
                   reaches zeroed — about a quarter of model.safetensors
  config.json, tokenizer.json   the teacher's (BERT config; WordPiece, truncation 128)
  init.npz         the starting student (a run's student.npz; int4 table codes, the rest fp32)
  corpus.tsv.xz    train/data/corpus.tsv
  vocab.txt        the student's vocabulary (LE_VOCAB or the teacher's)
  pca.npy          the training frame of the --init run (--pca; train/data/pca.npy by default —
                   the v6 runs' frame is pca_v2frame.npy since static v4 got a fresh one)
  retrieval.json   the held-out retrieval set, to report nDCG@10 there
"""
import argparse
import json
import lzma
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from gpu_distill import absmax_rows, pack_student  # noqa: E402

import numpy as np  # noqa: E402

INT8_MIN_SIZE = 100_000  # matrices at least this large are stored as int8 rows


def used_teacher_tokens(texts):
    """Which rows of the teacher's word-embedding table the teacher's tokenizer reaches on `texts`
    (training spans and concatenations are made of corpus words, so they reach no others)."""
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(common.teacher_dir(), "tokenizer.json"))
    used = np.zeros(tok.get_vocab_size(), bool)
    for i in range(0, len(texts), 20000):
        for e in tok.encode_batch(texts[i:i + 20000]):
            used[e.ids] = True
    return used


def quantize_teacher(src, dst, used):
    """int8 rows for the large matrices, fp16 for the rest; word-embedding rows the texts never
    reach are zeroed (they compress to nothing)."""
    from safetensors.numpy import load_file
    z = load_file(src)
    out = {}
    for k, v in z.items():
        if k == "embeddings.word_embeddings.weight":
            v = np.where(used[:, None], v, 0.0).astype(np.float32)
        if k.endswith("position_ids") or k.startswith("pooler."):
            continue
        if v.ndim == 2 and v.size >= INT8_MIN_SIZE:
            out[k + "::q"], out[k + "::s"] = absmax_rows(np.asarray(v, dtype=np.float32), 127)
        else:
            out[k] = v.astype(np.float16)
    np.savez_compressed(dst, **out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", default="2l_v19k_b", help="run whose student.npz the GPU run starts from")
    ap.add_argument("--out", default=os.path.join(common.ROOT, "gpu_pack"))
    ap.add_argument("--pca", default=os.path.join(common.DATA, "pca.npy"),
                    help="the training frame the --init run was trained in")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tdir = common.teacher_dir()
    with open(os.path.join(common.DATA, "corpus.tsv"), "rb") as f:
        data = f.read()
    ret = json.load(open(os.path.join(common.DATA, "eval", "retrieval.json")))
    texts = [l.split("\t", 1)[1] for l in data.decode("utf-8").splitlines()] + ret["queries"] + ret["docs"]
    used = used_teacher_tokens(texts)
    print(f"teacher word rows reached: {used.sum()} of {len(used)}")
    quantize_teacher(os.path.join(tdir, "model.safetensors"), os.path.join(args.out, "teacher.npz"), used)
    for f in ("config.json", "tokenizer.json"):
        shutil.copy(os.path.join(tdir, f), os.path.join(args.out, f))
    z = np.load(os.path.join(common.RUNS, args.init, "student.npz"))
    np.savez_compressed(os.path.join(args.out, "init.npz"), **pack_student(z))
    with lzma.open(os.path.join(args.out, "corpus.tsv.xz"), "wb", preset=6) as f:
        f.write(data)
    shutil.copy(common.vocab_path(), os.path.join(args.out, "vocab.txt"))
    shutil.copy(args.pca, os.path.join(args.out, "pca.npy"))
    shutil.copy(os.path.join(common.DATA, "eval", "retrieval.json"), os.path.join(args.out, "retrieval.json"))
    total = 0
    for f in sorted(os.listdir(args.out)):
        n = os.path.getsize(os.path.join(args.out, f))
        total += n
        print(f"{f:16s} {n / 1e6:7.2f} MB")
    print(f"{'total':16s} {total / 1e6:7.2f} MB ({total / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
