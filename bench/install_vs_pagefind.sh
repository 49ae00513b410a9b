#!/usr/bin/env bash
# From an empty folder to a finished site bundle, on the same machine in the same run:
#   npm    — `npm install` of the packed `lightembed` (js/, npm pack) + `npx lightembed site`
#   native — `lightembed site` with a release build of the CLI (building it from source is not
#            counted: ~20 min with the toolchain on 2 cores)
#   pagefind — `npm install pagefind@$PAGEFIND` + `npx pagefind --site`
# Every npm run has a fresh HOME (no npm cache) and no cargo on PATH. Prints install and build
# seconds and the build's peak RSS (GNU time) per site. Needs network access to the npm registry
# (for pagefind), js/build.sh's output and target/release/lightembed.
#
#   bash bench/install_vs_pagefind.sh [SITE…]   (default: the Rust book and the Python docs)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PAGEFIND="${PAGEFIND:-1.6.0}"
native="$root/target/release/lightembed"
sites=("$@")
[[ ${#sites[@]} -eq 0 ]] && sites=(/usr/share/doc/rust-doc/html/book /usr/share/doc/python3.11/html)
work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
tgz="$(cd "$root/js" && npm pack --silent --pack-destination "$work")"
user_path="$(dirname "$(command -v node)"):/usr/bin:/bin"
fresh() { rm -rf "$work/home" "$work/app"; mkdir -p "$work/home" "$work/app"; }
as_user() { (cd "$work/app" && env -i HOME="$work/home" PATH="$user_path" "$@"); }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
# Runs "$@" under GNU time; prints "SECONDS PEAK_MIB".
timed() {
  local t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  local t1=$EPOCHREALTIME
  echo "$(secs "$t0" "$t1") $(awk '{printf "%.1f", $1/1024}' "$work/rss")"
}
echo "lightembed npm tarball: $(wc -c <"$work/$tgz") bytes; pagefind $PAGEFIND; $(nproc) cores"
printf '%-28s %-9s %10s %10s %10s %10s\n' site tool install_s build_s total_s peak_MiB
for site in "${sites[@]}"; do
  name="$(basename "$(dirname "$site")")/$(basename "$site")"
  # npm: lightembed
  fresh; t0=$EPOCHREALTIME; as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error "$work/$tgz" >/dev/null; t1=$EPOCHREALTIME
  rm -rf "$work/s"; cp -r "$site" "$work/s"
  read -r b m < <(timed env -i HOME="$work/home" PATH="$user_path" "$work/app/node_modules/.bin/lightembed" site --site "$work/s" --quiet)
  i=$(secs "$t0" "$t1"); printf '%-28s %-9s %10s %10s %10s %10s\n' "$name" npm "$i" "$b" "$(awk -v a="$i" -v b="$b" 'BEGIN{printf "%.1f", a+b}')" "$m"
  # native
  rm -rf "$work/s"; cp -r "$site" "$work/s"
  read -r b m < <(timed "$native" site --site "$work/s" --quiet)
  printf '%-28s %-9s %10s %10s %10s %10s\n' "$name" native - "$b" "$b" "$m"
  # pagefind
  fresh; t0=$EPOCHREALTIME; as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error "pagefind@$PAGEFIND" >/dev/null; t1=$EPOCHREALTIME
  rm -rf "$work/s"; cp -r "$site" "$work/s"
  read -r b m < <(timed env -i HOME="$work/home" PATH="$user_path" "$work/app/node_modules/.bin/pagefind" --site "$work/s")
  i=$(secs "$t0" "$t1"); printf '%-28s %-9s %10s %10s %10s %10s\n' "$name" pagefind "$i" "$b" "$(awk -v a="$i" -v b="$b" 'BEGIN{printf "%.1f", a+b}')" "$m"
done
