#!/usr/bin/env bash
# Build-time cost of search on a real-size Astro Starlight site, lightembed against Pagefind
# (Starlight's default search). The site: Node.js's API documentation in Markdown as Debian's
# nodejs-doc package installs it (/usr/share/doc/nodejs/api/*.md, ~64 large pages), copied into
# a Starlight site, with the versions js/test-starlight.sh pins, npm installed with a fresh HOME
# (astro, @astrojs/starlight and `npm pack js/`). The same site is built three ways:
#   pagefind    Starlight as it ships: `astro build` runs Pagefind after the pages
#   none        `pagefind: false` and no search at all: the baseline
#   lightembed  `plugins: [lightembedStarlight()]` (sets `pagefind: false`, writes dist/lightembed/)
# RUNS rounds, each building the three in turn (so a change in the machine's load falls on all
# three); every build is a full one (dist/, .astro/ and Vite's and Astro's caches removed first).
# Prints wall seconds and peak RSS (GNU time: the largest single process — Pagefind indexes in
# its own process, lightembed in Astro's node process), pages, passages and bundle sizes. The cost
# a search adds is its build minus the baseline. A benchmark, not a test: not in CI. Needs the npm
# registry and js/build.sh's output.
#
# The copy of the docs is changed mechanically, never by hand (the source is only read):
#   - each page gets the `title` frontmatter Starlight needs, from its first `# ` heading outside
#     code fences, and that heading line is dropped (Starlight prints the title as the page's h1;
#     kept, every page would have two); index.md has no heading and is titled "Node.js API";
#   - nothing else: the raw HTML, HTML comments and `.md` links build as they are under Astro's
#     Markdown (not MDX).
# Astro itself gets one change in the install (below): its data store's save debounce, 5 s.
#
#   bash bench/starlight_vs_pagefind.sh     # RUNS=3 NODE_DOCS=/usr/share/doc/nodejs/api
#                                           # ASTRO_VERSION=… STARLIGHT_VERSION=… as js/test-starlight.sh;
#                                           # KEEP=1 keeps the work folder (printed)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fail() { echo "bench/starlight_vs_pagefind.sh: $*" >&2; exit 1; }
astro_version="${ASTRO_VERSION:-5.18.2}"
starlight_version="${STARLIGHT_VERSION:-0.37.7}"
RUNS="${RUNS:-3}"
docs="${NODE_DOCS:-/usr/share/doc/nodejs/api}"
shopt -s nullglob
sources=("$docs"/*.md)
[[ ${#sources[@]} -gt 0 ]] || fail "no Markdown in $docs (apt-get install nodejs-doc)"
[[ -f js/pkg/node/lightembed_wasm_bg.wasm && -f js/pkg/widget/lightembed_wasm_bg.wasm ]] \
  || fail "js/pkg is not built: run bash js/build.sh"
[[ -x /usr/bin/time ]] || fail "no GNU time at /usr/bin/time (apt-get install time)"

work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-starlight-bench-XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then trap 'echo "kept $work"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/home" "$work/pack" "$work/site"
tgz="$(cd js && npm pack --silent --pack-destination "$work/pack")"
site="$work/site"
user_path="$(dirname "$(command -v node)"):/usr/bin:/bin"
user=(env -i HOME="$work/home" PATH="$user_path" TMPDIR="${TMPDIR:-/tmp}" ASTRO_TELEMETRY_DISABLED=1
  ${npm_config_registry:+npm_config_registry="$npm_config_registry"})
as_user() { "${user[@]}" "$@"; }

cat >"$site/package.json" <<'JSON'
{ "name": "starlight-bench-nodejs-api", "private": true, "type": "module" }
JSON
(cd "$site" && as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
  "astro@$astro_version" "@astrojs/starlight@$starlight_version" "$work/pack/$tgz" >/dev/null)
# Astro 5's content layer saves its data store (node_modules/.astro/data-store.json, which the
# build renders from) 500 ms after the last entry; with pages this large on a loaded machine a save
# is still being written when the next starts, and the last one is lost: the build then has only
# the first ~25 pages, without an error (withastro/astro issues 13310, 15453). The workaround from
# 13310, the same for all three builds: a 5 s debounce (one save, after the last page; at most 5 s
# more per build). Each build below checks it has every page.
store_js="$site/node_modules/astro/dist/content/mutable-data-store.js"
grep -q '^const SAVE_DEBOUNCE_MS = 500;$' "$store_js" || fail "no SAVE_DEBOUNCE_MS = 500 in $store_js"
sed -i 's/^const SAVE_DEBOUNCE_MS = 500;$/const SAVE_DEBOUNCE_MS = 5000;/' "$store_js"
mkdir -p "$site/src/content/docs"
cat >"$site/src/content.config.mjs" <<'JS'
import { defineCollection } from "astro:content";
import { docsLoader } from "@astrojs/starlight/loaders";
import { docsSchema } from "@astrojs/starlight/schema";

export const collections = { docs: defineCollection({ loader: docsLoader(), schema: docsSchema() }) };
JS

# The pages: frontmatter title from the first `# ` heading outside ``` fences, that line dropped.
for src in "${sources[@]}"; do
  awk -v fallback="Node.js API" '
    { lines[NR] = $0 }
    /^ *(```|~~~)/ { fence = !fence }
    !fence && !title && /^# / { title = substr($0, 3); drop = NR }
    END {
      if (!title) title = fallback
      gsub(/\\/, "\\\\", title); gsub(/"/, "\\\"", title)
      printf "---\ntitle: \"%s\"\n---\n\n", title
      for (i = 1; i <= NR; i++) if (i != drop) print lines[i]
    }' "$src" >"$site/src/content/docs/$(basename "$src")"
done

# astro.config.mjs for one of the three builds.
write_config() {
  local search
  case "$1" in
    pagefind) search="" ;;
    none) search="pagefind: false," ;;
    lightembed) search="plugins: [lightembedStarlight()]," ;;
  esac
  cat >"$site/astro.config.mjs" <<JS
import { defineConfig } from "astro/config";
import starlight from "@astrojs/starlight";
import lightembedStarlight from "lightembed/starlight";

export default defineConfig({
  telemetry: false,
  integrations: [starlight({ title: "Node.js API", $search })],
});
JS
}

secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
mb() { du -sb "$1" | awk '{printf "%.1f", $1/1e6}'; }
row() { printf '%-12s %4s %9s %9s  %s\n' "$@"; }
# One full build: "SECONDS PEAK_MIB"; astro's output in $work/$1.log.
build() {
  write_config "$1"
  rm -rf "$site/dist" "$site/.astro" "$site/node_modules/.astro" "$site/node_modules/.vite"
  local t0=$EPOCHREALTIME
  (cd "$site" && /usr/bin/time -f '%M' -o "$work/rss" "${user[@]}" node_modules/.bin/astro build) \
    >"$work/$1.log" 2>&1 || { tail -30 "$work/$1.log" >&2; fail "astro build ($1) failed"; }
  local t1=$EPOCHREALTIME
  echo "$(secs "$t0" "$t1") $(awk '{printf "%.0f", $1/1024}' "$work/rss")"
}

echo "Node.js $(node --version) API docs: ${#sources[@]} Markdown pages, $(cat "${sources[@]}" | wc -c) bytes ($docs);" \
  "astro@$astro_version, @astrojs/starlight@$starlight_version, $tgz; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
row search run seconds peak_MiB notes
declare -A total
for ((i = 1; i <= RUNS; i++)); do
  for mode in none pagefind lightembed; do
    read -r s m < <(build "$mode")
    total[$mode]="${total[$mode]:-} $s"
    pages="$(find "$site/dist" -name '*.html' | wc -l)"
    [[ "$pages" -eq $((${#sources[@]} + 1)) ]] || fail "$mode: $pages HTML files, not ${#sources[@]} pages + 404.html"
    note="$pages HTML files, dist $(mb "$site/dist") MB"
    case "$mode" in
      pagefind)
        [[ -d "$site/dist/pagefind" ]] || fail "no dist/pagefind/ in the default build"
        note+="; $(grep -oE 'Found [0-9]+ HTML files|search index in [0-9.]+m?s' "$work/$mode.log" | paste -sd' ' - || true)"
        note+="; dist/pagefind $(mb "$site/dist/pagefind") MB" ;;
      lightembed)
        [[ -d "$site/dist/lightembed" && ! -d "$site/dist/pagefind" ]] || fail "no dist/lightembed/ (or a dist/pagefind/) in the lightembed build"
        note+="; $(grep -oE '[0-9]+ pages, [0-9]+ passages → .* in [0-9.]+ s' "$work/$mode.log" | sed 's/ → .* in / in /' || true)"
        note+="; dist/lightembed $(mb "$site/dist/lightembed") MB" ;;
      none) [[ ! -d "$site/dist/pagefind" ]] || fail "a dist/pagefind/ with pagefind: false" ;;
    esac
    row "$mode" "$i" "$s" "$m" "$note (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
# The cost of each search: its build minus the baseline, by medians.
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
base="$(median <<<"${total[none]}")"
for mode in pagefind lightembed; do
  med="$(median <<<"${total[$mode]}")"
  echo "$mode: median $med s against the baseline's $base s: $(awk -v a="$base" -v b="$med" 'BEGIN{printf "%+.1f s (%+.0f %%)", b-a, 100*(b-a)/a}')"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
