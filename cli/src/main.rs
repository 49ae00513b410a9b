//! `lightembed` — the command-line tool: inspect, verify, tokenize and embed with `.bin` v1 models;
//! build and query semantic-search indexes (`index`, `search`), list the passages of pages
//! (`passages`); fingerprint tools.
//!
//! Exit codes: 0 success; 1 a model, input or I/O error (one line on stderr); 2 bad usage;
//! 3 `fingerprint detect` found no match; 4 done, but some inputs were skipped (`index`: an
//! unreadable file or folder; `embed`/`tokenize --skip-bad`: a bad line), each named on stderr.
//!
//! Nothing on stderr is worth a crash: warnings and progress go through [`warn`], which ignores
//! a closed or full stderr (`lightembed index … 2>&1 | grep -q warning`).

/// `println!` for results: returns an error instead of panicking when stdout cannot be written
/// (e.g. a full disk); a closed pipe (`lightembed … | head`) ends the program quietly, exit 0.
macro_rules! outln {
    ($($t:tt)*) => { $crate::write_stdout(&format!("{}\n", format_args!($($t)*))) };
}

/// `print!` counterpart of [`outln!`].
macro_rules! out {
    ($($t:tt)*) => { $crate::write_stdout(&format!($($t)*)) };
}

mod fingerprint;
mod inspect;
mod jsonl;
mod passages;
mod search_index;
mod site;
mod sources;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use lightembed_index::{Fusion, Params, SearchOptions, MAX_EF};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lightembed",
    version,
    about = "Inspect, verify and run lightembed .bin v1 sentence-embedding models; build and search semantic indexes",
    after_help = "Examples:\n  lightembed inspect public/models/lightembed-en-2l.bin\n  lightembed verify model.bin\n  echo '{\"id\":1,\"text\":\"hello world\"}' | lightembed embed --model model.bin --dims 128 --jsonl -\n  lightembed index --model public/models/lightembed-en-static.bin --out target/book-index /usr/share/doc/rust-doc/html/book\n  lightembed search --index target/book-index \"how do I read a file line by line\""
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the header, the section table (offsets and sizes) and the metadata of a model.
    Inspect {
        /// The `.bin` model file.
        model: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check a model against every load rule (SHA-256 trailer, header, sections). Exit 0 if it
    /// loads; otherwise exit 1 with a one-line reason on stderr.
    Verify {
        /// The `.bin` model file.
        model: PathBuf,
    },
    /// Tokenize texts: one `{"ids": [...]}` line per input (an input "id" is echoed). Output is
    /// streamed; on a bad line every line before it is written, then the error names the line.
    Tokenize {
        /// The `.bin` model file whose vocabulary and tokenizer flags to use.
        #[arg(long)]
        model: PathBuf,
        /// Input lines are JSON objects with a "text" field (otherwise each line is a text).
        #[arg(long)]
        jsonl: bool,
        /// Report a bad line (invalid JSON, no "text", not UTF-8) on stderr and go on; the exit
        /// code is then 4 if any line was skipped.
        #[arg(long)]
        skip_bad: bool,
        /// Input file, or `-` for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
    /// Embed texts: one `{"embedding": [...]}` line per input, in input order (an input "id" is
    /// echoed). Vectors are L2-normalised; runs on all cores. Output is streamed; on a bad line
    /// every line before it is written, then the error names the line.
    Embed {
        /// The `.bin` model file.
        #[arg(long)]
        model: PathBuf,
        /// Matryoshka dims of the output (default: the model's output_dim).
        #[arg(long)]
        dims: Option<usize>,
        /// Input lines are JSON objects with a "text" field (otherwise each line is a text).
        #[arg(long)]
        jsonl: bool,
        /// Report a bad line (invalid JSON, no "text", not UTF-8, a text the model cannot
        /// embed) on stderr and go on; the exit code is then 4 if any line was skipped.
        #[arg(long)]
        skip_bad: bool,
        /// Input file, or `-` for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
    /// Build a semantic-search index from documents: JSONL records, Markdown / plain-text files,
    /// or folders of HTML / Markdown pages. Pages are cut at headings into passages sized in the
    /// model's own word pieces (heading + passage fit its max_seq_len window; cut at sentence
    /// ends, short boundary sentences repeated), embedded on all cores, and inserted into an HNSW
    /// graph. Writes OUT/index.bin (the same bytes the browser app stores) and OUT/index.json
    /// (manifest, model path, figures) as one unit. A page passage whose text was already indexed
    /// (e.g. from a book's print.html) is skipped.
    #[command(
        after_help = "Inputs:\n  *.jsonl           one {\"id\",\"title\",\"url\",\"text\"} object per line = one passage (text required; title embedded with it)\n  *.md, *.markdown  sections at headings; anchors from {#id} or the heading's slug\n  *.html, *.htm     sections at h1-h6; anchors to ids that exist (heading, inside it, enclosing section); nav/header/footer/aside/script, role=navigation/search and Sphinx/mdBook/rustdoc chrome skipped\n  *.txt             paragraphs (blank-line separated)\n  FOLDER            all of the above inside it, recursively, sorted, hidden entries skipped; URLs relative to FOLDER\n\nLeft out by default (--no-default-excludes to keep): _sources/ folders, NAME.txt beside NAME.html.\nExit code 4: done, but unreadable files or folders were skipped (named on stderr)."
    )]
    Index {
        /// The `.bin` model file.
        #[arg(long)]
        model: PathBuf,
        /// Output directory (created if missing; index.bin and index.json are replaced).
        #[arg(long)]
        out: PathBuf,
        /// Vector dims: a Matryoshka dims of the model (default: its output_dim). Queries use the
        /// same dims.
        #[arg(long)]
        dims: Option<usize>,
        /// HNSW `M`: links per node (layer 0 keeps 2·M).
        #[arg(long = "m", default_value_t = Params::default().m as u32,
              value_parser = clap::value_parser!(u32).range(2..=128))]
        m: u32,
        /// HNSW `ef_construction`: beam width while inserting.
        #[arg(long, default_value_t = Params::default().ef_construction as u32,
              value_parser = clap::value_parser!(u32).range(1..=MAX_EF as i64))]
        ef_construction: u32,
        /// HNSW `ef_search` stored in the index (the default beam width for searches).
        #[arg(long, default_value_t = Params::default().ef_search as u32,
              value_parser = clap::value_parser!(u32).range(1..=MAX_EF as i64))]
        ef_search: u32,
        /// Characters of passage text kept as the result snippet.
        #[arg(long, default_value_t = 400)]
        snippet_chars: usize,
        /// No progress bars or file summary on stderr (the final summary line still prints).
        #[arg(long, short)]
        quiet: bool,
        /// Leave out files whose path (relative to the folder given) matches GLOB; repeatable.
        /// `*` stays within a folder, `**` crosses folders: `--exclude '**/print.html'`.
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Also index what the default rules leave out: folders named `_sources` (Sphinx's copy
        /// of every page's source) and `NAME.txt` beside `NAME.html` (e.g. AsciiDoc sources).
        #[arg(long)]
        no_default_excludes: bool,
        /// Stemming of the keyword (BM25) side, stored in the index: `english` (Snowball;
        /// "running" matches "run"), `none` (words match as written, after lower-casing and
        /// accent folding) or `auto`: `english` for English models, `none` for a model whose id
        /// names another language (`lightembed-tr-0l`).
        #[arg(long, value_name = "auto|english|none", default_value = "auto",
              value_parser = ["auto", "english", "none"])]
        keyword_stemming: String,
        /// Store the vectors as int8 codes with a scale each: a quarter of the vector bytes,
        /// cosines within about 1e-3 (`lightembed site` does this by default).
        #[arg(long)]
        int8_vectors: bool,
        /// Read only the element(s) this CSS selector matches in HTML pages (e.g. `main`,
        /// `article.content`); a page where it matches nothing is read whole.
        #[arg(long, value_name = "CSS")]
        root_selector: Option<String>,
        /// Passage size in the model's word pieces, [CLS] and [SEP] included: a passage and its
        /// heading take at most this many (or the model's max_seq_len when smaller).
        #[arg(long, value_name = "N", default_value_t = lightembed_index::ingest::PASSAGE_TOKENS as u32,
              value_parser = clap::value_parser!(u32).range(8..=65535))]
        passage_tokens: u32,
        /// Files and folders to index.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Write the passages `lightembed index` would embed as JSON lines on stdout, without
    /// embedding: one {"id","page","title","page_title","heading","url","text"} object per
    /// passage, in input order. Pages are read and cut exactly as by `index` (and by the browser
    /// app); the model is needed for its tokenizer and window (passage sizes).
    #[command(
        after_help = "The app's bundled corpus is written with it (scripts/make_corpus.sh):\n  lightembed passages --model public/models/lightembed-en-static.bin --url-prefix https://doc.rust-lang.org/book/ /usr/share/doc/rust-doc/html/book/ch*.html /usr/share/doc/rust-doc/html/book/appendix*.html > public/corpus/rust-book.jsonl\n\nThe text that is embedded is heading + \"\\n\" + text (text alone without a heading); --embed-text writes it too.\nExit code 4: done, but unreadable files or folders were skipped (named on stderr)."
    )]
    Passages {
        /// The `.bin` model file (its tokenizer and max_seq_len size the passages).
        #[arg(long)]
        model: PathBuf,
        /// Put URL in front of every page URL (`https://doc.rust-lang.org/book/`); ids stay
        /// relative, as `index` makes them.
        #[arg(long, value_name = "URL", default_value = "")]
        url_prefix: String,
        /// Also write the text that is embedded (`"embed_text"`).
        #[arg(long)]
        embed_text: bool,
        /// No summary line on stderr.
        #[arg(long, short)]
        quiet: bool,
        /// Leave out files whose path (relative to the folder given) matches GLOB; repeatable.
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Also read what the default rules leave out (`_sources` folders, `NAME.txt` beside
        /// `NAME.html`).
        #[arg(long)]
        no_default_excludes: bool,
        /// Files and folders to read.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Add search to a built static site: index its HTML pages and write DIR/lightembed/ (the
    /// <lightembed-search> element, its worker and wasm, the index, the model, a manifest).
    #[command(
        after_help = "Then add to the pages (e.g. in the site's template):\n  <link rel=\"stylesheet\" href=\"/lightembed/lightembed-ui.css\">\n  <script type=\"module\" src=\"/lightembed/lightembed-ui.js\"></script>\n  <lightembed-search></lightembed-search>\n\nRe-running replaces the bundle as a whole. Only .html/.htm pages are indexed.\nExit code 4: done, but unreadable files or folders were skipped (named on stderr)."
    )]
    Site {
        /// The built site's root folder (what the web server serves).
        #[arg(long)]
        site: PathBuf,
        /// A `.bin` model (default: the shipped static model, built into lightembed).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Index dims: a Matryoshka prefix of the model's output (default: 128 when the model
        /// has it — a third of the bytes of 384 for a small loss, see bench/RESULTS.md — else all).
        #[arg(long)]
        dims: Option<usize>,
        /// Leave out pages whose path (relative to the site) matches GLOB; repeatable.
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Also index what the default rules leave out (`_sources` folders).
        #[arg(long)]
        no_default_excludes: bool,
        /// No progress on stderr.
        #[arg(long, short)]
        quiet: bool,
        /// Ship the whole model. By default the bundle gets a site model: only the tokens the
        /// site's pages use (plus the 5,000 most common and every character) and only the index
        /// dims — about a third of the bytes; the pages embed exactly as with the full model, and
        /// query words the site never uses are cut into smaller pieces.
        #[arg(long)]
        full_model: bool,
        /// Read only the element(s) this CSS selector matches in each page (e.g. `main`,
        /// `article.content`), like Pagefind's option; a page where it matches nothing is read
        /// whole. Navigation, headers, footers and the chrome of Sphinx/mdBook/rustdoc are
        /// skipped anyway.
        #[arg(long, value_name = "CSS")]
        root_selector: Option<String>,
    },
    /// Search an index built by `lightembed index`. Refuses a model that does not match the index
    /// (spec §8: model_id, major version, dims) with the spec's message.
    Search {
        /// Index directory (or its index.bin), or the folder of a `lightembed site` bundle
        /// (`SITE/lightembed`: searched whole from its fragments, with its site model by default).
        #[arg(long)]
        index: PathBuf,
        /// The `.bin` model (default: the model recorded in the index's index.json).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Number of results.
        #[arg(short, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        k: u32,
        /// HNSW beam width for this search (default: the index's ef_search).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_EF as i64))]
        ef_search: Option<u32>,
        /// Print one JSON object (query, mode, dims, ms, results with rank, score, id, title,
        /// url, snippet, highlights: byte ranges of the query's words in the snippet).
        #[arg(long)]
        json: bool,
        /// Ranking: `hybrid` fuses BM25 keyword scores with vector similarity (see --fusion);
        /// `vector` ranks by cosine similarity of the embeddings only; `keyword` by BM25 only.
        #[arg(long, default_value = "hybrid", value_parser = ["hybrid", "vector", "keyword"])]
        mode: String,
        /// How hybrid mode fuses the two scores: `convex` (weighted sum of min–max normalised
        /// scores, see --vector-weight) or `rrf` (reciprocal rank fusion, see --rrf-k). Default:
        /// the fusion chosen on our dev set (docs/search.md).
        #[arg(long, value_parser = ["convex", "rrf"])]
        fusion: Option<String>,
        /// Weight of the vector side in convex fusion, 0–1.
        #[arg(long, value_name = "W", value_parser = parse_weight, allow_hyphen_values = true)]
        vector_weight: Option<f32>,
        /// Rank constant of RRF.
        #[arg(long, value_name = "K", default_value_t = 60.0)]
        rrf_k: f32,
        /// Candidates taken from each side before fusing (at least 4·k are taken).
        #[arg(long, default_value_t = SearchOptions::default().candidates)]
        candidates: usize,
        /// Show every matching passage, also several of one section (default: the best passage
        /// per section, i.e. per URL with its #anchor).
        #[arg(long)]
        all_passages: bool,
        /// Hybrid mode: weight of page evidence — each candidate gains this × the best score of
        /// another section of the same page (URL before `#`); 0 turns it off.
        #[arg(long, value_name = "W", default_value_t = lightembed_index::PAGE_WEIGHT,
              value_parser = parse_page_weight)]
        page_weight: f32,
        /// Batch mode: read `{"id": …, "query": …}` lines from FILE (`-` = stdin) and write one
        /// `{"id": …, "hits": [{"id", "url", "title", "score"}, …]}` line per query, in input order.
        #[arg(long, value_name = "FILE", conflicts_with = "query")]
        jsonl: Option<String>,
        /// The query text (or use --jsonl).
        #[arg(required_unless_present = "jsonl")]
        query: Option<String>,
    },
    /// Customer fingerprints (spec §7): detect which license a suspect model was issued to.
    #[command(subcommand)]
    Fingerprint(fingerprint::FingerprintCommand),
}

/// Exit code: the work is done, but some inputs were skipped (each was named on stderr).
pub(crate) const EXIT_SKIPPED: u8 = 4;

/// Writes one line to stderr (a warning, a progress summary, the final error). A stderr that
/// cannot be written (closed pipe, full disk) is ignored: losing a message must never lose work.
pub(crate) fn warn(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// Writes `s` to stdout and flushes; see [`outln!`].
pub(crate) fn write_stdout(s: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            // The reader went away (`| head`): not an error.
            ExitCode::SUCCESS
        }
        Err(e) => {
            // One line: the outermost context and its causes, joined.
            warn(&format!("error: {}", format!("{e:#}").replace('\n', " ")));
            ExitCode::from(1)
        }
    }
}

fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Inspect { model, json } => {
            let (bytes, m) = load(&model)?;
            let out = if json {
                inspect::json(&model, &bytes, &m)
            } else {
                inspect::text(&model, &bytes, &m)
            };
            out!("{out}")?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { model } => {
            let (_, m) = load(&model)?;
            outln!("ok: {} ({})", model.display(), inspect::one_line(&m))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Tokenize {
            model,
            jsonl,
            skip_bad,
            input,
        } => {
            let (_, m) = load(&model)?;
            let summary = jsonl::run(&input, jsonl, skip_bad, |text| {
                let ids = m.tokenize(text);
                Ok(format!("\"ids\":{}", serde_json::to_string(&ids)?))
            })?;
            Ok(skipped_code(summary.skipped, "lines"))
        }
        Command::Embed {
            model,
            dims,
            jsonl,
            skip_bad,
            input,
        } => {
            let (_, m) = load(&model)?;
            let dims = dims.unwrap_or(m.header().output_dim as usize);
            // Validate dims once up front so the error names the valid set before any input is read.
            m.embed("", dims).map_err(|e| anyhow::anyhow!("{e}"))?;
            let summary = jsonl::run(&input, jsonl, skip_bad, |text| {
                let v = m.embed(text, dims).map_err(|e| anyhow::anyhow!("{e}"))?;
                // serde_json writes f32 in its shortest round-trip form.
                Ok(format!("\"embedding\":{}", serde_json::to_string(&v)?))
            })?;
            Ok(skipped_code(summary.skipped, "lines"))
        }
        Command::Index {
            model,
            out,
            dims,
            m,
            ef_construction,
            ef_search,
            snippet_chars,
            quiet,
            exclude,
            no_default_excludes,
            keyword_stemming,
            int8_vectors,
            root_selector,
            passage_tokens,
            inputs,
        } => search_index::index(search_index::IndexArgs {
            passage_tokens: passage_tokens as usize,
            keyword_stemming: match keyword_stemming.as_str() {
                "auto" => None,
                other => Some(other == "english"),
            },
            int8_vectors,
            root_selector,
            model,
            out,
            dims,
            inputs,
            m: m as usize,
            ef_construction: ef_construction as usize,
            ef_search: ef_search as usize,
            snippet_chars,
            quiet,
            exclude,
            default_excludes: !no_default_excludes,
        }),
        Command::Passages {
            model,
            url_prefix,
            embed_text,
            quiet,
            exclude,
            no_default_excludes,
            inputs,
        } => passages::run(passages::PassagesArgs {
            model,
            inputs,
            exclude,
            default_excludes: !no_default_excludes,
            url_prefix,
            embed_text,
            quiet,
        }),
        Command::Search {
            index,
            model,
            k,
            ef_search,
            json,
            jsonl,
            query,
            mode,
            fusion,
            vector_weight,
            rrf_k,
            candidates,
            all_passages,
            page_weight,
        } => search_index::search(search_index::SearchArgs {
            options: SearchOptions {
                page_weight,
                ..search_options(
                    &mode,
                    fusion.as_deref(),
                    vector_weight,
                    rrf_k,
                    candidates,
                    all_passages,
                )?
            },
            index,
            model,
            k: k as usize,
            ef_search: ef_search.map(|e| e as usize),
            json,
            jsonl,
            query: query.unwrap_or_default(),
        }),
        Command::Site {
            site,
            model,
            dims,
            exclude,
            no_default_excludes,
            quiet,
            full_model,
            root_selector,
        } => site::run(site::SiteArgs {
            site,
            model,
            dims,
            exclude,
            default_excludes: !no_default_excludes,
            quiet,
            prune: !full_model,
            root_selector,
        }),
        Command::Fingerprint(command) => fingerprint::run(command),
    }
}

/// `--page-weight`: a finite number ≥ 0 (a usage error otherwise, exit 2).
fn parse_page_weight(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        Ok(w) => Err(format!("{w} is not a finite number ≥ 0")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

/// `--vector-weight`: a number in 0–1 (a usage error otherwise, exit 2).
fn parse_weight(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(w) if (0.0..=1.0).contains(&w) => Ok(w),
        Ok(w) => Err(format!("{w} is outside 0–1")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

/// `lightembed search`'s ranking flags → [`SearchOptions`]. `--vector-weight` needs convex
/// fusion; a weight outside 0–1 is refused.
fn search_options(
    mode: &str,
    fusion: Option<&str>,
    vector_weight: Option<f32>,
    rrf_k: f32,
    candidates: usize,
    all_passages: bool,
) -> Result<SearchOptions> {
    let fusion_given = fusion.is_some();
    let fusion = match (fusion, vector_weight) {
        (Some("rrf"), Some(_)) => {
            anyhow::bail!("--vector-weight applies to --fusion convex, not rrf")
        }
        (Some("rrf"), None) => Fusion::Rrf { k: rrf_k },
        (_, Some(w)) => Fusion::Convex { vector_weight: w },
        (Some(_), None) => match Fusion::DEFAULT {
            f @ Fusion::Convex { .. } => f,
            Fusion::Rrf { .. } => Fusion::Convex { vector_weight: 0.5 },
        },
        (None, None) => Fusion::DEFAULT,
    };
    if mode != "hybrid" && (fusion_given || vector_weight.is_some()) {
        warn(&format!(
            "warning: --fusion and --vector-weight only apply to --mode hybrid; ignored in {mode} mode"
        ));
    }
    Ok(SearchOptions {
        mode: mode.parse().map_err(anyhow::Error::msg)?,
        fusion,
        candidates,
        ef_search: None,
        collapse_sections: !all_passages,
        ..SearchOptions::default()
    })
}

/// Exit code 0, or [`EXIT_SKIPPED`] with a summary warning when `skipped` inputs were skipped.
pub(crate) fn skipped_code(skipped: usize, what: &str) -> ExitCode {
    if skipped == 0 {
        ExitCode::SUCCESS
    } else {
        warn(&format!(
            "warning: {skipped} {what} skipped (named above); exit code {EXIT_SKIPPED}"
        ));
        ExitCode::from(EXIT_SKIPPED)
    }
}

/// Reads and fully validates a model file; errors name the file.
pub(crate) fn load(path: &Path) -> Result<(Vec<u8>, lightembed::Model)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let model = lightembed::Model::from_bytes(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((bytes, model))
}
