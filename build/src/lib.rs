//! `lightembed-build`: the static-site search build as a library — pages in, files out.
//!
//! `lightembed site` (native, `cli/`) and `npx lightembed site` (the npm package, this crate
//! compiled to wasm) run the same code, so the same site gives the same bundle, byte for byte.
//! The caller does the file I/O:
//!
//! 1. walk the site in sorted order (by path component, as `walkdir`'s `sort_by_file_name`),
//!    skipping hidden entries, and keep the files [`inputs::Excludes::site`] accepts;
//! 2. [`site::SiteBuilder::add_page`] each page's bytes (decoded, cut into passages by
//!    [`lightembed_ingest`]);
//! 3. [`site::SiteBuilder::prepare`] (the site model: pruned vocabulary and dims), embed
//!    [`site::Prepared::texts`] (on every core if the caller can), [`site::Prepared::assemble`];
//! 4. write [`site::Bundle::files`] into a fresh folder and swap it in.
//!
//! No HNSW graph is built: the bundle ships fragments only ([`lightembed_index::fragments::Builder`]).

pub mod inputs;
pub mod site;

use std::fmt;

/// An error of the build, as one human-readable line (the CLI prints it after `error: `; the
/// npm package rejects with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub String);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

/// `Err(BuildError(format!(…)))`.
macro_rules! fail {
    ($($t:tt)*) => { return Err($crate::BuildError(format!($($t)*))) };
}
pub(crate) use fail;

/// `n` and the noun, singular for 1: `count(1, "page")` is `1 page`, `count(3, "page")` is
/// `3 pages` (every noun these messages count takes an `s`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    lightembed::format::to_hex(&Sha256::digest(bytes))
}
