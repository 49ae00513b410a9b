//! Embeds the search widget's WebAssembly (the widget builds of `js/`, written by `js/build.sh`:
//! `js/pkg/widget` for bundles of a static model, `js/pkg/widget-model` — with `Model` — for a
//! transformer's) for `lightembed site`, when they exist; without them `lightembed site` explains
//! how to get them and every other command works as usual.

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let mut code = String::new();
    let mut watch_js = false;
    for (dir, wasm_const, js_const) in [
        ("widget", "WASM", "WASM_JS"),
        ("widget-model", "WASM_MODEL", "WASM_MODEL_JS"),
    ] {
        let folder = root.join("js/pkg").join(dir);
        let wasm = folder.join("lightembed_wasm_bg.wasm");
        let glue = folder.join("lightembed_wasm.js");
        // A watched path that is missing would rerun this script on every build: watch a widget
        // build when it is there (cargo watches every file under it), else all of `js/`, so its
        // first `js/build.sh` output is picked up. (Watching all of `js/` always would rebuild
        // the CLI on every edit of the npm package's scripts.)
        if folder.is_dir() {
            println!("cargo:rerun-if-changed={}", folder.display());
        } else {
            watch_js = true;
        }
        if wasm.is_file() && glue.is_file() {
            writeln!(
                code,
                "/// The widget's wasm (`js/pkg/{dir}`).\nconst {wasm_const}: Option<&[u8]> = Some(include_bytes!({:?}));\n\
                 /// Its wasm-bindgen glue.\nconst {js_const}: Option<&str> = Some(include_str!({:?}));",
                wasm.canonicalize().unwrap(),
                glue.canonicalize().unwrap()
            )
            .unwrap();
        } else {
            writeln!(
                code,
                "/// Not built (`js/build.sh`).\nconst {wasm_const}: Option<&[u8]> = None;\n\
                 /// Not built.\nconst {js_const}: Option<&str> = None;"
            )
            .unwrap();
        }
    }
    if watch_js {
        println!("cargo:rerun-if-changed={}", root.join("js").display());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("widget_wasm.rs");
    std::fs::write(out, code).unwrap();
}
