#!/usr/bin/env bash
# lightembed's static path against model2vec-rs 0.4.0 on the same vectors (issue 35), natively:
#   1. in process, one pinned core each, repetitions interleaved: single-sentence and batch
#      sentences/s, their time ratio, and the mean cosine between the two engines' vectors
#      (bench/m2v: the equivalent model2vec table is exported by our own code);
#   2. peak RSS of each engine alone after embedding the sentences (and ours after a
#      full-vocabulary fill of its row cache);
#   3. the CLIs end to end on the same file (`lightembed embed` vs `model2vec-rs encode`), wall
#      time and peak RSS, medians of 7 interleaved runs (both use every core, as users run them).
# Sentences: 10,000 real English sentences from Debian's python3.11-doc
# (bench/make_sentences.py 10000). Needs network access to crates.io once (model2vec-rs).
#
#   bash bench/m2v.sh [REPS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_INCREMENTAL=0
reps="${1:-7}"
model=public/models/lightembed-en-static.bin
work=target/bench-m2v
mkdir -p "$work"
sentences="$work/sentences-10k.txt"
[[ -s $sentences ]] || .venv/bin/python bench/make_sentences.py 10000 "$sentences"

(cd bench/m2v && CARGO_TARGET_DIR="$root/target/m2v-build" cargo build --release --quiet)
bench="$root/target/m2v-build/release/lightembed-bench-m2v"
m2v_cli="$root/target/m2v/bin/model2vec-rs"
[[ -x $m2v_cli ]] || cargo install --quiet --locked model2vec-rs@0.4.0 --no-default-features \
  --features cli,onig,local-only --root target/m2v --target-dir target/m2v-build
cargo build --release --quiet -p lightembed-cli
cli="$root/target/release/lightembed"

table="$work/en-static-m2v"
"$bench" export "$model" "$table"

echo "## in process, one core (taskset -c 0)"
TOKENIZERS_PARALLELISM=false taskset -c 0 "$bench" compare "$model" "$table" "$sentences" "$reps"

echo "## peak memory, each engine alone"
TOKENIZERS_PARALLELISM=false "$bench" rss ours "$model" "$sentences"
TOKENIZERS_PARALLELISM=false "$bench" rss m2v "$table" "$sentences"

echo "## CLIs end to end ($(nproc) cores), 7 runs each, interleaved, medians"
# GNU time's "SECONDS PEAK_KIB" of one run of "$@" (output to a file, as a user would keep it).
run_once() { /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null; cat "$work/time"; }
: > "$work/ours.times"; : > "$work/m2v.times"
for _ in 1 2 3 4 5 6 7; do
  run_once sh -c "'$cli' embed --model '$model' '$sentences' > '$work/ours.jsonl'" >> "$work/ours.times"
  run_once "$m2v_cli" encode "$sentences" "$table" -o "$work/m2v.json" >> "$work/m2v.times"
done
med() { sort -n -k"$2" "$1" | sed -n 4p | awk -v c="$2" '{print (c == 1) ? $1 : $2 / 1024}'; }
ours_s=$(med "$work/ours.times" 1); ours_m=$(med "$work/ours.times" 2)
m2v_s=$(med "$work/m2v.times" 1); m2v_m=$(med "$work/m2v.times" 2)
echo "| CLI | wall s | peak RSS MiB |"
echo "|---|---:|---:|"
printf '| lightembed embed | %s | %.1f |\n' "$ours_s" "$ours_m"
printf '| model2vec-rs encode | %s | %.1f |\n' "$m2v_s" "$m2v_m"
awk -v a="$ours_s" -v b="$m2v_s" -v c="$ours_m" -v d="$m2v_m" \
  'BEGIN{printf "time ratio lightembed / model2vec-rs %.3f; memory ratio %.3f\n", a/b, c/d}'
