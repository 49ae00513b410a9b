#!/usr/bin/env python3
"""A smaller WordPiece vocabulary for a size-capped model (seed §9's lever): keep the tokens the
*training* corpus uses most, so an int4 embedding table fits beside the transformer layers.

  LE_VOCAB is unset:  python train/prune_vocab.py --size 19000 --run static_v3f
  → train/data/vocab_19000.txt          (kept tokens in their original order)
    train/runs/static_v3f_v19000/student.npz  (that run with the kept embedding rows)
  then train and pack with LE_VOCAB=train/data/vocab_19000.txt (common.vocab_path()).

Kept: the special tokens, every single character and `##`+character the corpus uses (so every
word of the corpus still has a segmentation; a word with a dropped token falls back to shorter
kept pieces, as `ModelBuilder::prune` documents), then the most frequent other tokens. Held-out
evaluation text is never read.
"""
import argparse
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import DATA, RUNS  # noqa: E402

import numpy as np  # noqa: E402

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True, help="tokens to keep, specials included")
    ap.add_argument("--run", default=None, help="also write RUN_v<size> with the kept embedding rows")
    args = ap.parse_args()
    assert "LE_VOCAB" not in os.environ, "prune from the full vocabulary (unset LE_VOCAB)"
    tok, vocab = common.make_tokenizer()
    inv = {i: t for t, i in vocab.items()}
    texts = common.read_corpus()
    counts = collections.Counter()
    for i in range(0, len(texts), 4096):
        for e in tok.encode_batch(texts[i:i + 4096], add_special_tokens=False):
            counts.update(e.ids)
    chars = {i for i in counts if len(inv[i]) == 1 or (inv[i].startswith("##") and len(inv[i]) == 3)}
    keep = {vocab[t] for t in SPECIAL} | chars
    for i, _ in counts.most_common():
        if len(keep) >= args.size:
            break
        keep.add(i)
    kept = sorted(keep)
    covered = sum(counts[i] for i in kept) / sum(counts.values())
    print(f"{len(texts)} corpus texts, {len(counts)} distinct tokens used; kept {len(kept)} "
          f"({len(chars)} single characters); they cover {100 * covered:.2f} % of the corpus's token "
          f"occurrences with the full vocabulary")
    out = os.path.join(DATA, f"vocab_{args.size}.txt")
    with open(out, "w", encoding="utf-8") as f:
        for i in kept:
            f.write(inv[i] + "\n")
    np.save(os.path.join(DATA, f"vocab_{args.size}_ids.npy"), np.asarray(kept, dtype=np.int64))
    print("wrote", out)
    if args.run:
        src = os.path.join(RUNS, args.run)
        dst = os.path.join(RUNS, f"{args.run}_v{args.size}")
        os.makedirs(dst, exist_ok=True)
        z = dict(np.load(os.path.join(src, "student.npz")))
        z["embedding"] = z["embedding"][kept]
        np.savez(os.path.join(dst, "student.npz"), **z)
        if os.path.exists(os.path.join(src, "meta.json")):
            shutil.copy(os.path.join(src, "meta.json"), dst)
        print("wrote", dst)


if __name__ == "__main__":
    main()
