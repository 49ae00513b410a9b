//! The command line as data: [`Cli`] and one `#[derive(Args)]` struct per command (ruff's
//! `args.rs` pattern). Parsing and usage errors (exit 2) happen here; [`crate::commands`] runs them.

use clap::{Args, Parser, Subcommand};
use lightembed_index::{Params, SearchOptions, MAX_EF};
use std::path::PathBuf;

/// `lightembed`: the parsed command line.
#[derive(Parser)]
#[command(
    name = "lightembed",
    version,
    about = "Inspect, verify and run lightembed .bin v1 sentence-embedding models; build and search semantic indexes",
    after_help = "Examples:\n  lightembed inspect public/models/lightembed-en-2l.bin\n  lightembed verify model.bin\n  echo '{\"id\":1,\"text\":\"hello world\"}' | lightembed embed --model model.bin --dims 128 --jsonl -\n  lightembed index --model public/models/lightembed-en-static.bin --out target/book-index /usr/share/doc/rust-doc/html/book\n  lightembed search --index target/book-index \"how do I read a file line by line\""
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// One variant per command; the variant's doc comment is its `--help` text.
#[derive(Subcommand)]
pub enum Command {
    /// Print the header, the section table (offsets and sizes) and the metadata of a model.
    Inspect(InspectCommand),
    /// Check a model against every load rule (SHA-256 trailer, header, sections). Exit 0 if it
    /// loads; otherwise exit 1 with a one-line reason on stderr.
    Verify(VerifyCommand),
    /// Tokenize texts: one `{"ids": [...]}` line per input (an input "id" is echoed). Output is
    /// streamed; on a bad line every line before it is written, then the error names the line.
    Tokenize(TokenizeCommand),
    /// Embed texts: one `{"embedding": [...]}` line per input, in input order (an input "id" is
    /// echoed). Vectors are L2-normalised; runs on all cores. Output is streamed; on a bad line
    /// every line before it is written, then the error names the line.
    Embed(EmbedCommand),
    /// Build a semantic-search index from documents: JSONL records, Markdown / plain-text files,
    /// PDF, Word (.docx), OpenDocument (.odt) and EPUB files, or folders of them and of HTML pages. Pages are cut at headings into passages sized in the
    /// model's own word pieces (heading + passage fit its max_seq_len window; cut at sentence
    /// ends, short boundary sentences repeated), embedded on all cores, and inserted into an HNSW
    /// graph. Writes OUT/index.bin (the same bytes the browser app stores) and OUT/index.json
    /// (manifest, model path, figures) as one unit. A page passage whose text was already indexed
    /// (e.g. from a book's print.html) is skipped.
    #[command(
        after_help = "Inputs:\n  *.jsonl           one {\"id\",\"title\",\"url\",\"text\"} object per line = one passage (text required; title embedded with it); UTF-8, a bad line stops the run naming it\n  *.md, *.markdown  sections at headings; anchors from {#id} or the heading's slug\n  *.html, *.htm     sections at h1-h6; anchors to ids that exist (heading, inside it, enclosing section); nav/header/footer/aside/script, role=navigation/search and Sphinx/mdBook/rustdoc chrome skipped\n  *.txt             paragraphs (blank-line separated)\n  *.pdf             one section per page (cut again where an outline entry starts; its title is the heading), URL FILE.pdf#page=N; running headers/footers dropped, hyphenation joined\n  *.docx, *.odt     sections at heading paragraphs (Word heading styles, OpenDocument headings)\n  *.epub            the chapters in reading order, each as HTML; URL FILE.epub#CHAPTER.xhtml#anchor\n  FOLDER            all of the above inside it, recursively, sorted, hidden entries skipped; URLs relative to FOLDER\n\nLeft out by default (--no-default-excludes to keep): _sources/ folders, NAME.txt beside NAME.html.\nExit code 4: done, but unreadable or binary files (a NUL byte in the first 8 KiB), documents that cannot be read (an encrypted PDF, one without a text layer, a broken or oversized file: the reason is named), or unreadable folders, were skipped (named on stderr)."
    )]
    Index(IndexCommand),
    /// Write the passages `lightembed index` would embed as JSON lines on stdout, without
    /// embedding: one {"id","page","title","page_title","heading","url","text"} object per
    /// passage, in input order. Pages are read and cut exactly as by `index` (and by the browser
    /// app); the model is needed for its tokenizer and window (passage sizes).
    #[command(
        after_help = "The app's bundled corpus is written with it (scripts/make_corpus.sh):\n  lightembed passages --model public/models/lightembed-en-static.bin --url-prefix https://doc.rust-lang.org/book/ /usr/share/doc/rust-doc/html/book/ch*.html /usr/share/doc/rust-doc/html/book/appendix*.html > public/corpus/rust-book.jsonl\n\nThe text that is embedded is heading + \"\\n\" + text (text alone without a heading); --embed-text writes it too.\nInputs as for `index` (PDF, Word, OpenDocument, EPUB too); a PDF's passages also have \"page_number\".\nExit code 4: done, but unreadable or binary files (a NUL byte in the first 8 KiB), documents that cannot be read (named with the reason), or unreadable folders, were skipped (named on stderr)."
    )]
    Passages(PassagesCommand),
    /// Add search to a built static site: index its HTML pages and write DIR/lightembed/ (the
    /// <lightembed-search> element, its worker and wasm, the index, the model, a manifest).
    #[command(
        after_help = "Then add to the pages (e.g. in the site's template):\n  <link rel=\"stylesheet\" href=\"/lightembed/lightembed-ui.css\">\n  <script type=\"module\" src=\"/lightembed/lightembed-ui.js\"></script>\n  <lightembed-search></lightembed-search>\n\nRe-running replaces the bundle as a whole (a SITE/lightembed/ folder that is not a bundle is refused, never replaced). Only .html/.htm pages are indexed.\nExit code 4: done, but unreadable or binary files (a NUL byte in the first 8 KiB), or unreadable folders, were skipped (named on stderr)."
    )]
    Site(SiteCommand),
    /// Search an index built by `lightembed index`. Refuses a model that does not match the index
    /// (spec §8: model_id, major version, dims) with the spec's message.
    Search(SearchCommand),
    /// Customer fingerprints (spec §7): detect which license a suspect model was issued to.
    #[command(subcommand)]
    Fingerprint(crate::commands::fingerprint::FingerprintCommand),
    /// Serve hybrid search over PostgreSQL + pgvector (tables written by the Python loader,
    /// `lightembed.pg.load`): POST /search {query, vector, model, k} → hits, ranked in SQL as
    /// `search` ranks (one hit per section). Stateless; listens on loopback unless told otherwise.
    #[command(
        after_help = "The browser embeds the query and sends {\"query\", \"vector\", \"model\": {\"id\", \"version\", \"dims\", \"sha256\"}, \"k\", \"excerpt_chars\" (optional)}; a vector from a model the loaded passages were not embedded with is refused (409) with the spec's §8 message.\n\nExample:\n  lightembed serve --database-url postgresql://lightembed@127.0.0.1:5432/docs --cors-origin https://docs.example.org"
    )]
    Serve(ServeCommand),
}

/// The arguments of `lightembed serve` (see [`Command::Serve`]).
#[derive(Args, Debug)]
pub struct ServeCommand {
    /// PostgreSQL to read: `postgresql://user@host:port/db` or `host=… user=… dbname=…`.
    /// Default: the environment variable DATABASE_URL (keeps a password off the command line).
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// Address to listen on. Loopback by default: put a reverse proxy (TLS) in front.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: std::net::SocketAddr,
    /// An origin whose pages may call the service (CORS), e.g. https://docs.example.org;
    /// repeatable. None: no CORS headers (same-origin pages only).
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// Tables read: PREFIX_passages and PREFIX_model.
    #[arg(long, value_name = "PREFIX", default_value = "lightembed")]
    pub table_prefix: String,
    /// PostgreSQL statement_timeout of every query, milliseconds (504 past it).
    #[arg(long, value_name = "MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub statement_timeout_ms: u64,
    /// Database connections in the pool.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub pool_size: u64,
    /// Largest request body in bytes (413 above).
    #[arg(long, value_name = "BYTES", default_value_t = 65536,
          value_parser = clap::value_parser!(u64).range(1024..=16_777_216))]
    pub max_body_bytes: u64,
    /// Largest k a request may ask for.
    #[arg(long, value_name = "K", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_k: u64,
    /// HNSW beam of the vector side (pgvector's hnsw.ef_search; at least the candidates, at
    /// most 1000), as `search --ef-search`.
    #[arg(long, value_name = "N", default_value_t = 96,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub ef_search: u64,
    /// Postings blocks (1,024 passages each) read per query term on the keyword side: exact
    /// while no query term is in more passages than that, else the term's best-weighted ones.
    /// Default 8 (8,192 passages): at 361k passages it served 2.4–4.9× the queries of 64
    /// blocks with the same ranking (bench/RESULTS.md, "Scale-out at 361k passages").
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub keyword_blocks: u64,
    /// Candidates taken from each side before fusing, as `search --candidates`.
    #[arg(long, value_name = "N", default_value_t = SearchOptions::default().candidates as u64,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub candidates: u64,
}

/// The arguments of `lightembed inspect` (see [`Command::Inspect`]).
#[derive(Args, Debug)]
pub struct InspectCommand {
    /// The `.bin` model file.
    pub model: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The arguments of `lightembed verify` (see [`Command::Verify`]).
#[derive(Args, Debug)]
pub struct VerifyCommand {
    /// The `.bin` model file.
    pub model: PathBuf,
}

/// The arguments of `lightembed tokenize` (see [`Command::Tokenize`]).
#[derive(Args, Debug)]
pub struct TokenizeCommand {
    /// The `.bin` model file whose vocabulary and tokenizer flags to use.
    #[arg(long)]
    pub model: PathBuf,
    /// Input lines are JSON objects with a "text" field (otherwise each line is a text).
    #[arg(long)]
    pub jsonl: bool,
    /// Report a bad line (invalid JSON, no "text", not UTF-8, longer than 16 MiB) on stderr and
    /// go on; the exit code is then 4 if any line was skipped.
    #[arg(long)]
    pub skip_bad: bool,
    /// Input file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub input: String,
}

/// The arguments of `lightembed embed` (see [`Command::Embed`]).
#[derive(Args, Debug)]
pub struct EmbedCommand {
    /// The `.bin` model file.
    #[arg(long)]
    pub model: PathBuf,
    /// Matryoshka dims of the output (default: the model's output_dim).
    #[arg(long)]
    pub dims: Option<usize>,
    /// Input lines are JSON objects with a "text" field (otherwise each line is a text).
    #[arg(long)]
    pub jsonl: bool,
    /// Report a bad line (invalid JSON, no "text", not UTF-8, longer than 16 MiB, a text the
    /// model cannot embed) on stderr and go on; the exit code is then 4 if any line was skipped.
    #[arg(long)]
    pub skip_bad: bool,
    /// Input file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub input: String,
}

/// The arguments of `lightembed index` (see [`Command::Index`]).
#[derive(Args, Debug)]
pub struct IndexCommand {
    /// The `.bin` model file.
    #[arg(long)]
    pub model: PathBuf,
    /// Output directory (created if missing; index.bin and index.json are replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// Vector dims: a Matryoshka dims of the model (default: its output_dim). Queries use the
    /// same dims.
    #[arg(long)]
    pub dims: Option<usize>,
    /// HNSW `M`: links per node (layer 0 keeps 2·M).
    #[arg(long = "m", default_value_t = Params::default().m as u32,
          value_parser = clap::value_parser!(u32).range(2..=128))]
    pub m: u32,
    /// HNSW `ef_construction`: beam width while inserting.
    #[arg(long, default_value_t = Params::default().ef_construction as u32,
          value_parser = clap::value_parser!(u32).range(1..=MAX_EF as i64))]
    pub ef_construction: u32,
    /// HNSW `ef_search` stored in the index (the default beam width for searches).
    #[arg(long, default_value_t = Params::default().ef_search as u32,
          value_parser = clap::value_parser!(u32).range(1..=MAX_EF as i64))]
    pub ef_search: u32,
    /// Characters of passage text kept as the result snippet.
    #[arg(long, default_value_t = 400)]
    pub snippet_chars: usize,
    /// No progress bars or file summary on stderr (the final summary line still prints).
    #[arg(long, short)]
    pub quiet: bool,
    /// Leave out files whose path (relative to the folder given) matches GLOB; repeatable.
    /// `*` stays within a folder, `**` crosses folders: `--exclude '**/print.html'`.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Also index what the default rules leave out: folders named `_sources` (Sphinx's copy
    /// of every page's source) and `NAME.txt` beside `NAME.html` (e.g. AsciiDoc sources).
    #[arg(long)]
    pub no_default_excludes: bool,
    /// Stemming of the keyword (BM25) side, stored in the index: `english` (Snowball;
    /// "running" matches "run"), `none` (words match as written, after lower-casing and
    /// accent folding) or `auto`: `english` for English models, `none` for a model whose id
    /// names another language (`lightembed-tr-0l`).
    #[arg(long, value_name = "auto|english|none", default_value = "auto",
          value_parser = ["auto", "english", "none"])]
    pub keyword_stemming: String,
    /// Store the vectors as int8 codes with a scale each: a quarter of the vector bytes,
    /// cosines within about 1e-3.
    #[arg(long)]
    pub int8_vectors: bool,
    /// Read only the element(s) this CSS selector matches in HTML pages (e.g. `main`,
    /// `article.content`); a page where it matches nothing is read whole.
    #[arg(long, value_name = "CSS")]
    pub root_selector: Option<String>,
    /// Passage size in the model's word pieces, [CLS] and [SEP] included: a passage and its
    /// heading take at most this many (or the model's max_seq_len when smaller).
    #[arg(long, value_name = "N", default_value_t = lightembed_ingest::PASSAGE_TOKENS as u32,
          value_parser = clap::value_parser!(u32).range(8..=65535))]
    pub passage_tokens: u32,
    /// Files and folders to index.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

/// The arguments of `lightembed passages` (see [`Command::Passages`]).
#[derive(Args, Debug)]
pub struct PassagesCommand {
    /// The `.bin` model file (its tokenizer and max_seq_len size the passages).
    #[arg(long)]
    pub model: PathBuf,
    /// Put URL in front of every page URL (`https://doc.rust-lang.org/book/`); ids stay
    /// relative, as `index` makes them.
    #[arg(long, value_name = "URL", default_value = "")]
    pub url_prefix: String,
    /// Also write the text that is embedded (`"embed_text"`).
    #[arg(long)]
    pub embed_text: bool,
    /// No summary line on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Leave out files whose path (relative to the folder given) matches GLOB; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Also read what the default rules leave out (`_sources` folders, `NAME.txt` beside
    /// `NAME.html`).
    #[arg(long)]
    pub no_default_excludes: bool,
    /// Read only the element(s) this CSS selector matches in HTML pages (e.g. `main`,
    /// `article.content`), as `index` and `site` do; a page where it matches nothing is read whole.
    #[arg(long, value_name = "CSS")]
    pub root_selector: Option<String>,
    /// Passage size in the model's word pieces, [CLS] and [SEP] included, as `index` takes it.
    #[arg(long, value_name = "N", default_value_t = lightembed_ingest::PASSAGE_TOKENS as u32,
          value_parser = clap::value_parser!(u32).range(8..=65535))]
    pub passage_tokens: u32,
    /// Files and folders to read.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

/// The arguments of `lightembed site` (see [`Command::Site`]).
#[derive(Args, Debug)]
pub struct SiteCommand {
    /// The built site's root folder (what the web server serves).
    #[arg(long)]
    pub site: PathBuf,
    /// A `.bin` model (default: the shipped static model, built into lightembed).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Index dims: a Matryoshka prefix of the model's output (default: 128 when the model
    /// has it — a third of the bytes of 384 for a small loss, see bench/RESULTS.md — else all).
    #[arg(long)]
    pub dims: Option<usize>,
    /// Leave out pages whose path (relative to the site) matches GLOB; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Also index what the default rules leave out (`_sources` folders).
    #[arg(long)]
    pub no_default_excludes: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Ship the whole model. By default the bundle gets a site model: only the tokens the
    /// site's pages use (plus the words among the vocabulary's first 5,000 pieces and the ASCII
    /// characters) and only the index
    /// dims — about a third of the bytes; the pages embed exactly as with the full model, and
    /// query words the site never uses are cut into smaller pieces.
    #[arg(long)]
    pub full_model: bool,
    /// Read only the element(s) this CSS selector matches in each page (e.g. `main`,
    /// `article.content`), like Pagefind's option; a page where it matches nothing is read
    /// whole. Navigation, headers, footers and the chrome of Sphinx/mdBook/rustdoc are
    /// skipped anyway.
    #[arg(long, value_name = "CSS")]
    pub root_selector: Option<String>,
    /// Write the index core, term shards, text chunks, model and wasm raw. By default they are
    /// stored gzip-compressed (about half the bytes; the widget and `lightembed search` read
    /// both), so a host that does not compress `.bin`/`.wasm` files still sends few bytes, and
    /// one that does sends about 1 % more (the browser undoes its compression first). Raw files
    /// are for inspecting them, or for readers older than bundle version 3.
    #[arg(long)]
    pub no_gzip: bool,
    /// Vector partitions (k-means clusters of the passage vectors; a query downloads the codes
    /// of the --probes nearest). Default: one below 2,048 passages (every code scored), else
    /// √(probes · passages · code bytes / centroid bytes), the fewest first-query bytes; when
    /// that is above 256, two levels of centroids (--cells) and (probes · passages · code bytes
    /// / (centroid bytes · √cell-probes))^⅔ smaller partitions.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub partitions: Option<u32>,
    /// Vector partitions a query probes by default (`lightembed search --ef-search` overrides
    /// it per search).
    #[arg(long, default_value_t = lightembed_index::fragments::DEFAULT_PROBES as u32,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub probes: u32,
    /// Coarse cells grouping the partitions (two levels of centroids: the core holds the cells'
    /// centroids, a file `g<n>.bin` each cell's partition centroids; 0: one level, every
    /// partition's centroid in the core). Default: none up to 256 partitions, else
    /// √(cell-probes · partitions).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=65_536))]
    pub cells: Option<u32>,
    /// Cells whose partition centroids a query fetches, at least (more when they hold fewer than
    /// --probes partitions).
    #[arg(long, default_value_t = lightembed_index::fragments::DEFAULT_CELL_PROBES as u32,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub cell_probes: u32,
    /// Postings of a term in its first tier, what a query downloads: a term in more passages
    /// keeps there the ones with the highest BM25 score and the rest in tail shards (`u<n>.bin`)
    /// that the widget and `lightembed search` do not read, so a query's keyword bytes stop
    /// growing with the site.
    #[arg(long, default_value_t = lightembed_index::fragments::DEFAULT_TIER_POSTINGS as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub tier_postings: u32,
    /// Postings in the first tier of a common word — one in more than 1/16 of the passages and
    /// more than 4 × --tier-postings (on a big site: "the", "returns", "value"; on a site of
    /// 30,000 passages a handful; on a small one none): a long question holds several, each
    /// bringing its first tier; their low idf makes the ones left out matter little. At most
    /// --tier-postings.
    #[arg(long, default_value_t = lightembed_index::fragments::DEFAULT_COMMON_TIER_POSTINGS as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub common_tier_postings: u32,
}

/// The arguments of `lightembed search` (see [`Command::Search`]).
#[derive(Args, Debug)]
pub struct SearchCommand {
    /// Index directory (or its index.bin), or the folder of a `lightembed site` bundle
    /// (`SITE/lightembed`: searched whole from its fragments, with its site model by default).
    #[arg(long)]
    pub index: PathBuf,
    /// The `.bin` model (default: the model recorded in the index's index.json).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Number of results.
    #[arg(short, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub k: u32,
    /// HNSW beam width for this search (default: the index's ef_search). For a `lightembed
    /// site` bundle: the vector partitions probed (default: the bundle's; their count or more
    /// scores every passage's code).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_EF as i64))]
    pub ef_search: Option<u32>,
    /// Print one JSON object (query, mode, dims, ms, results with rank, score, id, title,
    /// url, snippet, highlights: byte ranges of the query's words in the snippet).
    #[arg(long)]
    pub json: bool,
    /// Ranking: `hybrid` fuses BM25 keyword scores with vector similarity (see --fusion);
    /// `vector` ranks by cosine similarity of the embeddings only; `keyword` by BM25 only.
    #[arg(long, default_value = "hybrid", value_parser = ["hybrid", "vector", "keyword"])]
    pub mode: String,
    /// How hybrid mode fuses the two scores: `convex` (weighted sum of min–max normalised
    /// scores, see --vector-weight) or `rrf` (reciprocal rank fusion, see --rrf-k). Default:
    /// the fusion chosen on our dev set (docs/search.md).
    #[arg(long, value_parser = ["convex", "rrf"])]
    pub fusion: Option<String>,
    /// Weight of the vector side in convex fusion, 0–1.
    #[arg(long, value_name = "W", value_parser = parse_weight, allow_hyphen_values = true)]
    pub vector_weight: Option<f32>,
    /// Rank constant of RRF (a finite number ≥ 0).
    #[arg(long, value_name = "K", default_value_t = 60.0, value_parser = parse_page_weight)]
    pub rrf_k: f32,
    /// Candidates taken from each side before fusing (at least k are taken; a result's rank does
    /// not depend on -k up to this many).
    #[arg(long, default_value_t = SearchOptions::default().candidates)]
    pub candidates: usize,
    /// Show every matching passage, also several of one section (default: the best passage
    /// per section, i.e. per URL with its #anchor).
    #[arg(long)]
    pub all_passages: bool,
    /// Hybrid mode: weight of page evidence — each candidate gains this × the best score of
    /// another section of the same page (URL before `#`); 0 turns it off.
    #[arg(long, value_name = "W", default_value_t = lightembed_index::PAGE_WEIGHT,
          value_parser = parse_page_weight)]
    pub page_weight: f32,
    /// Batch mode: read `{"id": …, "query": …}` lines from FILE (`-` = stdin) and write one
    /// `{"id": …, "hits": [{"id", "url", "title", "score"}, …]}` line per query, in input order.
    /// A bad line (invalid JSON, no "query", an empty query) is named on stderr and skipped; the
    /// exit code is then 4.
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    pub jsonl: Option<String>,
    /// The query text (or use --jsonl).
    #[arg(required_unless_present = "jsonl")]
    pub query: Option<String>,
}

/// `--page-weight` and `--rrf-k`: a finite number ≥ 0 (a usage error otherwise, exit 2).
pub(crate) fn parse_page_weight(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        Ok(w) => Err(format!("{w} is not a finite number ≥ 0")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

/// `--vector-weight`: a number in 0–1 (a usage error otherwise, exit 2).
pub(crate) fn parse_weight(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(w) if (0.0..=1.0).contains(&w) => Ok(w),
        Ok(w) => Err(format!("{w} is outside 0–1")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}
