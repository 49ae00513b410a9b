#!/usr/bin/env python3
"""Fills in the app's service worker (`sw.js` in a trunk staging or dist folder): VERSION, a
SHA-256 over every file's path and bytes (so any change of the build changes sw.js, which is how a
browser notices a new deployment), and FILES, the files to precache for offline use: everything
but `sw.js` itself and the model `.bin` files (the worker keeps the chosen model, verified, in
IndexedDB). Run last by scripts/post_build.sh (trunk's post_build step). Stdlib only.

Usage: python3 scripts/sw_manifest.py DIR
"""

import hashlib
import json
import os
import sys


def main() -> int:
    root = sys.argv[1]
    sw = os.path.join(root, "sw.js")
    every = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/")
            if rel != "sw.js":
                every.append(rel)
    every.sort()
    h = hashlib.sha256()
    for rel in every:
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    version = h.hexdigest()[:16]
    files = [rel for rel in every if not rel.endswith(".bin")]
    precache = ["./"] + files
    text = open(sw, encoding="utf-8").read()
    if "__LIGHTEMBED_SW_VERSION__" not in text:
        print(f"sw_manifest: {sw} has no placeholders (already filled?)", file=sys.stderr)
        return 1
    text = text.replace("'__LIGHTEMBED_SW_VERSION__'", json.dumps(version))
    text = text.replace("['__LIGHTEMBED_SW_FILES__']", json.dumps(precache))
    with open(sw, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"sw.js: version {version}, {len(precache)} files to precache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
