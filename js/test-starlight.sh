#!/usr/bin/env bash
# Tests `lightembed/starlight` (js/starlight/) with the real generator, as a user meets it:
#   1. `npm pack js/` and, in an empty folder with a fresh HOME, `npm install` of astro,
#      @astrojs/starlight (the versions below) and that tarball;
#   2. a minimal Starlight site (three Markdown pages, `base: "/docs"`) whose astro.config.mjs
#      has `starlight({ title, plugins: [lightembedStarlight()] })`, built with `npx astro build`;
#   3. js/test/starlight.test.mjs on its dist/: the bundle written by the plugin's
#      `astro:build:done` hook and no dist/pagefind/, the pages carry the search button and load
#      /docs/lightembed/lightembed-ui.js, `lightembed search` on the bundle (the installed
#      package's command), and in Chromium: Ctrl-K opens the dialog, a question gets results
#      linked under /docs/, Enter follows one, `/` opens it (not while typing in a field), Esc
#      closes it, Starlight's light and dark themes colour the box.
# Needs the npm registry (nothing else from the network), js/build.sh's output, Chromium
# (CHROMIUM, default /usr/bin/chromium) and playwright-core (`cd tests/e2e && npm install`).
# Skips nothing: a missing prerequisite is an error. Prints how long each part took.
#
#   bash js/test-starlight.sh            # ASTRO_VERSION=… STARLIGHT_VERSION=… to try others;
#                                        # KEEP=1 keeps the site's folder (printed) to look at
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[starlight]\033[0m %s\n' "$*"; }
fail() { echo "js/test-starlight.sh: $*" >&2; exit 1; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
# Versions that install together and run on Node 20 (the package's floor): @astrojs/starlight
# 0.37.7 is the last that takes astro 5 (^5.5.0); from 0.38 it wants astro 6, and astro 6 and 7
# need Node ≥ 22.12 (on Node 22: ASTRO_VERSION=7.3.5 STARLIGHT_VERSION=0.42.4).
astro_version="${ASTRO_VERSION:-5.18.2}"
starlight_version="${STARLIGHT_VERSION:-0.37.7}"

[[ -f js/pkg/node/lightembed_wasm_bg.wasm && -f js/pkg/widget/lightembed_wasm_bg.wasm ]] \
  || fail "js/pkg is not built: run bash js/build.sh"
grep -q '"./starlight"' js/package.json || fail "js/package.json has no ./starlight export: run bash js/build.sh"
[[ -x "${CHROMIUM:-/usr/bin/chromium}" ]] || fail "no Chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)"
[[ -d tests/e2e/node_modules/playwright-core ]] || fail "no playwright-core: cd tests/e2e && npm install"

t_start=$EPOCHREALTIME
work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-starlight-XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then trap 'log "kept $work/site"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/home" "$work/pack" "$work/site"
tgz="$(cd js && npm pack --silent --pack-destination "$work/pack")"
listing="$(tar -tzf "$work/pack/$tgz")"
for f in starlight/index.mjs starlight/index.d.mts starlight/Search.astro; do
  grep -qx "package/$f" <<<"$listing" || fail "$tgz has no $f"
done
log "npm pack: $tgz, $(wc -c <"$work/pack/$tgz") bytes"

site="$work/site"
cat >"$site/package.json" <<'JSON'
{ "name": "starlight-lightembed-test", "private": true, "type": "module" }
JSON
mkdir -p "$site/src/content/docs/guides" "$site/public"
printf '%s\n' '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="green"/></svg>' >"$site/public/favicon.svg"
cat >"$site/astro.config.mjs" <<'JS'
import { defineConfig } from "astro/config";
import starlight from "@astrojs/starlight";
import lightembedStarlight from "lightembed/starlight";

export default defineConfig({
  base: "/docs",
  telemetry: false,
  integrations: [
    starlight({
      title: "Kitchen Garden",
      sidebar: [{ label: "Guides", autogenerate: { directory: "guides" } }],
      plugins: [lightembedStarlight()],
    }),
  ],
});
JS
cat >"$site/src/content.config.mjs" <<'JS'
import { defineCollection } from "astro:content";
import { docsLoader } from "@astrojs/starlight/loaders";
import { docsSchema } from "@astrojs/starlight/schema";

export const collections = { docs: defineCollection({ loader: docsLoader(), schema: docsSchema() }) };
JS
cat >"$site/src/content/docs/index.md" <<'MD'
---
title: Kitchen Garden
description: Growing vegetables at home.
---

This handbook covers a small vegetable plot: how to prepare the ground in spring and how to keep
the plants supplied with water through the summer.

## Planning the beds

Put the beds where they get six hours of sun. Keep paths wide enough for a wheelbarrow.
MD
cat >"$site/src/content/docs/guides/watering.md" <<'MD'
---
title: Watering
description: When and how much to water.
---

Tomato plants need deep watering two or three times a week rather than a little every day.
Water early in the morning, at the base of the plant, so the leaves stay dry and blight does not
spread.

## Drip irrigation

A drip line under the mulch delivers water slowly to the roots and wastes almost none to
evaporation. A timer opens the valve at dawn.

## Signs of too much water

Yellow lower leaves and split fruit mean the soil stays soggy: water less often.
MD
cat >"$site/src/content/docs/guides/soil.md" <<'MD'
---
title: Soil and compost
description: Preparing the ground.
---

Dig in two inches of compost each spring. Compost feeds the worms, which keep the soil loose so
roots can breathe.

## Testing the pH

Most vegetables like a pH between 6 and 7. Add lime to acid soil and sulphur to chalky soil.
MD

# A user's machine: a fresh HOME (no npm cache, no ~/.cargo), PATH without cargo or rustc.
user_path="$(dirname "$(command -v node)"):/usr/bin:/bin"
as_user() {
  env -i HOME="$work/home" PATH="$user_path" TMPDIR="${TMPDIR:-/tmp}" ASTRO_TELEMETRY_DISABLED=1 \
    ${npm_config_registry:+npm_config_registry="$npm_config_registry"} "$@"
}
t0=$EPOCHREALTIME
(cd "$site" && as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
  "astro@$astro_version" "@astrojs/starlight@$starlight_version" "$work/pack/$tgz" >/dev/null)
t1=$EPOCHREALTIME
log "npm install astro@$astro_version @astrojs/starlight@$starlight_version + lightembed: $(secs "$t0" "$t1") s"

t0=$EPOCHREALTIME
(cd "$site" && as_user npx --no-install astro build) >"$work/astro-build.log" 2>&1 \
  || { cat "$work/astro-build.log"; fail "astro build failed"; }
t1=$EPOCHREALTIME
grep -E 'lightembed' "$work/astro-build.log" | sed 's/^/    /' || true
log "npx astro build (pages + lightembed bundle): $(secs "$t0" "$t1") s"

t0=$EPOCHREALTIME
LIGHTEMBED_STARLIGHT_SITE="$site" node --test --test-reporter=spec js/test/starlight.test.mjs
t1=$EPOCHREALTIME
log "js/test/starlight.test.mjs: $(secs "$t0" "$t1") s; whole test $(secs "$t_start" "$t1") s"
