#!/usr/bin/env bash
# Engine throughput, single thread: native (criterion) and wasm32 + SIMD128 under Node (then the
# same with relaxed SIMD), on the same 1,000 sentences (bench/sentences.txt) and the same models.
#   bench/engine.sh            # both
#   bench/engine.sh wasm       # only the Node/wasm part
# The wasm part benches the models given in $MODELS (default: public/models/*.bin plus the §9-shaped
# synthetic models written by the native bench into target/bench-models/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/tools.sh >/dev/null

if [[ "${1:-all}" != wasm ]]; then
  LIGHTEMBED_BENCH_WRITE_MODELS=target/bench-models cargo bench -p lightembed --bench embed
fi

cargo build --release -p lightembed-bench-wasm --target wasm32-unknown-unknown
pkg=target/bench-wasm-node
wasm-bindgen --target nodejs --out-dir "$pkg" target/wasm32-unknown-unknown/release/lightembed_bench_wasm.wasm
if command -v wasm-objdump >/dev/null; then
  n=$(wasm-objdump -d "$pkg/lightembed_bench_wasm_bg.wasm" | grep -cE 'i8x16|i16x8|i32x4|v128' || true)
  echo "SIMD128 instructions in the wasm: $n"
fi
models=${MODELS:-$(ls public/models/*.bin target/bench-models/*.bin 2>/dev/null || true)}
node bench/engine_node.mjs "$pkg" $models

# The relaxed-SIMD build (the app's second worker, scripts/relaxed_worker.sh): Node 20's V8 has
# relaxed SIMD behind a flag. Own target directory, so the flags do not rebuild target/.
RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" cargo build --release -p lightembed-bench-wasm \
  --target wasm32-unknown-unknown --target-dir target/wasm-relaxed
pkg=target/bench-wasm-node-relaxed
wasm-bindgen --target nodejs --out-dir "$pkg" target/wasm-relaxed/wasm32-unknown-unknown/release/lightembed_bench_wasm.wasm
WASM_FEATURES=simd128+relaxed-simd node --experimental-wasm-relaxed-simd bench/engine_node.mjs "$pkg" $models
