"""Builds bench/sentences.txt: 1,000 real English sentences of 10-40 WordPiece tokens, taken
deterministically from the Python 3.11 tutorial and HOWTOs in Debian's python3.11-doc package.

Usage: .venv/bin/python bench/make_sentences.py [COUNT OUT]  (needs tests/fixtures/tokenizer/vocab.txt)
  COUNT defaults to 1000 and OUT to bench/sentences.txt; beyond the tutorial and HOWTOs the rest of
  the package's HTML (library, reference, FAQ, …) is read in path order, so the first 1,000 stay the
  same whatever COUNT is. bench/m2v.sh asks for 10,000.
"""
import glob
import html.parser
import pathlib
import re
import sys

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ["/usr/share/doc/python3.11/html/tutorial/*.html", "/usr/share/doc/python3.11/html/howto/*.html"]
MORE = ["/usr/share/doc/python3.11/html/**/*.html"]


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("pre", "script", "style", "nav"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("pre", "script", "style", "nav"):
            self.skip = max(0, self.skip - 1)
        if tag in ("p", "li", "dd"):
            self.parts.append("\x00")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    dest = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "bench/sentences.txt"
    patterns = DOCS + (MORE if count > 1000 else [])
    vocab = {t: i for i, t in enumerate((ROOT / "tests/fixtures/tokenizer/vocab.txt").read_text().splitlines())}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    out, seen = [], set()
    paths = []
    for pattern in patterns:
        for f in sorted(glob.glob(pattern, recursive=True)):
            if f not in paths:
                paths.append(f)
    for path in paths:
        p = Text()
        p.feed(pathlib.Path(path).read_text(encoding="utf-8"))
        for para in "".join(p.parts).split("\x00"):
            para = " ".join(para.split())
            for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", para):
                n = len(tok.encode(s).ids)
                if 10 <= n <= 40 and s not in seen and "¶" not in s and s[0].isupper() and s.endswith((".", "!", "?")):
                    seen.add(s)
                    out.append(s)
    out = out[:count]
    dest.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"{dest}: {len(out)} sentences")


if __name__ == "__main__":
    main()
