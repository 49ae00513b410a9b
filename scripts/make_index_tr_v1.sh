#!/usr/bin/env bash
# Regenerates tests/fixtures/index-tr-v1/: the Turkish fixture site (tests/fixtures/site-tr)
# indexed by `lightembed index` with the Turkish model v1.0.0 as it shipped before v2.0.0
# (issue 34), read from git history. cli/tests/index_search.rs searches it with the shipped
# model to check spec §8's refusal of an index built with an older major version. Re-run it
# only when the index format changes (the fixture must stay readable up to the model check).
#
#   scripts/make_index_tr_v1.sh          (needs the git history: not a shallow clone)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
v1_commit=3566f51   # the last commit with lightembed-tr-static.bin v1.0.0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lightembed-tr-static-1.0.0"
model="$tmp/lightembed-tr-static-1.0.0/lightembed-tr-static.bin"
git show "$v1_commit:public/models/lightembed-tr-static.bin" > "$model"
unset RUSTFLAGS
cargo build -q -p lightembed-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/lightembed"
out=tests/fixtures/index-tr-v1
rm -rf "$out"
"$bin" index --quiet --model "$model" --out "$out" tests/fixtures/site-tr
echo "wrote $out ($(stat -c %s "$out/index.bin") bytes index.bin)"
