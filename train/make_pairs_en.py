#!/usr/bin/env python3
"""Natural English pairs for the contrastive term (issue 34; `train_student.py --pairs`), from
the sources the corpus already reads (never the held-out descriptions, gensim, git/Valgrind, nor
the dev set's perlfaq and recipes):

* wordnet: a synset's words ("car, auto, automobile") → its definition; each example sentence of
  the synset → "word: definition"
* gcide: a headword → its first definition
* paragraphs: a sentence of a corpus paragraph line → the rest of that paragraph

Writes train/data/pairs_en.tsv (query TAB positive), shuffled (seed 0); lines that occur in the
held-out package descriptions are dropped.

  train/.venv/bin/python train/make_pairs_en.py
"""
import gzip
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extract_corpus as ec  # noqa: E402
from common import DATA  # noqa: E402

OUT = os.path.join(DATA, "pairs_en.tsv")


def wordnet():
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        for line in open(f"/usr/share/wordnet/data.{pos}", encoding="utf-8", errors="replace"):
            if line.startswith("  ") or "|" not in line:
                continue
            head, gloss = line.split("|", 1)
            f = head.split()
            n = int(f[3], 16)
            lemmas = [re.sub(r"\(.*\)$", "", w).replace("_", " ") for w in f[4:4 + 2 * n:2]]
            parts = [p.strip() for p in gloss.strip().split(";")]
            defs = [p for p in parts if not p.startswith('"')]
            exs = [p.strip('"').strip() for p in parts if p.startswith('"')]
            if not defs or len(defs[0].split()) < 3:
                continue
            out.append((", ".join(lemmas[:4]), defs[0]))
            for e in exs[:2]:
                if len(e.split()) >= 4:
                    out.append((e, f"{lemmas[0]}: {defs[0]}"))
    return out


def gcide():
    out = []
    raw = gzip.open("/usr/share/dictd/gcide.dict.dz", "rt", encoding="utf-8", errors="replace").read()
    for entry in raw.split("\n\n"):
        lines = entry.split("\n")
        m = re.match(r"^([A-Z][\w' -]{1,40}?) \\", lines[0])
        if not m or len(lines) < 2:
            continue
        body = " ".join(l.strip() for l in lines[1:] if not l.startswith("   ["))
        if "[" in lines[0] and "]" not in lines[0]:
            body = body.split("]", 1)[-1]  # the etymology that the headword line opened
        body = re.sub(r"\[[^\]]*\]|\{|\}|--[A-Z][\w.]*", " ", body)
        body = re.sub(r"^\s*(\d+\.\s*)?(\([^)]*\)\s*)*", "", body)
        sent = ec.SENT_SPLIT.split(ec.clean(body))[0] if body.strip() else ""
        if ec.good(sent, 4, 40):
            out.append((m.group(1), sent))
    return out


def paragraphs():
    """Sentence → the rest of its paragraph, for corpus lines that are paragraphs."""
    out = []
    for line in open(os.path.join(DATA, "corpus.tsv"), encoding="utf-8"):
        src, t = line.rstrip("\n").split("\t", 1)
        s = [x for x in ec.SENT_SPLIT.split(t) if ec.good(x)]
        if len(s) < 3:
            continue
        i = random.Random(t).randrange(len(s))
        out.append((s[i], " ".join(s[:i] + s[i + 1:])))
    return out


def main():
    reserved = ec.reserved_eval_lines()
    rows = []
    for name, fn in (("wordnet", wordnet), ("gcide", gcide), ("paragraphs", paragraphs)):
        got = [(a.replace("\t", " "), b.replace("\t", " ")) for a, b in fn()
               if a.lower() not in reserved and b.lower() not in reserved
               and not re.search(r"[\[\]{}]", a + b)]  # dictionary markup the parse left
        print(f"{name}: {len(got)} pairs")
        rows += got
    random.Random(0).shuffle(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for a, b in rows:
            f.write(f"{a}\t{b}\n")
    print(f"wrote {len(rows)} pairs to {OUT}")


if __name__ == "__main__":
    main()
