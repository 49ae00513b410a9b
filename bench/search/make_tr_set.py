#!/usr/bin/env python3
"""Builds the Turkish general-text search set from the dev set of issue 34
(train/data/tr/eval/general_dev.json, written by train/extract_corpus_tr_general.py: held-back
documents of speeches, Wikipedia articles and web posts), so that `eval.py --set tr-dev` scores it
through `lightembed index`/`search` — the keyword, vector and hybrid modes a user gets — beside
train/dev_eval.py's figures for the model alone.

Writes bench/search/data/ (not in git; deterministic):
  tr-docs.jsonl   {"id": "d17", "title": "", "url": "", "text": …}   every dev-set document
  tr-dev.jsonl    {"id": "d17", "query": …}                          one line per dev query

Needs: LE_LANG=tr train/pipeline.sh's data step (or train/extract_corpus_tr_general.py).
Usage: python3 bench/search/make_tr_set.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SRC = os.path.join(ROOT, "train", "data", "tr", "eval", "general_dev.json")
OUT = os.path.join(HERE, "data")


def main():
    if not os.path.exists(SRC):
        sys.exit(f"no {SRC}: run `LE_LANG=tr STEPS=data train/pipeline.sh` first")
    dev = json.load(open(SRC, encoding="utf-8"))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "tr-docs.jsonl"), "w", encoding="utf-8") as f:
        for i, text in enumerate(dev["docs"]):
            f.write(json.dumps({"id": f"d{i}", "title": "", "url": "", "text": text}, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "tr-dev.jsonl"), "w", encoding="utf-8") as f:
        for q, d in zip(dev["queries"], dev["qrels"]):
            f.write(json.dumps({"id": f"d{d}", "query": q}, ensure_ascii=False) + "\n")
    print(f"wrote {len(dev['docs'])} documents, {len(dev['queries'])} queries to {OUT}")


if __name__ == "__main__":
    main()
