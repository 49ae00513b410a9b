#!/usr/bin/env bash
# Regenerates the app's bundled demo corpus, public/corpus/rust-book.jsonl, from the Rust book in
# Debian's rust-doc package (`apt-get install rust-doc`): every chapter and appendix page
# (ch*.html, appendix*.html, in byte order) through `lightembed passages` — the pipeline
# `lightembed index` and the app's worker use (lightembed_ingest) — with the page URLs on
# https://doc.rust-lang.org/book/. Passages are sized with the shipped models' tokenizer and
# window (both have the same vocabulary and max_seq_len 128). Deterministic: the same pages give
# the same bytes. Passages are in page order, so the app's `?limit=N` is a coherent slice.
#
#   scripts/make_corpus.sh [BOOK_DIR]        (default /usr/share/doc/rust-doc/html/book)
#   OUT=other.jsonl scripts/make_corpus.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export LC_ALL=C   # glob order = byte order
src="${1:-/usr/share/doc/rust-doc/html/book}"
out="${OUT:-public/corpus/rust-book.jsonl}"
model="public/models/lightembed-en-static.bin"
shopt -s nullglob
pages=("$src"/ch*.html "$src"/appendix*.html)
if (( ${#pages[@]} == 0 )); then
  echo "no chapter pages (ch*.html, appendix*.html) under $src: apt-get install rust-doc" >&2
  exit 1
fi
unset RUSTFLAGS
cargo build -q -p lightembed-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/lightembed"
mkdir -p "$(dirname "$out")"
"$bin" passages --model "$model" --url-prefix https://doc.rust-lang.org/book/ "${pages[@]}" > "$out.tmp"
mv "$out.tmp" "$out"
echo "$(wc -l < "$out") passages from ${#pages[@]} pages → $out ($(stat -c %s "$out") bytes)"
