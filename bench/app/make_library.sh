#!/usr/bin/env bash
# The library of issue 33 item 5: about 100,000 passages of real documents from Debian packages,
# dropped on the app as one folder by bench/app/library.mjs.
#
#   bench/app/data/library/pdf/     the 25 PDF manuals of bench/pdf/fetch.sh (R, asymptote, glpk,
#                                   gnuplot, gri, live-manual, xorg, docbook-xsl, ...)
#   bench/app/data/library/qt/      Qt 5.15's HTML documentation (qtbase5-doc-html)
#   bench/app/data/library/boost/   Boost 1.74's HTML documentation (libboost1.74-doc)
#
# The HTML trees are those of bench/search/make_big_site.sh (pinned package versions, unpacked
# as shipped; images, CSS and scripts stay in the folder, as in a real one: the app counts them
# as skipped). Nothing here is held out for evaluation elsewhere. Files are hard links into
# bench/search/data/big-site (no second copy on disk); bench/app/data/ is not in git.
#
# Usage: bash bench/app/make_library.sh      (runs the two fetch scripts when their data is missing)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
big="$root/bench/search/data/big-site"
pdfs="$root/bench/pdf/data/set"
lib="$here/data/library"
[ -d "$big/qtbase5-doc-html" ] || bash "$root/bench/search/make_big_site.sh"
[ -n "$(ls "$pdfs"/*.pdf 2>/dev/null)" ] || bash "$root/bench/pdf/fetch.sh"
rm -rf "$lib"
mkdir -p "$lib/pdf"
cp -al "$big/qtbase5-doc-html" "$lib/qt"
cp -al "$big/libboost1.74-doc" "$lib/boost"
cp -al "$pdfs"/*.pdf "$lib/pdf/"
echo "$lib: $(find "$lib" -type f | wc -l) files, $(du -sh --apparent-size "$lib" | cut -f1)"
