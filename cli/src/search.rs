//! `lightembed search`: query an index folder (refusing a model that does not match it, spec §8)
//! or a `lightembed site` bundle folder, through the one search interface of both index kinds
//! ([`lightembed_index::Searcher`]).

use anyhow::{anyhow, bail, Context, Result};
use lightembed_index::fragments::FragmentedIndex;
use lightembed_index::snippet::{excerpt_with, ShownHit};
use lightembed_index::{Found, Index, ModelIdentity, SearchOptions, Searcher};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::index_dir::{open_index, round3, INDEX_FILE, SIDECAR_FILE};

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

/// A `lightembed site` bundle folder (`…/lightembed`, holding `manifest.json` with a `core`),
/// loaded whole: the core, every term shard, centroid cell, vector partition, text chunk and typo shard (a
/// search still scores only the partitions its query probes, as the widget does; tail shards,
/// the postings past each common term's first tier, are not read: the widget ranks by the first
/// tiers, and so does this); and the
/// bundle's model (path and
/// bytes). Files stored gzip-compressed (bundle version 3) are decompressed; raw ones (version 2,
/// or `--no-gzip`) read as they are.
fn open_bundle(dir: &Path) -> Result<Option<(FragmentedIndex, PathBuf, Vec<u8>)>> {
    let manifest_path = dir.join("manifest.json");
    if !dir.is_dir() || !manifest_path.is_file() {
        return Ok(None);
    }
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&manifest_path)
            .with_context(|| format!("cannot read {}", manifest_path.display()))?,
    )
    .with_context(|| format!("{}: not valid JSON", manifest_path.display()))?;
    check_bundle_version(&manifest_path, &m["bundle_version"])?;
    let file = |key: &str| -> Result<PathBuf> {
        let name = m["files"][key].as_str().ok_or_else(|| {
            anyhow!(
                "{}: no files.{key} (a bundle of another lightembed version? re-run `lightembed site`)",
                manifest_path.display()
            )
        })?;
        Ok(dir.join(name))
    };
    let core = file("core")?;
    let mut index = FragmentedIndex::from_core(&read_bundle_file(&core)?)
        .map_err(|e| anyhow!("{}: {e}", core.display()))?;
    let frags = file("fragments")?;
    let counts = [
        ("t", index.shard_count()),
        ("g", index.cell_count()), // a partition needs its centroid cell first
        ("v", index.partition_count()),
        ("c", index.chunk_count()),
        ("n", index.typo_shard_count()),
    ];
    for (kind, n) in counts {
        for i in 0..n {
            let p = frags.join(format!("{kind}{i}.bin"));
            let bytes = read_bundle_file(&p)?;
            let added = match kind {
                "t" => index.add_shard(&bytes),
                "g" => index.add_cell(&bytes),
                "v" => index.add_partition(&bytes),
                "c" => index.add_chunk(&bytes),
                _ => index.add_typo_shard(&bytes),
            };
            added.map_err(|e| anyhow!("{}: {e}", p.display()))?;
        }
    }
    let model = file("model")?;
    let model_bytes = read_bundle_file(&model)?;
    Ok(Some((index, model, model_bytes)))
}

/// The bundle versions this reader takes: 2 (files raw) and 3 (files may be gzip-compressed).
const BUNDLE_VERSIONS: std::ops::RangeInclusive<u64> =
    2..=lightembed_build::site::BUNDLE_VERSION as u64;

/// Refuses a bundle of a version this lightembed does not read, saying which side to update.
fn check_bundle_version(manifest: &Path, v: &serde_json::Value) -> Result<()> {
    match v.as_u64() {
        Some(v) if BUNDLE_VERSIONS.contains(&v) => Ok(()),
        Some(v) if v > *BUNDLE_VERSIONS.end() => bail!(
            "{}: bundle version {v} is newer than this lightembed reads (versions {} to {}): update lightembed",
            manifest.display(),
            BUNDLE_VERSIONS.start(),
            BUNDLE_VERSIONS.end()
        ),
        Some(v) => bail!(
            "{}: bundle version {v} is older than this lightembed reads (versions {} to {}): re-run `lightembed site`",
            manifest.display(),
            BUNDLE_VERSIONS.start(),
            BUNDLE_VERSIONS.end()
        ),
        None => bail!(
            "{}: no bundle_version (not a manifest written by `lightembed site`?)",
            manifest.display()
        ),
    }
}

/// A bundle file's bytes, gunzipped when stored gzip-compressed; a damaged stream is named with
/// its path.
fn read_bundle_file(p: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
    match lightembed_index::gzip::decompress_if_gzip(&bytes) {
        Ok(std::borrow::Cow::Borrowed(_)) => Ok(bytes),
        Ok(std::borrow::Cow::Owned(raw)) => Ok(raw),
        Err(e) => bail!("{}: {e}; re-run `lightembed site`", p.display()),
    }
}

/// Runs `lightembed search`: see the command's `--help`.
pub fn search(a: SearchArgs) -> Result<u8> {
    if let Some((index, model_path, model_bytes)) = open_bundle(&a.index)? {
        let model = match &a.model {
            Some(p) => crate::load(p)?.1,
            None => lightembed::Model::from_bytes(&model_bytes)
                .map_err(|e| anyhow!("{}: {e}", model_path.display()))?,
        };
        let warnings = index
            .manifest()
            .check_compatible(&ModelIdentity::from(&model))
            .map_err(|e| anyhow!("{e}"))?;
        for w in warnings {
            crate::warn(&w.to_string());
        }
        // A bundle's --ef-search is the number of vector partitions probed.
        let opts = SearchOptions {
            ef_search: a.ef_search,
            ..a.options
        };
        return search_in(&index, &model, &a, opts);
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
    index: &dyn Searcher,
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
    let stem = index.keyword_stemming();
    let fixes = index.corrections(&a.query);
    if a.json {
        let results: Vec<RankedHit> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let e = excerpt_with(&h.text, &a.query, &fixes, stem, 0);
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
            "{} result{} for \u{201c}{}\u{201d} ({} mode, {} passages, {} dims, {:.1} ms)",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" },
            printable(&a.query),
            opts.mode.as_str(),
            index.len(),
            index.dims(),
            ms
        )?;
        // Hybrid ranks by meaning alone when no passage holds a word of the query (the fused
        // scores still start at 1): say so, as the app does. The keyword side decides (a word
        // only in a title or heading, or past the stored snippet, is a match), not the excerpts.
        if opts.mode == lightembed_index::Mode::Hybrid
            && !hits.is_empty()
            && !index
                .keyword_matches(&a.query)
                .map_err(|e| anyhow!("{e}"))?
        {
            outln!("No passage contains the words of the query: these are the closest by meaning alone.")?;
        }
        let bold = std::io::IsTerminal::is_terminal(&std::io::stdout());
        for (i, h) in hits.iter().enumerate() {
            let e = excerpt_with(&h.text, &a.query, &fixes, stem, 200);
            // A passage of a PDF says its page ("p. 12"), read from its URL (`#page=12`).
            let page = lightembed_ingest::pdf_page(&h.url)
                .map(|n| format!("  (p. {n})"))
                .unwrap_or_default();
            outln!(
                "\n{:>2}. {:.3}  {}{page}\n    {}\n    {}",
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
/// query) is reported on stderr (`warning: skipping FILE: line N: why`) and the batch goes on, as
/// `embed --jsonl --skip-bad` does: every good line is answered, and the exit code is then
/// [`crate::EXIT_SKIPPED`]. An input that cannot be read stops the run.
fn batch_search(
    index: &dyn Searcher,
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
    let mut skipped = 0usize;
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
        match answer_line(index, model, &line, k, opts) {
            Ok(out) => outln!("{out}")?,
            Err(e) => {
                crate::warn(&format!("warning: skipping {input}: line {n}: {e:#}"));
                skipped += 1;
            }
        }
    }
    Ok(crate::skipped_code(skipped, "lines"))
}

/// One line of a `search --jsonl` batch → its `{"id", "hits"}` output line.
fn answer_line(
    index: &dyn Searcher,
    model: &lightembed::Model,
    line: &str,
    k: usize,
    opts: &SearchOptions,
) -> Result<String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| anyhow!("invalid JSON: {e}"))?;
    let query = match v.get("query") {
        Some(serde_json::Value::String(q)) if !q.trim().is_empty() => q,
        Some(serde_json::Value::String(_)) => bail!("the query is empty"),
        _ => bail!("expected a JSON object with a string \"query\" field"),
    };
    let hits = run_query(index, model, query, k, opts)?;
    let hits: Vec<_> = hits
        .iter()
        .map(|h| json!({"id": h.id, "url": h.url, "title": h.title, "score": h.score}))
        .collect();
    let id = match v.get("id") {
        Some(id) => crate::jsonl::id_text(line, id)?,
        None => "null".to_string(),
    };
    // The id first, as `embed`/`tokenize` write it (serde_json would sort the keys).
    Ok(format!(
        "{{\"id\":{},\"hits\":{}}}",
        id,
        serde_json::Value::Array(hits)
    ))
}

/// One query in `opts.mode`: the query is embedded unless the mode is keyword-only.
fn run_query(
    index: &dyn Searcher,
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
    index
        .find(vector.as_deref(), query, k, opts)
        .map_err(|e| anyhow!("{e}"))
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
