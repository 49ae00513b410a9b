//! `lightembed site`: search by meaning (and keywords) for a built static site, Pagefind's shape.
//!
//! The build itself is a library call ([`lightembed_build::site`], which the npm package's
//! `npx lightembed site` runs too, compiled to wasm): this module walks `--site DIR`, reads its
//! pages, embeds the passages on every core, and writes the bundle into `DIR/lightembed/`
//! (its files are listed in [`lightembed_build::site`]).
//!
//! The bundle is written to a temporary folder beside the old one and swapped in by renames, so
//! a visitor never sees half a bundle; a failed run leaves the old bundle as it was.

use anyhow::{anyhow, bail, Context, Result};
use lightembed_build::inputs::Excludes;
use lightembed_build::site::{SiteBuilder, SiteOptions};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::sources::collect_inputs;

/// The folder `lightembed site` writes inside the site.
pub use lightembed_build::inputs::BUNDLE_DIR;

/// The model `lightembed site` uses without `--model`: the shipped static model. Not in the
/// WASI build the npm package runs (its launcher builds sites through the library with the model
/// file it ships, `js/lib/site.js`), which saves 4.7 MB of its wasm.
#[cfg(not(target_os = "wasi"))]
pub static DEFAULT_MODEL: Option<&[u8]> = Some(include_bytes!(
    "../../public/models/lightembed-en-static.bin"
));
#[cfg(target_os = "wasi")]
pub static DEFAULT_MODEL: Option<&[u8]> = None;

// `WASM`, `WASM_JS` (`js/pkg/widget`) and `WASM_MODEL`, `WASM_MODEL_JS` (`js/pkg/widget-model`):
// the widget builds of `js/` (`js/build.sh`), when they existed at build time.
include!(concat!(env!("OUT_DIR"), "/widget_wasm.rs"));

/// Arguments of `lightembed site`.
pub struct SiteArgs {
    /// The built site's root folder.
    pub site: PathBuf,
    /// A `.bin` model instead of the shipped static model.
    pub model: Option<PathBuf>,
    /// Index dims (a Matryoshka prefix); default [`lightembed_build::site::default_dims`].
    pub dims: Option<usize>,
    /// Extra `--exclude` globs, relative to the site root.
    pub exclude: Vec<String>,
    /// Apply the default excludes (`_sources/`, `NAME.txt` beside `NAME.html`).
    pub default_excludes: bool,
    /// No progress on stderr.
    pub quiet: bool,
    /// Ship a site model: only the tokens the site uses (plus common ones and characters) and
    /// only the projection rows of the index dims.
    pub prune: bool,
    /// CSS selector of the pages' content element (`--root-selector`).
    pub root_selector: Option<String>,
    /// Store the bundle's binary files gzip-compressed (`--no-gzip`: raw).
    pub gzip: bool,
    /// Vector partitions (`None`: chosen by bytes).
    pub partitions: Option<usize>,
    /// Vector partitions a query probes by default.
    pub probes: usize,
    /// Coarse centroid cells (`None`: chosen by bytes; 0: one level).
    pub cells: Option<usize>,
    /// Cells whose partition centroids a query fetches, at least.
    pub cell_probes: usize,
    /// Postings in a term's first tier (`--tier-postings`).
    pub tier_postings: usize,
    /// Postings in a common word's first tier (`--common-tier-postings`).
    pub common_tier_postings: usize,
}

/// Runs `lightembed site`: see the command's `--help`.
pub fn run(a: SiteArgs) -> Result<u8> {
    let t0 = Instant::now();
    let (Some(wasm), Some(wasm_js), Some(wasm_model), Some(wasm_model_js)) =
        (WASM, WASM_JS, WASM_MODEL, WASM_MODEL_JS)
    else {
        bail!(
            "this lightembed was built without the search widget's WebAssembly (js/pkg/widget): \
             run js/build.sh, then rebuild lightembed"
        );
    };
    if !a.site.is_dir() {
        let dangling = a.site.symlink_metadata().is_ok_and(|m| m.is_symlink());
        bail!(
            "--site {}: not a folder{}",
            a.site.display(),
            if dangling {
                " (a link to a missing folder)"
            } else {
                ""
            }
        );
    }
    let has_pages = walkdir::WalkDir::new(&a.site)
        .follow_links(true)
        .into_iter()
        .filter_map(|e| e.ok())
        .any(|e| {
            e.file_type().is_file()
                && e.path()
                    .extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| {
                        x.eq_ignore_ascii_case("html") || x.eq_ignore_ascii_case("htm")
                    })
        });
    if !has_pages {
        bail!(
            "--site {}: no .html or .htm pages in this folder (lightembed site indexes a built site's HTML pages)",
            a.site.display()
        );
    }
    let bundle = a.site.join(BUNDLE_DIR);
    check_bundle_dir(&bundle)?;
    remove_stale_temps(&a.site);
    let (model_bytes, model_name) = match &a.model {
        Some(p) => (
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
            p.display().to_string(),
        ),
        None => match DEFAULT_MODEL {
            Some(m) => (m.to_vec(), "the built-in model".to_string()),
            None => bail!("this build of lightembed has no built-in model: give --model"),
        },
    };
    let opts = SiteOptions {
        dims: a.dims,
        full_model: !a.prune,
        root_selector: a.root_selector.clone(),
        gzip: a.gzip,
        split: lightembed_index::fragments::SplitOptions {
            partitions: a.partitions,
            probes: a.probes,
            cells: a.cells,
            cell_probes: a.cell_probes,
            tier_postings: a.tier_postings,
            common_tier_postings: a.common_tier_postings,
            ..Default::default()
        },
    };
    let mut builder = SiteBuilder::new(model_bytes, &model_name, &opts).map_err(|e| anyhow!(e))?;
    let excludes = Excludes::site(&a.exclude, a.default_excludes).map_err(|e| anyhow!(e))?;

    // Read and cut the pages (sorted, hidden entries skipped: `sources::collect_inputs`).
    let (mut skipped, mut excluded) = (0usize, 0usize);
    let files = collect_inputs(
        std::slice::from_ref(&a.site),
        &excludes,
        &mut skipped,
        &mut excluded,
    )?;
    for f in &files {
        let bytes = match std::fs::read(&f.path) {
            Ok(b) => b,
            Err(e) => {
                crate::warn(&format!(
                    "warning: skipping {}: cannot read: {e}",
                    f.path.display()
                ));
                skipped += 1;
                continue;
            }
        };
        let page = builder.add_html(&f.url, &bytes);
        if let Some(why) = page.skipped {
            crate::warn(&format!("warning: skipping {}: {why}", f.path.display()));
            skipped += 1;
        }
        if let Some(w) = page.warning {
            crate::warn(&format!("warning: {}: {w}", f.path.display()));
        }
    }
    // Pages marked noindex (mdBook's print.html) are read last, so their repeats of chapter text
    // are the copies dropped.
    for (url, page) in builder.read_deferred() {
        if let Some(why) = page.skipped {
            crate::warn(&format!("warning: skipping {url}: {why}"));
            skipped += 1;
        }
        if let Some(w) = page.warning {
            crate::warn(&format!("warning: {url}: {w}"));
        }
    }
    let passages = builder.passages().len();
    let documents = builder.documents();
    let prepared = builder
        .prepare(files.len(), excluded)
        .map_err(|e| anyhow!(e))?;
    if !a.quiet {
        if let Some(note) = prepared.site_model_note() {
            crate::warn(note);
        }
        let m = prepared.model();
        crate::warn(&format!(
            "{} ({} excluded) → {}, {}; model {} v{}, {} dims, {} threads",
            lightembed_build::count(files.len(), "file"),
            excluded,
            lightembed_build::count(documents, "document"),
            lightembed_build::count(passages, "passage"),
            m.model_id(),
            m.header().model_version(),
            prepared.dims(),
            rayon::current_num_threads()
        ));
    }

    // Embed on all cores, in order.
    let pb = crate::index_build::bar(passages as u64, "embedding", a.quiet);
    let mut vectors: Vec<f32> = Vec::with_capacity(passages * prepared.dims());
    let ranges: Vec<std::ops::Range<usize>> = (0..passages)
        .step_by(64)
        .map(|s| s..(s + 64).min(passages))
        .collect();
    for group in ranges.chunks(8) {
        let part: Vec<Result<Vec<f32>, _>> = group
            .par_iter()
            .map(|r| prepared.embed_range(r.clone()))
            .collect();
        for v in part {
            let v = v.map_err(|e| anyhow!(e))?;
            pb.inc((v.len() / prepared.dims()) as u64);
            vectors.extend_from_slice(&v);
        }
    }
    pb.finish_and_clear();
    // A static model's bundle carries its query side, which the widget's search-only wasm
    // embeds queries with; a transformer's widget loads the model, so it gets the wasm with Model.
    let (wasm, wasm_js) = if prepared.model().header().is_static() {
        (wasm, wasm_js)
    } else {
        (wasm_model, wasm_model_js)
    };
    let built = prepared
        .assemble(&vectors, wasm, wasm_js)
        .map_err(|e| anyhow!(e))?;

    // Write the new bundle beside the old one, then swap.
    let tmp = a.site.join(temp_name("new", crate::process_id()));
    let result = write_files(&tmp, &built.files).and_then(|()| swap(&tmp, &bundle));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result?;
    outln!(
        "{}",
        built.summary(&bundle.display().to_string(), t0.elapsed().as_secs_f64())
    )?;
    Ok(crate::skipped_code(skipped, "inputs"))
}

/// Refuses to replace `bundle` (`SITE/lightembed/`, which a run replaces whole) unless it is
/// missing, empty, or a bundle this command wrote (a `manifest.json` with `bundle_version`): a
/// folder of the site's own under that name is never deleted.
fn check_bundle_dir(bundle: &Path) -> Result<()> {
    let Ok(mut entries) = std::fs::read_dir(bundle) else {
        if bundle.symlink_metadata().is_ok() && !bundle.is_dir() {
            bail!(
                "{} exists and is not a folder; lightembed site writes its bundle there: move it away first",
                bundle.display()
            );
        }
        return Ok(());
    };
    if entries.next().is_none() {
        return Ok(());
    }
    let ours = std::fs::read(bundle.join("manifest.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|m| m.get("bundle_version").is_some());
    if !ours {
        bail!(
            "{} exists and is not a lightembed bundle (no manifest.json written by `lightembed site`); \
             lightembed site replaces that folder whole, so move it away or rename it first",
            bundle.display()
        );
    }
    Ok(())
}

/// `.lightembed-KIND-`: the start of a run's temporary folder in the site (`new`: the bundle being
/// written, `old`: the previous one moved aside by [`swap`]).
fn temp_prefix(kind: &str) -> String {
    format!(".{BUNDLE_DIR}-{kind}-")
}

/// Process `pid`'s temporary folder of `kind` ([`temp_prefix`]).
fn temp_name(kind: &str, pid: u32) -> String {
    format!("{}{pid}", temp_prefix(kind))
}

/// Removes the `.lightembed-new-PID` / `.lightembed-old-PID` folders that an interrupted run left
/// in the site folder (they would otherwise be deployed with the site), unless that process is
/// still running (checked where `/proc` exists).
fn remove_stale_temps(site: &Path) {
    let Ok(entries) = std::fs::read_dir(site) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = ["new", "old"]
            .iter()
            .find_map(|kind| name.strip_prefix(temp_prefix(kind).as_str()))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = pid == crate::process_id()
            || (Path::new("/proc/self").exists() && Path::new(&format!("/proc/{pid}")).exists());
        if !alive && e.path().is_dir() {
            match std::fs::remove_dir_all(e.path()) {
                Ok(()) => crate::warn(&format!(
                    "removed {}, left by an interrupted run",
                    e.path().display()
                )),
                Err(err) => crate::warn(&format!(
                    "warning: cannot remove {} (left by an interrupted run): {err}",
                    e.path().display()
                )),
            }
        }
    }
}

/// Writes `files` (paths relative to `dir`, `/`-separated) into `dir`, creating folders.
fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, bytes) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Replaces `bundle` by `new`: the old bundle is renamed aside, the new one renamed into place,
/// then the old one removed. If the second rename fails the old bundle is put back.
fn swap(new: &Path, bundle: &Path) -> Result<()> {
    let old = bundle.with_file_name(temp_name("old", crate::process_id()));
    let had_old = bundle.exists();
    if had_old {
        std::fs::rename(bundle, &old)
            .with_context(|| format!("cannot move the old {} aside", bundle.display()))?;
    }
    if let Err(e) = std::fs::rename(new, bundle) {
        if had_old {
            let _ = std::fs::rename(&old, bundle);
        }
        return Err(e)
            .with_context(|| format!("cannot move the new bundle to {}", bundle.display()));
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}
