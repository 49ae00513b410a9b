//! Helpers shared by the CLI's integration tests (a folder module, so it is not a test target of
//! its own). Not every test file uses every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The shipped static model.
pub fn model() -> PathBuf {
    root().join("public/models/lightembed-en-static.bin")
}

/// Runs the `lightembed` binary under test.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(args)
        .output()
        .unwrap()
}

/// A path as `&str` (test paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
