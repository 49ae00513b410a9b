#!/usr/bin/env bash
# A Sphinx site with lightembed.sphinx, as a user builds it, searched by a visitor in Chromium:
#   1. the venv python/test.sh installed the wheel and Sphinx into (python/test.sh --browser runs
#      this script with LIGHTEMBED_VENV set to it), or else a fresh venv (fresh HOME, no Rust
#      toolchain on PATH) with the wheel python/test.sh built (target/wheels/, not the source tree)
#      and Sphinx from PyPI (python/requirements-test.txt's pins);
#   2. a small Sphinx project (five pages, two folders deep) whose conf.py has
#      extensions = ["lightembed.sphinx"], built with that venv's `sphinx-build -b html` into
#      a folder served as /docs/;
#   3. `lightembed search` (the wheel's console script) on the bundle: each question's page first;
#   4. tests/e2e/generator.spec.mjs: `python -m http.server` (the venv's Python) on 127.0.0.1,
#      started and stopped by the test; in Chromium, open a page, click the sidebar's box, type a
#      question, the right page first, click it, land there; screenshot target/e2e/sphinx-results.png.
# Needs target/wheels/lightembed-*.whl (python/test.sh) and PyPI unless LIGHTEMBED_VENV is given,
# Chromium and playwright-core (scripts/app-tools.sh --browser). Prints how long each part took.
#
#   bash python/test-sphinx-site.sh          # KEEP=1 keeps the built site (printed)
#   python/test.sh --browser                 # the same in python/test.sh's venv (what CI runs)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '\033[1m[sphinx-site]\033[0m %s\n' "$*"; }
fail() { echo "python/test-sphinx-site.sh: $*" >&2; exit 1; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }

venv="${LIGHTEMBED_VENV:-}"
if [[ -z "$venv" ]]; then
  shopt -s nullglob
  wheels=(target/wheels/lightembed-*.whl)
  [[ ${#wheels[@]} -eq 1 ]] || fail "expected one wheel in target/wheels/ (run python/test.sh), found ${#wheels[@]}"
  wheel="$root/${wheels[0]}"
  sphinx_pin="$(grep -x 'sphinx==[0-9.]*' python/requirements-test.txt)" || fail "no sphinx pin in python/requirements-test.txt"
fi
[[ -x "${CHROMIUM:-/usr/bin/chromium}" ]] || fail "no Chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)"
[[ -d tests/e2e/node_modules/playwright-core ]] || fail "no playwright-core: cd tests/e2e && npm install"

t_start=$EPOCHREALTIME
work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-sphinx-XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then trap 'log "kept $work"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/home" "$work/www"

# 1. The venv, as a user has it.
if [[ -z "$venv" ]]; then
  venv="$work/venv"
  python="$(python3 -c 'import sys; print(sys.executable)')"
  "$python" -m venv "$venv"
fi
user_path="$(tr ':' '\n' <<<"$PATH" | grep -v -e '\.cargo/bin' -e '^$' | paste -sd: -)"
as_user() { env HOME="$work/home" PATH="$venv/bin:$user_path" PYTHONDONTWRITEBYTECODE=1 "$@"; }
if as_user sh -c 'command -v cargo || command -v rustc' >/dev/null; then fail "a Rust toolchain is on the user's PATH"; fi
if [[ -n "${wheel:-}" ]]; then
  t0=$EPOCHREALTIME
  # numpy (the wheel's dependency) at the tests' pin too.
  as_user pip install --quiet --disable-pip-version-check "$wheel" "$sphinx_pin" -c python/requirements-test.txt
  t1=$EPOCHREALTIME
  log "pip install $(basename "$wheel") $sphinx_pin: $(secs "$t0" "$t1") s"
fi
# The wheel's package, not the source tree's python/lightembed.
where="$(cd "$work" && as_user python -c 'import lightembed, sphinx; print(lightembed.__file__, sphinx.__version__)')" \
  || fail "no lightembed or Sphinx in $venv"
[[ "$where" == "$venv"/* ]] || fail "lightembed is imported from outside $venv: $where"
log "venv $venv: lightembed ${where%% *}, Sphinx ${where##* }"

# 2. The project.
src="$work/src"
mkdir -p "$src/repairs" "$src/care"
cat >"$src/conf.py" <<'PY'
project = "Bicycle Workshop"
extensions = ["lightembed.sphinx"]
html_theme = "alabaster"
PY
cat >"$src/index.rst" <<'RST'
Bicycle Workshop
================

Notes from a community bike workshop: the repairs volunteers do most often, and the care that
keeps a bicycle from needing them.

.. toctree::
   :maxdepth: 2

   repairs/puncture
   repairs/brakes
   care/chain
   care/storage
RST
cat >"$src/repairs/puncture.rst" <<'RST'
Fixing a flat tyre
==================

Take the wheel off, lever one side of the tyre over the rim and pull out the inner tube.

Finding the hole
----------------

Pump a little air into the tube and listen for the hiss, or hold it under water and watch for
bubbles. Check the inside of the tyre for the thorn or shard of glass that caused it.

Patching the tube
-----------------

Roughen the rubber around the hole with sandpaper, spread a thin layer of vulcanising solution,
wait until it turns dull, then press the patch on firmly for a minute.
RST
cat >"$src/repairs/brakes.rst" <<'RST'
Adjusting rim brakes
====================

When the lever comes too close to the handlebar before the bike stops, the cable has stretched.
Turn the barrel adjuster at the lever anticlockwise to take up the slack.

Worn brake pads
---------------

Replace the pads once their grooves have worn away. Align each new pad so it meets the rim flat,
with the front edge touching a moment before the back, and the squeal goes away.
RST
cat >"$src/care/chain.rst" <<'RST'
Chain care
==========

Wipe the chain with a rag after wet rides. Every few hundred kilometres, degrease it, then put
one drop of oil on each roller and wipe off the excess so it does not collect grit.

Measuring wear
--------------

A chain stretches as its pins wear. When a checker gauge drops in at 0.75 %, replace the chain
before it wears out the cassette's teeth as well.
RST
cat >"$src/care/storage.rst" <<'RST'
Winter storage
==============

Keep the bicycle indoors, somewhere dry, hung from a hook or with the tyres pumped up so they do
not crack where they touch the floor. Clean off road salt before putting it away.
RST

t0=$EPOCHREALTIME
out="$work/www/docs"
as_user sphinx-build -b html "$src" "$out" >"$work/sphinx.log" 2>&1 || { cat "$work/sphinx.log"; fail "sphinx-build failed"; }
t1=$EPOCHREALTIME
grep -E '^lightembed' "$work/sphinx.log" | sed 's/^/    /' || true
[[ -f "$out/lightembed/manifest.json" ]] || fail "no $out/lightembed/manifest.json after sphinx-build"
log "sphinx-build -b html (pages + lightembed bundle): $(secs "$t0" "$t1") s"

# 3. The wheel's command on the bundle.
top() {
  as_user lightembed search --index "$out/lightembed" --json -k 1 "$1" \
    | as_user python -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["url"])'
}
check() {
  local got
  got="$(top "$1")"
  [[ "$got" == $2 ]] || fail "lightembed search \"$1\": first hit $got, expected $2"
  log "lightembed search \"$1\" → $got"
}
check "my tire went soft after I rode over broken glass" 'repairs/puncture.html*'
check "the lever almost touches the handlebar" 'repairs/brakes.html*'
check "how often should I oil the chain" 'care/chain.html*'

# 4. A visitor in Chromium.
t0=$EPOCHREALTIME
node tests/e2e/generator.spec.mjs --serve "$work/www" --python "$venv/bin/python" \
  --page docs/care/storage.html --query "my tire went soft after I rode over broken glass" \
  --expect docs/repairs/puncture.html --title "Fixing a flat tyre" --shot sphinx-results.png
t1=$EPOCHREALTIME
log "Chromium: $(secs "$t0" "$t1") s; whole test $(secs "$t_start" "$t1") s"
