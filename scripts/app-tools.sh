#!/usr/bin/env bash
# Installs what the browser app needs on top of scripts/tools.sh (wasm32 target, wasm-bindgen-cli,
# Python venv), from the ordinary registries only. Idempotent: every tool is version-checked first.
#
#   trunk 0.21.14        cargo install --locked (0.22 needs a newer rustc)     ~8 min once
#   wasm-opt 132         npm binaryen@132 → target/tools/binaryen (never Debian's binaryen 108)
#   node + npm           apt (only if missing)
#   chromium, chromedriver  apt (only with --browser: the e2e test and the wasm browser tests)
#   playwright-core      npm, in tests/e2e (only with --browser)
#   hugo                 apt (only with --browser: js/test-recipes.sh runs the Hugo recipe)
#
# Usage: scripts/app-tools.sh [--browser]
# Callers put target/tools/binaryen/node_modules/.bin and ~/.cargo/bin first on PATH (trunk runs
# offline and takes wasm-bindgen / wasm-opt from PATH), as run.sh and e2e.sh do.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[app-tools]\033[0m %s\n' "$*"; }
browser=0
[[ "${1:-}" == "--browser" ]] && browser=1

TRUNK_VERSION=0.21.14
BINARYEN_VERSION=132
PLAYWRIGHT_VERSION="$(sed -n 's/.*"playwright-core": *"\([^"]*\)".*/\1/p' tests/e2e/package.json)"
binaryen_dir="$root/target/tools/binaryen"

sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  log "apt-get install -y $*"
  sudo_ apt-get install -y "$@" >/dev/null || { sudo_ apt-get update >/dev/null && sudo_ apt-get install -y "$@" >/dev/null; }
}

"$root/scripts/tools.sh"

# trunk
if [[ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]]; then
  log "cargo install trunk --version $TRUNK_VERSION --locked (about 8 minutes on 2 cores)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# node + npm (for wasm-opt and the e2e test)
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  apt_install nodejs npm
fi

# wasm-opt from npm binaryen (Debian's binaryen 108 breaks wasm-bindgen's externref output)
if [[ "$("$binaryen_dir/node_modules/.bin/wasm-opt" --version 2>/dev/null | awk '{print $3}')" != "$BINARYEN_VERSION" ]]; then
  log "npm install binaryen@$BINARYEN_VERSION → ${binaryen_dir#$root/}"
  mkdir -p "$binaryen_dir"
  npm install --prefix "$binaryen_dir" --no-save --no-audit --no-fund "binaryen@$BINARYEN_VERSION" >/dev/null
fi

if [[ $browser -eq 1 ]]; then
  if ! [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    apt_install chromium chromium-driver
  fi
  # A real site for the `lightembed site` end-to-end test (and the corpus re-cut check).
  if ! [[ -f /usr/share/doc/rust-doc/html/book/index.html ]]; then
    apt_install rust-doc
  fi
  # A static-site generator whose recipe (js/README.md) CI runs.
  if ! command -v hugo >/dev/null; then
    apt_install hugo
  fi
  have="$(node -p "require('$root/tests/e2e/node_modules/playwright-core/package.json').version" 2>/dev/null || true)"
  if [[ "$have" != "$PLAYWRIGHT_VERSION" ]]; then
    log "npm install playwright-core@$PLAYWRIGHT_VERSION in tests/e2e"
    (cd tests/e2e && npm install --no-audit --no-fund >/dev/null)
  fi
fi
log "app tools ready: $(trunk --version), wasm-opt $("$binaryen_dir/node_modules/.bin/wasm-opt" --version | awk '{print $3}'), wasm-bindgen $(wasm-bindgen --version | awk '{print $2}')"
