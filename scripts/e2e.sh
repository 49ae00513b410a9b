#!/usr/bin/env bash
# End-to-end test of the browser app in headless Chromium. Installs what is missing
# (scripts/app-tools.sh --browser: trunk, wasm-opt, chromium + chromedriver, playwright-core),
# builds dist/ with trunk (release), then runs tests/e2e/app.spec.mjs. Screenshots: target/e2e/.
#
#   scripts/e2e.sh                    # ~400 passages (through ch04-01), release build (what run.sh serves)
#   E2E_LIMIT=3232 scripts/e2e.sh     # the whole corpus
#   E2E_PROFILE=dev scripts/e2e.sh    # `trunk build` without --release: same app and checks,
#                                     # ~3x faster to compile, no wasm-opt (scripts/test.sh uses it)
#   E2E_SKIP_BUILD=1 scripts/e2e.sh   # reuse dist/
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[e2e]\033[0m %s\n' "$*"; }

"$root/scripts/app-tools.sh" --browser
export PATH="$root/target/tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"
unset RUSTFLAGS

if [[ -z "${E2E_SKIP_BUILD:-}" ]]; then
  cargo fetch >/dev/null
  if [[ "${E2E_PROFILE:-release}" == dev ]]; then
    log "trunk build (dev profile)"
    trunk build
  else
    log "trunk build --release=true"
    trunk build --release=true
  fi
fi
log "node tests/e2e/app.spec.mjs"
node tests/e2e/app.spec.mjs
