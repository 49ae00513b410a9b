#!/usr/bin/env python3
"""Give a shipped model a new identity without touching its weights: header `model_id`
(offset 48, 16 bytes NUL-padded) and version (offsets 44–47), then the SHA-256 trailer again.
The result is checked with the normative reference/forward.py (it must load, and embed exactly as
the input does: same weights, same math).

Used when a model keeps its weights but must no longer be mistaken for another (spec §8 compares
`model_id` first): bump the major version with it, since indexes built under the old identity are
refused by the new one anyway.

  train/.venv/bin/python train/reidentify.py public/models/lightembed-en-2l.bin \\
      --model-id lightembed-en-2l --version 4.0.0 --out public/models/lightembed-en-2l.bin
"""
import argparse
import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import forward  # noqa: E402

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--model-id", required=True)
    ap.add_argument("--version", required=True, help="MAJOR.MINOR.PATCH")
    ap.add_argument("--max-seq-len", type=int, default=None,
                    help="also set the window (header offset 20; e.g. for a static model, which "
                         "has no position table)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    data = bytearray(open(args.model, "rb").read())
    before = forward.load(bytes(data))
    mid = args.model_id.encode("utf-8")
    if not 0 < len(mid) <= 16 or b"\0" in mid:
        sys.exit(f"model_id {args.model_id!r}: 1–16 bytes of UTF-8 without NUL (spec §3)")
    major, minor, patch = (int(x) for x in args.version.split("."))
    struct.pack_into("<BBH", data, 44, major, minor, patch)
    data[48:64] = mid.ljust(16, b"\0")
    if args.max_seq_len is not None:
        struct.pack_into("<H", data, 20, args.max_seq_len)
    data[-32:] = hashlib.sha256(bytes(data[:-32])).digest()
    after = forward.load(bytes(data))
    texts = ["a quick check", "the same weights embed the same vectors", "ownership and borrowing"]
    a, b = forward.embed_batch(before, texts), forward.embed_batch(after, texts)
    assert np.array_equal(a, b), "weights changed (or a test text is longer than the old window)"
    open(args.out, "wb").write(bytes(data))
    print(f"{args.out}: {after.header.model_id} v{major}.{minor}.{patch}, sha256 {after.sha256}")


if __name__ == "__main__":
    main()
