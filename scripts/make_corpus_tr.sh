#!/usr/bin/env bash
# Regenerates the app's Turkish corpus, public/corpus/libreoffice-help-tr.jsonl, from the Turkish
# LibreOffice help in Debian's libreoffice-help-tr package (`apt-get install libreoffice-help-tr`):
# the how-to guides of Writer and of LibreOffice as a whole (text/swriter/guide/*.html and
# text/shared/guide/*.html) that are in Turkish, through `lightembed passages` — the pipeline of
# scripts/make_corpus.sh, `lightembed index` and the app's worker (lightembed_ingest) — with
# the page URLs on https://help.libreoffice.org/latest/tr/text/ (pages are named by their path
# under text/: `swriter/guide/autotext.html`). The passages are sized with the Turkish model's own
# (cased) tokenizer, public/models/lightembed-tr-static.bin: re-run this after a new Turkish model
# with another vocabulary. Header, side bars and debug footer of the help pages (<header>,
# <aside>, <footer>) are left out by the pipeline, as on every site.
#
# Pages: the Turkish translation is incomplete; a page is left out when it is mostly untranslated
# English — when English function words ("the", "and", "you", …) make up more than MAX_EN (0.25)
# of the English and Turkish function words ("ve", "bir", "için", …) in its content
# (<div id="DisplayArea">). Pages kept may still hold a few untranslated English sentences. The
# pages kept are copied into a temporary folder laid out like text/ and read from there, so their
# names are their paths under text/.
#
# Deterministic: the same package and model give the same bytes. Passages are in page order
# (shared/guide, then swriter/guide, each in byte order), so the app's `?limit=N` is a coherent
# slice.
#
#   scripts/make_corpus_tr.sh [HELP_TEXT_DIR]     (default /usr/share/libreoffice/help/tr/text)
#   OUT=other.jsonl MAX_EN=0.3 SECTIONS="swriter/guide" scripts/make_corpus_tr.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export LC_ALL=C   # glob order = byte order
src="${1:-/usr/share/libreoffice/help/tr/text}"
out="${OUT:-public/corpus/libreoffice-help-tr.jsonl}"
model="public/models/lightembed-tr-static.bin"
max_en="${MAX_EN:-0.25}"
read -r -a sections <<< "${SECTIONS:-swriter/guide shared/guide}"
shopt -s nullglob
all=()
for s in "${sections[@]}"; do
  all+=("$src/$s"/*.html)
done
if (( ${#all[@]} == 0 )); then
  echo "no help pages (${sections[*]} under $src): apt-get install libreoffice-help-tr" >&2
  exit 1
fi
if [[ ! -f "$model" ]]; then
  echo "no Turkish model at $model" >&2
  exit 1
fi
# The pages that are Turkish, one path a line, in the order given.
mapfile -t pages < <(python3 - "$max_en" "${all[@]}" <<'EOF'
import html.parser
import re
import sys

EN = set("the and of to is a in you for that with this are be or on as can by an it your from which".split())
TR = set("ve bir bu için ile olarak da de veya ya seçin tıklayın ise daha gibi olan en ne kadar çok sonra".split())


class Content(html.parser.HTMLParser):
    """The text inside <div id="DisplayArea"> (the page's content)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag != "div":
            return
        if self.depth:
            self.depth += 1
        elif dict(attrs).get("id") == "DisplayArea":
            self.depth = 1

    def handle_endtag(self, tag):
        if tag == "div" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


max_en = float(sys.argv[1])
kept = 0
for path in sys.argv[2:]:
    parser = Content()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    words = re.findall(r"\w+", " ".join(parser.text).lower())
    en = sum(w in EN for w in words)
    tr = sum(w in TR for w in words)
    if tr and en / (en + tr) <= max_en:
        print(path)
        kept += 1
print(f"{kept} of {len(sys.argv) - 2} pages are Turkish (English share of function words <= {max_en})", file=sys.stderr)
EOF
)
unset RUSTFLAGS
cargo build -q -p lightembed-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/lightembed"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
for page in "${pages[@]}"; do
  rel="${page#"$src"/}"
  mkdir -p "$stage/$(dirname "$rel")"
  cp "$page" "$stage/$rel"
done
mkdir -p "$(dirname "$out")"
"$bin" passages --model "$model" --url-prefix https://help.libreoffice.org/latest/tr/text/ "$stage" > "$out.tmp"
mv "$out.tmp" "$out"
echo "$(wc -l < "$out") passages from ${#pages[@]} pages → $out ($(stat -c %s "$out") bytes)"
