//! `lightembed index` (site-build time: files → passages → vectors → HNSW index on disk) and
//! `lightembed search` (query an index directory, refusing a model that does not match it, §8).
//!
//! An index directory holds `index.bin` (the `lightembed-index` byte layout, the same bytes the
//! browser app stores) and `index.json` (a human-readable copy of the manifest plus the model path
//! and build figures; `search` uses its `model` entry when `--model` is not given).
//!
//! The two files are one unit. `index.json` records the SHA-256 of the `index.bin` it describes
//! and is renamed into place first (the commit record), `index.bin` second. A run killed between
//! the two renames leaves the new `index.json`, the old `index.bin` and the new `index.bin.tmp`;
//! `search` sees that the hashes disagree and completes the rename (roll forward). Any other
//! disagreement is reported and `index.bin` alone is trusted.
//!
//! The model is recorded relative to the index folder (plus its absolute path and SHA-256), so a
//! project moved as a whole, or an index folder moved with its model, keeps working.

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use lightembed_index::fragments::FragmentedIndex;
use lightembed_index::snippet::{excerpt, ShownHit};
use lightembed_index::{Document, Index, ModelIdentity, Params, SearchOptions};
use rayon::prelude::*;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::sources::{Excludes, Passage};
use lightembed_build::count;
use lightembed_build::inputs::PageReader;

/// File name of the index bytes inside an index directory.
pub const INDEX_FILE: &str = "index.bin";
/// File name of the JSON sidecar inside an index directory.
pub const SIDECAR_FILE: &str = "index.json";

/// Options of `lightembed index`.
pub struct IndexArgs {
    pub model: PathBuf,
    pub out: PathBuf,
    pub dims: Option<usize>,
    pub inputs: Vec<PathBuf>,
    pub m: usize,
    pub ef_construction: usize,
    pub ef_search: usize,
    pub snippet_chars: usize,
    pub quiet: bool,
    pub exclude: Vec<String>,
    pub default_excludes: bool,
    /// English stemming on the keyword side (stored in the index); `None`: by the model's
    /// language ([`lightembed_index::keywords::default_stemming`]).
    pub keyword_stemming: Option<bool>,
    /// Store vectors as int8 codes + a scale each (a quarter of the bytes).
    pub int8_vectors: bool,
    /// CSS selector of the element holding an HTML page's content (whole page when unmatched).
    pub root_selector: Option<String>,
    /// Passage size in word pieces (`--passage-tokens`; [`lightembed_ingest::PASSAGE_TOKENS`]).
    pub passage_tokens: usize,
}

fn bar(len: u64, what: &str, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    // indicatif draws only when stderr is a terminal.
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>9} [{bar:40}] {pos}/{len} passages, {rate}, eta {eta}")
            .expect("valid template")
            .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", s.per_sec());
            })
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// The stored snippet: [`lightembed_index::snippet::head`] (shared with the app).
pub use lightembed_index::snippet::head as snippet;

/// An index built from inputs, with what it took.
pub struct Built {
    /// The index, every passage inserted.
    pub index: Index,
    /// Files read (after excludes).
    pub files: usize,
    /// Inputs skipped (unreadable), each named in a warning.
    pub skipped: usize,
    /// Files left out by `--exclude` and the default rules.
    pub excluded: usize,
    /// Documents: pages with text, JSONL records.
    pub documents: usize,
    /// Passages embedded.
    pub passages: usize,
    /// Seconds reading and cutting, embedding, inserting.
    pub seconds: (f64, f64, f64),
}

/// Passages read and cut from [`IndexArgs::inputs`], with what reading them found.
pub struct Inputs {
    /// The passages, in input order.
    pub passages: Vec<Passage>,
    /// Files read (after excludes).
    pub files: usize,
    /// Inputs skipped (unreadable), each named in a warning.
    pub skipped: usize,
    /// Files left out by `--exclude` and the default rules.
    pub excluded: usize,
    /// Documents: pages with text, JSONL records.
    pub documents: usize,
    /// Seconds reading and cutting.
    pub seconds: f64,
}

/// Reads and cuts `a.inputs` into passages sized for `model` ([`crate::sources::read_inputs`],
/// the reader `passages` uses too). Errors: a bad `--root-selector` or `--exclude`, an unreadable
/// input given by name, no text.
pub fn read_inputs(a: &IndexArgs, model: &lightembed::Model) -> Result<Inputs> {
    let t0 = Instant::now();
    let mut reader = PageReader::new(a.root_selector.as_deref(), a.passage_tokens)?;
    let excludes = Excludes::new(&a.exclude, a.default_excludes)?;
    let mut passages: Vec<Passage> = Vec::new();
    let t = crate::sources::read_inputs(&a.inputs, &excludes, &mut reader, model, |_, ps| {
        passages.extend_from_slice(ps);
        Ok(())
    })?;
    Ok(Inputs {
        passages,
        files: t.files,
        skipped: t.skipped,
        excluded: t.excluded,
        documents: t.documents,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// An empty index for `model`'s vectors with `a`'s dims, HNSW parameters, stemming and vector
/// encoding. Errors: bad `--dims` or parameters.
pub fn new_index(a: &IndexArgs, model: &lightembed::Model) -> Result<Index> {
    let dims = a.dims.unwrap_or(model.header().output_dim as usize);
    let fields = ModelIdentity::from(model)
        .manifest_fields(dims)
        .map_err(|e| anyhow!("--dims: {e}"))?;
    let params = Params {
        m: a.m,
        ef_construction: a.ef_construction,
        ef_search: a.ef_search,
        ..Params::default()
    };
    let mut index = Index::new(fields, params).map_err(|e| anyhow!("{e}"))?;
    index
        .set_keyword_stemming(
            a.keyword_stemming
                .unwrap_or_else(|| lightembed_index::keywords::default_stemming(model.model_id())),
        )
        .map_err(|e| anyhow!("{e}"))?;
    index
        .set_int8_vectors(a.int8_vectors)
        .map_err(|e| anyhow!("{e}"))?;
    Ok(index)
}

/// [`new_index`] + [`read_inputs`] + [`build_from`]: a bad `--dims` is reported before any
/// file is read.
pub fn build(a: &IndexArgs, model: &lightembed::Model) -> Result<Built> {
    let index = new_index(a, model)?;
    let inputs = read_inputs(a, model)?;
    build_from(a, model, index, inputs)
}

/// Embeds every passage of `inputs` with `model` on all cores and inserts them into `index` in
/// order (deterministic bytes for the same inputs). Progress on stderr unless `a.quiet`.
/// Errors: a passage the model refuses.
pub fn build_from(
    a: &IndexArgs,
    model: &lightembed::Model,
    mut index: Index,
    inputs: Inputs,
) -> Result<Built> {
    let Inputs {
        passages,
        files,
        skipped,
        excluded,
        documents,
        seconds: t_read,
    } = inputs;
    let dims = index.dims();
    if !a.quiet {
        let m = index.manifest();
        crate::warn(&format!(
            "{} ({} excluded) → {}, {}; model {} v{}, {} dims, {} threads",
            count(files, "file"),
            excluded,
            count(documents, "document"),
            count(passages.len(), "passage"),
            m.model_id,
            m.model_version,
            dims,
            rayon::current_num_threads()
        ));
    }

    // 2. Embed on all cores, in order.
    let t1 = Instant::now();
    let pb = bar(passages.len() as u64, "embedding", a.quiet);
    let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(passages.len());
    for chunk in passages.chunks(256) {
        let part: Vec<Result<Vec<f32>>> = chunk
            .par_iter()
            .map(|p| {
                model
                    .embed(&p.embed_text, dims)
                    .map_err(|e| anyhow!("passage {}: {e}", p.id))
            })
            .collect();
        for v in part {
            vectors.push(v?);
        }
        pb.inc(chunk.len() as u64);
    }
    pb.finish_and_clear();
    let t_embed = t1.elapsed().as_secs_f64();

    // 3. Build the graph (sequential: a seeded, deterministic insertion order).
    let t2 = Instant::now();
    let pb = bar(passages.len() as u64, "indexing", a.quiet);
    for (i, (p, v)) in passages.iter().zip(&vectors).enumerate() {
        let doc = Document::new(
            p.id.clone(),
            p.title.clone(),
            p.url.clone(),
            snippet(&p.text, a.snippet_chars),
        );
        // BM25 indexes what is embedded (heading + whole passage), not the cut snippet.
        index
            .insert_with_text(
                doc,
                v,
                &lightembed_index::keywords::keyword_text(&p.page_title, &p.heading, &p.text),
            )
            .map_err(|e| anyhow!("passage {}: {e}", p.id))?;
        if i % 64 == 63 {
            pb.inc(64);
        }
    }
    pb.finish_and_clear();
    let t_graph = t2.elapsed().as_secs_f64();
    Ok(Built {
        index,
        files,
        skipped,
        excluded,
        documents,
        passages: passages.len(),
        seconds: (t_read, t_embed, t_graph),
    })
}

/// Runs `lightembed index`: see the command's `--help`.
pub fn index(a: IndexArgs) -> Result<u8> {
    let t0 = Instant::now();
    // A bad --out is reported before any work, not after minutes of embedding.
    let out = OutDir::prepare(&a.out)?;
    let (model_bytes, model) = crate::load(&a.model)?;
    let Built {
        index,
        files,
        skipped,
        excluded,
        documents,
        passages,
        seconds: (t_read, t_embed, t_graph),
    } = build(&a, &model)?;
    let dims = index.dims();
    let params = *index.params();

    // 4. Write index.bin and index.json as one unit (see the module docs).
    let bytes = index.to_bytes();
    let bin = out.dir.join(INDEX_FILE);
    let m = index.manifest();
    let model_abs = crate::canonicalize(&a.model).unwrap_or_else(|_| a.model.clone());
    let model_rel = relative_path(&out.canonical()?, &model_abs);
    let sidecar = SidecarDoc {
        index_file: INDEX_FILE.to_string(),
        index_sha256: sha256_hex(&bytes),
        manifest: m.clone(),
        model: Some(
            model_rel
                .as_ref()
                .unwrap_or(&model_abs)
                .to_string_lossy()
                .into_owned(),
        ),
        model_absolute: Some(model_abs.to_string_lossy().into_owned()),
        model_bytes: model_bytes.len(),
        keyword_stemming: (if index.keyword_stemming() {
            "english"
        } else {
            "none"
        })
        .into(),
        params: SidecarParams {
            m: params.m,
            ef_construction: params.ef_construction,
            ef_search: params.ef_search,
        },
        inputs: a
            .inputs
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        files,
        skipped,
        excluded,
        documents,
        bytes: bytes.len(),
        seconds: SidecarSeconds {
            read: round3(t_read),
            embed: round3(t_embed),
            graph: round3(t_graph),
        },
    };
    let text = serde_json::to_string_pretty(&sidecar)? + "\n";
    write_index_pair(&out.dir, &bytes, text.as_bytes())?;
    out.keep();
    let total = t0.elapsed().as_secs_f64();
    outln!(
        "indexed {} → {} in {:.1} s (read {:.1} s, embed {:.1} s = {:.0} passages/s, graph {:.1} s); wrote {} ({} bytes, {} dims)",
        count(documents, "document"),
        count(index.len(), "passage"),
        total,
        t_read,
        t_embed,
        passages as f64 / t_embed.max(1e-9),
        t_graph,
        bin.display(),
        bytes.len(),
        dims
    )?;
    Ok(crate::skipped_code(skipped, "inputs"))
}

/// `x` rounded to 3 decimals (the seconds in `index.json`).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `--out` folder, checked before any work: created if missing (and removed again if the run
/// fails before writing into it), and proven writable by creating and removing a probe file.
struct OutDir {
    dir: PathBuf,
    /// The folders this run created, deepest first (`--out a/b/c` with only `a` existing:
    /// `a/b/c`, `a/b`); emptied by a failure, all of them are removed again.
    created: Vec<PathBuf>,
}

impl OutDir {
    fn prepare(dir: &Path) -> Result<OutDir> {
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

    fn canonical(&self) -> Result<PathBuf> {
        crate::canonicalize(&self.dir)
            .with_context(|| format!("cannot read {}", self.dir.display()))
    }

    /// The index was written: the folder stays.
    fn keep(mut self) {
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

fn tmp_name(p: &Path) -> PathBuf {
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
            _ => bail!(
                "the model recorded in {} is not found (looked relative to the index folder, then at the absolute path)",
                bin.with_file_name(SIDECAR_FILE).display()
            ),
        }
    }
}

/// `lightembed search --json`: the query, how it ranked, and the results.
#[derive(serde::Serialize)]
struct SearchOutput<'a> {
    query: &'a str,
    mode: lightembed_index::Mode,
    dims: usize,
    ms: f64,
    results: Vec<RankedHit>,
}

/// One result of `lightembed search --json`: its rank (1-based) and the index crate's
/// [`ShownHit`] — the same result type the browser app's worker sends.
#[derive(serde::Serialize)]
struct RankedHit {
    rank: usize,
    #[serde(flatten)]
    hit: ShownHit,
}

/// Options of `lightembed search`.
pub struct SearchArgs {
    pub index: PathBuf,
    pub model: Option<PathBuf>,
    pub k: usize,
    pub ef_search: Option<usize>,
    pub json: bool,
    /// Batch mode: a JSONL file (`-` = stdin) of `{"id", "query"}` lines.
    pub jsonl: Option<String>,
    pub query: String,
    /// Mode, fusion, candidates, collapsing (`ef_search` is set from [`SearchArgs::ef_search`]).
    pub options: SearchOptions,
}

/// What `lightembed search` needs of an index: an [`Index`] (`lightembed index`) or a site
/// bundle's fragments, all loaded (`lightembed site`).
trait Searchable {
    fn dims(&self) -> usize;
    fn len(&self) -> usize;
    fn stem(&self) -> bool;
    /// The ranked hits of `query` (embedding `vector` unless keyword mode).
    fn find(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Found>>;
}

/// One hit, whichever index kind it came from.
struct Found {
    id: String,
    title: String,
    url: String,
    score: f32,
    /// The passage text stored for excerpts.
    text: String,
}

impl Searchable for Index {
    fn dims(&self) -> usize {
        Index::dims(self)
    }
    fn len(&self) -> usize {
        Index::len(self)
    }
    fn stem(&self) -> bool {
        self.keyword_stemming()
    }
    fn find(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Found>> {
        let hits = self
            .query(vector, query, k, opts)
            .map_err(|e| anyhow!("{e}"))?;
        Ok(hits
            .into_iter()
            .map(|h| Found {
                id: h.id,
                title: h.payload.title,
                url: h.payload.url,
                score: h.score,
                text: h.payload.snippet,
            })
            .collect())
    }
}

impl Searchable for FragmentedIndex {
    fn dims(&self) -> usize {
        FragmentedIndex::dims(self)
    }
    fn len(&self) -> usize {
        FragmentedIndex::len(self)
    }
    fn stem(&self) -> bool {
        self.keyword_stemming()
    }
    fn find(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Found>> {
        let hits = self
            .query(vector, query, k, opts)
            .map_err(|e| anyhow!("{e}"))?;
        Ok(hits
            .into_iter()
            .map(|h| Found {
                id: format!("{}:{}", h.url, h.passage),
                text: self.text(h.passage).unwrap_or_default().to_string(),
                title: h.title,
                url: h.url,
                score: h.score,
            })
            .collect())
    }
}

/// A `lightembed site` bundle folder (`…/lightembed`, holding `manifest.json` with a `core`),
/// loaded whole: the core, every term shard and text chunk; and the bundle's model file.
fn open_bundle(dir: &Path) -> Result<Option<(FragmentedIndex, PathBuf)>> {
    let manifest_path = dir.join("manifest.json");
    if !dir.is_dir() || !manifest_path.is_file() {
        return Ok(None);
    }
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&manifest_path)
            .with_context(|| format!("cannot read {}", manifest_path.display()))?,
    )
    .with_context(|| format!("{}: not valid JSON", manifest_path.display()))?;
    let file = |key: &str| -> Result<PathBuf> {
        let name = m["files"][key].as_str().ok_or_else(|| {
            anyhow!(
                "{}: no files.{key} (a bundle of another lightembed version? re-run `lightembed site`)",
                manifest_path.display()
            )
        })?;
        Ok(dir.join(name))
    };
    let read = |p: &Path| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
    let core = file("core")?;
    let mut index = FragmentedIndex::from_core(&read(&core)?)
        .map_err(|e| anyhow!("{}: {e}", core.display()))?;
    let frags = file("fragments")?;
    for (kind, n) in [("t", index.shard_count()), ("c", index.chunk_count())] {
        for i in 0..n {
            let p = frags.join(format!("{kind}{i}.bin"));
            let bytes = read(&p)?;
            let added = if kind == "t" {
                index.add_shard(&bytes)
            } else {
                index.add_chunk(&bytes)
            };
            added.map_err(|e| anyhow!("{}: {e}", p.display()))?;
        }
    }
    Ok(Some((index, file("model")?)))
}

/// Runs `lightembed search`: see the command's `--help`.
pub fn search(a: SearchArgs) -> Result<u8> {
    if let Some((index, bundle_model)) = open_bundle(&a.index)? {
        let (_, model) = crate::load(a.model.as_deref().unwrap_or(&bundle_model))?;
        let warnings = index
            .manifest()
            .check_compatible(&ModelIdentity::from(&model))
            .map_err(|e| anyhow!("{e}"))?;
        for w in warnings {
            crate::warn(&w.to_string());
        }
        return search_in(&index, &model, &a, a.options);
    }
    let (bin, bytes, sidecar) = open_index(&a.index)?;
    let mut index = Index::from_bytes(&bytes).map_err(|e| anyhow!("{}: {e}", bin.display()))?;
    let json_path = bin.with_file_name(SIDECAR_FILE);
    if sidecar.as_ref().is_some_and(|s| s.stale) {
        crate::warn(&format!(
            "warning: {} does not describe {} (an interrupted or mixed write?); using {INDEX_FILE} alone",
            json_path.display(),
            bin.display(),
        ));
    }
    let model_path = match &a.model {
        Some(p) => p.clone(),
        None => match sidecar {
            None => bail!(
                "no --model given and {} is {}; pass --model MODEL.bin",
                json_path.display(),
                if json_path.exists() {
                    "unusable (see the warning above)"
                } else {
                    "missing"
                }
            ),
            Some(s) => s
                .model(&bin, &index.manifest().model_sha256)
                .map_err(|e| anyhow!("no --model given and {e:#}; pass --model MODEL.bin"))?,
        },
    };
    let (_, model) = crate::load(&model_path)?;
    // Spec §8: refuse a model this index was not built for, with the spec's message.
    let warnings = index
        .check_compatible(&ModelIdentity::from(&model))
        .map_err(|e| anyhow!("{e}"))?;
    for w in warnings {
        crate::warn(&w.to_string());
    }
    if let Some(ef) = a.ef_search {
        index
            .set_ef_search(ef)
            .map_err(|e| anyhow!("--ef-search: {e}"))?;
    }
    let opts = SearchOptions {
        ef_search: a.ef_search,
        ..a.options
    };
    search_in(&index, &model, &a, opts)
}

/// The query (or the `--jsonl` batch) against a loaded index, printed as asked.
fn search_in(
    index: &dyn Searchable,
    model: &lightembed::Model,
    a: &SearchArgs,
    opts: SearchOptions,
) -> Result<u8> {
    if let Some(input) = &a.jsonl {
        return batch_search(index, model, input, a.k, &opts);
    }
    if a.query.trim().is_empty() {
        bail!("the query is empty");
    }
    let t = Instant::now();
    let hits = run_query(index, model, &a.query, a.k, &opts)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let stem = index.stem();
    if a.json {
        let results: Vec<RankedHit> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let e = excerpt(&h.text, &a.query, stem, 0);
                RankedHit {
                    rank: i + 1,
                    hit: ShownHit {
                        id: h.id.clone(),
                        title: h.title.clone(),
                        url: h.url.clone(),
                        snippet: e.text,
                        highlights: e.highlights,
                        score: h.score,
                    },
                }
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string(&SearchOutput {
                query: &a.query,
                mode: opts.mode,
                dims: index.dims(),
                ms: round3(ms),
                results,
            })?
        )?;
    } else {
        outln!(
            "{} result{} for {:?} ({} mode, {} passages, {} dims, {:.1} ms)",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" },
            a.query,
            opts.mode.as_str(),
            index.len(),
            index.dims(),
            ms
        )?;
        // Hybrid ranks by meaning alone when no passage holds a word of the query (the fused
        // scores still start at 1): say so, as the app does.
        if opts.mode == lightembed_index::Mode::Hybrid
            && !hits.is_empty()
            && hits
                .iter()
                .all(|h| excerpt(&h.text, &a.query, stem, 0).highlights.is_empty())
        {
            outln!("No passage contains the words of the query: these are the closest by meaning alone.")?;
        }
        let bold = std::io::IsTerminal::is_terminal(&std::io::stdout());
        for (i, h) in hits.iter().enumerate() {
            let e = excerpt(&h.text, &a.query, stem, 200);
            outln!(
                "\n{:>2}. {:.3}  {}\n    {}\n    {}",
                i + 1,
                h.score,
                printable(&h.title),
                printable(&h.url),
                marked(&e, bold)
            )?;
        }
    }
    Ok(0)
}

/// `search --jsonl`: one `{"id", "hits"}` line per `{"id", "query"}` input line, in input order,
/// each written as soon as it is answered. A bad line (invalid JSON, no string "query", an empty
/// query) stops the run with an error naming it, after every line before it has been written.
fn batch_search(
    index: &dyn Searchable,
    model: &lightembed::Model,
    input: &str,
    k: usize,
    opts: &SearchOptions,
) -> Result<u8> {
    use std::io::BufRead;
    let reader: Box<dyn BufRead> = if input == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(input).with_context(|| format!("cannot read {input}"))?,
        ))
    };
    for (i, line) in reader.lines().enumerate() {
        let n = i + 1;
        let line = line.with_context(|| format!("{input}: line {n}: cannot read"))?;
        let line = if n == 1 {
            line.trim_start_matches('\u{feff}').to_string()
        } else {
            line
        };
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| anyhow!("{input}: line {n}: invalid JSON: {e}"))?;
        let query = match v.get("query") {
            Some(serde_json::Value::String(q)) if !q.trim().is_empty() => q,
            Some(serde_json::Value::String(_)) => bail!("{input}: line {n}: the query is empty"),
            _ => bail!("{input}: line {n}: expected a JSON object with a string \"query\" field"),
        };
        let hits = run_query(index, model, query, k, opts)
            .map_err(|e| anyhow!("{input}: line {n}: {e:#}"))?;
        let hits: Vec<_> = hits
            .iter()
            .map(|h| json!({"id": h.id, "url": h.url, "title": h.title, "score": h.score}))
            .collect();
        let id = match v.get("id") {
            Some(id) => {
                crate::jsonl::id_text(&line, id).map_err(|e| anyhow!("{input}: line {n}: {e}"))?
            }
            None => "null".to_string(),
        };
        // The id first, as `embed`/`tokenize` write it (serde_json would sort the keys).
        outln!(
            "{{\"id\":{},\"hits\":{}}}",
            id,
            serde_json::Value::Array(hits)
        )?;
    }
    Ok(0)
}

/// One query in `opts.mode`: the query is embedded unless the mode is keyword-only.
fn run_query(
    index: &dyn Searchable,
    model: &lightembed::Model,
    query: &str,
    k: usize,
    opts: &SearchOptions,
) -> Result<Vec<Found>> {
    let vector = match opts.mode {
        lightembed_index::Mode::Keyword => None,
        _ => Some(
            model
                .embed(query, index.dims())
                .map_err(|e| anyhow!("query: {e}"))?,
        ),
    };
    index.find(vector.as_deref(), query, k, opts)
}

/// Document text for a terminal: control characters (an escape sequence in a title could retitle
/// the window or recolour what follows) are shown escaped (`\u{1b}`), never sent as they are.
fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return s.into();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// The excerpt's text with its highlights in bold (ANSI, for a terminal) or as it is.
fn marked(e: &lightembed_index::snippet::Excerpt, bold: bool) -> String {
    if !bold {
        return e.text.clone();
    }
    let mut s = String::with_capacity(e.text.len() + 8 * e.highlights.len());
    let mut at = 0;
    for &(a, b) in &e.highlights {
        s.push_str(&e.text[at..a]);
        s.push_str("\x1b[1m");
        s.push_str(&e.text[a..b]);
        s.push_str("\x1b[0m");
        at = b;
    }
    s.push_str(&e.text[at..]);
    s
}
