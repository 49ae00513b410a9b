//! Messages between the UI (main thread) and the worker.
//!
//! Every message is one JSON string (`serde_json`) posted with `postMessage`; the worker never
//! receives model bytes from the UI (it fetches and caches them itself), so no message is large
//! except search results and projections.
//!
//! Handshake: the worker posts [`Event::Hello`] once its wasm has started; the UI queues requests
//! until then (messages posted before the worker's `onmessage` exists would be lost).

use serde::{Deserialize, Serialize};

/// One passage of a document: ingestion's passage ([`lightembed_ingest::Passage`]: id, display
/// title, page title, heading, URL, text and embedded text, made by
/// [`lightembed_ingest::Passage::new`]) and the document it belongs to. The unit that is
/// embedded, indexed, stored (IndexedDB keeps it as JSON, [`crate::worker::storage`]) and
/// returned by search — one shape from ingestion to storage. On the wire and in storage its
/// fields are one flat object: `doc_id` and the ingestion passage's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// The document the passage belongs to (deleting a document deletes all its passages).
    pub doc_id: String,
    /// The passage as ingestion made it. Its `id` is the app's: `"{doc_id}#{anchor or chunk}"`
    /// ([`doc_id_of`] gives the document back); its `url` is empty for a user document (it is
    /// not served anywhere).
    #[serde(flatten)]
    pub passage: lightembed_ingest::Passage,
}

impl Passage {
    /// The passage `passage` of document `doc_id`.
    pub fn new(doc_id: impl Into<String>, passage: lightembed_ingest::Passage) -> Passage {
        Passage {
            doc_id: doc_id.into(),
            passage,
        }
    }

    /// The passage id (`"{doc_id}#{anchor or chunk}"`).
    pub fn id(&self) -> &str {
        &self.passage.id
    }

    /// What is embedded: the heading, a newline, the text (the text alone without a heading) —
    /// exactly what `lightembed index` embeds for the same passage
    /// ([`lightembed_ingest::embed_text`]).
    pub fn embed_text(&self) -> &str {
        &self.passage.embed_text
    }

    /// What BM25 indexes: the page title, then [`Passage::embed_text`] — exactly what
    /// `lightembed index` indexes for the same passage ([`lightembed_index::keywords::keyword_text`]).
    pub fn keyword_text(&self) -> String {
        let p = &self.passage;
        lightembed_index::keywords::keyword_text(&p.page_title, &p.heading, &p.text)
    }
}

/// The document id of a passage id: everything before the first `#` (the whole id if none).
pub fn doc_id_of(passage_id: &str) -> &str {
    passage_id.split('#').next().unwrap_or(passage_id)
}

/// One document of [`Request::IndexDocuments`]: what [`Request::IndexDocument`] carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentInput {
    /// File name (a file of a dropped folder: its path in the folder, `papers/2024/a.pdf`): the
    /// document id is made from it ([`crate::worker::chunk::user_doc_id`]).
    pub name: String,
    /// The document's text (empty for a document sent as bytes).
    pub content: String,
    /// How `content` is read (from the file name).
    pub format: crate::worker::chunk::Format,
    /// A document of a binary format ([`crate::worker::chunk::Format::is_binary`]: PDF, Word,
    /// OpenDocument, EPUB) travels as bytes: the number of its buffer among those posted with
    /// the message (`{json, buffers}`, [`crate::shared::protocol::BUFFERS_KEY`]), transferred,
    /// not copied into the JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<usize>,
    /// The bytes of `buffer`, filled in by the worker when the message arrives (never on the
    /// wire).
    #[serde(skip)]
    pub bytes: Option<Vec<u8>>,
}

impl DocumentInput {
    /// A document given as text.
    pub fn text(
        name: impl Into<String>,
        content: impl Into<String>,
        format: crate::worker::chunk::Format,
    ) -> DocumentInput {
        DocumentInput {
            name: name.into(),
            content: content.into(),
            format,
            buffer: None,
            bytes: None,
        }
    }
}

/// A message that carries file bytes is a JS object: its request as JSON text under
/// [`JSON_KEY`] and the transferred `ArrayBuffer`s under this key (a [`DocumentInput::buffer`]
/// is a position in that array). Every other message is the JSON text alone.
pub const BUFFERS_KEY: &str = "buffers";
/// See [`BUFFERS_KEY`].
pub const JSON_KEY: &str = "json";

/// One passage of a document as the text view shows it ([`Event::DocText`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocPassage {
    /// The passage id.
    pub id: String,
    /// Its section heading (empty: none).
    pub heading: String,
    /// Its text (shown as text, never as HTML).
    pub text: String,
    /// Its PDF page, if any.
    #[serde(default)]
    pub page: Option<u32>,
}

/// A request from the UI to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Request {
    /// Load (download or take from the cache) and verify a model, then restore the stored index
    /// and check it against the model (spec §8). Cancels running indexing work.
    LoadModel {
        /// Model URL, relative to the page or absolute.
        url: String,
        /// SHA-256 hex from `models/manifest.json`, used as the cache validator. `None` (a model
        /// forced with `?model=`): the validator is the server's ETag / Last-Modified /
        /// Content-Length from a HEAD request.
        sha256: Option<String>,
        /// Do not use IndexedDB at all (test hook `?nostore`): everything stays in memory.
        no_store: bool,
        /// Open the database at this schema version instead of [`crate::worker::storage::DB_VERSION`]
        /// (test hook `?dbversion=N`: a newer deployment in another tab).
        #[serde(default)]
        db_version: Option<u32>,
        /// The language (`en`, `tr`, [`crate::shared::lang`]) whose index this model serves: each
        /// language's index, passages and cached models live in their own database
        /// ([`crate::shared::lang::db_name`]; `None` and `en`: the app's original one). A load for
        /// another language than the last one closes that database (what the session kept in
        /// memory for it is dropped) and opens this language's.
        #[serde(default)]
        lang: Option<String>,
        /// Engines that may embed for an indexing job, the indexing worker included (`?workers=N`;
        /// `None`: one per core, at most 1 + [`crate::worker::pool::MAX_HELPERS`]). `1`: no helpers.
        #[serde(default)]
        workers: Option<usize>,
    },
    /// Fetch the bundled corpus (JSON lines of [`crate::worker::chunk::CorpusRecord`], written by
    /// `lightembed passages`) and index it.
    IndexCorpus {
        /// URL of the `.jsonl` file.
        url: String,
        /// Index only the first `limit` passages (`?limit=` test hook).
        limit: Option<usize>,
        /// Index dims if a new index is created (ignored when an index exists).
        dims: Option<usize>,
    },
    /// Index a user document (a dropped file, pasted text): the worker cuts it into passages with
    /// the loaded model ([`crate::worker::chunk::document_passages`], the CLI's pipeline), deletes the
    /// document's passages that the new version no longer has (an edited, shorter file), then
    /// embeds and indexes the new ones.
    IndexDocument {
        /// File name (or the title of pasted text): the document id is made from it
        /// ([`crate::worker::chunk::user_doc_id`]).
        name: String,
        /// The document's text.
        content: String,
        /// How `content` is read (from the file name; plain text for pasted text).
        format: crate::worker::chunk::Format,
        /// Index dims if a new index is created.
        dims: Option<usize>,
    },
    /// Index several user documents (files dropped or picked together), one after another as
    /// [`Request::IndexDocument`] does each. One message, so a [`Request::Cancel`] sent after it
    /// is handled while they are indexed, and drops the ones still waiting.
    IndexDocuments {
        /// The documents, in order.
        docs: Vec<DocumentInput>,
        /// Index dims if a new index is created.
        dims: Option<usize>,
    },
    /// Index passages supplied as they are (tests; ids already in the index are replaced).
    IndexPassages {
        /// The passages; ids already in the index are replaced.
        passages: Vec<Passage>,
        /// Index dims if a new index is created.
        dims: Option<usize>,
    },
    /// Stop the running indexing job; what was embedded so far is kept and persisted.
    Cancel,
    /// Rebuild the index from the stored passages with the loaded model at `dims` (after a
    /// manifest mismatch, or to change the index dims).
    Reindex {
        /// New index dims (`None`: the model's `output_dim`).
        dims: Option<usize>,
    },
    /// Embed `query` and search the index.
    Search {
        /// Echoed in [`Event::Results`] so the UI drops stale answers.
        id: u64,
        /// The query text.
        query: String,
        /// Number of results.
        k: usize,
        /// Which side(s) rank (default hybrid).
        #[serde(default)]
        mode: SearchMode,
    },
    /// Remote mode (`?serve=`, [`crate::shared::remote`]): embed `query` with the loaded model
    /// and search the `lightembed serve` at `serve` with it (`POST <serve>/search`: the text, the
    /// vector and the model's identity). Answered by [`Event::RemoteResults`] or
    /// [`Event::RemoteFailed`]; the local index is not used.
    RemoteSearch {
        /// Echoed in the answer so the UI drops stale ones.
        id: u64,
        /// The query text.
        query: String,
        /// Number of results.
        k: usize,
        /// The server's base URL ([`crate::shared::remote::normalize`]d).
        serve: String,
        /// The server's dims (its `GET /health`), if known: the query is embedded at these when
        /// the model has them ([`crate::shared::remote::query_dims`]).
        #[serde(default)]
        dims: Option<usize>,
    },
    /// Delete every passage of a document (index and storage).
    DeleteDoc {
        /// The document id.
        doc_id: String,
    },
    /// Delete the whole index and every stored passage.
    ClearIndex,
    /// Cosine similarity of two texts at `dims` (`None`: the index dims, else `output_dim`).
    Cosine {
        /// First text.
        a: String,
        /// Second text.
        b: String,
        /// Embedding dims.
        dims: Option<usize>,
    },
    /// Tokens and ids of `text`.
    Tokenize {
        /// The text.
        text: String,
    },
    /// 2-D PCA of (up to `max_points`) indexed passages, with `query` projected if given.
    Project {
        /// Query to plot, if any.
        query: Option<String>,
        /// Largest number of passages returned.
        max_points: usize,
    },
    /// The passages of one document in order, for the text view ([`Event::DocText`]).
    DocText {
        /// The document id.
        doc_id: String,
    },
    /// Test hook: panic inside the worker so the UI's crash recovery can be exercised.
    Crash,
}

/// Everything the UI shows about a loaded model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ModelInfo {
    /// Where it was loaded from.
    pub url: String,
    /// Header `model_id`.
    pub model_id: String,
    /// `major.minor.patch`.
    pub version: String,
    /// Header `format_version`.
    pub format_version: u16,
    /// `fp32` / `int8` / `int4` / `ternary`.
    pub embedding_quant: String,
    /// `fp32` / `ternary`, or `—` for a static model.
    pub weight_quant: String,
    /// Transformer layers (0 = static).
    pub n_layers: u8,
    /// Hidden width.
    pub d_model: u16,
    /// Vocabulary size.
    pub vocab_size: u32,
    /// Full embedding length.
    pub output_dim: usize,
    /// Valid `dims` (Matryoshka dims and `output_dim`).
    pub valid_dims: Vec<usize>,
    /// Tokenizer truncation length.
    pub max_seq_len: u16,
    /// Tokenizer lowercases.
    pub lower_case: bool,
    /// A fingerprint rotation is folded in.
    pub has_fingerprint: bool,
    /// Header `license_id`.
    pub license_id: u32,
    /// File size in bytes.
    pub size_bytes: u64,
    /// File SHA-256 (hex).
    pub sha256: String,
    /// The `METADATA` section (JSON text), if any.
    pub metadata: Option<String>,
    /// `true` when the bytes came from the IndexedDB cache rather than the network.
    pub from_cache: bool,
    /// Milliseconds spent verifying and loading (`Model::from_bytes`).
    pub verify_ms: f64,
    /// The engine's kernels in this worker (`simd128` or `relaxed-simd`; `Backend::name`).
    #[serde(default)]
    pub kernel: String,
}

/// One indexed document as listed in the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocSummary {
    /// Document id (see [`Passage::doc_id`]).
    pub doc_id: String,
    /// Its page title (that of its first passage, kept apart from the display titles).
    pub title: String,
    /// Number of indexed passages.
    pub passages: usize,
}

/// The index as the UI sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct IndexState {
    /// Live passages.
    pub count: usize,
    /// Vector length (0 when there is no index).
    pub dims: usize,
    /// `model_id` and version recorded in the manifest.
    pub built_with: String,
    /// Documents, in insertion order.
    pub docs: Vec<DocSummary>,
    /// Compatibility notes (minor version or file differs; the index stays valid).
    pub notes: Vec<String>,
    /// `true` when the state was restored from storage (no embedding done).
    pub restored: bool,
    /// Milliseconds spent reading and validating the stored index (0 if not restored).
    pub restore_ms: f64,
}

/// One search result: the index crate's [`ShownHit`] (id, title, url, excerpt, highlights,
/// score), the same type `lightembed search --json` prints.
pub use lightembed_index::snippet::ShownHit;

/// Which side(s) of the index rank search results: hybrid (the default), vector or keyword; on
/// the wire `"hybrid"`, `"vector"`, `"keyword"`.
pub use lightembed_index::Mode as SearchMode;

/// One token of the tokenizer playground.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenOut {
    /// Token string (`[CLS]`, `hello`, `##ing`, …).
    pub token: String,
    /// Token id.
    pub id: u32,
}

/// One point of the PCA plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// First principal component.
    pub x: f32,
    /// Second principal component.
    pub y: f32,
    /// Passage title (tooltip).
    pub label: String,
}

/// Where storage stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StorageKind {
    /// IndexedDB works: models, passages and the index persist.
    Persistent,
    /// IndexedDB is unavailable, blocked or full: everything lives in memory for this session.
    MemoryOnly,
}

/// A message from the worker to the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    /// The worker's wasm started and listens for requests.
    Hello,
    /// Storage status (sent after opening IndexedDB and whenever a write fails).
    Storage {
        /// Persistent or memory only.
        kind: StorageKind,
        /// Why storage is unavailable (shown to the user), if it is.
        message: Option<String>,
    },
    /// The model is being fetched: `loaded` of `total` bytes.
    Download {
        /// Bytes received.
        loaded: u64,
        /// `Content-Length`, if known.
        total: Option<u64>,
    },
    /// The model bytes are complete and being verified.
    Verifying,
    /// The model verified and loaded; the worker is ready to embed.
    ModelReady {
        /// What was loaded.
        info: ModelInfo,
    },
    /// The model could not be fetched or failed verification; nothing was loaded.
    ModelFailed {
        /// Human-readable reason (the engine's [`lightembed::LoadError`] message when verification
        /// failed).
        reason: String,
    },
    /// The index changed or was restored.
    Index {
        /// The new state.
        state: IndexState,
    },
    /// The stored index does not fit the loaded model (spec §8). Searching is disabled until
    /// [`Request::Reindex`].
    IndexMismatch {
        /// The spec's message, e.g. "Index was built with lightembed-en-0l v3.0 but the loaded model
        /// is v4.0. Re-run `lightembed index`."
        message: String,
        /// Passages stored (what a re-index embeds).
        stored_passages: usize,
    },
    /// Indexing progress.
    Progress {
        /// Passages embedded in this job.
        done: usize,
        /// Passages in this job.
        total: usize,
        /// Throughput so far.
        per_sec: f64,
        /// Passages embedded since the last `Progress` (the UI sums these: `embed-count`).
        embedded: usize,
        /// Engines embedding for this job: the indexing worker and its helpers (issue 15 item 6).
        #[serde(default = "one")]
        workers: usize,
        /// Documents waiting behind this job (files dropped together); [`Request::Cancel`]
        /// drops them too.
        #[serde(default)]
        queued: usize,
        /// The indexing worker's WebAssembly memory in bytes (its heap's high-water mark;
        /// wasm32 stops at 4 GiB). 0 from a worker that does not say.
        #[serde(default)]
        heap_bytes: u64,
        /// Of those, the bytes allocated now ([`crate::shared::alloc::live_bytes`]); the rest
        /// is free space inside the heap.
        #[serde(default)]
        heap_live: u64,
    },
    /// An indexing job ended.
    IndexDone {
        /// Passages embedded.
        done: usize,
        /// Passages in the job.
        total: usize,
        /// Stopped by [`Request::Cancel`].
        cancelled: bool,
        /// Wall time of the job.
        seconds: f64,
        /// Throughput.
        per_sec: f64,
        /// Engines that embedded for this job (the indexing worker and its helpers).
        #[serde(default = "one")]
        workers: usize,
        /// Of `done`, the passages that helper workers embedded.
        #[serde(default)]
        helped: usize,
        /// Documents still waiting to be indexed after this job (see `Progress::queued`).
        #[serde(default)]
        queued: usize,
    },
    /// Search results for request `id`.
    Results {
        /// The request's id.
        id: u64,
        /// Best first.
        hits: Vec<ShownHit>,
        /// Some passage holds a word of the query ([`lightembed_index::Searcher::keyword_matches`]);
        /// `false`: hybrid results are the closest by meaning alone.
        #[serde(default = "yes")]
        keyword_match: bool,
        /// Milliseconds to embed the query.
        embed_ms: f64,
        /// Milliseconds to search the index.
        search_ms: f64,
    },
    /// A search server's answer to [`Request::RemoteSearch`] `id`: its hits, shown as local
    /// results are.
    RemoteResults {
        /// The request's id.
        id: u64,
        /// Best first (relative URLs resolved against the server's address).
        hits: Vec<ShownHit>,
        /// The server's §8 warnings (a compatible but different model version or file).
        #[serde(default)]
        warnings: Vec<String>,
        /// Milliseconds to embed the query here.
        embed_ms: f64,
        /// Milliseconds from sending the request to reading the answer.
        request_ms: f64,
    },
    /// [`Request::RemoteSearch`] `id` failed: the reason in words
    /// ([`crate::shared::remote::RemoteError`]: the server's §8 refusal, another refusal, a
    /// failure, or no answer).
    RemoteFailed {
        /// The request's id.
        id: u64,
        /// What went wrong, for the results area.
        message: String,
    },
    /// Playground: cosine similarity.
    Cosine {
        /// The value in `[-1, 1]`.
        value: f32,
        /// Dims used.
        dims: usize,
    },
    /// Playground: tokens.
    Tokens {
        /// `[CLS]` … `[SEP]`.
        tokens: Vec<TokenOut>,
    },
    /// Playground: PCA projection.
    Projection {
        /// Indexed passages.
        points: Vec<Point>,
        /// The query, if one was given.
        query: Option<Point>,
        /// Fraction of variance the two components explain.
        explained: f32,
    },
    /// A document of a drop was not indexed: it cannot be read (an encrypted, scanned or broken
    /// PDF, a broken Word file, …) or has no text. The rest of the drop goes on.
    Skipped {
        /// The document's name (its path in a dropped folder).
        name: String,
        /// Why, in words (ingestion's [`lightembed_ingest::DocumentError`] message).
        reason: String,
        /// A stable name of the reason (`encrypted`, `no-text`, `broken`, `too-large`,
        /// `empty`, `reader-crashed`).
        rule: String,
    },
    /// The passages of a document in order ([`Request::DocText`]).
    DocText {
        /// The document id.
        doc_id: String,
        /// Its passages (empty: not found).
        passages: Vec<DocPassage>,
    },
    /// A recoverable error to show in the error banner.
    Error {
        /// What went wrong.
        message: String,
    },
    /// The worker panicked (it is about to trap; the UI restarts it).
    Panic {
        /// The panic message.
        message: String,
    },
}

impl Request {
    /// JSON text of this request.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("requests always serialise")
    }

    /// Parses a request.
    ///
    /// # Errors
    /// The `serde_json` message when `s` is not a valid request.
    pub fn from_json(s: &str) -> Result<Request, String> {
        serde_json::from_str(s).map_err(|e| format!("bad request: {e}"))
    }
}

impl Event {
    /// JSON text of this event.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events always serialise")
    }

    /// Parses an event.
    ///
    /// # Errors
    /// The `serde_json` message when `s` is not a valid event.
    pub fn from_json(s: &str) -> Result<Event, String> {
        serde_json::from_str(s).map_err(|e| format!("bad event: {e}"))
    }
}

/// `workers` of events from a worker build before the pool: one engine.
fn one() -> usize {
    1
}

/// A hit's URL as a link target, or None for no link. An index is data, so only `http:`,
/// `https:` and relative URLs are followed: anything with a scheme before its first `/`, `?` or
/// `#` must be one of those two (a `javascript:` or `data:` URL, also with spaces or tabs inside
/// its scheme, which browsers drop, is shown as no link).
pub fn safe_href(url: &str) -> Option<&str> {
    if url.trim().is_empty() {
        return None;
    }
    match url.find([':', '/', '?', '#']) {
        Some(i) if url.as_bytes()[i] == b':' => {
            let scheme = &url[..i];
            (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
                .then_some(url)
        }
        _ => Some(url), // relative
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_http_and_relative_urls_are_links() {
        use super::safe_href;
        for ok in [
            "https://doc.rust-lang.org/book/ch01.html#x",
            "HTTP://a.b/",
            "guide/a.html#b",
            "/abs/path?q=a:b",
            "#anchor",
            "page.html#fn:1",
        ] {
            assert_eq!(safe_href(ok), Some(ok), "{ok}");
        }
        for bad in [
            "",
            "  ",
            "javascript:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "JavaScript:x",
            "data:text/html,<b>x</b>",
            "vbscript:x",
        ] {
            assert_eq!(safe_href(bad), None, "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn requests_round_trip_through_json() {
        let reqs = vec![
            Request::LoadModel {
                url: "models/a.bin".into(),
                sha256: Some("ab".into()),
                no_store: false,
                db_version: None,
                lang: None,
                workers: None,
            },
            Request::LoadModel {
                url: "models/lightembed-tr-static.bin".into(),
                sha256: None,
                no_store: true,
                db_version: Some(2),
                lang: Some("tr".into()),
                workers: Some(1),
            },
            Request::Search {
                id: 7,
                query: "ownership".into(),
                k: 5,
                mode: SearchMode::Keyword,
            },
            Request::IndexPassages {
                passages: vec![Passage::new(
                    "user/a",
                    lightembed_ingest::Passage::new("user/a#0", "A", "Intro", "", "hello"),
                )],
                dims: Some(64),
            },
            Request::IndexDocument {
                name: "notes.md".into(),
                content: "# Notes\n\nText.".into(),
                format: crate::worker::chunk::Format::Markdown,
                dims: None,
            },
            Request::IndexDocuments {
                docs: vec![DocumentInput::text(
                    "a.txt",
                    "A.",
                    crate::worker::chunk::Format::Text,
                )],
                dims: Some(64),
            },
            Request::IndexDocuments {
                docs: vec![DocumentInput {
                    buffer: Some(0),
                    ..DocumentInput::text("papers/a.pdf", "", crate::worker::chunk::Format::Pdf)
                }],
                dims: None,
            },
            Request::DocText {
                doc_id: "user/a.pdf".into(),
            },
            Request::RemoteSearch {
                id: 3,
                query: "<b>ownership</b>".into(),
                k: 10,
                serve: "http://127.0.0.1:8787/".into(),
                dims: Some(128),
            },
            Request::Cancel,
        ];
        for r in reqs {
            assert_eq!(Request::from_json(&r.to_json()).unwrap(), r);
        }
        // A load from a build without languages is a load for the app's original database.
        let r = Request::from_json(
            r#"{"type":"LoadModel","url":"m.bin","sha256":null,"no_store":false}"#,
        );
        assert!(
            matches!(
                r,
                Ok(Request::LoadModel {
                    lang: None,
                    db_version: None,
                    workers: None,
                    ..
                })
            ),
            "{r:?}"
        );
        // The mode is optional on the wire (hybrid) and spelled in lower case.
        let r = Request::from_json(r#"{"type":"Search","id":1,"query":"q","k":3}"#);
        assert!(
            matches!(
                r,
                Ok(Request::Search {
                    mode: SearchMode::Hybrid,
                    ..
                })
            ),
            "{r:?}"
        );
        assert!(Request::Search {
            id: 1,
            query: "q".into(),
            k: 3,
            mode: SearchMode::Vector
        }
        .to_json()
        .contains(r#""mode":"vector""#));
    }

    #[test]
    fn events_round_trip_and_are_tagged() {
        let e = Event::Progress {
            done: 3,
            total: 10,
            per_sec: 12.5,
            embedded: 3,
            workers: 2,
            queued: 4,
            heap_bytes: 1 << 30,
            heap_live: 1 << 29,
        };
        let s = e.to_json();
        assert!(s.contains(r#""type":"Progress""#), "{s}");
        assert_eq!(Event::from_json(&s).unwrap(), e);
        // A worker build from before the pool sends no `workers`: one engine.
        let old = r#"{"type":"Progress","done":1,"total":2,"per_sec":1.0,"embedded":1}"#;
        assert!(matches!(
            Event::from_json(old).unwrap(),
            Event::Progress { workers: 1, .. }
        ));
        assert!(Event::from_json("{\"type\":\"Nope\"}").is_err());
        let e = Event::Skipped {
            name: "papers/secret.pdf".into(),
            reason: "the PDF is encrypted with a password".into(),
            rule: "encrypted".into(),
        };
        assert_eq!(Event::from_json(&e.to_json()).unwrap(), e);
        for e in [
            Event::RemoteResults {
                id: 4,
                hits: vec![ShownHit {
                    id: "b#x".into(),
                    title: "<script>".into(),
                    url: "https://d/x".into(),
                    snippet: "a café".into(),
                    highlights: vec![(2, 7)],
                    score: 0.5,
                }],
                warnings: vec!["model file differs".into()],
                embed_ms: 1.5,
                request_ms: 12.0,
            },
            Event::RemoteFailed {
                id: 4,
                message: "The search server refused the query: k".into(),
            },
        ] {
            assert_eq!(Event::from_json(&e.to_json()).unwrap(), e);
        }
        // Bytes never travel in the JSON: only the buffer's number does.
        let d = DocumentInput {
            buffer: Some(2),
            bytes: Some(vec![1, 2, 3]),
            ..DocumentInput::text("a.pdf", "", crate::worker::chunk::Format::Pdf)
        };
        let json = serde_json::to_string(&d).unwrap();
        assert!(
            !json.contains("bytes") && json.contains(r#""buffer":2"#),
            "{json}"
        );
        let back: DocumentInput = serde_json::from_str(&json).unwrap();
        assert_eq!((back.buffer, back.bytes), (Some(2), None));
    }

    #[test]
    fn doc_id_is_the_part_before_the_hash() {
        assert_eq!(
            doc_id_of("rust-book/ch04-01#the-stack/0"),
            "rust-book/ch04-01"
        );
        assert_eq!(doc_id_of("plain"), "plain");
    }
}

/// `true`, for serde defaults.
fn yes() -> bool {
    true
}
