#!/usr/bin/env bash
# Installs the build tools the tests and the app need, from the package registries only
# (crates.io, PyPI, npm, Debian). Skips every tool that is already at the right version.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf '\033[1m[tools]\033[0m %s\n' "$*"; }

# wasm32 targets (SIMD128 flags come from .cargo/config.toml): the browser and Node builds, and
# wasm32-wasip1 for the CLI the npm package runs under Node's WASI.
for t in wasm32-unknown-unknown wasm32-wasip1; do
  if ! rustup target list --installed | grep -qx "$t"; then
    log "rustup target add $t"
    rustup target add "$t"
  fi
done

# wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock (its runner executes the
# wasm32 tests under Node). Without --locked: its lockfile wants a crate the registry lacks.
wb_version="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)"
if [[ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]]; then
  log "cargo install wasm-bindgen-cli --version $wb_version (about 2-3 minutes)"
  cargo install wasm-bindgen-cli --version "$wb_version"
fi

# esbuild (npm) minifies the site widget's scripts and style (js/build.sh → js/pkg/widget-ui).
ESBUILD_VERSION=0.28.2
esbuild_dir="$root/target/tools/esbuild"
if [[ "$("$esbuild_dir/node_modules/.bin/esbuild" --version 2>/dev/null)" != "$ESBUILD_VERSION" ]]; then
  log "npm install esbuild@$ESBUILD_VERSION → ${esbuild_dir#$root/}"
  mkdir -p "$esbuild_dir"
  npm install --prefix "$esbuild_dir" --no-save --no-audit --no-fund "esbuild@$ESBUILD_VERSION" >/dev/null
fi

# Python venv for the reference, packer and fixtures.
"$root/scripts/venv.sh"
log "tools ready"
