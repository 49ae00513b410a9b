#!/usr/bin/env bash
# Builds the app's second worker: the same `worker` binary compiled with relaxed SIMD
# (`+simd128,+relaxed-simd`), whose ternary kernel uses `i16x8.relaxed_dot_i8x16_i7x16_s`
# (16 products per instruction instead of 8; `engine/src/kernels/simd128.rs`). The page picks it
# when the browser validates a relaxed-SIMD module (app/index.html) and falls back to the
# SIMD128 worker otherwise; the vectors are identical (exact integer arithmetic either way).
#
# Run by scripts/post_build.sh (trunk's post_build step), before sw_manifest.py so the service
# worker precaches it:
#   scripts/relaxed_worker.sh "$TRUNK_STAGING_DIR"
# Writes worker_relaxed.js, worker_relaxed_bg.wasm and worker_relaxed_loader.js there. Uses its
# own target directory (target/wasm-relaxed): other RUSTFLAGS in target/ would rebuild trunk's
# crates every time. Profile: $TRUNK_PROFILE (release → --release and wasm-opt -O3, as trunk does
# for the SIMD128 worker).
set -euo pipefail
out="${1:?usage: scripts/relaxed_worker.sh STAGING_DIR}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
profile_flag=()
profile_dir=debug
if [[ "${TRUNK_PROFILE:-debug}" == release ]]; then
  profile_flag=(--release)
  profile_dir=release
fi
# RUSTFLAGS replaces .cargo/config.toml's flags for this one build (SIMD128 stays on).
RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" \
  cargo build -q "${profile_flag[@]}" --locked --offline -p lightembed-app --bin worker \
  --target wasm32-unknown-unknown --target-dir target/wasm-relaxed
wasm-bindgen --target no-modules --no-typescript --out-dir "$out" --out-name worker_relaxed \
  "target/wasm-relaxed/wasm32-unknown-unknown/$profile_dir/worker.wasm"
if [[ "$profile_dir" == release ]]; then
  wasm-opt -O3 --enable-simd --enable-relaxed-simd --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$out/worker_relaxed_bg.wasm" -o "$out/worker_relaxed_bg.wasm"
fi
printf 'importScripts("./worker_relaxed.js");wasm_bindgen("./worker_relaxed_bg.wasm");' \
  > "$out/worker_relaxed_loader.js"
echo "relaxed-SIMD worker: $(wc -c < "$out/worker_relaxed_bg.wasm") bytes ($profile_dir)"
