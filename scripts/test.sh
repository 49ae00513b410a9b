#!/usr/bin/env bash
# Installs everything (skipping what is already there) and runs every test:
#   1. pytest for the reference, packer and fixtures (Python venv .venv),
#   2. cargo tests of the workspace natively (golden fixtures, malformed files, tokenizer parity,
#      kernels, index, CLI, the app's pure logic),
#   3. the engine's and the index's tests compiled to wasm32 (+simd128) and run under Node,
#   4. the app's storage and worker-messaging tests (wasm-bindgen-test) in headless Chromium,
#   5. the end-to-end test of the trunk-built app (playwright-core + Debian Chromium), screenshots
#      in target/e2e/. It uses a dev-profile `trunk build` (shares the compiled crates with step 4);
#      `scripts/e2e.sh` alone tests the release build that run.sh serves.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
t0=$SECONDS

step "tools"
scripts/app-tools.sh --browser   # runs scripts/tools.sh first
export PATH="$root/target/tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step "pytest (reference, packer, fixtures)"
# One BLAS thread: small SVDs in the fingerprint tests are ~20x slower with a thread pool on 2 cores.
OPENBLAS_NUM_THREADS=1 .venv/bin/python -m pytest reference -q

step "cargo test (native)"
cargo test --workspace --exclude lightembed-bench-index

step "cargo test (wasm32 + simd128, under Node)"
cargo test -p lightembed -p lightembed-index --target wasm32-unknown-unknown

step "app in headless Chromium (wasm-bindgen-test: IndexedDB storage, worker messaging)"
CHROMEDRIVER=/usr/bin/chromedriver cargo test -p lightembed-app --target wasm32-unknown-unknown

step "end-to-end: trunk-built app in headless Chromium"
E2E_PROFILE=dev scripts/e2e.sh

step "all tests passed in $((SECONDS - t0)) s"
