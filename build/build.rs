//! Picks the widget's scripts and style the site build embeds: the minified ones `js/build.sh`
//! writes to `js/pkg/widget-ui/` (what a site's visitor should download), or the sources in
//! `widget/` when that folder was not built (a build without the JS toolchain: the same widget,
//! larger files).
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    for (file, var) in [
        ("lightembed-ui.js", "LIGHTEMBED_UI_JS"),
        ("lightembed-worker.js", "LIGHTEMBED_WORKER_JS"),
        ("lightembed-ui.css", "LIGHTEMBED_UI_CSS"),
    ] {
        let source = root.join("widget").join(file);
        let minified = root.join("js/pkg/widget-ui").join(file);
        println!("cargo:rerun-if-changed={}", source.display());
        if minified.exists() {
            println!("cargo:rerun-if-changed={}", minified.display());
        } else if root.join("js/pkg").exists() {
            // Watch the folder its files will appear in (a missing watched path would rerun
            // this script on every build).
            println!("cargo:rerun-if-changed={}", root.join("js/pkg").display());
        }
        let chosen = if minified.exists() { minified } else { source };
        println!(
            "cargo:rustc-env={var}={}",
            chosen.canonicalize().unwrap().display()
        );
    }
}
