#!/usr/bin/env bash
# Installs everything (skipping what is already there) and runs every test:
#   1. pytest for the reference, packer and fixtures (Python venv .venv),
#   2. cargo tests of the workspace natively (golden fixtures, malformed files, tokenizer parity,
#      kernels, index, CLI, the app's pure logic), and tokenizer parity + keyword folding again
#      with the Unicode data loaded at run time (the site widget's build),
#   2b. the Python package (python/test.sh --browser: maturin builds the abi3 wheel, installed into a
#      fresh venv without a Rust toolchain; pytest against the CLI's vectors, index bytes and
#      rankings; then, in that venv, a Sphinx site with lightembed.sphinx built and searched in
#      Chromium: python/test-sphinx-site.sh),
#   2c. the scale-out path (scripts/test-scale-out.sh, with the wheel and the CLI of 2b): Spark
#      local[2] embedding with lightembed.arrow, a throwaway PostgreSQL + pgvector loaded by
#      lightembed.pg, `lightembed serve` over HTTP, and the widget (<lightembed-search serve=…>)
#      and the app (dist/ with ?serve=) in remote mode in headless Chromium against it — all on
#      127.0.0.1, every process stopped by its pid (installs a JDK and the venv target/scale-venv
#      once). The app's dist/ is built just before (dev profile) and reused by step 6,
#   3. the engine's, ingestion's and the index's tests compiled to wasm32 (+simd128) and run under Node, and the
#      engine's again with relaxed SIMD (the app's second worker),
#   4. the npm package (js/: wasm-bindgen builds for Node, bundlers and the web, and the CLI for
#      WASI) under Node's test runner, against the CLI's results on the same index; then packed
#      (`npm pack`) and installed into an empty folder with a fresh HOME and no Rust toolchain
#      (js/test-packed.sh): `npx lightembed site` on the Rust book must write the native CLI's
#      bundle, the CLI and API tests run against the installed package, and the widget e2e runs
#      on a bundle it builds (this is step 7's site e2e),
#   5. the app's storage and worker-messaging tests (wasm-bindgen-test) in headless Chromium,
#   6. the end-to-end test of the trunk-built app (playwright-core + Debian Chromium), screenshots
#      in target/e2e/. It uses the dev-profile dist/ built before step 2c (one `trunk build` for
#      both; its crates are shared with step 5);
#      `scripts/e2e.sh` alone tests the release build that run.sh serves,
#   7. the end-to-end test of `lightembed site` and the <lightembed-search> widget on the Rust book
#      (tests/e2e/site.spec.mjs; Debian's rust-doc, installed by scripts/app-tools.sh --browser),
#      with the bundle written by the installed npm package (js/test-packed.sh; the bundle equals
#      the native CLI's, which that script checks first),
#   8. an Astro Starlight site with the lightembed plugin (js/test-starlight.sh: astro and
#      @astrojs/starlight from npm, the packed lightembed, `astro build`, search in Chromium),
#   9. js/README.md's Hugo recipe (js/test-recipes.sh: Debian's hugo, the packed lightembed,
#      `hugo && npx lightembed site --site public`, search in Chromium).
#  Steps 2b and 7–9 keep a screenshot of their results in target/e2e/ (sphinx-, site-,
#  starlight-, hugo-results.png).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
t0=$SECONDS

# Clean CI builds gain nothing from incremental caches (they were 0.6 GB of target/).
export CARGO_INCREMENTAL=0
disk() { df -h --output=avail,target . | tail -1 | awk '{print "free disk: " $1 " on " $2}'; }
disk

step "tools"
scripts/app-tools.sh --browser   # runs scripts/tools.sh first
export PATH="$root/target/tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step "pytest (reference, packer, fixtures)"
# One BLAS thread: small SVDs in the fingerprint tests are ~20x slower with a thread pool on 2 cores.
OPENBLAS_NUM_THREADS=1 .venv/bin/python -m pytest reference -q
# The typo question sets' generator (bench/search/add_typos.py; seconds).
.venv/bin/python -m pytest bench/search/test_add_typos.py -q
# The general-text extractors (Turkish: split, pairs, dev set; English: mail cleaning, pairs) on made-up
# documents (no download); the trainer's contrastive pairs and the evaluator's tie-fair ranking.
.venv/bin/python -m pytest train/test_extract_corpus_tr_general.py train/test_extract_corpus_en_general.py train/test_pairs.py train/test_ranking.py -q

# First: the CLI embeds the widget's wasm (js/pkg/widget, js/pkg/widget-model) for `lightembed site`.
step "wasm package (js/build.sh: Node, bundler, web and widget builds)"
bash js/build.sh

step "cargo test (native)"
# lightembed-python is a PyO3 extension module (no test binaries): python/test.sh below tests it.
LIGHTEMBED_REQUIRE_WIDGET=1 cargo test --workspace --exclude lightembed-bench-index --exclude lightembed-python

# The site widget's build reads its Unicode decomposition data from the bundle (feature
# runtime-unicode, engine/src/unicode.rs): HF tokenizer parity and keyword folding through it.
cargo test -p lightembed --features runtime-unicode --test tokenizer_parity
cargo test -p lightembed-index --features runtime-unicode --test unicode_folding

step "Python package (python/: maturin wheel in a fresh venv, pytest; a Sphinx site in Chromium)"
python/test.sh --browser

step "the app's dist/ (trunk build, dev profile: for the scale-out step's app test and the app e2e)"
(unset RUSTFLAGS; cargo fetch >/dev/null && trunk build)

step "scale-out: Spark → Parquet → PostgreSQL + pgvector → lightembed serve → the widget and the app in remote mode"
# Reuses the release wheel and the CLI that python/test.sh just built and the app's dist/ (no
# second compile); the browser checks must run here (LIGHTEMBED_SCALE_BROWSER=1: a missing
# browser or dist/ fails, never skips).
LIGHTEMBED_WHEEL="$(ls "$root"/target/wheels/lightembed-*.whl)" LIGHTEMBED_CLI="$root/target/debug/lightembed" \
  LIGHTEMBED_APP_DIST="$root/dist" LIGHTEMBED_SCALE_BROWSER=1 bash scripts/test-scale-out.sh

step "cargo test (wasm32 + simd128, under Node)"
cargo test -p lightembed -p lightembed-ingest -p lightembed-index --target wasm32-unknown-unknown

step "cargo test (the engine in wasm32 + simd128 + relaxed-simd, the app's second worker, under Node)"
# Own target directory (the flags would otherwise rebuild target/); Node 20 needs the V8 flag.
RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" NODE_ARGS=--experimental-wasm-relaxed-simd \
  cargo test -p lightembed --target wasm32-unknown-unknown --target-dir target/wasm-relaxed

step "npm package (js/) under Node's test runner, against the CLI"
node --test js/test/lightembed.test.mjs

step "app in headless Chromium (wasm-bindgen-test: IndexedDB storage, worker messaging)"
CHROMEDRIVER=/usr/bin/chromedriver cargo test -p lightembed-app --target wasm32-unknown-unknown

step "end-to-end: trunk-built app in headless Chromium"
# dist/ is the dev-profile build made before the scale-out step (not built twice).
E2E_PROFILE=dev E2E_SKIP_BUILD=1 scripts/e2e.sh

step "end-to-end: lightembed site + <lightembed-search> on the Rust book, in headless Chromium"
# Built by the npm package as a user installs it (js/test-packed.sh; its CLI and API tests first).
bash js/test-packed.sh

step "Astro Starlight with the lightembed plugin (npm: astro + @astrojs/starlight, a real astro build, Chromium)"
bash js/test-starlight.sh

step "the Hugo recipe of js/README.md (Debian's hugo, the packed lightembed, Chromium)"
bash js/test-recipes.sh

disk; du -sh target 2>/dev/null | awk '{print "target/: " $1}'
step "all tests passed in $((SECONDS - t0)) s"
