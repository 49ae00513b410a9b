#!/usr/bin/env python3
"""Writes a question set with exactly one typo per question: the same questions, one word of each
misspelt once, to measure search with the mistakes people type.

Reads a question set (jsonl: bench/search/questions/*.jsonl, or make_git_set.py's
bench/search/data/git.jsonl) and writes each line with its "query" changed and every other field
kept, plus "typo": {"word": …, "as": …, "kind": …} ("word" as it was in the query, "as" what it
became). Deterministic: each question's typo is drawn from a generator seeded with the seed and
the query's text (default seed 30; `--seed N`), so it does not depend on the other questions.

The typo, in this order of draws:
  1. the kind, uniformly: "swap" (two adjacent letters swapped: ownership → ownesrhip), "drop"
     (a letter left out: ownrship), "double" (a letter typed twice: ownnership), "wrong" (a letter
     replaced by a neighbouring key on a US QWERTY keyboard — the keys either side in its row and
     the two it touches in the rows above and below, e.g. s → a d w e z x: ownerdhip);
  2. the word, uniformly among the eligible words (below);
  3. the position, uniformly. The first letter is never touched (in every kind): people rarely
     get a word's first letter wrong, and a prefix search would otherwise fail for the wrong
     reason. The letter typed instead or twice keeps the case of the one it replaces.
Eligible words: a token (split on whitespace, sentence punctuation ,.;:!?'"() stripped from both
ends, a trailing 's dropped) of only ASCII letters, at least 4 of them, and not an identifier
written in camel case (a capital after the first letter: RefCell, basicConfig). Code-ish tokens
(Rc<T>, borrow_mut, json.dumps, thread::spawn, panic!, camel case) are left alone while the query
has any eligible plain word: they are the part a user copies rather than types. Only when a query
has no eligible plain word ("os.path.join", "RefCell borrow_mut") is the typo put in an alphabetic
run of ≥ 4 letters inside a code-ish token (join, RefCell, borrow) — code is mistyped too; and
when it has none of those either ("re.sub", "if let"), in its longest run of ≥ 3 letters. A query
without even that would be copied unchanged with "typo": null (none of the committed sets has one).

Not another word: the misspelling must not be a word of the corpus the questions are asked of
(the site's text: every alphabetic run of its HTML pages, tags, scripts and styles removed,
lower-cased), else the question would be correctly spelt for a different meaning ("form" → "from").
When a drawn kind has no such spelling for the drawn word, the other positions, then the other
kinds, then the other words are tried (in the generator's order); only when every spelling of every
eligible word is a corpus word is one of those taken (and "typo" gets "in_vocabulary": true).

Usage:
  python3 bench/search/add_typos.py                    # writes questions/book-typos.jsonl and
                                                       # python-typos.jsonl (needs rust-doc and
                                                       # python3.11-doc for the vocabularies)
  python3 bench/search/add_typos.py --check            # regenerates both, compares (exit 1 if not equal)
  python3 bench/search/add_typos.py data/git.jsonl --site data/git-html [--out …] [--seed N]
"""
import argparse
import html
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 30
KINDS = ("swap", "drop", "double", "wrong")
# The committed sets: question file → the site its vocabulary comes from.
COMMITTED = {
    "book": "/usr/share/doc/rust-doc/html/book",
    "python": "/usr/share/doc/python3.11/html",
}
KNOWN_SITES = dict(COMMITTED, git=os.path.join(HERE, "data", "git-html"), big=os.path.join(HERE, "data", "big-site"))

# US QWERTY letter rows; each row sits half a key right of the one above.
ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours():
    out = {}
    for r, row in enumerate(ROWS):
        for i, ch in enumerate(row):
            near = []
            if i > 0:
                near.append(row[i - 1])
            if i + 1 < len(row):
                near.append(row[i + 1])
            if r > 0:   # above: the key up-left and up-right of this one
                near += [ROWS[r - 1][j] for j in (i, i + 1) if j < len(ROWS[r - 1])]
            if r + 1 < len(ROWS):   # below
                near += [ROWS[r + 1][j] for j in (i - 1, i) if 0 <= j < len(ROWS[r + 1])]
            out[ch] = "".join(sorted(set(near)))
    return out


NEIGHBOURS = _neighbours()


def _case_like(ch, like):
    return ch.upper() if like.isupper() else ch


def swaps(word):
    """Every spelling with two adjacent letters swapped (not the first letter; distinct letters)."""
    return [word[:i] + word[i + 1] + word[i] + word[i + 2:]
            for i in range(1, len(word) - 1) if word[i].lower() != word[i + 1].lower()]


def drops(word):
    """Every spelling with one letter (not the first) left out."""
    return [word[:i] + word[i + 1:] for i in range(1, len(word))]


def doubles(word):
    """Every spelling with one letter (not the first) typed twice."""
    return [word[:i + 1] + word[i] + word[i + 1:] for i in range(1, len(word))]


def wrongs(word):
    """Every spelling with one letter (not the first) replaced by a QWERTY neighbour."""
    return [word[:i] + _case_like(n, word[i]) + word[i + 1:]
            for i in range(1, len(word)) for n in NEIGHBOURS.get(word[i].lower(), "")]


SPELLINGS = {"swap": swaps, "drop": drops, "double": doubles, "wrong": wrongs}

PUNCT = ",.;:!?'\"()"
PLAIN = re.compile(r"[A-Za-z]{4,}")


def words(query):
    """The query's typo-able words as (start, end, kind-of-eligibility) spans, by preference:
    ("plain", spans) if it has plain words, else ("code", spans) of letter runs ≥ 4 inside
    code-ish tokens, else ("short", [longest letter run ≥ 3]), else ("none", [])."""
    plain, code = [], []
    for m in re.finditer(r"\S+", query):
        tok, start = m.group(0), m.start()
        core = tok.strip(PUNCT)
        if core.endswith("'s"):
            core = core[:-2]
        off = start + tok.index(core) if core else start
        if PLAIN.fullmatch(core) and not any(c.isupper() for c in core[1:]):
            plain.append((off, off + len(core)))
        else:
            code += [(start + r.start(), start + r.end()) for r in re.finditer(r"[A-Za-z]{4,}", tok)]
    if plain:
        return "plain", plain
    if code:
        return "code", code
    runs = [(r.start(), r.end()) for r in re.finditer(r"[A-Za-z]{3,}", query)]
    if runs:
        return "short", [max(runs, key=lambda se: (se[1] - se[0], -se[0]))]
    return "none", []


def typo(query, vocab=frozenset(), seed=SEED):
    """(new query, {"word", "as", "kind"[, "in_vocabulary"]}) — or (query, None) when the query
    has no letters to misspell."""
    rng = random.Random(f"{seed}\0{query}")
    _, spans = words(query)
    if not spans:
        return query, None
    kinds = list(KINDS)
    first_kind = rng.choice(kinds)
    kinds.remove(first_kind)
    rng.shuffle(kinds)
    kinds.insert(0, first_kind)
    order = list(range(len(spans)))
    first_word = rng.choice(order)
    order.remove(first_word)
    rng.shuffle(order)
    order.insert(0, first_word)
    fallback = None
    for w in order:
        s, e = spans[w]
        word = query[s:e]
        for kind in kinds:
            options = list(dict.fromkeys(x for x in SPELLINGS[kind](word) if x != word))
            rng.shuffle(options)
            for new in options:
                if fallback is None:
                    fallback = (s, e, word, new, kind)
                if new.lower() not in vocab:
                    return query[:s] + new + query[e:], {"word": word, "as": new, "kind": kind}
    s, e, word, new, kind = fallback
    return query[:s] + new + query[e:], {"word": word, "as": new, "kind": kind, "in_vocabulary": True}


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def site_vocabulary(site):
    """Lower-cased alphabetic runs of every .html/.htm page under `site` (script and style
    elements and tags removed, entities decoded)."""
    vocab = set()
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames[:] = sorted(d for d in dirnames if d not in ("lightembed", "pagefind"))
        for f in filenames:
            if not f.endswith((".html", ".htm")):
                continue
            page = read(os.path.join(dirpath, f))
            page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
            page = html.unescape(re.sub(r"<[^>]*>", " ", page))
            vocab.update(w.lower() for w in re.findall(r"[A-Za-z]+", page))
    return frozenset(vocab)


def with_typos(lines, vocab, seed=SEED):
    out = []
    for line in lines:
        q = json.loads(line)
        q["query"], q["typo"] = typo(q["query"], vocab, seed)
        out.append(json.dumps(q, ensure_ascii=False) + "\n")
    return out


def regenerate(name, seed=SEED):
    src = os.path.join(HERE, "questions", f"{name}.jsonl")
    site = COMMITTED[name]
    if not os.path.isdir(site):
        return None
    return with_typos(read(src).splitlines(), site_vocabulary(site), seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions", nargs="?", help="a question set (jsonl); default: the committed book and python sets")
    ap.add_argument("--site", help="the site whose words the typos must not produce (default: known for book, python, git, big)")
    ap.add_argument("--out", help="default: NAME-typos.jsonl beside the input")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--check", action="store_true", help="regenerate the committed sets and compare")
    args = ap.parse_args()
    if args.questions is None:
        bad = 0
        for name in COMMITTED:
            out = os.path.join(HERE, "questions", f"{name}-typos.jsonl")
            lines = regenerate(name, args.seed)
            if lines is None:
                sys.exit(f"{COMMITTED[name]} missing: apt-get install rust-doc python3.11-doc")
            if args.check:
                same = os.path.exists(out) and read(out) == "".join(lines)
                print(f"{out}: {'identical' if same else 'DIFFERENT'}")
                bad += not same
            else:
                with open(out, "w", encoding="utf-8") as f:
                    f.writelines(lines)
                print(f"{len(lines)} questions → {out}")
        sys.exit(1 if bad else 0)
    name = os.path.basename(args.questions).rsplit(".", 1)[0]
    site = args.site or KNOWN_SITES.get(name)
    if not site or not os.path.isdir(site):
        sys.exit(f"--site: the site of {args.questions} (for its vocabulary)")
    lines = with_typos(read(args.questions).splitlines(), site_vocabulary(site), args.seed)
    out = args.out or os.path.join(os.path.dirname(args.questions), f"{name}-typos.jsonl")
    if args.check:
        same = os.path.exists(out) and read(out) == "".join(lines)
        print(f"{out}: {'identical' if same else 'DIFFERENT'}")
        sys.exit(0 if same else 1)
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(lines)
    print(f"{len(lines)} questions → {out}")


if __name__ == "__main__":
    main()
