#!/usr/bin/env python3
"""Extract English training text from Debian documentation packages.

Writes train/data/corpus.tsv  (source \t text), one sentence or short passage per line,
deduplicated and shuffled (seeded).  Only the script is committed, never the text.

Sources (all installable offline from Debian, see train/setup.sh):
  dict-gcide, wordnet-base, python3.11-doc, rust-doc, manpages, fortunes,
  debian-reference-en, debian-handbook

Reserved for evaluation and NEVER used here: Debian package descriptions (apt's
Packages / Translation-en data) and the test data shipped inside gensim.  As an extra
guard, any line that also occurs in the Translation-en descriptions is dropped.
"""
import glob
import gzip
import html
import os
import random
import re
import subprocess
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "corpus.tsv")
MAX_PER_SOURCE = {  # caps keep one huge source from dominating
    "gcide": 60000,
    "wordnet": 50000,
    "python-doc": 45000,
    "rust-doc": 45000,
    "manpages": 10000,
    "fortunes": 12000,
    "debian-reference": 12000,
    "debian-handbook": 25000,
}

SENT_SPLIT = re.compile(r'(?<=[.!?])\s+(?=[A-Z"\'(\[])')
WS = re.compile(r"\s+")
TAG = re.compile(r"<[^>]+>")


def clean(t):
    return WS.sub(" ", html.unescape(t)).strip()


def good(t, lo=3, hi=90):
    if t.startswith("Redirecting to"):
        return False
    w = t.split()
    if not (lo <= len(w) <= hi):
        return False
    letters = sum(c.isalpha() for c in t)
    if letters < 0.6 * len(t):
        return False
    return True


def sentences_and_passages(par, out):
    """Emit each good sentence of a paragraph, plus the paragraph itself (≤ 90 words)."""
    par = clean(par)
    if not par:
        return
    sents = [s for s in SENT_SPLIT.split(par) if good(s)]
    out.extend(sents)
    if len(sents) >= 2 and good(par, 8, 90):
        out.append(par)


def gcide():
    out = []
    raw = gzip.open("/usr/share/dictd/gcide.dict.dz", "rt", encoding="utf-8", errors="replace").read()
    for entry in raw.split("\n\n"):
        lines = entry.split("\n")
        if len(lines) < 2:
            continue
        body = " ".join(l.strip() for l in lines[1:])
        body = re.sub(r"\[1913 Webster\]|\[Webster 1913 Suppl\.\]|\[PJC\]|\[[A-Z]\.?\]", " ", body)
        body = re.sub(r"--[A-Z][\w.]*", " ", body)
        for piece in re.split(r"\s\d+\.\s|\s\(\w\)\s", body):
            piece = re.sub(r"^\((\w+\.\s?)+\)\s*", "", piece.strip())
            sentences_and_passages(piece, out)
    return out


def wordnet():
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        for line in open(f"/usr/share/wordnet/data.{pos}", encoding="utf-8", errors="replace"):
            if line.startswith("  ") or "|" not in line:
                continue
            gloss = line.split("|", 1)[1].strip()
            parts = [p.strip() for p in gloss.split(";")]
            for p in parts:
                p = p.strip('"').strip()
                if good(p):
                    out.append(p)
    return out


def rst_paragraphs(text):
    for par in re.split(r"\n\s*\n", text):
        lines = par.strip("\n").split("\n")
        if not lines or lines[0].startswith((" ", "\t", "..", ">>>", "::", "*", "-", "=", "+", "|")):
            continue
        p = " ".join(l.strip() for l in lines)
        p = re.sub(r":[\w:]+:`~?([^`<]*?)(\s*<[^>]*>)?`", r"\1", p)  # :role:`x`
        p = re.sub(r"``([^`]*)``", r"\1", p)
        p = re.sub(r"`([^`<]*?)(\s*<[^>]*>)?`_*", r"\1", p)
        p = p.replace("**", "").replace("::", ":")
        yield p


def python_doc():
    out = []
    for f in sorted(glob.glob("/usr/share/doc/python3.11/html/_sources/**/*.txt", recursive=True)):
        for p in rst_paragraphs(open(f, encoding="utf-8", errors="replace").read()):
            sentences_and_passages(p, out)
    return out


def html_paragraphs(path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    raw = re.sub(r"(?s)<(script|style|pre|code)[^>]*>.*?</\1>", " ", raw) if False else re.sub(r"(?s)<(script|style|pre)[^>]*>.*?</\1>", " ", raw)
    for m in re.finditer(r"(?s)<(p|li|dd)[^>]*>(.*?)</\1>", raw):
        yield TAG.sub("", m.group(2))


def rust_doc():
    out = []
    base = "/usr/share/doc/rust-doc/html"
    files = []
    for sub in ("book", "reference", "rust-by-example", "nomicon", "edition-guide", "embedded-book",
                "rustc", "cargo", "rustdoc", "unstable-book", "std", "core", "alloc"):
        files += sorted(glob.glob(f"{base}/{sub}/**/*.html", recursive=True))
    rng = random.Random(1)
    rng.shuffle(files)
    for f in files:
        for p in html_paragraphs(f):
            sentences_and_passages(p, out)
        if len(out) > 4 * MAX_PER_SOURCE["rust-doc"]:
            break
    return out


# Manual pages of held-out sources (the Git documentation, the Valgrind manual) are never read, nor
# the Perl documentation's pages (`perl*`: perl-doc's perlfaq is the English dev set, issue 34,
# prepare_dev_en.py).
HELD_OUT_MANPAGES = re.compile(r"^(git|valgrind|perl)", re.IGNORECASE)


def manpage_files(held_out=False):
    """The English manual pages, without (or only, `held_out=True`) those of held-out sources."""
    return [f for f in sorted(glob.glob("/usr/share/man/man[1-8]/*.gz"))
            if bool(HELD_OUT_MANPAGES.match(os.path.basename(f))) == held_out]


def held_out_manpage_lines():
    """Every line `manpages()` would make from the held-out sources' manual pages (lowercased)."""
    return {t.lower() for t in manpages(manpage_files(held_out=True))}


def manpages(files=None):
    out = []
    for f in manpage_files() if files is None else files:
        try:
            text = gzip.open(f, "rt", encoding="utf-8", errors="replace").read()
        except Exception:
            continue
        par = []
        for line in text.split("\n"):
            if line.startswith((".PP", ".P", ".SH", ".SS", ".TP", ".IP", ".LP", ".HP")) or not line.strip():
                if par:
                    sentences_and_passages(" ".join(par), out)
                par = []
                continue
            if line.startswith((".", "'")):
                continue
            line = re.sub(r"\\f[BIRP]|\\f\(..|\\\(..|\\[&e-]|\\\*\(..|\\s[-+]?\d", "", line)
            line = line.replace("\\-", "-").replace("\\ ", " ")
            par.append(line)
        if par:
            sentences_and_passages(" ".join(par), out)
    return out


def fortunes():
    out = []
    for f in sorted(glob.glob("/usr/share/games/fortunes/*")):
        if "." in os.path.basename(f) or os.path.isdir(f):
            continue
        text = open(f, encoding="utf-8", errors="replace").read()
        for fort in text.split("\n%\n"):
            lines = [l for l in fort.split("\n") if not l.strip().startswith("--")]
            sentences_and_passages(" ".join(lines), out)
    return out


def debian_reference():
    out = []
    text = gzip.open("/usr/share/debian-reference/debian-reference.en.txt.gz", "rt", encoding="utf-8",
                     errors="replace").read()
    for par in re.split(r"\n\s*\n", text):
        lines = par.strip("\n").split("\n")
        if any(l.startswith("    ") for l in lines[:1]) or any("│" in l or "|" in l for l in lines):
            continue
        sentences_and_passages(" ".join(l.strip() for l in lines), out)
    return out


def debian_handbook():
    out = []
    for f in sorted(glob.glob("/usr/share/doc/debian-handbook/html/en-US/*.html")):
        for p in html_paragraphs(f):
            sentences_and_passages(p, out)
    return out


def reserved_eval_lines():
    """Lines of the Translation-en package descriptions (held out for evaluation)."""
    s = set()
    for f in glob.glob("/var/lib/apt/lists/*Translation-en*"):
        try:
            txt = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", f], capture_output=True,
                                 text=True, check=True).stdout
        except Exception:
            continue
        for line in txt.split("\n"):
            if line.startswith("Description-en:"):
                line = line[len("Description-en:"):]
            t = clean(line)
            if len(t) > 20:
                s.add(t.lower())
    return s


SOURCES = {
    "gcide": gcide, "wordnet": wordnet, "python-doc": python_doc, "rust-doc": rust_doc,
    "manpages": manpages, "fortunes": fortunes, "debian-reference": debian_reference,
    "debian-handbook": debian_handbook,
}


EXTRA_SOURCE = "manpages2"


def append_extra_manpages(n):
    """Append `n` more manual-page lines (source `manpages2`, ≤ 48 words, none already in the
    corpus or in the held-out descriptions) after the existing lines, so the teacher shards of
    those stay valid (embed_teacher.py redoes only the last, partial shard and the new ones).
    Software-domain text like the held-out task's; `manpages` alone is capped at 10,000."""
    rows = [l.rstrip("\n").split("\t", 1) for l in open(OUT, encoding="utf-8")]
    if any(src == EXTRA_SOURCE for src, _ in rows):
        print(f"{OUT} already has {EXTRA_SOURCE} lines; skip")
        return
    seen = {t.lower() for _, t in rows} | reserved_eval_lines()
    items = []
    for t in manpages():
        t = t.replace("\t", " ")
        if t.lower() not in seen and len(t.split()) <= 48:
            seen.add(t.lower())
            items.append(t)
    random.Random(1).shuffle(items)
    with open(OUT, "a", encoding="utf-8") as f:
        for t in items[:n]:
            f.write(f"{EXTRA_SOURCE}\t{t}\n")
    print(f"appended {min(n, len(items))} of {len(items)} new manual-page lines to {OUT}")


def main():
    if "--extra-manpages" in sys.argv:
        return append_extra_manpages(int(sys.argv[sys.argv.index("--extra-manpages") + 1]))
    if os.path.exists(OUT) and "--force" not in sys.argv:
        print(f"{OUT} exists; skip (use --force)")
        return
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    reserved = reserved_eval_lines()
    print(f"reserved eval lines: {len(reserved)}")
    rng = random.Random(0)
    seen = set()
    rows = []
    for name, fn in SOURCES.items():
        items = fn()
        uniq = []
        for t in items:
            t = t.replace("\t", " ")
            k = t.lower()
            if k in seen or k in reserved:
                continue
            seen.add(k)
            uniq.append(t)
        rng.shuffle(uniq)
        uniq = uniq[: MAX_PER_SOURCE[name]]
        print(f"{name:18s} {len(items):7d} extracted, {len(uniq):7d} kept")
        rows += [(name, t) for t in uniq]
    rng.shuffle(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for s, t in rows:
            f.write(f"{s}\t{t}\n")
    print(f"wrote {len(rows)} lines to {OUT}")


if __name__ == "__main__":
    main()
