#!/usr/bin/env bash
# Installs everything (skipping what is already there) and runs every test:
#   1. pytest for the reference, packer and fixtures (Python venv .venv),
#   2. cargo tests of the workspace natively (golden fixtures, malformed files, tokenizer parity,
#      kernels, index, CLI),
#   3. the engine's and the index's tests compiled to wasm32 (+simd128) and run under Node.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
t0=$SECONDS

step "tools"
scripts/tools.sh

step "pytest (reference, packer, fixtures)"
# One BLAS thread: small SVDs in the fingerprint tests are ~20x slower with a thread pool on 2 cores.
OPENBLAS_NUM_THREADS=1 .venv/bin/python -m pytest reference -q

step "cargo test (native)"
cargo test --workspace --exclude lightembed-app --exclude lightembed-bench-index

step "cargo test (wasm32 + simd128, under Node)"
cargo test -p lightembed -p lightembed-index --target wasm32-unknown-unknown

step "all tests passed in $((SECONDS - t0)) s"
