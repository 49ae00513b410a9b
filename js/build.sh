#!/usr/bin/env bash
# Builds the npm package `lightembed` in js/: the crate lightembed-wasm for wasm32 + SIMD128
# (release), then wasm-bindgen for Node (js/pkg/node, CommonJS), for bundlers (js/pkg/bundler,
# ES module importing the .wasm) and for plain browsers (js/pkg/web, ES module + init()),
# TypeScript types included; the search widget's own wasm, built for size with only what a site's
# visitors need for a query (js/pkg/widget: SiteIndex + QueryEncoder, for bundles of a static
# model; js/pkg/widget-model: + Model, for a transformer's), which `lightembed site` puts in the
# bundles (rebuild lightembed after this); and js/package.json.
# Steps whose inputs did not change are skipped (cargo's own check; wasm-bindgen runs only when
# the .wasm is newer than its output), so a second run takes about a second.
#
#   bash js/build.sh
#
# Needs the wasm32-unknown-unknown target and wasm-bindgen-cli at Cargo.lock's wasm-bindgen
# version on PATH or in ~/.cargo/bin (scripts/tools.sh installs both).
set -euo pipefail
js="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$js")"
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
log() { printf '\033[1m[js]\033[0m %s\n' "$*"; }

crate=lightembed-wasm
lib=lightembed_wasm
wasm="${CARGO_TARGET_DIR:-$root/target}/wasm32-unknown-unknown/release/$lib.wasm"

wb_version="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)"
if [[ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]]; then
  echo "js/build.sh: wasm-bindgen $wb_version is not installed (run scripts/tools.sh)" >&2
  exit 1
fi

# RUSTFLAGS would replace .cargo/config.toml's `+simd128` (the engine's compile_error! guard
# stops such a build, but do not even try).
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
# The widget's scripts and style as a site's visitor downloads them: minified with esbuild (npm,
# scripts/tools.sh) into js/pkg/widget-ui/, which the site build embeds (build/build.rs; it falls
# back to widget/ itself when this folder is missing). The sources keep their comments.
esbuild="$root/target/tools/esbuild/node_modules/.bin/esbuild"
if [[ ! -x "$esbuild" ]]; then
  echo "js/build.sh: esbuild is not installed in target/tools/esbuild (run scripts/tools.sh)" >&2
  exit 1
fi
mkdir -p "$js/pkg/widget-ui"
for f in lightembed-ui.js lightembed-worker.js lightembed-ui.css; do
  if [[ "$root/widget/$f" -nt "$js/pkg/widget-ui/$f" || "$js/build.sh" -nt "$js/pkg/widget-ui/$f" ]]; then
    "$esbuild" --minify --log-level=warning "$root/widget/$f" --outfile="$js/pkg/widget-ui/$f"
  fi
done
# Three builds of the crate: the browser one (bundler + web targets, every class: what npm users
# import), the Node one with feature `build` (`lightembed site` and the Node API: the bundle
# writer, globset) and `gunzip` (its classes read a bundle's gzip-compressed files as they are; in
# a browser DecompressionStream does it), and the widget's two (profile `widget`: opt-level "z",
# fat LTO; the first thing a site's visitor downloads, so no SearchIndex, no site-build code, no
# gunzip; feature `widget` alone, and with `model` for transformer bundles). Each is copied aside
# when it changed, so the wasm-bindgen steps below can tell what is new.
tdir="$(dirname "$wasm")"
variant() {  # variant NAME PROFILE [cargo args…]
  local name="$1" profile="$2"; shift 2
  cargo build --profile "$profile" --target wasm32-unknown-unknown -p "$crate" "$@"
  local built="${CARGO_TARGET_DIR:-$root/target}/wasm32-unknown-unknown/$profile/$lib.wasm"
  if ! cmp -s "$built" "$tdir/$lib.$name.wasm"; then cp "$built" "$tdir/$lib.$name.wasm"; fi
}
variant browser release
variant node release --features build,gunzip
variant widget widget --no-default-features --features widget
variant widget-model widget --no-default-features --features widget,model

# The modules must contain SIMD128 instructions. Checked with whichever disassembler is at hand
# (wasm-tools, wabt's wasm-objdump, binaryen's wasm-dis from scripts/app-tools.sh); without one
# the engine's compile_error! guard is the check.
simd_ops() {
  local dis
  if command -v wasm-tools >/dev/null; then dis=(wasm-tools print "$1")
  elif command -v wasm-objdump >/dev/null; then dis=(wasm-objdump -d "$1")
  elif [[ -x "$root/target/tools/binaryen/node_modules/.bin/wasm-dis" ]]; then
    dis=("$root/target/tools/binaryen/node_modules/.bin/wasm-dis" "$1")
  else
    echo "unchecked"; return
  fi
  "${dis[@]}" | grep -cE '(v128|i8x16|i16x8|i32x4|f32x4)\.' || true
}

# wasm-bindgen's outputs: (target, folder, build). The widget's lose the name section (~46 KB of
# function names no visitor needs). binaryen's wasm-opt is not run on any of them: on the widget's
# wasm -Oz made it 8 % smaller raw but 2 % larger gzip-compressed, and bundles store it gzipped
# (bench/RESULTS.md, "Search-only widget wasm").
for spec in nodejs:node:node bundler:bundler:browser web:web:browser web:widget:widget web:widget-model:widget-model; do
  IFS=: read -r target dir build <<<"$spec"
  out="$js/pkg/$dir"
  src="$tdir/$lib.$build.wasm"
  extra=()
  if [[ "$dir" == widget* ]]; then extra=(--remove-name-section --remove-producers-section); fi
  if [[ -f "$out/${lib}_bg.wasm" && ! "$src" -nt "$out/${lib}_bg.wasm" && ! "$js/build.sh" -nt "$out/${lib}_bg.wasm" ]]; then
    continue
  fi
  if [[ "$target" != bundler ]]; then
    n="$(simd_ops "$src")"
    if [[ "$n" == 0 ]]; then
      echo "js/build.sh: $src has no SIMD128 instructions (RUSTFLAGS set?)" >&2
      exit 1
    fi
    log "SIMD128 instructions in $(basename "$src"): $n"
  fi
  log "wasm-bindgen --target $target --out-dir ${out#"$root"/}"
  rm -rf "$out"
  wasm-bindgen --target "$target" "${extra[@]}" --out-name "$lib" --out-dir "$out" "$src"
  if [[ "$dir" == widget* ]]; then
    # The glue every visitor downloads, minified (its doc comments are for the npm API's users).
    "$esbuild" --minify --log-level=warning "$out/$lib.js" --outfile="$out/$lib.min.js"
    mv "$out/$lib.min.js" "$out/$lib.js"
  fi
  # Module kind of the folder's .js files, whatever the package root says.
  if [[ "$target" == nodejs ]]; then
    printf '{ "type": "commonjs" }\n' >"$out/package.json"
  else
    printf '{ "type": "module", "sideEffects": ["./%s.js"] }\n' "$lib" >"$out/package.json"
  fi
done

# The CLI itself compiled for WASI (wasm32-wasip1 + SIMD128): `bin/lightembed.js` runs it under
# Node's WASI for every command but `site` (which runs through the library above, on every core),
# so flags, messages and exit codes are the native CLI's. It embeds the widget builds above
# (cli/build.rs).
if ! rustup target list --installed | grep -qx wasm32-wasip1; then
  log "rustup target add wasm32-wasip1"
  rustup target add wasm32-wasip1
fi
cargo build --release --target wasm32-wasip1 -p lightembed-cli
cli_wasm="${CARGO_TARGET_DIR:-$root/target}/wasm32-wasip1/release/lightembed.wasm"
mkdir -p "$js/pkg/cli"
if ! cmp -s "$cli_wasm" "$js/pkg/cli/lightembed.wasm"; then cp "$cli_wasm" "$js/pkg/cli/lightembed.wasm"; fi

# The default model `npx lightembed site` uses without --model (as the native CLI has it built in).
mkdir -p "$js/pkg/models"
if ! cmp -s "$root/public/models/lightembed-en-static.bin" "$js/pkg/models/lightembed-en-static.bin"; then
  cp "$root/public/models/lightembed-en-static.bin" "$js/pkg/models/lightembed-en-static.bin"
fi

# js/package.json (kept in git; rewritten only when it would change, e.g. a new workspace version).
pkgid="$(cargo pkgid -p "$crate")"
version="${pkgid##*[@#]}"
new="$(cat <<EOF
{
  "name": "lightembed",
  "version": "$version",
  "description": "Search by meaning for static sites and Node, no server and no Rust toolchain: npx lightembed site --site public. Tiny sentence-embedding models and hybrid (BM25 + vector) search in WebAssembly.",
  "keywords": ["search", "semantic-search", "embeddings", "static-site", "pagefind", "wasm", "bm25", "hnsw"],
  "license": "Apache-2.0",
  "bin": {
    "lightembed": "bin/lightembed.js"
  },
  "main": "./lib/node.js",
  "module": "./pkg/bundler/$lib.js",
  "types": "./lib/node.d.ts",
  "exports": {
    ".": {
      "node": {
        "types": "./lib/node.d.ts",
        "default": "./lib/node.js"
      },
      "types": "./pkg/bundler/$lib.d.ts",
      "import": "./pkg/bundler/$lib.js",
      "default": "./pkg/bundler/$lib.js"
    },
    "./starlight": {
      "types": "./starlight/index.d.mts",
      "default": "./starlight/index.mjs"
    },
    "./package.json": "./package.json"
  },
  "files": [
    "bin/",
    "lib/",
    "pkg/node/",
    "pkg/bundler/",
    "pkg/web/",
    "pkg/widget/",
    "pkg/widget-model/",
    "pkg/cli/",
    "pkg/models/",
    "starlight/",
    "README.md"
  ],
  "sideEffects": [
    "./pkg/bundler/$lib.js"
  ],
  "engines": {
    "node": ">=20"
  },
  "scripts": {
    "build": "bash build.sh",
    "test": "bash build.sh && node --test test/"
  }
}
EOF
)"
if [[ "$(cat "$js/package.json" 2>/dev/null)" != "$new" ]]; then
  log "writing js/package.json (version $version)"
  printf '%s\n' "$new" >"$js/package.json"
fi
log "js/pkg ready: $(wc -c <"$js/pkg/node/${lib}_bg.wasm") bytes of wasm (Node), the widget's $(wc -c <"$js/pkg/widget/${lib}_bg.wasm")"
