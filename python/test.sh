#!/usr/bin/env bash
# Builds the Python package `lightembed` (one abi3 wheel, maturin + PyO3) and tests it as a user gets
# it: installed with pip into a fresh venv, with no Rust toolchain on PATH and a fresh HOME, then
# pytest (python/tests) against the CLI's results.
#
#   python/test.sh             # from anywhere
#   python/test.sh --browser   # then 6. (what scripts/test.sh runs after `cargo test`)
#
# 1. the widget's wasm (js/build.sh: `lightembed site` embeds it; a second run takes ~1 s),
# 2. the build venv target/py-build-venv with the pinned maturin (python/requirements-build.txt;
#    created once, reinstalled when the pin changes),
# 3. `maturin build --release` → target/wheels/lightembed-VERSION-cp39-abi3-PLATFORM.whl (cargo
#    skips what is up to date; the first build takes a few minutes: thin LTO),
# 4. the CLI binary the tests compare against ($LIGHTEMBED_CLI, default target/debug/lightembed,
#    built here),
# 5. a fresh venv in a temporary folder: the wheel + python/requirements-test.txt, PATH without
#    ~/.cargo/bin, HOME a new empty folder (pip's cache: target/py-pip-cache, kept between runs),
#    then pytest python/tests from outside the repository (so `import lightembed` is the wheel's),
# 6. with --browser: python/test-sphinx-site.sh in that venv (a Sphinx site with lightembed.sphinx
#    built and searched in headless Chromium; needs Chromium and playwright-core).
set -euo pipefail
browser=0
[[ "${1:-}" == "--browser" ]] && browser=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export PATH="$HOME/.cargo/bin:$PATH"
log() { printf '\033[1m[python]\033[0m %s\n' "$*"; }

# The interpreter the venvs are made from (a real path, not a pyenv shim that needs HOME).
python="$(python3 -c 'import sys; print(sys.executable)')"

# 1. `lightembed site` (build_site, the console script) embeds js/pkg/widget{,-model} when they exist at build time.
bash js/build.sh

# 2. Build venv with the pinned maturin.
venv_build="$root/target/py-build-venv"
want_maturin="$(sed -n 's/^maturin==//p' python/requirements-build.txt)"
if [[ "$("$venv_build/bin/maturin" --version 2>/dev/null | awk '{print $2}')" != "$want_maturin" ]]; then
  log "build venv $venv_build (maturin $want_maturin)"
  rm -rf "$venv_build"
  "$python" -m venv "$venv_build"
  "$venv_build/bin/pip" install --quiet -r python/requirements-build.txt
fi

# 3. The wheel.
log "maturin build --release (python/ → target/wheels)"
rm -f target/wheels/lightembed-*.whl
(cd python && "$venv_build/bin/maturin" build --release --interpreter "$venv_build/bin/python" \
  --out "$root/target/wheels")
wheel="$(ls target/wheels/lightembed-*.whl)"
[[ "$(wc -l <<<"$wheel")" == 1 ]] || { echo "python/test.sh: expected one wheel, got: $wheel" >&2; exit 1; }

# 4. The CLI the tests compare against.
if [[ -z "${LIGHTEMBED_CLI:-}" ]]; then
  cargo build --quiet -p lightembed-cli
  export LIGHTEMBED_CLI="$root/target/debug/lightembed"
fi

# 5. A fresh venv, as a user gets it: no cargo on PATH, an empty HOME.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/home"
user_path="$(tr ':' '\n' <<<"$PATH" | grep -v -e '\.cargo/bin' -e '^$' | paste -sd: -)"
"$python" -m venv "$tmp/venv"
user_env=(env HOME="$tmp/home" PATH="$tmp/venv/bin:$user_path" PIP_CACHE_DIR="$root/target/py-pip-cache"
  LIGHTEMBED_CLI="$LIGHTEMBED_CLI" PYTHONDONTWRITEBYTECODE=1)
log "pip install $(basename "$wheel") into a fresh venv (HOME=$tmp/home, no ~/.cargo/bin on PATH)"
"${user_env[@]}" "$tmp/venv/bin/pip" install --quiet "$wheel" -r python/requirements-test.txt
if "${user_env[@]}" sh -c 'command -v cargo rustc' >/dev/null; then
  echo "python/test.sh: a Rust toolchain is still on the test PATH" >&2
  exit 1
fi
log "pytest python/tests (CLI: $LIGHTEMBED_CLI)"
(cd "$tmp" && "${user_env[@]}" "$tmp/venv/bin/python" -m pytest "$root/python/tests" -q -rfEs -p no:cacheprovider)
log "wheel: $(basename "$wheel"), $(stat -c %s "$wheel") bytes"

# 6. A Sphinx site in Chromium, built with the venv above.
if [[ $browser -eq 1 ]]; then
  LIGHTEMBED_VENV="$tmp/venv" bash "$root/python/test-sphinx-site.sh"
fi
