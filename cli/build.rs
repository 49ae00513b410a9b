//! Embeds the search widget's WebAssembly (the web build of `js/`, written by `js/build.sh`) for
//! `lightembed site`, when it exists; without it `lightembed site` explains how to get it and
//! every other command works as usual.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let web = root.join("js/pkg/web");
    let wasm = web.join("lightembed_wasm_bg.wasm");
    let glue = web.join("lightembed_wasm.js");
    // A watched path that is missing would rerun this script on every build: watch the web build
    // when it is there (cargo watches every file under it), else all of `js/`, so its first
    // `js/build.sh` output is picked up. (Watching all of `js/` always would rebuild the CLI on
    // every edit of the npm package's scripts.)
    let watch = if web.is_dir() {
        web.clone()
    } else {
        root.join("js")
    };
    println!("cargo:rerun-if-changed={}", watch.display());
    let code = if wasm.is_file() && glue.is_file() {
        format!(
            "/// The widget's wasm (`js/pkg/web`).\nconst WASM: Option<&[u8]> = Some(include_bytes!({:?}));\n\
             /// Its wasm-bindgen glue.\nconst WASM_JS: Option<&str> = Some(include_str!({:?}));\n",
            wasm.canonicalize().unwrap(),
            glue.canonicalize().unwrap()
        )
    } else {
        "/// Not built (`js/build.sh`).\nconst WASM: Option<&[u8]> = None;\n\
         /// Not built.\nconst WASM_JS: Option<&str> = None;\n"
            .to_string()
    };
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("widget_wasm.rs");
    std::fs::write(out, code).unwrap();
}
