#!/usr/bin/env bash
# trunk's post_build step for the app (Trunk.toml), in order — trunk would run separate hooks of
# one stage concurrently, and the service worker's manifest must see every other file:
#   1. models/manifest.json (scripts/models_manifest.py),
#   2. the relaxed-SIMD worker (scripts/relaxed_worker.sh),
#   3. sw.js's version and precache list (scripts/sw_manifest.py).
# Usage: scripts/post_build.sh STAGING_DIR
set -euo pipefail
dir="${1:?usage: scripts/post_build.sh STAGING_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python3 "$here/models_manifest.py" "$dir/models"
"$here/relaxed_worker.sh" "$dir"
python3 "$here/sw_manifest.py" "$dir"
