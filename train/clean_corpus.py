#!/usr/bin/env python3
"""Drop held-out text from an existing training corpus and its teacher shards, keeping the two
aligned (issue 14, found 2026-11-30): corpora extracted before `extract_corpus.py` skipped the
manual pages of held-out sources (`git*`, the Git documentation; `valgrind*`, the Valgrind manual)
hold some of their lines among the `manpages` rows.

  train/.venv/bin/python train/clean_corpus.py [--dry-run]

Rewrites train/data/corpus.tsv without those rows and train/data/teacher/shard_*.npy without their
vectors (shards follow `common.read_corpus()` order, 5,000 rows each), and removes the topic-cluster
caches (keyed by the corpus length). Runs trained on the old corpus are not changed: retrain them.
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA  # noqa: E402
import extract_corpus  # noqa: E402

import numpy as np  # noqa: E402

SHARD = 5000
MAX_WORDS = 48  # common.read_corpus()'s filter: only these lines have teacher vectors


def main():
    dry = "--dry-run" in sys.argv
    path = os.path.join(DATA, "corpus.tsv")
    rows = [l.rstrip("\n").split("\t", 1) for l in open(path, encoding="utf-8")]
    held = extract_corpus.held_out_manpage_lines()
    drop = [src.startswith("manpages") and t.lower() in held for src, t in rows]
    in_shards = [len(t.split()) <= MAX_WORDS for _, t in rows]
    shard_paths = sorted(glob.glob(os.path.join(DATA, "teacher", "shard_*.npy")))
    T = np.concatenate([np.load(p) for p in shard_paths])
    n_filtered = sum(in_shards)
    print(f"{len(rows)} lines, {sum(drop)} from held-out manual pages; {n_filtered} lines ≤ {MAX_WORDS} "
          f"words, {len(T)} teacher vectors")
    if len(T) != n_filtered:
        sys.exit("teacher shards do not cover the corpus exactly: run embed_teacher.py first")
    if dry or not any(drop):
        return
    keep_vec = [not d for d, s in zip(drop, in_shards) if s]
    T = T[np.array(keep_vec)]
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        for (src, t), d in zip(rows, drop):
            if not d:
                f.write(f"{src}\t{t}\n")
    for p in shard_paths:
        os.remove(p)
    for s in range(0, len(T), SHARD):
        np.save(os.path.join(DATA, "teacher", f"shard_{s // SHARD:04d}.npy"), T[s:s + SHARD])
    os.replace(path + ".tmp", path)
    for p in glob.glob(os.path.join(DATA, "clusters_*.npy")):
        os.remove(p)
    print(f"wrote {len(rows) - sum(drop)} lines and {len(T)} teacher vectors")


if __name__ == "__main__":
    main()
