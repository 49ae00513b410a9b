#!/usr/bin/env bash
# Assembles a big static site of real HTML documentation from Debian packages (main, section
# doc): about 11 times the passages of the Python 3.11 docs for `lightembed site`, to measure
# indexing and search at scale (bench/search/pagefind_vs.mjs SET=big).
#
#   bench/search/data/big-debs/*.deb           the packages (apt-get download, pinned versions)
#   bench/search/data/big-src/<package>/        each package unpacked (dpkg -x), untouched
#   bench/search/data/big-site/<package>/       the site: one folder per package, its HTML tree
#                                               copied as shipped (links to other packages' files dropped), plus an
#                                               index.html at the root that links to each
#
# Then bench/search/make_big_set.py writes the question set (questions/big.jsonl) and removes
# each question's sentence from the site's Java API pages (see that script).
#
# Sources (none of them held out for evaluation elsewhere — not Debian's package descriptions,
# the gensim test data, git-doc, the Valgrind or PostgreSQL manuals):
#   openjdk-17-doc      the Java SE 17 API (javadoc) and specs           GPL-2 with Classpath exception
#   libstdc++-12-doc    GCC's C++ library manual and its Doxygen API     GPL-3 / GFDL-1.3 (no invariant sections)
#   qtbase5-doc-html    Qt 5.15 Core, GUI, Widgets, Network, SQL… API    GFDL-1.3 (no invariant sections)
#   libboost1.74-doc    Boost 1.74's library documentation               Boost Software License 1.0
# All four are in Debian main (DFSG-free); we only index them here, nothing is redistributed.
#
# Nothing here is committed (bench/search/data/ is ignored); the script is idempotent: the
# downloads are kept, the site is rebuilt from them each time. Disk: ~0.7 GB in big-src, as much
# again in big-site, ~40 MB of .deb.
#
# Usage: bash bench/search/make_big_site.sh           # then:
#        python3 bench/search/make_big_set.py
#        target/release/lightembed site --site bench/search/data/big-site -q
# VERSIONS=any takes whatever version the mirror has now if a pinned one is gone (the question
# set may then differ from the committed one: make_big_set.py --check says so).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$here/data"
# package=version   subfolder of the unpacked package that becomes the site's <package>/   its start page
PACKAGES=(
  "openjdk-17-doc=17.0.19+10-1~deb12u2     usr/share/doc/openjdk-17-jre-headless  index.html"
  "libstdc++-12-doc=12.2.0-14+deb12u1      usr/share/doc/gcc-12-base/libstdc++    index.html"
  "qtbase5-doc-html=5.15.8+dfsg-11+deb12u3 usr/share/qt5/doc                      qtcore/qtcore-index.html"
  "libboost1.74-doc=1.74.0+ds1-21          usr/share/doc/libboost1.74-doc         doc/html/index.html"
)

mkdir -p "$data/big-debs" "$data/big-src"
cd "$data/big-debs"
for entry in "${PACKAGES[@]}"; do
  read -r spec sub start <<<"$entry"
  pkg="${spec%%=*}"; ver="${spec#*=}"
  if ! ls "${pkg}"_*.deb >/dev/null 2>&1; then
    if ! apt-get download "$spec"; then
      [ "${VERSIONS:-}" = any ] || { echo "$spec is not on the mirror any more: VERSIONS=any $0 takes the current one" >&2; exit 1; }
      apt-get download "$pkg"
    fi
  fi
done

rm -rf "$data/big-site"
mkdir -p "$data/big-site"
links=""
for entry in "${PACKAGES[@]}"; do
  read -r spec sub start <<<"$entry"
  pkg="${spec%%=*}"
  deb="$(ls "$data/big-debs/${pkg}"_*.deb | sort | tail -1)"
  if [ ! -d "$data/big-src/$pkg" ] || [ "$deb" -nt "$data/big-src/$pkg" ]; then
    rm -rf "$data/big-src/$pkg"
    mkdir -p "$data/big-src/$pkg"
    dpkg -x "$deb" "$data/big-src/$pkg"
  fi
  cp -a "$data/big-src/$pkg/$sub" "$data/big-site/$pkg"
  # Links to files of other packages (openjdk's jquery, from libjs-jquery) dangle here: dropped
  # (scripts of the pages' own search box, no text). Any other link becomes a plain copy.
  find "$data/big-site/$pkg" -xtype l -delete
  find "$data/big-site/$pkg" -type l | while read -r l; do
    t="$(readlink -f "$l")"; rm "$l"; cp -rL "$t" "$l"
  done
  echo "$(basename "$deb")  ->  big-site/$pkg/  ($(find "$data/big-site/$pkg" -name '*.html' | wc -l) HTML pages)"
  links+="<li><a href=\"$pkg/$start\">$pkg</a> ($(dpkg-deb -f "$deb" Version))</li>"
done
# A root page, as a docs portal would have.
cat >"$data/big-site/index.html" <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Documentation</title></head>
<body><main><h1>Documentation</h1><ul>$links</ul></main></body></html>
EOF
echo "big-site: $(find "$data/big-site" -name '*.html' | wc -l) HTML pages, $(du -sh "$data/big-site" | cut -f1)"
