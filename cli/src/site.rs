//! `lightembed site`: search by meaning (and keywords) for a built static site, Pagefind's shape.
//!
//! Indexes every HTML page under `--site DIR` with the shared pipeline (`lightembed_index::ingest`,
//! the same as `lightembed index`) and writes the bundle a page needs into `DIR/lightembed/`:
//!
//! | file | what |
//! |---|---|
//! | `lightembed-ui.js`, `lightembed-ui.css` | the `<lightembed-search>` element (ES module) and its default style |
//! | `lightembed-worker.js` | the module worker that loads the model and the index and answers queries |
//! | `lightembed_wasm.js`, `lightembed_wasm_bg.<hash>.wasm` | the engine and index for the browser (`js/`, web target) |
//! | `model.<hash>.bin` | the model (`.bin` v1; by default a site model, see below) |
//! | `core.<hash>.bin` | the index core (`lightembed_index::fragments`): sections, keyword lengths, one sign bit per vector dim — all a query needs first |
//! | `f/<build>/t<n>.bin`, `f/<build>/c<n>.bin` | term shards (postings of the terms hashing to `n`) and text chunks (passage text for excerpts), fetched as a query needs them |
//! | `manifest.json` | file names, the model's SHA-256 (its trailer, as `lightembed inspect` shows it), the core's SHA-256, counts |
//!
//! `<hash>` is the first 16 hex digits of the file's SHA-256 and `<build>` the first 16 of the
//! core's build id (which covers every shard and chunk), so the widget caches these files forever
//! and a rebuilt site changes their names. The bundle is written to a temporary folder
//! beside the old one and swapped in by renames, so a visitor never sees half a bundle; a failed
//! run leaves the old bundle as it was.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::search_index::{build_from, new_index, read_inputs, sha256_hex, Built, IndexArgs};
use crate::sources::Passage;

/// The folder `lightembed site` writes inside the site.
pub const BUNDLE_DIR: &str = "lightembed";

/// The model `lightembed site` uses without `--model`: the shipped static model.
const DEFAULT_MODEL: &[u8] = include_bytes!("../../public/models/lightembed-en-static.bin");

const UI_JS: &str = include_str!("../../widget/lightembed-ui.js");
const UI_CSS: &str = include_str!("../../widget/lightembed-ui.css");
const WORKER_JS: &str = include_str!("../../widget/lightembed-worker.js");

// `WASM` and `WASM_JS`: the web build of `js/` (`js/build.sh`), when it existed at build time.
include!(concat!(env!("OUT_DIR"), "/widget_wasm.rs"));

/// Arguments of `lightembed site`.
pub struct SiteArgs {
    /// The built site's root folder.
    pub site: PathBuf,
    /// A `.bin` model instead of the shipped static model.
    pub model: Option<PathBuf>,
    /// Index dims (a Matryoshka prefix); default the model's output_dim.
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
}

/// Besides the site's own tokens, a pruned site model keeps the first `KEEP_COMMON` ids of the
/// vocabulary — after the special tokens and single characters, BERT's WordPiece vocabulary lists
/// its most frequent pieces first — so common words of a query keep their own token.
const KEEP_COMMON: u32 = 5000;

/// The site model (seed §9): `model` pruned to the tokens of `passages` (tokenised as they will
/// be embedded), the words among the first [`KEEP_COMMON`] ids and the ASCII characters (plain and
/// `##`; characters the site uses are kept as site tokens), and to the first `dims` outputs. Embeds the site's text exactly like `model` at `dims`, so passages
/// cut with `model` are the passages the site model would cut.
fn site_model(
    model: &lightembed::Model,
    passages: &[Passage],
    dims: usize,
) -> Result<(Vec<u8>, lightembed::Model)> {
    let mut used = vec![false; model.tokenizer().vocab_size()];
    for p in passages {
        for id in model.tokenize(&p.embed_text) {
            used[id as usize] = true;
        }
    }
    let mut b = lightembed::ModelBuilder::from_model(model);
    b.prune(
        |id, t| {
            let piece = t.strip_prefix("##").unwrap_or(t);
            let one_char = piece.chars().count() == 1;
            used[id as usize]
                // common words (not BERT's `[unusedN]` placeholders, which text never produces)
                || (id < KEEP_COMMON && !t.starts_with("[unused") && !one_char)
                // ASCII characters, plain and `##`, so every ASCII word still has a segmentation
                || (one_char && piece.is_ascii())
        },
        Some(dims),
    )
    .map_err(|e| anyhow!("pruning the model: {e}"))?;
    let bytes = b.build().map_err(|e| anyhow!("pruning the model: {e}"))?;
    let pruned = lightembed::Model::from_bytes(&bytes)
        .map_err(|e| anyhow!("the pruned model does not load: {e}"))?;
    Ok((bytes, pruned))
}

/// Index dims when `--dims` is not given: the 128-d Matryoshka prefix when the model has one —
/// a third of the vector bytes a visitor downloads, for −0.4 nDCG@10 of hybrid ranking on the Git
/// manual set (bench/RESULTS.md) — else the model's output_dim.
const SITE_DIMS: usize = 128;

fn default_dims(model: &lightembed::Model) -> usize {
    if model.header().valid_dims().contains(&SITE_DIMS) {
        SITE_DIMS
    } else {
        model.header().output_dim as usize
    }
}

/// Runs `lightembed site`: see the command's `--help`.
pub fn run(a: SiteArgs) -> Result<ExitCode> {
    let t0 = Instant::now();
    let (Some(wasm), Some(wasm_js)) = (WASM, WASM_JS) else {
        bail!(
            "this lightembed was built without the search widget's WebAssembly (js/pkg/web): \
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
    let (model_bytes, model) = match &a.model {
        Some(p) => crate::load(p)?,
        None => (
            DEFAULT_MODEL.to_vec(),
            lightembed::Model::from_bytes(DEFAULT_MODEL)
                .map_err(|e| anyhow!("the built-in model: {e}"))?,
        ),
    };
    // Pages only: the bundle itself, and sources or data files served beside the pages, are not
    // what a visitor searches.
    let mut exclude = vec![
        format!("{BUNDLE_DIR}/**"),
        "**/*.{md,markdown,txt,jsonl}".to_string(),
    ];
    exclude.extend(a.exclude.iter().cloned());
    let args = IndexArgs {
        model: a.model.clone().unwrap_or_default(),
        out: PathBuf::new(),
        dims: Some(a.dims.unwrap_or_else(|| default_dims(&model))),
        inputs: vec![a.site.clone()],
        m: lightembed_index::Params::default().m,
        ef_construction: lightembed_index::Params::default().ef_construction,
        ef_search: lightembed_index::Params::default().ef_search,
        snippet_chars: 1200,
        quiet: a.quiet,
        exclude,
        default_excludes: a.default_excludes,
        keyword_stemming: None,
        // The bundle stores one sign bit per dim (fragments), taken from the f32 vectors.
        int8_vectors: false,
        root_selector: a.root_selector.clone(),
        passage_tokens: lightembed_index::ingest::PASSAGE_TOKENS,
    };
    // The pages are read once, cut with the full model (the site model cuts them the same way).
    let inputs = read_inputs(&args, &model)?;
    let (model_bytes, model) = if a.prune {
        let dims = args.dims.unwrap_or(model.header().output_dim as usize);
        let full = model_bytes.len();
        let (bytes, pruned) = site_model(&model, &inputs.passages, dims)?;
        if !a.quiet {
            crate::warn(&format!(
                "site model: {} of {} tokens, {dims} dims: {} → {} bytes",
                pruned.tokenizer().vocab_size(),
                model.tokenizer().vocab_size(),
                full,
                bytes.len()
            ));
        }
        (bytes, pruned)
    } else {
        (model_bytes, model)
    };
    let index = new_index(&args, &model)?;
    let Built {
        index,
        documents,
        skipped,
        ..
    } = build_from(&args, &model, index, inputs)?;
    let fragments = lightembed_index::fragments::split(&index, &Default::default())
        .map_err(|e| anyhow!("splitting the index: {e}"))?;

    // Write the new bundle beside the old one, then swap.
    let tmp = a.site.join(temp_name("new", std::process::id()));
    let result = write_bundle(
        &tmp,
        &fragments,
        &model_bytes,
        &model.sha256_hex(),
        (wasm, wasm_js),
        &index,
        documents,
    )
    .and_then(|()| swap(&tmp, &bundle));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result?;
    outln!(
        "indexed {} pages → {} passages in {:.1} s; wrote {} (index core {} bytes, {} term shards \
         {} bytes, {} text chunks {} bytes; model {} bytes)\n\
         add to your pages:\n  <link rel=\"stylesheet\" href=\"/{BUNDLE_DIR}/lightembed-ui.css\">\n  \
         <script type=\"module\" src=\"/{BUNDLE_DIR}/lightembed-ui.js\"></script>\n  \
         <lightembed-search></lightembed-search>",
        documents,
        index.len(),
        t0.elapsed().as_secs_f64(),
        bundle.display(),
        fragments.core.len(),
        fragments.shards.len(),
        fragments.shards.iter().map(Vec::len).sum::<usize>(),
        fragments.chunks.len(),
        fragments.chunks.iter().map(Vec::len).sum::<usize>(),
        model_bytes.len(),
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
        let alive = pid == std::process::id()
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

fn write_bundle(
    dir: &Path,
    fragments: &lightembed_index::fragments::Fragments,
    model_bytes: &[u8],
    model_sha: &str,
    (wasm, wasm_js): (&[u8], &str),
    index: &lightembed_index::Index,
    pages: usize,
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| -> Result<()> {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    };
    // File names carry the first 16 hex digits of the file's SHA-256. The manifest's model
    // SHA-256 is the model's own (its trailer, as `lightembed inspect` shows it): the widget checks
    // the loaded model against it without hashing the file again.
    let core_sha = sha256_hex(&fragments.core);
    let build = fragments.build_id();
    let core_file = format!("core.{}.bin", &core_sha[..16]);
    let frag_dir = format!("f/{}/", &build[..16]);
    let model_file = format!("model.{}.bin", &sha256_hex(model_bytes)[..16]);
    let wasm_file = format!("lightembed_wasm_bg.{}.wasm", &sha256_hex(wasm)[..16]);
    write(&core_file, &fragments.core)?;
    for (n, s) in fragments.shards.iter().enumerate() {
        write(&format!("{frag_dir}t{n}.bin"), s)?;
    }
    for (n, c) in fragments.chunks.iter().enumerate() {
        write(&format!("{frag_dir}c{n}.bin"), c)?;
    }
    write(&model_file, model_bytes)?;
    write(&wasm_file, wasm)?;
    write("lightembed_wasm.js", wasm_js.as_bytes())?;
    write("lightembed-worker.js", WORKER_JS.as_bytes())?;
    write("lightembed-ui.js", UI_JS.as_bytes())?;
    write("lightembed-ui.css", UI_CSS.as_bytes())?;
    let m = index.manifest();
    let manifest = json!({
        "bundle_version": 2,
        "generator": format!("lightembed {}", env!("CARGO_PKG_VERSION")),
        "files": {"core": core_file, "fragments": frag_dir, "model": model_file, "wasm": wasm_file},
        "model": {"id": m.model_id, "version": m.model_version.to_string(),
                  "sha256": model_sha, "bytes": model_bytes.len()},
        "index": {"sha256": core_sha, "bytes": fragments.core.len(),
                  "fragments_version": lightembed_index::fragments::FRAGMENTS_VERSION,
                  "shards": fragments.shards.len(), "chunks": fragments.chunks.len(),
                  "dims": m.dims, "passages": index.len(), "pages": pages},
    });
    write("manifest.json", format!("{manifest:#}\n").as_bytes())
}

/// Replaces `bundle` by `new`: the old bundle is renamed aside, the new one renamed into place,
/// then the old one removed. If the second rename fails the old bundle is put back.
fn swap(new: &Path, bundle: &Path) -> Result<()> {
    let old = bundle.with_file_name(temp_name("old", std::process::id()));
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
