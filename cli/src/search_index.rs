//! `lightembed index` (site-build time: files → passages → vectors → HNSW index on disk) and
//! `lightembed search` (query an index directory, refusing a model that does not match it, §8).
//!
//! An index directory holds `index.bin` (the `lightembed-index` byte layout, the same bytes the
//! browser app stores) and `index.json` (a human-readable copy of the manifest plus the model path
//! and build figures; `search` uses its `model` entry when `--model` is not given).

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use lightembed_index::{Document, Index, ModelIdentity, Params};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::sources::{collect_inputs, read_file, IdSet, Passage};

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

/// The first `max_chars` characters of `text`, cut at a word boundary, with `…` when cut.
pub fn snippet(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(max_chars).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max_chars / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end())
}

/// Runs `lightembed index`: see the command's `--help`.
pub fn index(a: IndexArgs) -> Result<ExitCode> {
    let t0 = Instant::now();
    let (model_bytes, model) = crate::load(&a.model)?;
    let dims = a.dims.unwrap_or(model.header().output_dim as usize);
    let identity = ModelIdentity::from(&model);
    let fields = identity
        .manifest_fields(dims)
        .map_err(|e| anyhow!("--dims: {e}"))?;
    let params = Params {
        m: a.m,
        ef_construction: a.ef_construction,
        ef_search: a.ef_search,
        ..Params::default()
    };
    let mut index = Index::new(fields, params).map_err(|e| anyhow!("{e}"))?;

    // 1. Read and cut the inputs.
    let files = collect_inputs(&a.inputs)?;
    let mut passages: Vec<Passage> = Vec::new();
    let (mut seen, mut ids) = (HashSet::new(), IdSet::default());
    let mut documents = 0usize;
    for f in &files {
        documents += read_file(f, &mut seen, &mut ids, &mut passages)?.documents;
    }
    if passages.is_empty() {
        bail!("no text found in the inputs ({} files read)", files.len());
    }
    let t_read = t0.elapsed().as_secs_f64();
    if !a.quiet {
        eprintln!(
            "{} files → {} documents, {} passages; model {} v{}, {} dims, {} threads",
            files.len(),
            documents,
            passages.len(),
            identity.model_id,
            index.manifest().model_version,
            dims,
            rayon::current_num_threads()
        );
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
        index
            .insert(doc, v)
            .map_err(|e| anyhow!("passage {}: {e}", p.id))?;
        if i % 64 == 63 {
            pb.inc(64);
        }
    }
    pb.finish_and_clear();
    let t_graph = t2.elapsed().as_secs_f64();

    // 4. Write index.bin and index.json: both to temporary names first, then renamed, so a
    //    failure leaves the previous pair (or nothing) in place, never a mix.
    if a.out.exists() && !a.out.is_dir() {
        bail!("--out {}: exists and is not a directory", a.out.display());
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let bytes = index.to_bytes();
    let bin = a.out.join(INDEX_FILE);
    let m = index.manifest();
    let model_path = std::fs::canonicalize(&a.model).unwrap_or_else(|_| a.model.clone());
    let sidecar = json!({
        "index_file": INDEX_FILE,
        "index_version": m.index_version,
        "model_id": m.model_id,
        "model_version": m.model_version.to_string(),
        "model_sha256": model.sha256_hex(),
        "model": model_path.to_string_lossy(),
        "model_bytes": model_bytes.len(),
        "dims": m.dims,
        "count": index.len(),
        "metric": m.metric.to_string(),
        "params": {"M": params.m, "ef_construction": params.ef_construction, "ef_search": params.ef_search},
        "inputs": a.inputs.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "files": files.len(),
        "documents": documents,
        "bytes": bytes.len(),
        "seconds": {"read": round3(t_read), "embed": round3(t_embed), "graph": round3(t_graph)},
    });
    let json_path = a.out.join(SIDECAR_FILE);
    write_pair(&[
        (&bin, &bytes),
        (&json_path, format!("{sidecar:#}\n").as_bytes()),
    ])?;
    let total = t0.elapsed().as_secs_f64();
    outln!(
        "indexed {} documents → {} passages in {:.1} s (read {:.1} s, embed {:.1} s = {:.0} passages/s, graph {:.1} s); wrote {} ({} bytes, {} dims)",
        documents,
        index.len(),
        total,
        t_read,
        t_embed,
        passages.len() as f64 / t_embed.max(1e-9),
        t_graph,
        bin.display(),
        bytes.len(),
        dims
    )?;
    Ok(ExitCode::SUCCESS)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Writes each `(path, bytes)` to `path.tmp`, then renames them all into place; on any error the
/// temporary files are removed and the targets are left as they were.
fn write_pair(files: &[(&Path, &[u8])]) -> Result<()> {
    let tmp = |p: &Path| {
        let mut name = p.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        p.with_file_name(name)
    };
    let cleanup = || {
        for (p, _) in files {
            let _ = std::fs::remove_file(tmp(p));
        }
    };
    for (p, _) in files {
        if p.is_dir() {
            bail!("cannot write {}: it is a directory", p.display());
        }
    }
    for (p, bytes) in files {
        if let Err(e) = std::fs::write(tmp(p), bytes) {
            cleanup();
            return Err(e).with_context(|| format!("cannot write {}", tmp(p).display()));
        }
    }
    for (p, _) in files {
        if let Err(e) = std::fs::rename(tmp(p), p) {
            cleanup();
            return Err(e).with_context(|| format!("cannot write {}", p.display()));
        }
    }
    Ok(())
}

/// Options of `lightembed search`.
pub struct SearchArgs {
    pub index: PathBuf,
    pub model: Option<PathBuf>,
    pub k: usize,
    pub ef_search: Option<usize>,
    pub json: bool,
    pub query: String,
}

/// Runs `lightembed search`: see the command's `--help`.
pub fn search(a: SearchArgs) -> Result<ExitCode> {
    let bin = if a.index.is_dir() {
        a.index.join(INDEX_FILE)
    } else {
        a.index.clone()
    };
    let bytes = std::fs::read(&bin).with_context(|| format!("cannot read {}", bin.display()))?;
    let mut index = Index::from_bytes(&bytes).map_err(|e| anyhow!("{}: {e}", bin.display()))?;
    let model_path = match a.model {
        Some(p) => p,
        None => sidecar_model(&bin).with_context(|| {
            format!(
                "no --model given and {} names none; pass --model MODEL.bin",
                bin.with_file_name(SIDECAR_FILE).display()
            )
        })?,
    };
    let (_, model) = crate::load(&model_path)?;
    // Spec §8: refuse a model this index was not built for, with the spec's message.
    let warnings = index
        .check_compatible(&ModelIdentity::from(&model))
        .map_err(|e| anyhow!("{e}"))?;
    for w in warnings {
        eprintln!("{w}");
    }
    if let Some(ef) = a.ef_search {
        index
            .set_ef_search(ef)
            .map_err(|e| anyhow!("--ef-search: {e}"))?;
    }
    if a.query.trim().is_empty() {
        bail!("the query is empty");
    }
    let t = Instant::now();
    let q = model
        .embed(&a.query, index.dims())
        .map_err(|e| anyhow!("query: {e}"))?;
    let hits = index.search(&q, a.k).map_err(|e| anyhow!("{e}"))?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if a.json {
        let results: Vec<_> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                json!({"rank": i + 1, "score": h.score, "id": h.id, "title": h.payload.title,
                       "url": h.payload.url, "snippet": h.payload.snippet})
            })
            .collect();
        outln!(
            "{}",
            json!({"query": a.query, "dims": index.dims(), "ms": round3(ms), "results": results})
        )?;
    } else {
        outln!(
            "{} results for {:?} ({} passages, {} dims, {:.1} ms)",
            hits.len(),
            a.query,
            index.len(),
            index.dims(),
            ms
        )?;
        for (i, h) in hits.iter().enumerate() {
            outln!(
                "\n{:>2}. {:.3}  {}\n    {}\n    {}",
                i + 1,
                h.score,
                h.payload.title,
                h.payload.url,
                snippet(&h.payload.snippet, 200)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `model` path recorded in `index.json` next to `bin`.
fn sidecar_model(bin: &Path) -> Result<PathBuf> {
    let text = std::fs::read_to_string(bin.with_file_name(SIDECAR_FILE))?;
    let v: serde_json::Value = serde_json::from_str(&text)?;
    Ok(PathBuf::from(
        v.get("model")
            .and_then(|m| m.as_str())
            .ok_or_else(|| anyhow!("no \"model\" entry"))?,
    ))
}
