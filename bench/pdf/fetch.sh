#!/usr/bin/env bash
# The PDFs of the extraction benchmark (bench/pdf/quality.py): 25 manuals from Debian bookworm
# -doc packages (pinned versions), in bench/pdf/data/set/ (not in git). Needs apt-get download
# and dpkg (any Debian); about 60 MB of packages.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA="$HERE/data"
mkdir -p "$DATA/debs" "$DATA/x" "$DATA/set"
cd "$DATA/debs"
PACKAGES=(
  r-doc-pdf=4.2.2.20221110-2 asymptote-doc=2.85+ds-1 auto-multiple-choice-doc-pdf=1.6.0-1
  glpk-doc=5.0-1 gnuplot-doc=5.4.4+dfsg1-2 gri-pdf-doc=2.12.27-1.1
  libtasn1-doc=4.19.0-2+deb12u1 shared-mime-info=2.2-1 live-manual-pdf=2:20151217.2
  docbook-xsl-doc-pdf=1.79.1-1 xorg-docs=1:1.7.1-1.2
)
for p in "${PACKAGES[@]}"; do
  ls "${p%%=*}"_*.deb >/dev/null 2>&1 || apt-get download "$p" >/dev/null 2>&1
done
for d in *.deb; do dpkg -x "$d" "$DATA/x"; done
X="$DATA/x/usr/share"
for f in R/doc/manual/{R-FAQ,R-admin,R-data,R-intro,R-ints,R-lang}.pdf \
         doc/asymptote/{CAD,asy-latex,asyRefCard,asymptote}.pdf \
         doc/auto-multiple-choice/auto-multiple-choice.en.pdf doc/auto-multiple-choice/latex/sample-amc.pdf \
         doc/glpk-doc/{glpk,gmpl,graphs,cnfsat}.pdf doc/gnuplot/gnuplot.pdf \
         doc/libtasn1-doc/libtasn1.pdf doc/shared-mime-info/shared-mime-info-spec.pdf; do
  cp "$X/$f" "$DATA/set/"
done
for f in doc/gri/gri.pdf.gz doc/live-manual/pdf/live-manual.portrait.en.a4.pdf.gz \
         doc/xorg-docs/icccm/icccm.pdf.gz doc/xorg-docs/xlfd/xlfd.pdf.gz doc/xorg-docs/ReleaseNotes.pdf.gz; do
  zcat "$X/$f" > "$DATA/set/$(basename "$f" .gz)"
done
zcat "$X/doc/docbook-xsl-doc-pdf/doc/reference.pdf.gz" > "$DATA/set/docbook-xsl-reference.pdf"
ls "$DATA/set" | wc -l
