#!/usr/bin/env bash
# Tests the npm package as a user gets it: `npm pack js/`, then `npm install` of that tarball into
# an empty folder with a fresh HOME and no Rust toolchain on PATH, then
#   1. `npx lightembed site` on the Rust book (timed, against the native CLI: the same bundle),
#   2. js/test/cli.test.mjs and api.test.mjs against the installed package,
#   3. the widget end-to-end test (tests/e2e/site.spec.mjs) on a bundle the installed CLI builds
#      (needs Chromium and playwright-core: scripts/app-tools.sh --browser).
# Prints the tarball's size. Needs js/build.sh's output and the native CLI (LIGHTEMBED_CLI,
# default target/debug/lightembed) to compare against.
#
#   bash js/test-packed.sh [--no-e2e]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[npm-packed]\033[0m %s\n' "$*"; }
e2e=1
[[ "${1:-}" == "--no-e2e" ]] && e2e=0
native="${LIGHTEMBED_CLI:-$root/target/debug/lightembed}"

work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-npm-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/app" "$work/pack"
tgz="$(cd js && npm pack --silent --pack-destination "$work/pack")"
log "npm pack: $tgz, $(wc -c <"$work/pack/$tgz") bytes ($(tar -tzf "$work/pack/$tgz" | wc -l) files)"

# A user's machine: a fresh HOME (no npm cache, no ~/.cargo), PATH without cargo or rustc.
user_path="$(dirname "$(command -v node)"):/usr/bin:/bin"
as_user() { env -i HOME="$work/home" PATH="$user_path" TMPDIR="${TMPDIR:-/tmp}" "$@"; }
if as_user sh -c 'command -v cargo || command -v rustc' >/dev/null; then
  echo "js/test-packed.sh: cargo or rustc is still on the user's PATH ($user_path)" >&2
  exit 1
fi
t0=$EPOCHREALTIME
(cd "$work/app" && as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error "$work/pack/$tgz" >/dev/null)
t1=$EPOCHREALTIME
log "npm install: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"

book="${BOOK:-/usr/share/doc/rust-doc/html/book}"
if [[ -f "$book/index.html" ]]; then
  cp -r "$book" "$work/book-npm"
  cp -r "$book" "$work/book-native"
  t0=$EPOCHREALTIME
  (cd "$work/app" && as_user npx --no-install lightembed site --site "$work/book-npm" --quiet | head -1)
  t1=$EPOCHREALTIME
  "$native" site --site "$work/book-native" --quiet >/dev/null
  log "npx lightembed site on the Rust book: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
  if ! diff -r "$work/book-npm/lightembed" "$work/book-native/lightembed" >/dev/null; then
    echo "js/test-packed.sh: the npm package's bundle differs from the native CLI's" >&2
    exit 1
  fi
  log "the bundle equals the native CLI's, file for file"
fi

log "node --test js/test/cli.test.mjs js/test/api.test.mjs against the installed package"
LIGHTEMBED_NODE_CLI="$work/app/node_modules/.bin/lightembed" LIGHTEMBED_PACKAGE="$work/app" \
  LIGHTEMBED_CLI="$native" node --test js/test/cli.test.mjs js/test/api.test.mjs

if [[ $e2e -eq 1 ]]; then
  log "widget end-to-end on a bundle from the installed package"
  # The e2e test runs `BIN site --site DIR --quiet`: BIN is the installed command, run as a user.
  cat >"$work/lightembed-user" <<SH
#!/bin/sh
exec env -i HOME="$work/home" PATH="$user_path" "$work/app/node_modules/.bin/lightembed" "\$@"
SH
  chmod +x "$work/lightembed-user"
  node tests/e2e/site.spec.mjs "$work/lightembed-user"
fi
