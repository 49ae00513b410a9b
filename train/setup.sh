#!/usr/bin/env bash
# Creates train/.venv from the pinned train/requirements.txt and installs the Debian text
# packages the corpus and the evaluation data come from. Idempotent.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install -q -r requirements.txt
if command -v apt-get >/dev/null; then
  # training corpus (English prose from Debian documentation packages); perl-doc: the English dev
  # set's perlfaq (prepare_dev_en.py; its manual pages are never read by the corpus)
  apt-get install -y -q dict-gcide wordnet-base python3.11-doc rust-doc manpages fortunes \
    debian-reference-en debian-handbook perl-doc >/dev/null || echo "warning: apt-get install failed" >&2
  # Turkish (issue 16): help pages (training split + held-out eval split), man pages, UI catalogues
  apt-get install -y -q libreoffice-help-tr manpages-tr libreoffice-l10n-tr firefox-esr-l10n-tr \
    >/dev/null || echo "warning: apt-get install (Turkish text) failed" >&2
  # held-out evaluation data: English package descriptions (Translation-en)
  apt-get -o Acquire::Languages=en update -q >/dev/null || echo "warning: apt-get update failed" >&2
fi
echo "train/.venv ready"
