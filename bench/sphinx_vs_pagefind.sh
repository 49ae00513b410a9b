#!/usr/bin/env bash
# Build-time cost of search on a real-size Sphinx site: Django's documentation (docs/ in Django's
# sdist from PyPI, ~650 pages), built with the Sphinx the tests pin, on this machine in one run:
#   plain       `sphinx-build -b html` as the project ships it (intersphinx off: no network)
#   lightembed  the same with `extensions += ["lightembed.sphinx"]` (the wheel in target/wheels/):
#               the difference is what the extension adds to a build
#   lightembed site   the extension's indexing alone (`lightembed.build_site` with its excludes)
#               on a copy of the plain output
#   pagefind    `npx pagefind --site` (pagefind from npm, fresh HOME) on a copy of the plain output
# Every Sphinx build is a full one (fresh output and doctrees). Prints seconds and peak RSS (GNU
# time), pages indexed and bundle sizes. A benchmark, not a test: not in CI. Needs PyPI and the
# npm registry, and the wheel (python/test.sh).
#
#   bash bench/sphinx_vs_pagefind.sh        # DJANGO=5.2.19 PAGEFIND=1.6.0 RUNS=3 (index-only rows)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
DJANGO="${DJANGO:-5.2.19}"
PAGEFIND="${PAGEFIND:-1.6.0}"
RUNS="${RUNS:-3}"
fail() { echo "bench/sphinx_vs_pagefind.sh: $*" >&2; exit 1; }
shopt -s nullglob
wheels=(target/wheels/lightembed-*.whl)
[[ ${#wheels[@]} -eq 1 ]] || fail "expected one wheel in target/wheels/ (python/test.sh), found ${#wheels[@]}"
sphinx_pin="$(grep -x 'sphinx==[0-9.]*' python/requirements-test.txt)"

work="$(mktemp -d "${TMPDIR:-/tmp}/lightembed-sphinx-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/pf"
python="$(python3 -c 'import sys; print(sys.executable)')"
"$python" -m venv "$work/venv"
user_path="$(dirname "$(command -v node)"):/usr/bin:/bin"
user=(env -i HOME="$work/home" PATH="$work/venv/bin:$user_path" TMPDIR="${TMPDIR:-/tmp}")
as_user() { "${user[@]}" "$@"; }
as_user pip install --quiet --disable-pip-version-check "$root/${wheels[0]}" "$sphinx_pin" -c python/requirements-test.txt
as_user pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: "django==$DJANGO" -d "$work/sdist"
tar -xzf "$work"/sdist/*.tar.gz -C "$work"
docs="$(echo "$work"/[Dd]jango-"$DJANGO"/docs)"
[[ -f "$docs/conf.py" ]] || fail "no docs/conf.py in Django $DJANGO's sdist"
# Offline (no intersphinx inventories), and the extension when BENCH_LIGHTEMBED=1.
cat >>"$docs/conf.py" <<'PY'

# bench/sphinx_vs_pagefind.sh
intersphinx_mapping = {}
if os.environ.get("BENCH_LIGHTEMBED") == "1":
    extensions.append("lightembed.sphinx")
PY
sed -i '1i import os' "$docs/conf.py"
(cd "$work/pf" && as_user npm install --no-audit --no-fund --no-update-notifier --loglevel=error "pagefind@$PAGEFIND" >/dev/null)

secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
# Runs "$@" under GNU time; prints "SECONDS PEAK_MIB"; the command's output goes to $work/out.log.
timed() {
  local t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$work/rss" "$@" >"$work/out.log" 2>&1 || { tail -20 "$work/out.log" >&2; return 1; }
  local t1=$EPOCHREALTIME
  echo "$(secs "$t0" "$t1") $(awk '{printf "%.0f", $1/1024}' "$work/rss")"
}
row() { printf '%-44s %9s %9s  %s\n' "$@"; }
mb() { du -sb "$1" | awk '{printf "%.1f", $1/1e6}'; }

echo "Django $DJANGO docs ($(find "$docs" -name '*.txt' | wc -l) .txt sources), $sphinx_pin, pagefind $PAGEFIND," \
  "$(basename "${wheels[0]}"), $(nproc) cores"
row step seconds peak_MiB notes
read -r s_plain m < <(timed "${user[@]}" sphinx-build -q -b html "$docs" "$work/plain")
[[ -n "$s_plain" ]] || fail "the plain Sphinx build failed"
row "sphinx-build -b html (plain)" "$s_plain" "$m" "$(find "$work/plain" -name '*.html' | wc -l) HTML files"
read -r s_le m < <(timed "${user[@]}" BENCH_LIGHTEMBED=1 sphinx-build -q -b html "$docs" "$work/le")
[[ -n "$s_le" ]] || fail "the Sphinx build with lightembed.sphinx failed"
inside="$(grep -o 'indexed [0-9]* pages → [0-9]* passages in [0-9.]* s' "$work/out.log" || true)"
row "sphinx-build -b html + lightembed.sphinx" "$s_le" "$m" "$(awk -v a="$s_plain" -v b="$s_le" 'BEGIN{printf "%+.1f", b-a}') s against plain; in it: $inside; bundle $(mb "$work/le/lightembed") MB"
for ((i = 1; i <= RUNS; i++)); do
  rm -rf "$work/s"; cp -r "$work/plain" "$work/s"
  read -r s m < <(timed "${user[@]}" python -c 'import sys, lightembed
from lightembed.sphinx import GENERATED_PAGES
lightembed.build_site(sys.argv[1], exclude=GENERATED_PAGES)' "$work/s")
  row "lightembed site alone (run $i)" "$s" "$m" "$(grep -o 'indexed [0-9]* pages → [0-9]* passages in [0-9.]* s' "$work/out.log" || true); bundle $(mb "$work/s/lightembed") MB"
done
for ((i = 1; i <= RUNS; i++)); do
  rm -rf "$work/p"; cp -r "$work/plain" "$work/p"
  read -r s m < <(timed "${user[@]}" "$work/pf/node_modules/.bin/pagefind" --site "$work/p")
  row "npx pagefind --site (run $i)" "$s" "$m" "$(grep -oiE 'Indexed [0-9]+ pages?' "$work/out.log" | head -1); bundle $(mb "$work/p/pagefind") MB"
done
