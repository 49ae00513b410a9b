#!/usr/bin/env bash
# Regenerates tests/fixtures/index-LANG-vMAJOR/: a fixture site (en: tests/fixtures/site, tr:
# tests/fixtures/site-tr) indexed by `lightembed index` with an older static model of that
# language as it shipped, read from git history. cli/tests/index_search.rs searches each such index
# with the shipped model to check spec §8's refusal of an index built with an older major version
# (issue 34). Re-run it only when the index format changes (the fixture must stay readable up to
# the model check).
#
#   scripts/make_index_old.sh tr 1.0.0 3566f51   # Turkish v1.0.0: the last commit that shipped it
#   scripts/make_index_old.sh tr 2.0.0 0b62f1e   # Turkish v2.0.0
#   scripts/make_index_old.sh tr 3.0.0 6f0db59   # Turkish v3.0.0
#   scripts/make_index_old.sh en 4.0.0 COMMIT    # English static v4.0.0
#
# Needs the git history (not a shallow clone) and a Rust toolchain.
set -euo pipefail
if [[ $# -ne 3 || ( $1 != en && $1 != tr ) ]]; then
  echo "usage: scripts/make_index_old.sh en|tr VERSION COMMIT   (e.g. tr 2.0.0 0b62f1e)" >&2
  exit 2
fi
lang=$1 version=$2 commit=$3
site=tests/fixtures/site
[[ $lang == en ]] || site=tests/fixtures/site-$lang
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lightembed-$lang-static-$version"
model="$tmp/lightembed-$lang-static-$version/lightembed-$lang-static.bin"
git show "$commit:public/models/lightembed-$lang-static.bin" > "$model"
# the file's own version (header bytes 44–47: major u8, minor u8, patch u16 LE; spec §3) must be the one named
got="$(python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); print("%d.%d.%d" % (b[44], b[45], b[46] | b[47] << 8))' "$model")"
if [[ "$got" != "$version" ]]; then
  echo "error: $commit ships lightembed-$lang-static v$got, not v$version" >&2
  exit 1
fi
unset RUSTFLAGS
cargo build -q -p lightembed-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/lightembed"
out="tests/fixtures/index-$lang-v${version%%.*}"
rm -rf "$out"
"$bin" index --quiet --model "$model" --out "$out" "$site"
echo "wrote $out ($(stat -c %s "$out/index.bin") bytes index.bin)"
