//! An index folder, as `lightembed index` writes it and `lightembed search` (and the Python
//! package's `Index.save`/`Index.load`) read it: `index.bin` (the `lightembed-index` byte
//! layout, the same bytes the browser app stores) and `index.json` (a human-readable copy of the
//! manifest plus the model path and build figures; `search` uses its `model` entry when
//! `--model` is not given).
//!
//! The two files are one unit. `index.json` records the SHA-256 of the `index.bin` it describes
//! and is renamed into place first (the commit record), `index.bin` second. A run killed between
//! the two renames leaves the new `index.json`, the old `index.bin` and the new `index.bin.tmp`;
//! `search` sees that the hashes disagree and completes the rename (roll forward). Any other
//! disagreement is reported and `index.bin` alone is trusted.
//!
//! The model is recorded relative to the index folder (plus its absolute path and SHA-256), so a
//! project moved as a whole, or an index folder moved with its model, keeps working.

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// File name of the index bytes inside an index directory.
pub const INDEX_FILE: &str = "index.bin";
/// File name of the JSON sidecar inside an index directory.
pub const SIDECAR_FILE: &str = "index.json";

/// `x` rounded to 3 decimals (the seconds in `index.json`).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Lowercase hex SHA-256 of `bytes` (the one the site build names its files with).
pub use lightembed_build::sha256_hex;

/// The `--out` folder, checked before any work: created if missing (and removed again if the run
/// fails before writing into it), and proven writable by creating and removing a probe file.
pub struct OutDir {
    pub dir: PathBuf,
    /// The folders this run created, deepest first (`--out a/b/c` with only `a` existing:
    /// `a/b/c`, `a/b`); emptied by a failure, all of them are removed again.
    created: Vec<PathBuf>,
}

impl OutDir {
    pub fn prepare(dir: &Path) -> Result<OutDir> {
        if dir.exists() && !dir.is_dir() {
            bail!("--out {}: exists and is not a directory", dir.display());
        }
        let created: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--out {}: cannot create the folder", dir.display()))?;
        let out = OutDir {
            dir: dir.to_path_buf(),
            created,
        };
        for name in [INDEX_FILE, SIDECAR_FILE] {
            if dir.join(name).is_dir() {
                bail!(
                    "--out {}: {name} is a directory; cannot replace it",
                    dir.display()
                );
            }
        }
        let probe = dir.join(format!(".lightembed-write-test-{}", crate::process_id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .with_context(|| format!("--out {}: cannot write in this folder", dir.display()))?;
        let _ = std::fs::remove_file(&probe);
        Ok(out)
    }

    pub fn canonical(&self) -> Result<PathBuf> {
        crate::canonicalize(&self.dir)
            .with_context(|| format!("cannot read {}", self.dir.display()))
    }

    /// The index was written: the folder stays.
    pub fn keep(mut self) {
        self.created.clear();
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        for d in &self.created {
            if std::fs::remove_dir(d).is_err() {
                break; // not empty (or gone): keep it and everything above it
            }
        }
    }
}

/// `to` relative to the folder `from` (both absolute), e.g. `../../models/m.bin`; None when they
/// share no root (another drive on Windows).
pub fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let (a, b): (Vec<Component>, Vec<Component>) =
        (from.components().collect(), to.components().collect());
    if a.first() != b.first() {
        return None;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..a.len() {
        rel.push("..");
    }
    for c in &b[common..] {
        rel.push(c.as_os_str());
    }
    Some(rel)
}

pub fn tmp_name(p: &Path) -> PathBuf {
    let mut name = p.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    p.with_file_name(name)
}

/// Writes `index.bin` and `index.json` into `dir` as one unit: both to `*.tmp` first, then
/// `index.json` (which names the SHA-256 of the new `index.bin`) is renamed into place, then
/// `index.bin`. A failure before the first rename leaves the previous pair untouched; a kill
/// between the renames is completed by the next `search` (see [`open_index`]).
pub fn write_index_pair(dir: &Path, bin_bytes: &[u8], json_bytes: &[u8]) -> Result<()> {
    let (bin, json) = (dir.join(INDEX_FILE), dir.join(SIDECAR_FILE));
    let (bin_tmp, json_tmp) = (tmp_name(&bin), tmp_name(&json));
    let cleanup = || {
        let _ = std::fs::remove_file(&bin_tmp);
        let _ = std::fs::remove_file(&json_tmp);
    };
    for (p, bytes) in [(&bin_tmp, bin_bytes), (&json_tmp, json_bytes)] {
        if let Err(e) = std::fs::write(p, bytes) {
            cleanup();
            return Err(e).with_context(|| format!("cannot write {}", p.display()));
        }
    }
    if let Err(e) = std::fs::rename(&json_tmp, &json) {
        cleanup();
        return Err(e).with_context(|| format!("cannot write {}", json.display()));
    }
    #[cfg(debug_assertions)]
    if std::env::var_os("LIGHTEMBED_TEST_KILL_BETWEEN_RENAMES").is_some() {
        std::process::abort(); // tests: the kill point between the two renames
    }
    // index.bin.tmp is kept on failure: index.json already names it, `search` rolls forward.
    std::fs::rename(&bin_tmp, &bin).with_context(|| format!("cannot write {}", bin.display()))
}

/// Reads an index folder (or an `index.bin` path) as one unit with its `index.json`: returns the
/// index bytes and the sidecar when it describes those bytes. Completes a write that was killed
/// between its two renames (the sidecar names the SHA-256 of `index.bin.tmp`); otherwise, when
/// the two disagree, returns the sidecar marked stale (the caller warns once the index bytes are
/// known to be good).
pub fn open_index(path: &Path) -> Result<(PathBuf, Vec<u8>, Option<Sidecar>)> {
    let bin = if path.is_dir() {
        path.join(INDEX_FILE)
    } else {
        path.to_path_buf()
    };
    let json_path = bin.with_file_name(SIDECAR_FILE);
    let sidecar = match std::fs::read_to_string(&json_path) {
        Ok(text) => match serde_json::from_str::<SidecarDoc>(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                crate::warn(&format!(
                    "warning: ignoring {}: not valid JSON ({e})",
                    json_path.display()
                ));
                None
            }
        },
        Err(_) => None,
    };
    let want = sidecar.as_ref().map(|v| v.index_sha256.clone());
    let read_bin = std::fs::read(&bin);
    let consistent = |bytes: &[u8]| want.as_deref().is_none_or(|w| sha256_hex(bytes) == w);
    let bytes = match read_bin {
        Ok(bytes) if consistent(&bytes) => bytes,
        other => {
            let tmp = tmp_name(&bin);
            match (std::fs::read(&tmp), &want) {
                (Ok(new), Some(w)) if sha256_hex(&new) == *w => {
                    // Killed between the two renames: finish the job (or read the new bytes
                    // where the folder is read-only).
                    if std::fs::rename(&tmp, &bin).is_ok() {
                        crate::warn(&format!(
                            "warning: {}: completed an interrupted index write",
                            bin.display()
                        ));
                    }
                    new
                }
                _ => {
                    let bytes = other.with_context(|| format!("cannot read {}", bin.display()))?;
                    return Ok((bin, bytes, sidecar.map(|v| Sidecar { v, stale: true })));
                }
            }
        }
    };
    Ok((bin, bytes, sidecar.map(|v| Sidecar { v, stale: false })))
}

/// `index.json`: the index manifest (flattened: `index_version`, `model_id`, `model_version`,
/// `dims`, `count`, `metric`, `model_sha256`) with the model's path, the build's parameters,
/// inputs and figures. Written by `index`, read by `search` (which needs `index_sha256` and the
/// model paths); the figures are for people.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SidecarDoc {
    pub index_file: String,
    /// SHA-256 (hex) of the `index.bin` this file describes.
    pub index_sha256: String,
    #[serde(flatten)]
    pub manifest: lightembed_index::Manifest,
    /// The model, relative to the index folder when it can be.
    #[serde(default)]
    pub model: Option<String>,
    /// The model's absolute path at build time.
    #[serde(default)]
    pub model_absolute: Option<String>,
    #[serde(default)]
    pub model_bytes: usize,
    #[serde(default)]
    pub keyword_stemming: String,
    #[serde(default)]
    pub params: SidecarParams,
    #[serde(default)]
    pub inputs: Vec<String>,
    #[serde(default)]
    pub files: usize,
    #[serde(default)]
    pub skipped: usize,
    #[serde(default)]
    pub excluded: usize,
    #[serde(default)]
    pub documents: usize,
    #[serde(default)]
    pub bytes: usize,
    #[serde(default)]
    pub seconds: SidecarSeconds,
}

/// HNSW parameters as `index.json` records them.
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub struct SidecarParams {
    #[serde(rename = "M")]
    pub m: usize,
    pub ef_construction: usize,
    pub ef_search: usize,
}

/// Build time in seconds per step.
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub struct SidecarSeconds {
    pub read: f64,
    pub embed: f64,
    pub graph: f64,
}

/// A parsed `index.json`; `stale` when it does not describe the `index.bin` beside it.
pub struct Sidecar {
    /// The parsed file.
    pub v: SidecarDoc,
    /// It does not describe the `index.bin` beside it.
    pub stale: bool,
}

impl Sidecar {
    /// The model this index was built with: the recorded path relative to the index folder,
    /// then the absolute one; a file whose SHA-256 is the index manifest's wins. A stale sidecar
    /// is only trusted for a file with that SHA-256.
    pub fn model(&self, bin: &Path, manifest_sha256: &[u8; 32]) -> Result<PathBuf> {
        let dir = bin.parent().unwrap_or(Path::new("."));
        let mut candidates = Vec::new();
        for p in [&self.v.model, &self.v.model_absolute]
            .into_iter()
            .flatten()
        {
            let p = dir.join(p); // an absolute path stays as it is
            if p.is_file() && !candidates.contains(&p) {
                candidates.push(p);
            }
        }
        for c in &candidates {
            let hashes_to_manifest = |b: Vec<u8>| {
                b.len() >= 32 && Sha256::digest(&b[..b.len() - 32]).as_slice() == manifest_sha256
            };
            if std::fs::read(c).is_ok_and(hashes_to_manifest) {
                return Ok(c.clone());
            }
        }
        match candidates.into_iter().next() {
            Some(c) if !self.stale => Ok(c),
            // The recorded file exists but is another model: say so (an index.bin copied over
            // from another build, with the old index.json beside it), not "not found".
            Some(c) => bail!(
                "the model recorded in {} ({}) is not the model {} was built with (SHA-256 {}…): \
                 index.json describes another index.bin",
                bin.with_file_name(SIDECAR_FILE).display(),
                c.display(),
                bin.display(),
                &lightembed::format::to_hex(manifest_sha256)[..16]
            ),
            None => bail!(
                "the model recorded in {} is not found (looked relative to the index folder, then at the absolute path)",
                bin.with_file_name(SIDECAR_FILE).display()
            ),
        }
    }
}
