#!/usr/bin/env bash
# The CLI walk-through on a fresh machine: installs what is missing, builds the `lightembed` CLI
# in release, verifies both bundled models, inspects the 2-layer one, and embeds a few texts.
# (The README's main command, scripts/run.sh, serves the browser app.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/tools.sh
cargo build --release -p lightembed-cli
le=target/release/lightembed
for m in public/models/*.bin; do
  "$le" verify "$m"
done
"$le" inspect public/models/lightembed-en-2l.bin
printf '%s\n' '{"id":"q","text":"How do I read a file line by line?"}' \
  '{"id":"a","text":"Use a BufReader and call lines() on it to iterate over the lines of a file."}' \
  '{"id":"b","text":"Ownership rules: each value has a single owner."}' |
  "$le" embed --model public/models/lightembed-en-2l.bin --dims 128 --jsonl - > target/run-embeddings.jsonl
python3 - <<'PY'
import json
rows = {r["id"]: r["embedding"] for r in map(json.loads, open("target/run-embeddings.jsonl"))}
cos = lambda a, b: sum(x * y for x, y in zip(a, b))
print(f"cosine(q, a) = {cos(rows['q'], rows['a']):.3f}   (relevant)")
print(f"cosine(q, b) = {cos(rows['q'], rows['b']):.3f}   (unrelated)")
PY
