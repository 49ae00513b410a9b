//! `lightembed index` (files → passages → vectors → HNSW index on disk, written as an index
//! folder: [`crate::index_dir`]). The Python package's `Index` builds through the same functions.

use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use lightembed_build::count;
use lightembed_build::inputs::PageReader;
use lightembed_index::{Document, Index, ModelIdentity, Params};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

use crate::index_dir::{
    relative_path, round3, sha256_hex, write_index_pair, OutDir, SidecarDoc, SidecarParams,
    SidecarSeconds, INDEX_FILE,
};
use crate::sources::{Excludes, Passage};

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

/// A progress bar of `len` passages on stderr labelled `what` (drawn only on a terminal), hidden
/// when `quiet`; `index` and `site` show theirs with it.
pub(crate) fn bar(len: u64, what: &str, quiet: bool) -> ProgressBar {
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
