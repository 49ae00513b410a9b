#!/usr/bin/env bash
# The main job on a fresh machine: installs what is missing (scripts/app-tools.sh: wasm32 target,
# wasm-bindgen-cli, Python venv, trunk, wasm-opt), builds the app with trunk in release (UI + the
# SIMD128 worker, the bundled models and the Rust-book corpus) and serves dist/ on localhost.
#   PORT=8080 scripts/run.sh        (default port 8080)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/app-tools.sh
export PATH="$root/target/tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"
unset RUSTFLAGS   # it would replace .cargo/config.toml's +simd128 flags
cargo fetch >/dev/null
trunk build --release=true
port="${PORT:-8080}"
printf '\n\033[1mlightembed app: http://127.0.0.1:%s/\033[0m  (Ctrl-C to stop)\n\n' "$port"
cd dist
exec python3 -m http.server "$port" --bind 127.0.0.1
