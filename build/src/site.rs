//! The search bundle of a built static site (`lightembed site`), Pagefind's shape, as bytes:
//!
//! | file | what |
//! |---|---|
//! | `lightembed-ui.js`, `lightembed-ui.css` | the `<lightembed-search>` element (ES module) and its default style |
//! | `lightembed-worker.js` | the module worker that loads the model and the index and answers queries |
//! | `lightembed_wasm.js`, `lightembed_wasm_bg.<hash>.wasm` | the engine and index for the browser (`js/`, web target) |
//! | `model.<hash>.bin` | the model (`.bin` v1; by default a site model, see [`Prepared`]); the widget loads it only for a transformer model |
//! | `query.<hash>.bin`, `q/<head>/r<n>.bin` | a static model's query side ([`lightembed::query_rows`]): tokenizer, bias and per-token rows in shards of 4 — the widget embeds a query from its tokens' rows alone, the same bits as the model |
//! | `core.<hash>.bin` | the index core ([`lightembed_index::fragments`]): the manifest, the vector code's frame and the partitions' centroids (a big site's: its coarse cells' only) — nothing per passage or section, so it stays small as the site grows |
//! | `f/<build>/g<n>.bin` | centroid cells (big sites: more than 256 partitions, two levels of centroids): the centroids of one coarse cell's partitions, fetched for a query's nearest cells before its partitions |
//! | `f/<build>/t<n>.bin`, `f/<build>/v<n>.bin`, `f/<build>/c<n>.bin` | term shards, vector partitions (one sign bit per dim per passage) and text chunks (text, URLs, titles), fetched as a query needs them |
//! | `unicode.<hash>.bin`, `unicode-all.<hash>.bin` | Unicode decomposition data for the widget's tokenizers ([`lightembed::unicode`]): the subset covering every character of the site's text (fetched with the wasm), the complete tables (fetched only for a query with a character the subset lacks) — the widget's wasm carries none |
//! | `f/<build>/n<n>.bin` | typo shards: the indexed terms by their first or last two characters, fetched only for a query word no page holds (typo tolerance) |
//! | `manifest.json` | file names, the model's SHA-256 (its trailer, as `lightembed inspect` shows it), the core's SHA-256, byte sizes, counts |
//!
//! `<hash>` is the first 16 hex digits of the file's SHA-256 (of its bytes as stored) and
//! `<build>` the first 16 of the core's build id (which covers every shard, partition and chunk), so a widget
//! caches these files forever and a rebuilt site changes their names.
//!
//! **Pre-compressed** (bundle version 3, the default): the core, the term and typo shards, the text chunks,
//! the model and the wasm are stored gzip-compressed ([`lightembed_index::gzip`]: deterministic
//! bytes), so a host that does not compress still sends few bytes; a host that compresses again
//! (`Content-Encoding: gzip`) is undone by the browser, and the widget gunzips what remains.
//! Readers tell the two forms apart by the gzip magic `1f 8b`; [`SiteOptions::gzip`] `false`
//! (`--no-gzip`) writes them raw. The manifest's `bytes` are the files' sizes as stored (what a
//! visitor downloads from a plain host); `"compression"` says `"gzip"` or `"none"`. The scripts,
//! the CSS and the manifest stay plain text: the browser loads the first two itself.

use lightembed::Model;
use lightembed_index::fragments::{self, Fragments};
use lightembed_index::keywords::keyword_text;
use lightembed_index::{Document, ModelIdentity};
use lightembed_ingest::{self as ingest, Passage};
use serde_json::json;

use crate::inputs::{url_of, Kind, PageReader, BUNDLE_DIR};
use crate::{fail, sha256_hex, BuildError};

/// The widget's files, as shipped with the bundle (`widget/`, minified by `js/build.sh` into
/// `js/pkg/widget-ui/` when that was run: `build.rs`).
pub const UI_JS: &str = include_str!(env!("LIGHTEMBED_UI_JS"));
/// The widget's default style.
pub const UI_CSS: &str = include_str!(env!("LIGHTEMBED_UI_CSS"));
/// The widget's module worker.
pub const WORKER_JS: &str = include_str!(env!("LIGHTEMBED_WORKER_JS"));

/// Characters of a passage kept as the stored text a result shows (its excerpt is cut from it).
pub const SNIPPET_CHARS: usize = 1200;

/// Index dims when none are asked for: the 128-d Matryoshka prefix when the model has one — a
/// third of the vector bytes a visitor downloads, for −0.4 nDCG@10 of hybrid ranking on the Git
/// manual set (bench/RESULTS.md) — else the model's output_dim.
pub const SITE_DIMS: usize = 128;

/// Besides the site's own tokens, a pruned site model keeps the first `KEEP_COMMON` ids of the
/// vocabulary — after the special tokens and single characters, BERT's WordPiece vocabulary lists
/// its most frequent pieces first — so common words of a query keep their own token.
pub const KEEP_COMMON: u32 = 5000;

/// The `bundle_version` in `manifest.json`: 3 since files may be gzip-compressed (version 2, all
/// raw, is still read).
pub const BUNDLE_VERSION: u32 = 3;

/// Options of a site build (the flags of `lightembed site`).
#[derive(Debug, Clone)]
pub struct SiteOptions {
    /// Index dims (a Matryoshka prefix); `None`: [`default_dims`].
    pub dims: Option<usize>,
    /// Ship the whole model (`--full-model`) instead of a site model.
    pub full_model: bool,
    /// CSS selector of the pages' content element (`--root-selector`).
    pub root_selector: Option<String>,
    /// Store the core, shards, chunks, model and wasm gzip-compressed (default `true`;
    /// `--no-gzip` writes them raw).
    pub gzip: bool,
    /// Fragment sizes and vector partitions (`--partitions`, `--probes`; default: chosen by
    /// bytes, [`fragments::SplitOptions`]).
    pub split: fragments::SplitOptions,
}

impl Default for SiteOptions {
    fn default() -> Self {
        SiteOptions {
            dims: None,
            full_model: false,
            root_selector: None,
            gzip: true,
            split: fragments::SplitOptions::default(),
        }
    }
}

/// [`SITE_DIMS`] when `model` has that Matryoshka prefix, else its output_dim.
pub fn default_dims(model: &Model) -> usize {
    if model.header().valid_dims().contains(&SITE_DIMS) {
        SITE_DIMS
    } else {
        model.header().output_dim as usize
    }
}

pub use crate::inputs::PageOutcome;

/// Collects a site's pages as passages. See the crate docs for the whole flow.
pub struct SiteBuilder {
    model_bytes: Vec<u8>,
    model: Model,
    dims: usize,
    full_model: bool,
    gzip: bool,
    split: fragments::SplitOptions,
    reader: PageReader,
    passages: Vec<Passage>,
    /// Pages that gave passages.
    documents: usize,
    /// Pages marked `<meta name="robots" content="noindex">` (an all-in-one `print.html`), read
    /// after every other page: a repeat of text already read is dropped, so the copy dropped is
    /// theirs, and results point at the chapter pages, not at the print page.
    deferred: Vec<(String, Kind, Vec<u8>)>,
}

impl SiteBuilder {
    /// A builder for pages embedded with the model in `model_bytes` (a `.bin` v1, fully checked
    /// here; `model_name` names it in errors, e.g. its path).
    ///
    /// Errors: the model does not load (`NAME: reason`); `--dims N: reason` for dims the model
    /// does not offer; `--root-selector: reason` for a bad CSS selector.
    pub fn new(
        model_bytes: Vec<u8>,
        model_name: &str,
        opts: &SiteOptions,
    ) -> Result<SiteBuilder, BuildError> {
        let model = match Model::from_bytes(&model_bytes) {
            Ok(m) => m,
            Err(e) => fail!("{model_name}: {e}"),
        };
        let dims = opts.dims.unwrap_or_else(|| default_dims(&model));
        if let Err(e) = ModelIdentity::from(&model).manifest_fields(dims) {
            fail!("--dims: {e}");
        }
        let reader = PageReader::new(opts.root_selector.as_deref(), ingest::PASSAGE_TOKENS)?;
        Ok(SiteBuilder {
            model_bytes,
            model,
            dims,
            full_model: opts.full_model,
            gzip: opts.gzip,
            split: opts.split,
            reader,
            passages: Vec::new(),
            documents: 0,
            deferred: Vec::new(),
        })
    }

    /// The model pages are cut and embedded with (the full one; the site model cuts the same).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Index dims.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Passages so far.
    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }

    /// Pages that gave passages so far.
    pub fn documents(&self) -> usize {
        self.documents
    }

    /// Adds the page at `rel` (relative to the site root, `/`-separated; its URL is
    /// [`url_of`]`(rel)`) from its bytes: decoded (charset from the BOM, `<meta charset>` or a
    /// guess, named in [`PageOutcome::warning`]), cut at headings into passages sized for the
    /// model. A binary file is skipped (a NUL byte in its first 8 KiB).
    pub fn add_page(&mut self, rel: &str, bytes: &[u8]) -> PageOutcome {
        let kind = Kind::of(rel).unwrap_or(Kind::Html);
        self.add_document(&url_of(rel), kind, bytes)
    }

    /// [`SiteBuilder::add_page`] with the page's URL given (Pagefind's `addHTMLFile({url, content})`).
    pub fn add_html(&mut self, url: &str, bytes: &[u8]) -> PageOutcome {
        self.add_document(url, Kind::Html, bytes)
    }

    fn add_document(&mut self, url: &str, kind: Kind, bytes: &[u8]) -> PageOutcome {
        if kind == Kind::Html && is_noindex(bytes) {
            self.deferred.push((url.to_string(), kind, bytes.to_vec()));
            return PageOutcome::default();
        }
        self.read_document(url, kind, bytes)
    }

    /// Reads the pages marked noindex that [`SiteBuilder::add_page`] put aside (call it once
    /// every other page is added; [`SiteBuilder::prepare`] does if the caller did not). Returns
    /// each one's URL and outcome, for the caller's warnings.
    pub fn read_deferred(&mut self) -> Vec<(String, PageOutcome)> {
        std::mem::take(&mut self.deferred)
            .into_iter()
            .map(|(url, kind, bytes)| {
                let o = self.read_document(&url, kind, &bytes);
                (url, o)
            })
            .collect()
    }

    fn read_document(&mut self, url: &str, kind: Kind, bytes: &[u8]) -> PageOutcome {
        let o = self
            .reader
            .read(&self.model, url, kind, bytes, &mut self.passages);
        if o.passages > 0 {
            self.documents += 1;
        }
        o
    }

    /// Adds a record that is not an HTML page (Pagefind's `addCustomRecord`): one document at
    /// `url` titled `title`, its `text` cut into passages like a page's. Returns the passages
    /// added.
    ///
    /// Errors: an empty `url`.
    pub fn add_record(&mut self, url: &str, title: &str, text: &str) -> Result<usize, BuildError> {
        if url.is_empty() {
            fail!("a custom record needs a url");
        }
        let added = self
            .reader
            .read_record(&self.model, url, title, text, &mut self.passages);
        if added > 0 {
            self.documents += 1;
        }
        Ok(added)
    }

    /// Ends the reading: builds the model the bundle ships (unless [`SiteOptions::full_model`], a
    /// site model: only the tokens the passages use plus the words among the first
    /// [`KEEP_COMMON`] ids and the ASCII characters, and only the projection rows of the index
    /// dims; it embeds the site's text exactly like the full model at those dims).
    ///
    /// Errors: no passages ([`crate::inputs::no_text`] of `files_read` and `excluded`, counted by
    /// the caller), or the pruned model fails to build.
    pub fn prepare(mut self, files_read: usize, excluded: usize) -> Result<Prepared, BuildError> {
        self.read_deferred();
        if self.passages.is_empty() {
            return Err(crate::inputs::no_text(files_read, excluded));
        }
        let full_bytes = self.model_bytes.len();
        let full_vocab = self.model.tokenizer().vocab_size();
        let (model_bytes, model, note) = if self.full_model {
            (self.model_bytes, self.model, None)
        } else {
            let (bytes, pruned) = site_model(&self.model, &self.passages, self.dims)?;
            let note = format!(
                "site model: {} of {} tokens, {} dims: {} → {} bytes",
                pruned.tokenizer().vocab_size(),
                full_vocab,
                self.dims,
                full_bytes,
                bytes.len()
            );
            (bytes, pruned, Some(note))
        };
        Ok(Prepared {
            model_bytes,
            model,
            dims: self.dims,
            passages: self.passages,
            documents: self.documents,
            site_model_note: note,
            gzip: self.gzip,
            split: self.split,
        })
    }
}

/// True when the HTML page in `bytes` says `<meta name="robots" content="… noindex …">` in its
/// first 16 KiB (before `</head>`): mdBook's `print.html`, search pages, drafts.
fn is_noindex(bytes: &[u8]) -> bool {
    let head = bytes[..bytes.len().min(16 << 10)].to_ascii_lowercase();
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let head = match find(&head, b"</head") {
        Some(end) => &head[..end],
        None => &head[..],
    };
    let mut at = 0;
    while let Some(i) = find(&head[at..], b"<meta") {
        let start = at + i;
        let end = find(&head[start..], b">").map_or(head.len(), |e| start + e);
        let tag = &head[start..end];
        let robots = [&b"name=\"robots\""[..], b"name='robots'", b"name=robots"]
            .iter()
            .any(|n| find(tag, n).is_some());
        if robots && find(tag, b"noindex").is_some() {
            return true;
        }
        at = end;
    }
    false
}

/// The model pruned for `passages` (see [`SiteBuilder::prepare`]).
fn site_model(
    model: &Model,
    passages: &[Passage],
    dims: usize,
) -> Result<(Vec<u8>, Model), BuildError> {
    let mut used = vec![false; model.tokenizer().vocab_size()];
    for p in passages {
        for id in model.tokenize(&p.embed_text) {
            used[id as usize] = true;
        }
    }
    let mut b = lightembed::ModelBuilder::from_model(model);
    let kept = b.prune(
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
    );
    if let Err(e) = kept {
        fail!("pruning the model: {e}");
    }
    let bytes = match b.build() {
        Ok(b) => b,
        Err(e) => fail!("pruning the model: {e}"),
    };
    match Model::from_bytes(&bytes) {
        Ok(pruned) => Ok((bytes, pruned)),
        Err(e) => fail!("the pruned model does not load: {e}"),
    }
}

/// A site read and its model chosen: what is left is embedding [`Prepared::texts`] and
/// [`Prepared::assemble`].
pub struct Prepared {
    model_bytes: Vec<u8>,
    model: Model,
    dims: usize,
    passages: Vec<Passage>,
    documents: usize,
    site_model_note: Option<String>,
    gzip: bool,
    split: fragments::SplitOptions,
}

impl Prepared {
    /// The model the bundle ships (and the passages are embedded with), as bytes.
    pub fn model_bytes(&self) -> &[u8] {
        &self.model_bytes
    }

    /// That model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Index dims.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Pages that gave passages.
    pub fn documents(&self) -> usize {
        self.documents
    }

    /// The passages, in page order.
    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }

    /// `site model: K of N tokens, D dims: A → B bytes` when a site model was built.
    pub fn site_model_note(&self) -> Option<&str> {
        self.site_model_note.as_deref()
    }

    /// What to embed, one text per passage in order, with [`Prepared::model`] at
    /// [`Prepared::dims`].
    pub fn texts(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.passages.iter().map(|p| p.embed_text.as_str())
    }

    /// Embeds passages `range` in this thread: `range.len() × dims` floats, row-major.
    ///
    /// Errors: `passage ID: reason` for a passage the model refuses.
    pub fn embed_range(&self, range: std::ops::Range<usize>) -> Result<Vec<f32>, BuildError> {
        let mut out = Vec::with_capacity(range.len() * self.dims);
        for p in &self.passages[range] {
            match self.model.embed(&p.embed_text, self.dims) {
                Ok(v) => out.extend_from_slice(&v),
                Err(e) => fail!("passage {}: {e}", p.id),
            }
        }
        Ok(out)
    }

    /// The bundle's files from the passages' `vectors` (`passages × dims` floats, row-major, in
    /// passage order) and the widget's web build (`wasm` and its wasm-bindgen glue `wasm_js`).
    ///
    /// Errors: `vectors` of the wrong length, a non-finite vector (`passage ID: reason`).
    pub fn assemble(
        self,
        vectors: &[f32],
        wasm: &[u8],
        wasm_js: &str,
    ) -> Result<Bundle, BuildError> {
        if vectors.len() != self.passages.len() * self.dims {
            fail!(
                "{} floats for {} passages of {} dims",
                vectors.len(),
                self.passages.len(),
                self.dims
            );
        }
        let identity = ModelIdentity::from(&self.model);
        let fields = match identity.manifest_fields(self.dims) {
            Ok(f) => f,
            Err(e) => fail!("--dims: {e}"),
        };
        let stem = lightembed_index::keywords::default_stemming(self.model.model_id());
        let mut b = match fragments::Builder::new(fields, stem) {
            Ok(b) => b,
            Err(e) => fail!("{e}"),
        };
        for (p, v) in self.passages.iter().zip(vectors.chunks_exact(self.dims)) {
            let doc = Document::new(
                p.id.clone(),
                p.title.clone(),
                p.url.clone(),
                lightembed_index::snippet::head(&p.text, SNIPPET_CHARS),
            );
            // BM25 indexes what is embedded (heading + whole passage), not the cut snippet.
            let kw = keyword_text(&p.page_title, &p.heading, &p.text);
            if let Err(e) = b.push_section(doc, v, &kw, &p.page_title, &p.heading) {
                fail!("passage {}: {e}", p.id);
            }
        }
        let fragments = match b.finish(&self.split) {
            Ok(f) => f,
            Err(e) => fail!("splitting the index: {e}"),
        };
        // A static model's query side as a head and row shards (clarification F.10): what the
        // widget downloads instead of the model. A transformer has none; its bundle's widget
        // loads the model.
        let query = match self
            .model
            .query_row_files(self.dims, lightembed::query_rows::DEFAULT_ROWS_PER_SHARD)
        {
            Ok(q) => Some(q),
            Err(lightembed::QueryRowsError::NotStatic) => None,
            Err(e) => fail!("query rows: {e}"),
        };
        // The Unicode data the widget's tokenizers read (`lightembed::unicode`): a subset for
        // every character of the text it shows, the complete tables for rarer queries.
        let mut text_chars = self
            .passages
            .iter()
            .flat_map(|p| [&p.title, &p.page_title, &p.heading, &p.text, &p.url])
            .flat_map(|s| s.chars());
        let unicode = lightembed::unicode::encode(Some(&mut text_chars));
        let stored = Stored::new(
            fragments,
            query,
            &self.model_bytes,
            wasm,
            unicode,
            self.gzip,
        );
        let files = bundle_files(
            &stored,
            &self.model.sha256_hex(),
            wasm_js,
            b.manifest(),
            self.passages.len(),
            self.documents,
        );
        Ok(Bundle {
            files,
            pages: self.documents,
            passages: self.passages.len(),
            core_bytes: stored.core.len(),
            shards: (
                stored.shards.len(),
                stored.shards.iter().map(Vec::len).sum(),
            ),
            partitions: (
                stored.partitions.len(),
                stored.partitions.iter().map(Vec::len).sum(),
            ),
            chunks: (
                stored.chunks.len(),
                stored.chunks.iter().map(Vec::len).sum(),
            ),
            typos: (stored.typos.len(), stored.typos.iter().map(Vec::len).sum()),
            model_bytes: stored.model.len(),
            query: stored.query.as_ref().map(|q| QueryFigures {
                head_bytes: q.head.len(),
                shards: q.shards.len(),
                shard_bytes: q.shards.iter().map(Vec::len).sum(),
            }),
            gzip: self.gzip,
        })
    }
}

/// A site's search bundle: the files to write into `SITE/lightembed/`, with figures.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// `(path inside the bundle folder, bytes)`, `/`-separated, `manifest.json` last.
    pub files: Vec<(String, Vec<u8>)>,
    /// Pages with passages.
    pub pages: usize,
    /// Passages indexed.
    pub passages: usize,
    /// Bytes of the index core (as stored: gzip-compressed when [`Bundle::gzip`]).
    pub core_bytes: usize,
    /// Term shards: count, bytes (as stored).
    pub shards: (usize, usize),
    /// Vector partitions: count, bytes (as stored).
    pub partitions: (usize, usize),
    /// Text chunks: count, bytes (as stored).
    pub chunks: (usize, usize),
    /// Typo shards: count, bytes (as stored).
    pub typos: (usize, usize),
    /// Bytes of the model shipped (as stored).
    pub model_bytes: usize,
    /// The query head and row shards (static models; `None` for a transformer, whose widget
    /// loads the model).
    pub query: Option<QueryFigures>,
    /// The core, shards, chunks, model and wasm are stored gzip-compressed.
    pub gzip: bool,
}

/// Sizes of a bundle's query side (as stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryFigures {
    /// Bytes of the head (`query.<hash>.bin`).
    pub head_bytes: usize,
    /// Row shards (`q/<head>/r<n>.bin`).
    pub shards: usize,
    /// Their bytes, all together.
    pub shard_bytes: usize,
}

impl Bundle {
    /// The report `lightembed site` prints on stdout when the bundle is in place at `dir` (as
    /// shown to the user), after `seconds`: figures, then the three lines to add to the pages.
    pub fn summary(&self, dir: &str, seconds: f64) -> String {
        format!(
            "indexed {} → {} in {:.1} s; wrote {} (index core {} bytes, {} {} bytes, {} {} bytes, \
             {} {} bytes, {} {} bytes; model {} bytes{}{})\n\
             add to your pages:\n  <link rel=\"stylesheet\" href=\"/{BUNDLE_DIR}/lightembed-ui.css\">\n  \
             <script type=\"module\" src=\"/{BUNDLE_DIR}/lightembed-ui.js\"></script>\n  \
             <lightembed-search></lightembed-search>",
            crate::count(self.pages, "page"),
            crate::count(self.passages, "passage"),
            seconds,
            dir,
            self.core_bytes,
            crate::count(self.shards.0, "term shard"),
            self.shards.1,
            crate::count(self.partitions.0, "vector partition"),
            self.partitions.1,
            crate::count(self.chunks.0, "text chunk"),
            self.chunks.1,
            crate::count(self.typos.0, "typo shard"),
            self.typos.1,
            self.model_bytes,
            match &self.query {
                Some(q) => format!(
                    "; query head {} bytes, {} {} bytes",
                    q.head_bytes,
                    crate::count(q.shards, "row shard"),
                    q.shard_bytes
                ),
                None => String::new(),
            },
            if self.gzip { "; gzip-compressed" } else { "" },
        )
    }
}

/// The bundle's binary files as they are written: gzip-compressed when `gzip`, else raw.
struct Stored {
    core: Vec<u8>,
    shards: Vec<Vec<u8>>,
    partitions: Vec<Vec<u8>>,
    chunks: Vec<Vec<u8>>,
    typos: Vec<Vec<u8>>,
    /// Tail shards: postings past each term's first tier (no front end fetches them).
    tails: Vec<Vec<u8>>,
    /// Centroid cells (two-level bundles).
    cells: Vec<Vec<u8>>,
    model: Vec<u8>,
    /// The query head and its row shards (static models).
    query: Option<lightembed::QueryRowFiles>,
    /// The head id (hex; names the row shards' folder).
    head_id: Option<String>,
    wasm: Vec<u8>,
    /// Unicode tables (`lightembed::unicode`): the site's subset and the complete ones.
    unicode: Vec<u8>,
    unicode_all: Vec<u8>,
    /// The core's build id (hex; names the fragments' folder).
    build: String,
    gzip: bool,
}

/// The complete Unicode tables, computed once per process (every code point: ~0.3 s).
fn unicode_all() -> &'static [u8] {
    static ALL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| lightembed::unicode::encode(None))
}

impl Stored {
    fn new(
        f: Fragments,
        query: Option<lightembed::QueryRowFiles>,
        model: &[u8],
        wasm: &[u8],
        unicode: Vec<u8>,
        gzip: bool,
    ) -> Stored {
        let build = f.build_id();
        let enc = |b: Vec<u8>| {
            if gzip {
                lightembed_index::gzip::compress(&b)
            } else {
                b
            }
        };
        Stored {
            core: enc(f.core),
            shards: f.shards.into_iter().map(enc).collect(),
            partitions: f.partitions.into_iter().map(enc).collect(),
            chunks: f.chunks.into_iter().map(enc).collect(),
            typos: f.typos.into_iter().map(enc).collect(),
            tails: f.tails.into_iter().map(enc).collect(),
            cells: f.cells.into_iter().map(enc).collect(),
            model: enc(model.to_vec()),
            head_id: query.as_ref().map(|q| q.head_id()),
            query: query.map(|q| lightembed::QueryRowFiles {
                head: enc(q.head),
                shards: q.shards.into_iter().map(enc).collect(),
            }),
            wasm: enc(wasm.to_vec()),
            unicode: enc(unicode),
            unicode_all: enc(unicode_all().to_vec()),
            build,
            gzip,
        }
    }
}

fn bundle_files(
    stored: &Stored,
    model_sha: &str,
    wasm_js: &str,
    m: &lightembed_index::Manifest,
    passages: usize,
    pages: usize,
) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // File names carry the first 16 hex digits of the file's SHA-256 (of the bytes as stored).
    // The manifest's model SHA-256 is the model's own (its trailer, as `lightembed inspect` shows
    // it): the widget checks the loaded model against it without hashing the file again.
    let core_sha = sha256_hex(&stored.core);
    let core_file = format!("core.{}.bin", &core_sha[..16]);
    let frag_dir = format!("f/{}/", &stored.build[..16]);
    let model_file = format!("model.{}.bin", &sha256_hex(&stored.model)[..16]);
    let wasm_file = format!(
        "lightembed_wasm_bg.{}.wasm",
        &sha256_hex(&stored.wasm)[..16]
    );
    files.push((core_file.clone(), stored.core.clone()));
    for (n, s) in stored.shards.iter().enumerate() {
        files.push((format!("{frag_dir}t{n}.bin"), s.clone()));
    }
    for (n, v) in stored.partitions.iter().enumerate() {
        files.push((format!("{frag_dir}v{n}.bin"), v.clone()));
    }
    for (n, c) in stored.chunks.iter().enumerate() {
        files.push((format!("{frag_dir}c{n}.bin"), c.clone()));
    }
    for (n, y) in stored.typos.iter().enumerate() {
        files.push((format!("{frag_dir}n{n}.bin"), y.clone()));
    }
    for (n, u) in stored.tails.iter().enumerate() {
        files.push((format!("{frag_dir}u{n}.bin"), u.clone()));
    }
    for (n, g) in stored.cells.iter().enumerate() {
        files.push((format!("{frag_dir}g{n}.bin"), g.clone()));
    }
    files.push((model_file.clone(), stored.model.clone()));
    // The query side: `query.<hash>.bin` and `q/<head id>/r<n>.bin` (the head id covers the
    // model and the dims, so a rebuilt site with another model renames the folder).
    let query = stored
        .query
        .as_ref()
        .zip(stored.head_id.as_ref())
        .map(|(q, id)| {
            let head_file = format!("query.{}.bin", &sha256_hex(&q.head)[..16]);
            let rows_dir = format!("q/{}/", &id[..16]);
            files.push((head_file.clone(), q.head.clone()));
            for (n, s) in q.shards.iter().enumerate() {
                files.push((format!("{rows_dir}r{n}.bin"), s.clone()));
            }
            (head_file, rows_dir, q.head.len(), q.shards.len())
        });
    files.push((wasm_file.clone(), stored.wasm.clone()));
    let unicode_file = format!("unicode.{}.bin", &sha256_hex(&stored.unicode)[..16]);
    let unicode_all_file = format!("unicode-all.{}.bin", &sha256_hex(&stored.unicode_all)[..16]);
    files.push((unicode_file.clone(), stored.unicode.clone()));
    files.push((unicode_all_file.clone(), stored.unicode_all.clone()));
    files.push(("lightembed_wasm.js".into(), wasm_js.as_bytes().to_vec()));
    files.push(("lightembed-worker.js".into(), WORKER_JS.as_bytes().to_vec()));
    files.push(("lightembed-ui.js".into(), UI_JS.as_bytes().to_vec()));
    files.push(("lightembed-ui.css".into(), UI_CSS.as_bytes().to_vec()));
    // `bytes`: the files' sizes as stored, which is what a visitor downloads (progress counts
    // against them).
    let manifest = json!({
        "bundle_version": BUNDLE_VERSION,
        "generator": format!("lightembed {}", env!("CARGO_PKG_VERSION")),
        "compression": if stored.gzip { "gzip" } else { "none" },
        "files": {"core": core_file, "fragments": frag_dir, "model": model_file, "wasm": wasm_file,
                  "query": query.as_ref().map(|q| &q.0), "rows": query.as_ref().map(|q| &q.1),
                  "unicode": unicode_file, "unicode_all": unicode_all_file},
        "model": {"id": m.model_id, "version": m.model_version.to_string(),
                  "sha256": model_sha, "bytes": stored.model.len()},
        "index": {"sha256": core_sha, "bytes": stored.core.len(),
                  "fragments_version": fragments::FRAGMENTS_VERSION,
                  "shards": stored.shards.len(), "partitions": stored.partitions.len(),
                  "chunks": stored.chunks.len(), "typos": stored.typos.len(),
                  "tails": stored.tails.len(), "cells": stored.cells.len(),
                  "dims": m.dims, "passages": passages, "pages": pages},
        "wasm": {"bytes": stored.wasm.len()},
        "unicode": {"bytes": stored.unicode.len(), "all_bytes": stored.unicode_all.len()},
        "query": query.as_ref().map(|q| json!({"bytes": q.2, "shards": q.3,
            "rows_per_shard": lightembed::query_rows::DEFAULT_ROWS_PER_SHARD})),
    });
    files.push((
        "manifest.json".into(),
        format!("{manifest:#}\n").into_bytes(),
    ));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &[u8] = include_bytes!("../../tests/fixtures/models/static_fp32_uncased.bin");

    fn bundle(gzip: bool) -> Bundle {
        let opts = SiteOptions {
            gzip,
            ..SiteOptions::default()
        };
        let mut b = SiteBuilder::new(MODEL.to_vec(), "m", &opts).unwrap();
        b.add_html(
            "a.html",
            b"<title>Garden</title><h2 id=\"w\">Watering</h2><p>Water the roses at dawn.</p>",
        );
        b.add_record("/r", "Soil", "Compost keeps the soil loose and rich.")
            .unwrap();
        let p = b.prepare(1, 0).unwrap();
        let v = p.embed_range(0..p.passages().len()).unwrap();
        p.assemble(
            &v,
            b"\0asm\x01\0\0\0 a stand-in for the widget's wasm",
            "glue",
        )
        .unwrap()
    }

    /// A page marked noindex (mdBook's `print.html`: every chapter on one page) is read after
    /// the chapters whatever the walk order, so the repeated text is kept at the chapter's URL
    /// and the print page adds only what no chapter has.
    #[test]
    fn noindex_pages_are_read_last() {
        let mut b = SiteBuilder::new(MODEL.to_vec(), "m", &SiteOptions::default()).unwrap();
        let print = b"<html><head><META Name=\"robots\" content=\"noindex, follow\"><title>All</title></head>\
            <body><h2 id=\"w\">Watering</h2><p>Water the roses at dawn.</p>\
            <h2 id=\"x\">Extra</h2><p>Only the print page says this.</p></body></html>";
        // The print page first, as a walk in name order meets `a-print.html` before `b.html`.
        assert_eq!(b.add_html("a-print.html", print), PageOutcome::default());
        assert!(b.passages().is_empty());
        let o = b.add_html(
            "b.html",
            b"<title>Garden</title><h2 id=\"w\">Watering</h2><p>Water the roses at dawn.</p>",
        );
        assert_eq!(o.passages, 1);
        let late = b.read_deferred();
        assert_eq!(late.len(), 1);
        assert_eq!(
            (late[0].0.as_str(), late[0].1.passages),
            ("a-print.html", 1)
        );
        let urls: Vec<&str> = b.passages().iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls, ["b.html#w", "a-print.html#x"]);
        assert!(b.read_deferred().is_empty());
        // Not noindex: a robots meta without it, a "noindex" elsewhere, one after </head>.
        assert!(!is_noindex(
            b"<meta name=\"robots\" content=\"index\"><p>noindex</p>"
        ));
        assert!(!is_noindex(
            b"<head></head><meta name=robots content=noindex>"
        ));
        assert!(is_noindex(b"<meta content='noindex' name='robots'>"));
    }

    fn manifest(b: &Bundle) -> serde_json::Value {
        let (name, bytes) = b.files.last().unwrap();
        assert_eq!(name, "manifest.json");
        serde_json::from_slice(bytes).unwrap()
    }

    /// By default the core, shards, chunks, model and wasm are stored gzip-compressed
    /// (deterministic bytes), the manifest says so and its sizes are the stored files'; they
    /// decompress to exactly what `gzip: false` stores raw, and the text files stay plain.
    #[test]
    fn binary_files_are_stored_gzip_by_default() {
        assert!(SiteOptions::default().gzip);
        let z = bundle(true);
        let raw = bundle(false);
        assert_eq!(z.files, bundle(true).files, "deterministic");
        let (mz, mr) = (manifest(&z), manifest(&raw));
        assert_eq!(mz["bundle_version"], BUNDLE_VERSION);
        assert_eq!(mz["compression"], "gzip");
        assert_eq!(mr["compression"], "none");
        let file = |b: &Bundle, name: &str| -> Vec<u8> {
            b.files.iter().find(|(n, _)| n == name).unwrap().1.clone()
        };
        let binary = |n: &str| n.ends_with(".bin") || n.ends_with(".wasm");
        let names = |b: &Bundle| -> Vec<String> {
            b.files
                .iter()
                .filter(|(n, _)| binary(n))
                .map(|(n, _)| n.clone())
                .collect()
        };
        assert_eq!(names(&z).len(), names(&raw).len());
        assert!(names(&z).len() >= 5, "{:?}", names(&z));
        for (nz, nr) in names(&z).iter().zip(names(&raw)) {
            let (bz, br) = (file(&z, nz), file(&raw, &nr));
            assert_eq!(&bz[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255], "{nz}");
            assert!(!lightembed_index::gzip::is_gzip(&br), "{nr}");
            let back = lightembed_index::gzip::decompress_if_gzip(&bz).unwrap();
            assert_eq!(back.as_ref(), &br[..], "{nz} decompresses to {nr}");
            // the name carries the hash of the stored bytes
            if let Some(h) = nz
                .strip_suffix(".bin")
                .and_then(|n| n.strip_prefix("core."))
            {
                assert_eq!(h, &sha256_hex(&bz)[..16]);
            }
        }
        for key in ["core", "model", "wasm"] {
            let name = mz["files"][key].as_str().unwrap();
            let size = file(&z, name).len();
            let section = if key == "core" { "index" } else { key };
            assert_eq!(mz[section]["bytes"], size, "{key}");
            let raw_size = file(&raw, mr["files"][key].as_str().unwrap()).len();
            if key == "model" {
                assert!(size < raw_size, "{key}: {size} of {raw_size} bytes");
            }
        }
        assert_eq!(z.core_bytes, mz["index"]["bytes"]);
        assert!(z.summary("d", 0.0).contains("; gzip-compressed)"));
        assert!(!raw.summary("d", 0.0).contains("gzip"));
        for text in [
            "lightembed-ui.js",
            "lightembed-ui.css",
            "lightembed-worker.js",
            "lightembed_wasm.js",
        ] {
            assert_eq!(file(&z, text), file(&raw, text), "{text}");
        }
    }

    /// A bundle's sections keep the page title and the heading apart, as ingestion made them (the
    /// fragments title hits from the two by ingestion's rule, `lightembed_ingest::section_title`):
    /// a Sphinx page title's own dash stays in the page title, and a record's title is its page's.
    #[test]
    fn section_titles_are_ingestions_titles() {
        let mut b = SiteBuilder::new(MODEL.to_vec(), "m", &SiteOptions::default()).unwrap();
        b.add_html(
            "a.html",
            "<title>Install — Garden 1.0 documentation</title><p>Intro.</p>\
             <h2 id=\"win\">Windows</h2><p>Run setup.</p><h2 id=\"i\">Install</h2><p>Again.</p>"
                .as_bytes(),
        );
        b.add_record("/r", "", "A record without a title.").unwrap();
        let got: Vec<(&str, &str, &str)> = b
            .passages()
            .iter()
            .map(|p| (p.title.as_str(), p.page_title.as_str(), p.heading.as_str()))
            .collect();
        let page = "Install — Garden 1.0 documentation";
        assert_eq!(
            got,
            [
                (page, page, ""),
                (
                    "Windows — Install — Garden 1.0 documentation",
                    page,
                    "Windows"
                ),
                (page, page, "Install"),
                ("/r", "/r", ""),
            ]
        );
    }
}
