#!/usr/bin/env python3
"""Train the Turkish WordPiece vocabulary (issue 16) with HF `tokenizers`.

  LE_LANG=tr train/.venv/bin/python train/tr_vocab.py [--size 32000]   → train/data/tr/vocab.txt
  LE_LANG=tr train/.venv/bin/python train/tr_vocab.py --text general_vocab_text.txt vocab_text.txt --out vocab_general.txt

Cased (`do_lower_case` 0) and accents kept (`strip_accents` 0), spec §3's Turkish caveat: no
lowercasing anywhere, so `İ`/`I`/`ı`/`i` stay four distinct letters and no U+0307 can appear.
Trained on `train/data/tr/vocab_text.txt` (the training split only, `extract_corpus_tr.py`).
Special tokens take ids 0–4: `[PAD]` `[UNK]` `[CLS]` `[SEP]` `[MASK]` (pad 0, as the trainer assumes).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("LE_LANG", "tr")
from common import DATA, PROFILE  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=32000)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--text", nargs="+", default=["vocab_text.txt"],
                    help="training text files in the data folder (issue 34: general_vocab_text.txt too)")
    ap.add_argument("--out", default="vocab.txt", help="file name in the data folder")
    args = ap.parse_args()
    out = os.path.join(DATA, args.out)
    if os.path.exists(out) and not args.force:
        print(f"{out} exists; skip (use --force)")
        return
    from tokenizers import BertWordPieceTokenizer
    tok = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True,
                                 strip_accents=PROFILE["strip_accents"], lowercase=PROFILE["lower"])
    tok.train([os.path.join(DATA, t) for t in args.text], vocab_size=args.size, min_frequency=2,
              special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], limit_alphabet=1000,
              wordpieces_prefix="##", show_progress=False)
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    assert [t for t, _ in vocab[:5]] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], vocab[:5]
    assert all(len(t.encode()) <= 255 for t, _ in vocab), "spec §5.1: an entry is at most 255 bytes"
    with open(out, "w", encoding="utf-8") as f:
        for t, _ in vocab:
            f.write(t + "\n")
    print(f"wrote {len(vocab)} tokens to {out}")


if __name__ == "__main__":
    main()
