#!/usr/bin/env bash
# Runs js/README.md's Hugo recipe on a small real site, as a user meets it:
#   1. `npm pack js/` and, in the Hugo site's folder with a fresh HOME and no Rust toolchain on
#      PATH, `npm install` of that tarball;
#   2. a Hugo site (Debian's `hugo`, scripts/app-tools.sh --browser installs it): hugo.toml with a
#      base URL under /docs/, four Markdown pages, a minimal base template that includes the
#      recipe's partial (layouts/partials/lightembed.html, the README's lines, checked against
#      js/README.md) and has the recipe's <lightembed-search> element;
#   3. the recipe's command, word for word: `hugo && npx lightembed site --site public`;
#   4. `npx lightembed search` on public/lightembed/: each question's page first;
#   5. tests/e2e/generator.spec.mjs: public/ served as /docs/ by `python3 -m http.server`
#      (started and stopped by the test), in Chromium a question typed in the box, the right page
#      first, clicked, landed on; screenshot target/e2e/hugo-results.png.
# The mdBook recipe is not run here: mdBook is on crates.io only and `cargo install` takes longer
# than this step may (js/README.md, "Recipes"). Needs the npm registry (nothing else from the
# network), js/build.sh's output, hugo, Chromium and playwright-core. Prints how long each part took.
#
#   bash js/test-recipes.sh          # KEEP=1 keeps the site (printed)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[recipes]\033[0m %s\n' "$*"; }
fail() { echo "js/test-recipes.sh: $*" >&2; exit 1; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }

[[ -f js/pkg/node/lightembed_wasm_bg.wasm && -f js/pkg/widget/lightembed_wasm_bg.wasm ]] \
  || fail "js/pkg is not built: run bash js/build.sh"
command -v hugo >/dev/null || fail "no hugo (apt-get install hugo; scripts/app-tools.sh --browser)"
[[ -x "${CHROMIUM:-/usr/bin/chromium}" ]] || fail "no Chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)"
[[ -d tests/e2e/node_modules/playwright-core ]] || fail "no playwright-core: cd tests/e2e && npm install"

# The recipe as js/README.md gives it: these lines must be there, word for word.
partial_css='<link rel="stylesheet" href="{{ "lightembed/lightembed-ui.css" | relURL }}">'
partial_js='<script type="module" src="{{ "lightembed/lightembed-ui.js" | relURL }}"></script>'
include='{{ partial "lightembed.html" . }}'
element='<lightembed-search placeholder="Search the docs"></lightembed-search>'
command='hugo && npx lightembed site --site public'
for line in "$partial_css" "$partial_js" "$include" "$element" "$command"; do
  grep -qF -- "$line" js/README.md || fail "js/README.md's Hugo recipe no longer has: $line"
done

t_start=$EPOCHREALTIME
work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-recipes-XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then trap 'log "kept $work"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/home" "$work/pack" "$work/www"
tgz="$(cd js && npm pack --silent --pack-destination "$work/pack")"

# A user's machine: a fresh HOME (no npm cache, no ~/.cargo), PATH without cargo or rustc.
user_path="$(dirname "$(command -v node)"):$(dirname "$(command -v hugo)"):/usr/bin:/bin"
as_user() {
  env -i HOME="$work/home" PATH="$user_path" TMPDIR="${TMPDIR:-/tmp}" npm_config_update_notifier=false \
    ${npm_config_registry:+npm_config_registry="$npm_config_registry"} "$@"
}
if as_user sh -c 'command -v cargo || command -v rustc' >/dev/null; then fail "a Rust toolchain is on the user's PATH"; fi

# The Hugo site.
site="$work/hugo"
mkdir -p "$site/layouts/_default" "$site/layouts/partials" "$site/content/clay" "$site/content/kiln"
cat >"$site/hugo.toml" <<'TOML'
baseURL = "https://example.org/docs/"
title = "Pottery Studio"
languageCode = "en"
disableKinds = ["taxonomy", "term", "RSS", "sitemap"]
TOML
printf '%s\n%s\n' "$partial_css" "$partial_js" >"$site/layouts/partials/lightembed.html"
cat >"$site/layouts/_default/baseof.html" <<HTML
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ .Title }} | {{ .Site.Title }}</title>
$include
</head>
<body>
<header><a href="{{ "" | relURL }}">{{ .Site.Title }}</a>
$element
</header>
<main>{{ block "main" . }}{{ end }}</main>
</body>
</html>
HTML
cat >"$site/layouts/_default/single.html" <<'HTML'
{{ define "main" }}<h1>{{ .Title }}</h1>
{{ .Content }}{{ end }}
HTML
cat >"$site/layouts/_default/list.html" <<'HTML'
{{ define "main" }}<h1>{{ .Title }}</h1>
{{ .Content }}
<ul>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul>{{ end }}
HTML
cat >"$site/content/_index.md" <<'MD'
---
title: Pottery Studio
---
Handouts for the evening class: preparing clay, glazing, and firing the studio's electric kiln.
MD
cat >"$site/content/clay/wedging.md" <<'MD'
---
title: Wedging clay
---
Knead fresh clay on the canvas table before throwing: rock it forward with the heels of your
hands and fold it back, forty or fifty times, until a cut through the lump shows no holes.

## Reclaiming scraps

Let trimmings dry completely, soak them in a bucket of water, then spread the slurry on plaster
bats until it is firm enough to wedge again.
MD
cat >"$site/content/clay/glazes.md" <<'MD'
---
title: Glazing
---
Stir the glaze bucket until nothing is left on the bottom, then dip each bisqued piece for a
slow count of three.

## Keeping glaze off the shelves

Wipe the foot and the lowest centimetre of every piece clean with a damp sponge. Glaze that
flows in the heat pools at the base and welds the pot to the kiln shelf.
MD
cat >"$site/content/kiln/firing.md" <<'MD'
---
title: Firing the kiln
---
Bisque firing turns bone-dry greenware into porous ceramic. Climb slowly through the first
600 °C: water still in the clay turns to steam and can blow a thick piece apart.

## Cooling

Leave the lid shut until the kiln is below 100 °C. Opening it early cracks pots with the sudden
draught of cold air.
MD

t0=$EPOCHREALTIME
(cd "$site" && as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error "$work/pack/$tgz" >/dev/null)
t1=$EPOCHREALTIME
log "npm install $tgz (into the Hugo site): $(secs "$t0" "$t1") s"

t0=$EPOCHREALTIME
(cd "$site" && as_user sh -c "$command") >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "$command failed"; }
t1=$EPOCHREALTIME
sed 's/^/    /' "$work/build.log"
[[ -f "$site/public/lightembed/manifest.json" ]] || fail "no public/lightembed/manifest.json"
log "$command ($(hugo version | awk '{print $2}')): $(secs "$t0" "$t1") s"
pages="$(as_user node -p 'require(process.argv[1]).index.pages' "$site/public/lightembed/manifest.json")"
[[ "$pages" == 6 ]] || fail "the bundle indexes $pages pages, expected 6 (home, two section lists, three handouts)"

check() {
  local got
  got="$(cd "$site" && as_user npx --no-install lightembed search --index public/lightembed --json -k 1 "$1" \
    | as_user node -e 'let s = ""; process.stdin.on("data", (d) => { s += d; }).on("end", () => console.log(JSON.parse(s).results[0].url))')"
  [[ "$got" == $2 ]] || fail "lightembed search \"$1\": first hit $got, expected $2"
  log "npx lightembed search \"$1\" → $got"
}
check "why did glaze stick my mug to the shelf" 'clay/glazes/*'
check "get the air bubbles out of the clay" 'clay/wedging/*'
check "a pot exploded in the kiln" 'kiln/firing/*'

t0=$EPOCHREALTIME
ln -s "$site/public" "$work/www/docs"
node tests/e2e/generator.spec.mjs --serve "$work/www" --page docs/clay/wedging/ \
  --query "why did glaze stick my mug to the shelf" --expect docs/clay/glazes/index.html --title "Glazing" \
  --shot hugo-results.png
t1=$EPOCHREALTIME
log "Chromium: $(secs "$t0" "$t1") s; whole test $(secs "$t_start" "$t1") s"
