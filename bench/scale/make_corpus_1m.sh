#!/usr/bin/env bash
# Assembles the ≥ 1M-passage corpus of real documentation for the scale-out figures at 1M
# (issue 32 item 5; bench/RESULTS.md "Scale-out at 1M passages"): the big docs site of
# bench/search/make_big_site.sh (four Debian -doc packages, 361,547 passages) plus eighteen
# more Debian main documentation packages, unpacked as shipped.
#
#   bench/scale/data/debs/*.deb          the packages (apt-get download, pinned versions)
#   bench/scale/data/src/<package>/      each package unpacked (dpkg -x), untouched
#   bench/scale/data/extra-site/<package>/  its HTML tree (hard links into src/; symlinks to
#                                        files of other packages dropped, the others copied)
#   bench/scale/data/work/passages.jsonl the corpus: `lightembed passages --embed-text` of the big
#                                        site, then of extra-site (ids and urls relative to each
#                                        site's root, so the question set's pages keep their urls),
#                                        repeated embed texts dropped (the first kept, as
#                                        `lightembed site` does)
#
# Sources (none held out for evaluation elsewhere: not Debian's package descriptions, the gensim
# test data, git-doc, the Valgrind or PostgreSQL manuals, KeNet, sadedegel). All are in Debian
# main; we only index them here, nothing is redistributed:
#   rust-doc                 Rust 1.63 std/core/alloc API, the books         MIT / Apache-2.0
#   scala-doc                Scala 2.11 library, reflect and compiler API    BSD-3-Clause
#   ghc-doc                  GHC 9.0 user guide and library haddocks          BSD-3-Clause
#                            (the hyperlinked sources, src/ folders, left out)
#   python-pandas-doc        pandas 1.5 docs and API reference               BSD-3-Clause
#   erlang-doc               Erlang/OTP 25 docs                               Apache-2.0
#   python-scipy-doc         SciPy 1.10 docs and API reference               BSD-3-Clause
#   python3.11-doc           the Python 3.11 documentation                   PSF-2.0
#   python-sympy-doc         SymPy 1.11 docs                                  BSD-3-Clause
#   libgtk-4-doc             GTK 4.8, GDK, GSK API reference                  LGPL-2.1+
#   llvm-14-doc              LLVM 14 docs                                     Apache-2.0 with LLVM exception
#   python-django-doc        Django 3.2 docs                                  BSD-3-Clause
#   cmake-doc                CMake 3.25 reference                             BSD-3-Clause
#   qtdeclarative5-doc-html  Qt 5.15 QML and Quick reference                  GFDL-1.3 (no invariant sections)
#   python-sqlalchemy-doc    SQLAlchemy 1.4 docs                              MIT
#   linux-doc-6.1            the Linux 6.1 kernel's documentation             GPL-2
#   cppreference-doc-en-html cppreference.com's C and C++ reference (2017)    CC-BY-SA-3.0 / GFDL-1.2
#   racket-doc               Racket 8.7's guide and reference                 Apache-2.0 / MIT
#   python-statsmodels-doc   statsmodels 0.13 docs and API reference          BSD-3-Clause
#
# Nothing here is committed (bench/scale/data/ is git-ignored). Idempotent: downloads and
# unpacked trees are kept; the site and the passages are rebuilt when missing.
# Disk: ~3.2 GB in src/ and extra-site/ (hard links, one copy), ~2.3 GB of passages JSON lines
# (the four parts and the deduplicated whole); serve_bench adds 0.73 GiB of Parquet and 3.7 GiB
# of PostgreSQL data.
#
# Usage: bash bench/scale/make_corpus_1m.sh [CLI]    # CLI: default target/release/lightembed
# Then:  target/scale-venv/bin/python bench/scale/serve_bench.py --work bench/scale/data/work \
#          --cli target/release/lightembed
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
data="$here/data"
cli="${1:-$root/target/release/lightembed}"
big_site="${BIG_SITE:-$root/bench/search/data/big-site}"
model="$root/public/models/lightembed-en-static.bin"
# package=version   its HTML root inside the unpacked package   group: the sites' passages are cut in
# parallel, one process per group (`passages` uses one core)
PACKAGES=(
  "rust-doc=1.63.0+dfsg1-2                      usr/share/doc/rust-doc/html                    b"
  "scala-doc=2.11.12-5                          usr/share/doc/scala-2.11/api                   b"
  "ghc-doc=9.0.2-4                              usr/share/doc/ghc-doc/html                     a"
  "python-pandas-doc=1.5.3+dfsg-2               usr/share/doc/python-pandas-doc/html           a"
  "erlang-doc=1:25.2.3+dfsg-1+deb12u4           usr/share/doc/erlang-doc                       a"
  "python-scipy-doc=1.10.1-2                    usr/share/doc/python-scipy-doc/html            a"
  "python3.11-doc=3.11.2-6+deb12u9              usr/share/doc/python3.11/html                  a"
  "python-sympy-doc=1.11.1-1                    usr/share/doc/python-sympy-doc/html            a"
  "libgtk-4-doc=4.8.3+ds-2+deb12u1              usr/share/doc/libgtk-4-doc                     a"
  "llvm-14-doc=1:14.0.6-12                      usr/share/doc/llvm-14-doc/html                 a"
  "python-django-doc=3:3.2.25-0+deb12u7         usr/share/doc/python-django-doc/html           a"
  "cmake-doc=3.25.1-1                           usr/share/doc/cmake-data/html                  a"
  "qtdeclarative5-doc-html=5.15.8+dfsg-3        usr/share/qt5/doc                              a"
  "python-sqlalchemy-doc=1.4.46+ds1-1           usr/share/doc/python-sqlalchemy-doc/html       a"
  "linux-doc-6.1=6.1.192-3                     usr/share/doc/linux-doc-6.1/html              c"
  "cppreference-doc-en-html=20170409-2         usr/share/cppreference/doc/html                c"
  "racket-doc=8.7+dfsg1-1                      usr/share/doc/racket                           c"
  "python-statsmodels-doc=0.13.5+dfsg-7        usr/share/doc/python-statsmodels-doc/html     c"
)
[ -d "$big_site/openjdk-17-doc" ] || { echo "no big site at $big_site: run bench/search/make_big_site.sh first (or set BIG_SITE)" >&2; exit 1; }
[ -x "$cli" ] || { echo "no CLI at $cli: cargo build --release -p lightembed-cli" >&2; exit 1; }

mkdir -p "$data/debs" "$data/src" "$data/work"
cd "$data/debs"
for entry in "${PACKAGES[@]}"; do
  read -r spec sub group <<<"$entry"
  pkg="${spec%%=*}"
  ls "${pkg}"_*.deb >/dev/null 2>&1 || apt-get download "$spec"
done

if [ ! -f "$data/extra-site/.done" ]; then
  rm -rf "$data/extra-site"
  mkdir -p "$data/extra-site"
  for entry in "${PACKAGES[@]}"; do
    read -r spec sub group <<<"$entry"
    pkg="${spec%%=*}"
    deb="$(ls "$data/debs/${pkg}"_*.deb | sort | tail -1)"
    if [ ! -d "$data/src/$pkg/usr" ]; then
      rm -rf "$data/src/$pkg"; mkdir -p "$data/src/$pkg"; dpkg -x "$deb" "$data/src/$pkg"
    fi
    cp -al "$data/src/$pkg/$sub" "$data/extra-site/$pkg"
    find "$data/extra-site/$pkg" -xtype l -delete
    find "$data/extra-site/$pkg" -type l | while read -r l; do
      t="$(readlink -f "$l")"; rm "$l"; cp -rL "$t" "$l"
    done
    echo "$(basename "$deb")  ->  extra-site/$pkg/  ($(find "$data/extra-site/$pkg" -name '*.html' | wc -l) HTML pages)"
  done
  touch "$data/extra-site/.done"
fi

out="$data/work/passages.jsonl"
if [ ! -f "$out" ]; then
  # The big site, and each group of extra-site: ids and urls stay relative to each site's root.
  pids=()
  for part in big extra-a extra-b extra-c; do
    [ -f "$data/work/passages-$part.jsonl" ] && continue
    site="$big_site"; ex=()
    if [ $part != big ]; then
      site="$data/extra-site"
      for entry in "${PACKAGES[@]}"; do
        read -r spec sub group <<<"$entry"
        [ "extra-$group" = $part ] || ex+=(--exclude "${spec%%=*}/**")
      done
    fi
    echo "lightembed passages $site ${ex[*]}"
    ( rc=0
      "$cli" passages --model "$model" --embed-text --exclude 'lightembed/**' --exclude 'ghc-doc/**/src/**' \
        "${ex[@]}" "$site" > "$data/work/passages-$part.part" || rc=$?
      [ $rc -eq 0 ] || [ $rc -eq 4 ] || { echo "lightembed passages $site failed ($rc)" >&2; exit 1; }
      mv "$data/work/passages-$part.part" "$data/work/passages-$part.jsonl" ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  python3 "$here/dedupe_passages.py" "$data/work/passages-"{big,extra-a,extra-b,extra-c}.jsonl > "$out.part"
  mv "$out.part" "$out"
fi
echo "corpus: $(wc -l < "$out") passages in $out"
