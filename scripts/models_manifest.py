#!/usr/bin/env python3
"""Writes `manifest.json` next to the `.bin` models of a directory (stdlib only).

Run by scripts/post_build.sh (trunk's post_build step) on the staged `models/` folder, so the
app's model list and its cache validators (SHA-256 per file) always describe the files actually
shipped:

    {"models": [{"file": "lightembed-en-static.bin", "sha256": "…", "size": 4658384,
                 "model_id": "lightembed-en-0l", "lang": "en", "version": "3.0.0",
                 "n_layers": 0, "output_dim": 384, "embedding_quant": "int4"}, …]}

`lang` is the language the model_id names by the project's scheme `lightembed-{lang}-{n}l`
(docs/architecture.md, "Model identities"; `lightembed-tr-0l` → "tr"), or null for an id outside
it; the app lists a language's models under it (a model with null under every language), the
same rule as `lightembed_app::lang::model_lang`.

Only files that look like lightembed v1 models (magic `LEMB`, trailing SHA-256 correct) are
listed; anything else is skipped with a warning. Order: static models first, then by name.

Usage: python3 scripts/models_manifest.py DIR
"""

import hashlib
import json
import os
import re
import struct
import sys

QUANT = {0: "fp32", 1: "int8", 2: "int4", 3: "ternary"}
MODEL_ID = re.compile(r"lightembed-([a-z]{2,8})-[0-9]+l")


def model_lang(model_id: str):
    """The language `model_id` names (`lightembed-tr-0l` → "tr"), else None."""
    m = MODEL_ID.fullmatch(model_id)
    return m.group(1) if m else None


def describe(path: str):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 + 32 or data[:4] != b"LEMB":
        return None, "not a lightembed model (magic)"
    if hashlib.sha256(data[:-32]).digest() != data[-32:]:
        return None, "trailing SHA-256 does not match"
    (fmt, eq, _wq, _vocab, _d, n_layers, _h, _ffn, out_dim) = struct.unpack_from("<HBBIHBBHH", data, 4)
    major, minor, patch = struct.unpack_from("<BBH", data, 44)
    model_id = data[48:64].split(b"\0", 1)[0].decode("utf-8", "replace")
    return {
        "file": os.path.basename(path),
        "sha256": data[-32:].hex(),
        "size": len(data),
        "model_id": model_id,
        "lang": model_lang(model_id),
        "version": f"{major}.{minor}.{patch}",
        "format_version": fmt,
        "n_layers": n_layers,
        "output_dim": out_dim,
        "embedding_quant": QUANT.get(eq, str(eq)),
    }, None


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = sys.argv[1]
    models = []
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".bin"):
                continue
            entry, why = describe(os.path.join(folder, name))
            if entry is None:
                print(f"models_manifest: skipping {name}: {why}", file=sys.stderr)
            else:
                models.append(entry)
    else:
        os.makedirs(folder, exist_ok=True)
    models.sort(key=lambda m: (m["n_layers"] > 0, m["file"]))
    out = os.path.join(folder, "manifest.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"models": models}, f, indent=1)
        f.write("\n")
    print(f"models_manifest: {len(models)} model(s) → {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
