//! `lightembed-wasm`: the engine ([`lightembed`]) and the search index ([`lightembed_index`]) for
//! JavaScript — the npm package `lightembed`, built by `js/build.sh` with wasm-bindgen for Node
//! and for bundlers, with TypeScript types generated from these doc comments.
//!
//! Glue only: loading, embedding, tokenising, the §8 compatibility check, ranking and excerpts
//! are the crates' own code, so results equal `lightembed search --json` on the same index. What
//! this file adds is the JS shape of things:
//! - errors are thrown as JS `Error`s carrying the crates' messages (a model load error also
//!   carries `rule`, the stable name of the load rule, as `LoadError::rule` gives it);
//! - search hits are plain objects, made by one function (`js_hit`) from the index crate's one hit
//!   shape (`lightembed_index::Found`) for both classes, their `highlights` converted from the
//!   Rust byte ranges to UTF-16 code-unit offsets (JS string indices) into `snippet`;
//! - the query of a search is embedded by calling `options.model.embed(query, index.dims)` back
//!   through JS, so a `Model` is borrowed, never moved out of its JS object.
//!
//! SIMD128 is required on wasm32: the engine's `compile_error!` guard stops a build whose
//! `RUSTFLAGS` replaced `.cargo/config.toml`'s flags.

#[cfg(feature = "model")]
use std::cell::{Cell, RefCell};
#[cfg(feature = "model")]
use std::collections::HashMap;
#[cfg(feature = "model")]
use std::rc::{Rc, Weak};

use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use lightembed_index::fragments::FragmentedIndex;
use lightembed_index::snippet::{excerpt, excerpt_with};
#[cfg(feature = "search-index")]
use lightembed_index::Index;
use lightembed_index::ModelIdentity;
use lightembed_index::{Found, Mode, SearchOptions as RankOptions, Searcher};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Characters of a hit's excerpt when [`SearchIndex::search`] is not told otherwise.
pub const DEFAULT_EXCERPT_CHARS: usize = 240;

/// Results of [`SearchIndex::search`] when `k` is not given (as `lightembed search`).
pub const DEFAULT_K: usize = 10;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** How `SearchIndex.search` ranks: BM25 and vectors fused (the default), vectors only, keywords only. */
export type SearchMode = "hybrid" | "vector" | "keyword";

/** Options of `SearchIndex.search`. Unknown keys are refused. */
export interface SearchOptions {
  /** Number of results (at most one per section): an integer from 1 to 100000 (as `lightembed search -k`), default 10. */
  k?: number;
  /** Default `"hybrid"`. `"hybrid"` and `"vector"` need `vector` or `model`; `"keyword"` neither. */
  mode?: SearchMode;
  /** The query's embedding, `index.dims` floats (any scale; normalised inside). Wins over `model`. */
  vector?: Float32Array | number[];
  /** Embeds the query as `model.embed(query, index.dims)`. Call `index.checkCompatible(model)` once first. */
  model?: Model;
  /** Characters of each excerpt (plus `…` marks where cut): an integer ≥ 0, default 240; 0 = the whole stored snippet. */
  excerptChars?: number;
}

/** One search result. */
export interface SearchHit {
  /** The passage id given at indexing (`page#anchor`-style for pages, the record id for JSONL). */
  id: string;
  title: string;
  url: string;
  /** Fused score (hybrid: `[0, 1]`, plus up to 0.4× that from other sections of the same page), cosine (vector) or BM25 score (keyword); higher is better. */
  score: number;
  /** The part of the passage with the query's words, `…` where cut. Plain text, never HTML. */
  snippet: string;
  /** `[start, end)` of each marked query word: UTF-16 offsets into `snippet`, i.e. `snippet.slice(start, end)`. Sorted, disjoint. */
  highlights: [number, number][];
}

/** One result of `SiteIndex.search`: the passage's text comes later, from its chunk (`SiteIndex.excerpt`). */
export interface SiteHit {
  /** Passage number, `0 .. index.length - 1`. */
  passage: number;
  /** The text chunk holding the passage's text: fetch it, `addChunk`, then `excerpt(passage, query)`. */
  chunk: number;
  /** The passage's page number (from 1 in the order the site build met the pages; 0: no URL), known
   * before its chunk is fetched: hits with the same number are on one page. */
  page: number;
  /** The section's display title: `Heading — Page title` (or the page title alone). */
  title: string;
  /** The page's title: group results by page with it (never split `title` to get it). */
  pageTitle: string;
  /** The section's heading (empty before the page's first heading). */
  heading: string;
  url: string;
  /** Fused score (hybrid: `[0, 1]` plus page evidence), estimated cosine (vector) or BM25 score (keyword). */
  score: number;
}

/** An excerpt of a passage: plain text, never HTML. */
export interface Excerpt {
  snippet: string;
  /** `[start, end)` UTF-16 offsets into `snippet` of each marked query word. */
  highlights: [number, number][];
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `SearchOptions` (TypeScript interface above).
    #[wasm_bindgen(typescript_type = "SearchOptions")]
    pub type SearchOptions;
    /// `SearchHit[]` (TypeScript interface above).
    #[wasm_bindgen(typescript_type = "SearchHit[]")]
    pub type SearchHits;
    /// `SiteHit[]` (TypeScript interface above).
    #[wasm_bindgen(typescript_type = "SiteHit[]")]
    pub type SiteHits;
    /// `Excerpt` (TypeScript interface above).
    #[wasm_bindgen(typescript_type = "Excerpt")]
    pub type JsExcerpt;
}

#[cfg(feature = "build")]
mod site_build;

/// Loads a bundle's Unicode tables (`unicode.<hash>.bin`, or `unicode-all.<hash>.bin` when a
/// query needs a character the first lacks; `lightembed::unicode`) for the tokenizers of this
/// thread. The widget's wasm carries no Unicode decomposition data of its own; the other builds
/// check the file and keep theirs.
///
/// Throws the file's first problem (`Unicode tables file is malformed: …`); nothing is loaded.
#[wasm_bindgen(js_name = loadUnicode)]
pub fn load_unicode(bytes: &[u8]) -> Result<(), JsValue> {
    lightembed::unicode::load(bytes).map_err(js_error)
}

/// True when the loaded Unicode tables cover every character of `text` (always for ASCII text
/// and in builds that carry their own data): otherwise load `unicode-all` before searching it.
#[wasm_bindgen(js_name = unicodeCovers)]
pub fn unicode_covers(text: &str) -> bool {
    lightembed::unicode::covers(text)
}

/// A JS `Error` with `msg` as its message.
fn js_error(msg: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&msg.to_string()).into()
}

#[cfg(feature = "model")]
thread_local! {
    /// Every live `Model` by its key ([`JsModel::registry_key`]), so that a method given a `Model` as a
    /// plain JS value (`checkCompatible`) finds it by a number it asks the object for, never by
    /// a pointer: any value, a freed `Model` included, is safe to pass.
    static MODELS: RefCell<HashMap<u64, Weak<lightembed::Model>>> = RefCell::new(HashMap::new());
    static NEXT_MODEL_KEY: Cell<u64> = const { Cell::new(1) };
}

/// A sentence-embedding model (`.bin` v1), verified on load.
#[cfg(feature = "model")]
#[wasm_bindgen(js_name = Model)]
pub struct JsModel {
    inner: Rc<lightembed::Model>,
    key: u64,
}

#[cfg(feature = "model")]
impl Drop for JsModel {
    fn drop(&mut self) {
        MODELS.with(|m| m.borrow_mut().remove(&self.key));
    }
}

#[cfg(feature = "model")]
#[wasm_bindgen(js_class = Model)]
impl JsModel {
    /// Loads a `.bin` v1 model from its bytes, checking every load rule and the trailing
    /// SHA-256 (the bytes are copied; the array can be dropped afterwards). In Node, a bundle's
    /// gzip-compressed `model.<hash>.bin` is taken as it is; the browser builds ask for it
    /// decompressed (`DecompressionStream('gzip')`).
    ///
    /// @throws {Error} the load error's message, e.g. `"SHA-256 mismatch: …"`; its `rule`
    /// property names the load rule (e.g. `"hash_mismatch"`; the names of the files in
    /// `tests/fixtures/malformed/`). `bytes` not a `Uint8Array`: `"Model.fromBytes: bytes must
    /// be a Uint8Array, not string"`.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<JsModel, JsValue> {
        let bytes = arg("Model.fromBytes", "bytes").file_bytes(&bytes)?;
        let inner = lightembed::Model::from_bytes(&bytes).map_err(|e| {
            let err = js_sys::Error::new(&e.to_string());
            // Setting a property on a fresh Error cannot fail.
            let _ = Reflect::set(&err, &"rule".into(), &e.rule().into());
            JsValue::from(err)
        })?;
        let inner = Rc::new(inner);
        let key = NEXT_MODEL_KEY.with(|k| k.replace(k.get() + 1));
        MODELS.with(|m| m.borrow_mut().insert(key, Rc::downgrade(&inner)));
        Ok(JsModel { inner, key })
    }

    /// The number this `Model` is registered under (see `MODELS`); not part of the API.
    #[wasm_bindgen(getter, js_name = __lightembedModelKey, skip_typescript)]
    pub fn registry_key(&self) -> f64 {
        self.key as f64
    }

    /// The header's `model_id`, e.g. `"lightembed-en-0l"`.
    #[wasm_bindgen(getter, js_name = modelId)]
    pub fn model_id(&self) -> String {
        self.inner.model_id().to_string()
    }

    /// `major.minor.patch`, e.g. `"1.0.0"`. Indexes stay valid across minor and patch versions.
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> String {
        self.inner.header().model_version().to_string()
    }

    /// Length of the full embedding (the default `dims` of `embed`).
    #[wasm_bindgen(getter, js_name = outputDim)]
    pub fn output_dim(&self) -> usize {
        self.inner.output_dim()
    }

    /// The `dims` `embed` accepts (Matryoshka prefixes, then `outputDim`), ascending.
    #[wasm_bindgen(getter, js_name = validDims, unchecked_return_type = "number[]")]
    pub fn valid_dims(&self) -> Array {
        self.inner
            .valid_dims()
            .iter()
            .map(|&d| JsValue::from(d as u32))
            .collect()
    }

    /// Tokens the model sees at most, `[CLS]` and `[SEP]` included; longer texts are cut.
    #[wasm_bindgen(getter, js_name = maxSeqLen)]
    pub fn max_seq_len(&self) -> u32 {
        u32::from(self.inner.header().max_seq_len)
    }

    /// The file's SHA-256, 64 lower-case hex digits.
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> String {
        self.inner.sha256_hex()
    }

    /// The L2-normalised embedding of `text`, `dims` floats (default `outputDim`).
    ///
    /// @throws {Error} when `text` is not a string or `dims` is not one of `validDims` (the
    /// message lists them).
    pub fn embed(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number | null")] dims: Option<JsValue>,
    ) -> Result<Vec<f32>, JsValue> {
        let text = arg("embed", "text").string(&text)?;
        let dims = arg("embed", "dims").dims(dims.as_ref(), &self.inner)?;
        self.inner.embed(&text, dims).map_err(js_error)
    }

    /// `embed` for many texts at once (faster: their tokens share each matrix product); element
    /// `i` equals `embed(texts[i], dims)`.
    ///
    /// @throws {Error} when `texts` is not an array of strings or `dims` is not one of
    /// `validDims`.
    #[wasm_bindgen(js_name = embedBatch)]
    pub fn embed_batch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] texts: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number | null")] dims: Option<JsValue>,
    ) -> Result<Vec<Float32Array>, JsValue> {
        let texts = arg("embedBatch", "texts").strings(&texts)?;
        let dims = arg("embedBatch", "dims").dims(dims.as_ref(), &self.inner)?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = self.inner.embed_batch(&texts, dims).map_err(js_error)?;
        Ok(vectors.iter().map(|v| Float32Array::from(&v[..])).collect())
    }

    /// Token ids of `text` as the model sees them: `[CLS]`, word pieces cut to `maxSeqLen − 2`,
    /// `[SEP]`.
    ///
    /// @throws {Error} when `text` is not a string.
    pub fn tokenize(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let text = arg("tokenize", "text").string(&text)?;
        Ok(self.inner.tokenize(&text))
    }
}

/// A search index (`index.bin`, as `lightembed index` writes it and the app stores it): passages
/// with their vectors (HNSW) and words (BM25).
#[cfg(feature = "search-index")]
#[wasm_bindgen(js_name = SearchIndex)]
pub struct JsSearchIndex {
    inner: Index,
}

#[cfg(feature = "search-index")]
#[wasm_bindgen(js_class = SearchIndex)]
impl JsSearchIndex {
    /// Loads an index from the bytes of `index.bin`, validating the whole layout (the bytes are
    /// copied).
    ///
    /// @throws {Error} e.g. for a truncated file, or an index of an older layout
    /// (`"Index was built with index format v1 but this lightembed reads index format v2. Re-run
    /// \`lightembed index\`."`).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<JsSearchIndex, JsValue> {
        let bytes = arg("SearchIndex.fromBytes", "bytes").bytes(&bytes)?;
        Index::from_bytes(&bytes)
            .map(|inner| JsSearchIndex { inner })
            .map_err(js_error)
    }

    /// True when some passage holds a word of `query` (the keyword side matches; a word only in a
    /// title or heading counts). When it is false, hybrid results are the closest by meaning
    /// alone: say so (the CLI, the app and the widget do).
    ///
    /// @throws {Error} when `query` is not a string.
    #[wasm_bindgen(js_name = keywordMatches)]
    pub fn keyword_matches(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
    ) -> Result<bool, JsValue> {
        let query = arg("keywordMatches", "query").string(&query)?;
        Searcher::keyword_matches(&self.inner, &query).map_err(js_error)
    }

    /// Checks that `model` is the model this index was built for (spec §8: same `model_id`,
    /// same major version, the index dims valid for it). Returns warnings that do not stop a
    /// search (another minor version, another file), as sentences.
    ///
    /// @throws {Error} with the spec's message, e.g. `"Index was built with lightembed-en-0l v3.0
    /// but the loaded model is v4.0. Re-run \`lightembed index\`."`
    #[cfg(feature = "model")]
    #[wasm_bindgen(js_name = checkCompatible)]
    pub fn check_compatible(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Model")] model: JsValue,
    ) -> Result<Vec<String>, JsValue> {
        compatibility(self.inner.manifest(), &model)
    }

    /// Number of passages (live documents).
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// Length of the stored vectors: the `dims` a query vector must have.
    #[wasm_bindgen(getter)]
    pub fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// `model_id` of the model the index was built with (to pick the model file to load).
    #[wasm_bindgen(getter, js_name = modelId)]
    pub fn model_id(&self) -> String {
        self.inner.manifest().model_id.clone()
    }

    /// `major.minor.patch` of the model the index was built with.
    #[wasm_bindgen(getter, js_name = modelVersion)]
    pub fn model_version(&self) -> String {
        self.inner.manifest().model_version.to_string()
    }

    /// SHA-256 (64 hex digits) of the model file the index was built with.
    #[wasm_bindgen(getter, js_name = modelSha256)]
    pub fn model_sha256(&self) -> String {
        self.inner
            .manifest()
            .model_sha256
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The `k` best passages for `query`, best first, at most one per section, each with an
    /// excerpt showing the query's words — as `lightembed search --json` ranks them. The query
    /// is embedded with `options.model` unless `options.vector` is given; `mode: "keyword"`
    /// needs neither. A query of only spaces gives no results.
    ///
    /// @throws {Error} for a bad argument or option (`"search: options.k must be an integer
    /// from 1 to 100000, not 0"`), or a model whose `dims` do not include the index dims.
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        options: Option<SearchOptions>,
    ) -> Result<SearchHits, JsValue> {
        // A k past the number of slots (deleted ones included) ranks exactly as that number does
        // (every slot is a candidate either way); the cap keeps the allocations sized by k small.
        let slots = self.inner.len() + self.inner.deleted_count();
        search(&self.inner, slots, query, options).map(JsCast::unchecked_into)
    }
}

/// A static site's index cut into fragments (`lightembed site`): the core loads first
/// (`fromCore`), then a query needs the term shards of its words (`missingShards` → fetch →
/// `addShard`; then, for a word no passage holds, a typo?, `missingTypoShards` → fetch →
/// `addTypoShard` and `missingShards` again for the correction's shard), for the hybrid or vector
/// ranking, in a two-level bundle, the centroid cells nearest its embedding (`cellsFor(vector)` →
/// fetch → `addCell`; always empty for a one-level bundle), then the vector partitions nearest it
/// (`partitionsFor(vector)` → fetch → `addPartition`, then `search` with `options.vector`), and its
/// results' URLs, titles and text
/// the chunks they are in (`hit.chunk` → fetch → `addChunk`; a hit's `url`, `title`, `pageTitle`
/// and `heading` are empty until then: search again, or `excerpt`). Keyword scores equal
/// `lightembed search` on the unsplit index; the vector side
/// uses one sign bit per dim (see `lightembed_index::fragments`).
#[wasm_bindgen(js_name = SiteIndex)]
pub struct JsSiteIndex {
    inner: FragmentedIndex,
}

#[wasm_bindgen(js_class = SiteIndex)]
impl JsSiteIndex {
    /// Loads the core fragment (checksum and every field validated; the bytes are copied). In
    /// Node the bundle's files are taken as stored, gzip-compressed or not (here and in
    /// `addShard`/`addChunk`); the browser builds ask for them decompressed
    /// (`DecompressionStream('gzip')`, as the widget does).
    ///
    /// @throws {Error} for a corrupted or truncated core, damaged gzip, or one of another layout version.
    #[wasm_bindgen(js_name = fromCore)]
    pub fn from_core(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<JsSiteIndex, JsValue> {
        let bytes = arg("SiteIndex.fromCore", "bytes").file_bytes(&bytes)?;
        FragmentedIndex::from_core(&bytes)
            .map(|inner| JsSiteIndex { inner })
            .map_err(js_error)
    }

    /// As `SearchIndex.checkCompatible` (spec §8).
    ///
    /// @throws {Error} with the spec's message when the model is not the index's.
    #[cfg(feature = "model")]
    #[wasm_bindgen(js_name = checkCompatible)]
    pub fn check_compatible(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Model")] model: JsValue,
    ) -> Result<Vec<String>, JsValue> {
        compatibility(self.inner.manifest(), &model)
    }

    /// Number of passages.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// The `dims` a query vector must have.
    #[wasm_bindgen(getter)]
    pub fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// Number of term shards (files `f/<build>/t<n>.bin` in the bundle).
    #[wasm_bindgen(getter, js_name = shardCount)]
    pub fn shard_count(&self) -> u32 {
        self.inner.shard_count()
    }

    /// Number of text chunks.
    #[wasm_bindgen(getter, js_name = chunkCount)]
    pub fn chunk_count(&self) -> u32 {
        self.inner.chunk_count()
    }

    /// Number of vector partitions (files `f/<build>/v<n>.bin`).
    #[wasm_bindgen(getter, js_name = partitionCount)]
    pub fn partition_count(&self) -> u32 {
        self.inner.partition_count()
    }

    /// Number of centroid cells (files `f/<build>/g<n>.bin`; 0 for a one-level bundle, whose core
    /// holds every partition's centroid).
    #[wasm_bindgen(getter, js_name = cellCount)]
    pub fn cell_count(&self) -> u32 {
        self.inner.cell_count()
    }

    /// The centroid cells a hybrid or vector search for the query embedding `vector` (`dims`
    /// numbers) reads that are not added yet, ascending: add them before `partitionsFor`. Always
    /// empty for a one-level bundle.
    ///
    /// @throws {Error} when `vector` is not `dims` finite numbers.
    #[wasm_bindgen(js_name = cellsFor)]
    pub fn cells_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Float32Array | number[]")] vector: JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let dims = self.inner.dims();
        let v = arg("cellsFor", "vector").floats(
            &vector,
            dims,
            "be",
            &format!("have index.dims = {dims} numbers"),
        )?;
        self.inner.cells_for(&v, None).map_err(js_error)
    }

    /// Adds a centroid cell; returns its number.
    ///
    /// @throws {Error} for a corrupted cell (or damaged gzip) or one of another build.
    #[wasm_bindgen(js_name = addCell)]
    pub fn add_cell(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<u32, JsValue> {
        let bytes = arg("addCell", "bytes").file_bytes(&bytes)?;
        self.inner.add_cell(&bytes).map_err(js_error)
    }

    /// The vector partitions a hybrid or vector search for the query embedding `vector`
    /// (`dims` numbers) probes that are not added yet, ascending (empty: it can be searched).
    /// In a two-level bundle its centroid cells (`cellsFor`) must be added first.
    ///
    /// @throws {Error} when `vector` is not `dims` finite numbers, or a centroid cell it needs
    /// is not added.
    #[wasm_bindgen(js_name = partitionsFor)]
    pub fn partitions_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Float32Array | number[]")] vector: JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let dims = self.inner.dims();
        let v = arg("partitionsFor", "vector").floats(
            &vector,
            dims,
            "be",
            &format!("have index.dims = {dims} numbers"),
        )?;
        self.inner.partitions_for(&v, None).map_err(js_error)
    }

    /// Adds a vector partition; returns its number.
    ///
    /// @throws {Error} for a corrupted partition (or damaged gzip), one of another build, or one
    /// whose centroid cell is not added yet.
    #[wasm_bindgen(js_name = addPartition)]
    pub fn add_partition(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<u32, JsValue> {
        let bytes = arg("addPartition", "bytes").file_bytes(&bytes)?;
        self.inner.add_partition(&bytes).map_err(js_error)
    }

    /// The term shards `query` needs that are not added yet (empty: it can be searched).
    ///
    /// @throws {Error} when `query` is not a string.
    #[wasm_bindgen(js_name = missingShards)]
    pub fn missing_shards(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let query = arg("missingShards", "query").string(&query)?;
        Ok(self.inner.missing_shards(&query))
    }

    /// Adds a term shard; returns its number.
    ///
    /// @throws {Error} for a corrupted shard (or damaged gzip) or one of another build.
    #[wasm_bindgen(js_name = addShard)]
    pub fn add_shard(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<u32, JsValue> {
        let bytes = arg("addShard", "bytes").file_bytes(&bytes)?;
        self.inner.add_shard(&bytes).map_err(js_error)
    }

    /// Number of typo shards (files `f/<build>/n<n>.bin` in the bundle).
    #[wasm_bindgen(getter, js_name = typoShardCount)]
    pub fn typo_shard_count(&self) -> u32 {
        self.inner.typo_shard_count()
    }

    /// The typo shards `query` needs that are not added yet: for its words of 4 or more
    /// characters that no passage holds (a typo?). Ask once `missingShards` is empty; after
    /// adding them (`addTypoShard`), `missingShards` lists the term shards of the corrections.
    /// Empty when every word of the query occurs (nothing more to fetch).
    ///
    /// @throws {Error} when `query` is not a string.
    #[wasm_bindgen(js_name = missingTypoShards)]
    pub fn missing_typo_shards(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let query = arg("missingTypoShards", "query").string(&query)?;
        Ok(self.inner.missing_typo_shards(&query))
    }

    /// Adds a typo shard; returns its number.
    ///
    /// @throws {Error} for a corrupted typo shard (or damaged gzip) or one of another build.
    #[wasm_bindgen(js_name = addTypoShard)]
    pub fn add_typo_shard(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<u32, JsValue> {
        let bytes = arg("addTypoShard", "bytes").file_bytes(&bytes)?;
        self.inner.add_typo_shard(&bytes).map_err(js_error)
    }

    /// Adds a text chunk; returns its number.
    ///
    /// @throws {Error} for a corrupted chunk (or damaged gzip) or one of another build.
    #[wasm_bindgen(js_name = addChunk)]
    pub fn add_chunk(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<u32, JsValue> {
        let bytes = arg("addChunk", "bytes").file_bytes(&bytes)?;
        self.inner.add_chunk(&bytes).map_err(js_error)
    }

    /// True when some passage holds a word of `query` (the keyword side matches; a word only in a
    /// title or heading counts). When it is false, hybrid results are the closest by meaning
    /// alone: say so (the CLI, the app and the widget do).
    ///
    /// @throws {Error} when `query` is not a string, or a term shard of the query is not added (`missingShards`).
    #[wasm_bindgen(js_name = keywordMatches)]
    pub fn keyword_matches(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
    ) -> Result<bool, JsValue> {
        let query = arg("keywordMatches", "query").string(&query)?;
        Searcher::keyword_matches(&self.inner, &query).map_err(js_error)
    }

    /// Whether the text of `passage` (`0 .. length - 1`) is here (its chunk was added).
    ///
    /// @throws {Error} when `passage` is not a passage number.
    #[wasm_bindgen(js_name = hasText)]
    pub fn has_text(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] passage: JsValue,
    ) -> Result<bool, JsValue> {
        let passage = arg("hasText", "passage").passage(&passage, self.inner.len())?;
        Ok(self.inner.text(passage).is_some())
    }

    /// The `k` best passages for `query`, best first, at most one per section, without text
    /// (options as `SearchIndex.search`; `excerptChars` is not used here). A hit's URL and
    /// titles are filled once its chunk is added (empty before).
    ///
    /// @throws {Error} for a bad argument or option, a missing term shard (`missingShards`) or
    /// vector partition (`partitionsFor`), or a model whose dims do not include the index dims.
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        options: Option<SearchOptions>,
    ) -> Result<SiteHits, JsValue> {
        search(&self.inner, self.inner.len(), query, options).map(JsCast::unchecked_into)
    }

    /// The excerpt of `passage` (at most `chars` characters, default 240; 0 = all) holding the
    /// most words of `query`, with those words marked (and the words a typo of the query was
    /// corrected to, once its typo shards are added).
    ///
    /// @throws {Error} for a bad argument, or when the passage's chunk has not been added.
    pub fn excerpt(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] passage: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number | null")] chars: Option<JsValue>,
    ) -> Result<JsExcerpt, JsValue> {
        let passage = arg("excerpt", "passage").passage(&passage, self.inner.len())?;
        let query = arg("excerpt", "query").string(&query)?;
        let chars = arg("excerpt", "chars").count(chars.as_ref(), DEFAULT_EXCERPT_CHARS)?;
        let Some(text) = self.inner.text(passage) else {
            // `passage` is in range, so it has a chunk.
            let chunk = self.inner.chunk_of(passage).unwrap_or(0);
            return Err(js_error(format!(
                "the text of passage {passage} is not loaded: add chunk {chunk} first"
            )));
        };
        let fixes = Searcher::corrections(&self.inner, &query);
        let e = excerpt_with(text, &query, &fixes, self.inner.keyword_stemming(), chars);
        js_object(excerpt_fields(e)).map(JsCast::unchecked_into)
    }
}

/// A static model's query side (`lightembed site` bundles, clarification F.10): the head
/// (`fromHead`), then the row shards a query needs (`missingShards` → fetch → `addShard`), then
/// `embed` — the same bits as `Model.embed` on the site model, without downloading the model.
#[wasm_bindgen(js_name = QueryEncoder)]
pub struct JsQueryEncoder {
    inner: lightembed::QueryEncoder,
}

#[wasm_bindgen(js_class = QueryEncoder)]
impl JsQueryEncoder {
    /// Reads a head (`query.<hash>.bin`; checksum and every field validated). In Node a
    /// gzip-compressed head is taken as stored.
    ///
    /// @throws {Error} for a damaged, truncated or foreign file, or one of another layout version.
    #[wasm_bindgen(js_name = fromHead)]
    pub fn from_head(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<JsQueryEncoder, JsValue> {
        let bytes = arg("QueryEncoder.fromHead", "bytes").file_bytes(&bytes)?;
        lightembed::QueryEncoder::from_head(&bytes)
            .map(|inner| JsQueryEncoder { inner })
            .map_err(js_error)
    }

    /// The model's `model_id`.
    #[wasm_bindgen(getter, js_name = modelId)]
    pub fn model_id(&self) -> String {
        self.inner.model_id().to_string()
    }

    /// The model's SHA-256 (hex; its trailer, as the bundle's manifest lists it).
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> String {
        lightembed::format::to_hex(&self.inner.sha256())
    }

    /// The dims of the rows (the index dims).
    #[wasm_bindgen(getter)]
    pub fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// The head id (32 hex digits): the row shards live in `q/<first 16 digits>/`.
    #[wasm_bindgen(getter, js_name = headId)]
    pub fn head_id(&self) -> String {
        self.inner.head_id()
    }

    /// Number of row shards (files `r<n>.bin`).
    #[wasm_bindgen(getter, js_name = shardCount)]
    pub fn shard_count(&self) -> usize {
        self.inner.shard_count()
    }

    /// The row shards `query` needs that are not added yet, ascending (empty: `embed` can answer).
    ///
    /// @throws {Error} when `query` is not a string.
    #[wasm_bindgen(js_name = missingShards)]
    pub fn missing_shards(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let query = arg("QueryEncoder.missingShards", "query").string(&query)?;
        Ok(self.inner.missing_shards(&query))
    }

    /// Adds a row shard; returns its number.
    ///
    /// @throws {Error} for a damaged shard (or damaged gzip) or one of another head.
    #[wasm_bindgen(js_name = addShard)]
    pub fn add_shard(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<u32, JsValue> {
        let bytes = arg("QueryEncoder.addShard", "bytes").file_bytes(&bytes)?;
        self.inner.add_shard(&bytes).map_err(js_error)
    }

    /// The query's embedding at `dims` (default: the head's dims), L2-normalised.
    ///
    /// @throws {Error} when a row shard of the query is missing (`missingShards`), or for bad dims.
    pub fn embed(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number | null")] dims: Option<JsValue>,
    ) -> Result<Float32Array, JsValue> {
        let query = arg("QueryEncoder.embed", "query").string(&query)?;
        let dims = arg("QueryEncoder.embed", "dims").count(dims.as_ref(), self.inner.dims())?;
        let v = self.inner.embed(&query, dims).map_err(js_error)?;
        Ok(Float32Array::from(v.as_slice()))
    }
}

#[wasm_bindgen(js_class = SiteIndex)]
impl JsSiteIndex {
    /// As `checkCompatible` for the model a `QueryEncoder`'s head was cut from (spec §8: the
    /// same `model_id`, major version and dims).
    ///
    /// @throws {Error} with the spec's message when the head is not the index's model's.
    #[wasm_bindgen(js_name = checkQueryEncoder)]
    pub fn check_query_encoder(&self, encoder: &JsQueryEncoder) -> Result<Vec<String>, JsValue> {
        let warnings = self
            .inner
            .manifest()
            .check_compatible(&ModelIdentity::from(&encoder.inner))
            .map_err(js_error)?;
        Ok(warnings.iter().map(ToString::to_string).collect())
    }
}

/// `search` of both classes: `query` and `options` checked, the query embedded as the options say,
/// the best hits found by `index` (`k` capped at `slots`: past the passages it can return, k
/// changes nothing) and each made a JS object by [`js_hit`].
fn search(
    index: &dyn Searcher,
    slots: usize,
    query: JsValue,
    options: Option<SearchOptions>,
) -> Result<Array, JsValue> {
    let query = arg("search", "query").string(&query)?;
    let o = Options::parse(options.map(JsValue::from), index.dims())?;
    if query.trim().is_empty() {
        return Ok(Array::new());
    }
    let vector = o.vector_for(&query, index.dims())?;
    let rank = RankOptions {
        mode: o.mode,
        ..RankOptions::default()
    };
    let hits = index
        .find(vector.as_deref(), &query, o.k.min(slots), &rank)
        .map_err(js_error)?;
    let stem = index.keyword_stemming();
    hits.into_iter()
        .map(|f| js_hit(f, &query, stem, o.excerpt_chars))
        .collect()
}

/// The one conversion of a hit to JS: a `SiteHit` for a fragment's hit (its place in the bundle
/// and its title's parts; no text: the excerpt comes later, from its chunk), else a `SearchHit`
/// with an excerpt of `excerpt_chars` showing the words of `query`. The keys are set in the
/// order the TypeScript interfaces list them.
fn js_hit(f: Found, query: &str, stem: bool, excerpt_chars: usize) -> Result<JsValue, JsValue> {
    let score = JsValue::from(f64::from(f.score));
    let fields: Vec<(&str, JsValue)> = match f.fragment {
        Some(at) => vec![
            ("passage", at.passage.into()),
            ("chunk", at.chunk.into()),
            ("page", at.page.into()),
            ("title", f.title.into()),
            ("pageTitle", at.page_title.into()),
            ("heading", at.heading.into()),
            ("url", f.url.into()),
            ("score", score),
        ],
        None => {
            let e = excerpt(&f.text, query, stem, excerpt_chars);
            let mut fields = vec![
                ("id", f.id.into()),
                ("title", f.title.into()),
                ("url", f.url.into()),
                ("score", score),
            ];
            fields.extend(excerpt_fields(e));
            fields
        }
    };
    js_object(fields)
}

/// An excerpt as the fields `snippet` and `highlights` (an array of `[start, end]` UTF-16
/// offsets into `snippet`).
fn excerpt_fields(e: lightembed_index::snippet::Excerpt) -> [(&'static str, JsValue); 2] {
    let highlights: Array = utf16_ranges(&e.text, &e.highlights)
        .into_iter()
        .map(|(a, b)| JsValue::from(Array::of2(&a.into(), &b.into())))
        .collect();
    [
        ("snippet", e.text.into()),
        ("highlights", highlights.into()),
    ]
}

/// A plain JS object with `fields`, set in order.
fn js_object<'a>(fields: impl IntoIterator<Item = (&'a str, JsValue)>) -> Result<JsValue, JsValue> {
    let out = Object::new();
    for (key, value) in fields {
        Reflect::set(&out, &key.into(), &value)?;
    }
    Ok(out.into())
}

/// `SearchOptions` read from JS, checked, defaults applied.
struct Options {
    k: usize,
    mode: Mode,
    vector: Option<Vec<f32>>,
    model: Option<JsValue>,
    excerpt_chars: usize,
}

const OPTION_KEYS: [&str; 5] = ["k", "mode", "vector", "model", "excerptChars"];

impl Options {
    /// The query's embedding the options call for: `vector`, else `model.embed(query, dims)`;
    /// `None` in keyword mode.
    fn vector_for(&self, query: &str, dims: usize) -> Result<Option<Vec<f32>>, JsValue> {
        match (self.mode, &self.vector, &self.model) {
            (Mode::Keyword, _, _) => Ok(None),
            (_, Some(v), _) => Ok(Some(v.clone())),
            (_, None, Some(model)) => Ok(Some(embed_with(model, query, dims)?)),
            (mode, None, None) => Err(js_error(format!(
                "{} search needs the query's embedding: pass options.model or options.vector",
                mode.as_str()
            ))),
        }
    }

    /// `options` of a search of an index of `dims`, every key checked (`undefined` and `null`
    /// mean the default, as for the whole object).
    fn parse(options: Option<JsValue>, dims: usize) -> Result<Options, JsValue> {
        let mut o = Options {
            k: DEFAULT_K,
            mode: Mode::Hybrid,
            vector: None,
            model: None,
            excerpt_chars: DEFAULT_EXCERPT_CHARS,
        };
        let Some(options) = options.filter(|v| given(v).is_some()) else {
            return Ok(o);
        };
        if !options.is_object() || is_array(&options).unwrap_or(true) {
            return Err(arg("search", "options").refuse("an object", &type_name(&options)));
        }
        for key in object_keys(&options)?.iter() {
            let key = key.as_string().unwrap_or_default();
            if !OPTION_KEYS.contains(&key.as_str()) {
                return Err(js_error(format!(
                    "search: unknown option {}; expected one of {}",
                    quoted(&key),
                    OPTION_KEYS.join(", ")
                )));
            }
        }
        let get = |key: &str| -> Result<Option<JsValue>, JsValue> {
            let v = Reflect::get(&options, &key.into())?;
            Ok(given(&v).is_some().then_some(v))
        };
        if let Some(v) = get("k")? {
            let k = arg("search", "options.k").integer(&v, 1.0, f64::from(MAX_K))?;
            o.k = k as usize;
        }
        if let Some(v) = get("mode")? {
            o.mode = v.as_string().and_then(|s| s.parse().ok()).ok_or_else(|| {
                arg("search", "options.mode")
                    .refuse(r#""hybrid", "vector" or "keyword""#, &value_text(&v))
            })?;
        }
        if let Some(v) = get("vector")? {
            o.vector = Some(arg("search", "options.vector").floats(
                &v,
                dims,
                "be",
                &format!("have index.dims = {dims} numbers"),
            )?);
        }
        if let Some(v) = get("model")? {
            checked_model_like(&v)?;
            o.model = Some(v);
        }
        o.excerpt_chars = arg("search", "options.excerptChars")
            .count(get("excerptChars")?.as_ref(), DEFAULT_EXCERPT_CHARS)?;
        Ok(o)
    }
}

/// `options.model` of a search: a live `Model` or any object with an `embed` method.
fn checked_model_like(model: &JsValue) -> Result<Function, JsValue> {
    let a = arg("search", "options.model");
    #[cfg(feature = "model")]
    if let Some(Err(())) = registered_model(model) {
        return Err(a.refuse("a Model", "a freed Model"));
    }
    model
        .is_object()
        .then(|| Reflect::get(model, &"embed".into()).ok())
        .flatten()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| {
            a.refuse(
                "a Model (an object with embed(text, dims))",
                &type_name(model),
            )
        })
}

/// `model.embed(query, dims)` called through JS, so the `Model` (or any object with that method)
/// stays in its JS object. An error it throws comes back as it is.
fn embed_with(model: &JsValue, query: &str, dims: usize) -> Result<Vec<f32>, JsValue> {
    let embed = checked_model_like(model)?;
    let v = embed.call2(model, &query.into(), &JsValue::from(dims as u32))?;
    let what = format!("options.model.embed(query, {dims})");
    arg("search", &what).floats(&v, dims, "return", &format!("return {dims} numbers"))
}

/// The spec §8 check of `manifest` against the `Model` in `model`: its warnings as sentences, or
/// the spec's message as a JS error. Shared by `SearchIndex` and `SiteIndex`.
#[cfg(feature = "model")]
fn compatibility(
    manifest: &lightembed_index::Manifest,
    model: &JsValue,
) -> Result<Vec<String>, JsValue> {
    let model = arg("checkCompatible", "model").model(model)?;
    let warnings = manifest
        .check_compatible(&ModelIdentity::from(&*model))
        .map_err(js_error)?;
    Ok(warnings.iter().map(ToString::to_string).collect())
}

// ---------------------------------------------------------------------------------------------
// Arguments from JS. Every method takes its arguments as JS values and checks them here before
// any Rust code uses them, so that a wrong type or an out-of-range number is an `Error` naming
// the method and the argument as the TypeScript types do (`"embed: text must be a string, not
// number"`). Nothing here panics or lets a JS exception unwind through a method: a trap inside a
// method leaves its object borrowed for good (every later call fails with "recursive use of an
// object"), so the checks reach the caller's values only through imports marked `catch`
// (`Reflect`, `Array.isArray`, `Object.keys`, `String`) and wasm-bindgen's `instanceof` tests
// (which catch too), and size every copy by a length checked first.
// ---------------------------------------------------------------------------------------------

/// Results of a search at most: `lightembed search -k` accepts `1..=100000` too.
pub const MAX_K: u32 = 100_000;

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

#[wasm_bindgen]
extern "C" {
    /// `Array.isArray(v)` (throws for a revoked Proxy).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array(v: &JsValue) -> Result<bool, JsValue>;
    /// `Object.keys(v)` (a Proxy's trap may throw).
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(v: &JsValue) -> Result<Array, JsValue>;
    /// `String(v)`: numbers as JS writes them (`1e+21`, `NaN`, `Infinity`).
    #[wasm_bindgen(catch, js_name = String)]
    fn js_string(v: &JsValue) -> Result<String, JsValue>;
}

/// `v` unless it is `undefined` or `null` (an option or argument left out).
fn given(v: &JsValue) -> Option<&JsValue> {
    (!v.is_undefined() && !v.is_null()).then_some(v)
}

/// Argument `name` of `method`, to check a JS value against its TypeScript type.
#[derive(Clone, Copy)]
struct Arg<'a> {
    method: &'a str,
    name: &'a str,
}

fn arg<'a>(method: &'a str, name: &'a str) -> Arg<'a> {
    Arg { method, name }
}

impl Arg<'_> {
    /// `"{method}: {name} must {must}, not {got}"`.
    fn fail(self, must: &str, got: &str) -> JsValue {
        js_error(format!(
            "{}: {} must {must}, not {got}",
            self.method, self.name
        ))
    }

    /// `"{method}: {name} must be {expected}, not {got}"`.
    fn refuse(self, expected: &str, got: &str) -> JsValue {
        self.fail(&format!("be {expected}"), got)
    }

    fn string(self, v: &JsValue) -> Result<String, JsValue> {
        v.as_string()
            .ok_or_else(|| self.refuse("a string", &type_name(v)))
    }

    #[cfg(feature = "model")]
    fn strings(self, v: &JsValue) -> Result<Vec<String>, JsValue> {
        let n = array_len(v).ok_or_else(|| self.refuse("an array of strings", &type_name(v)))?;
        (0..n)
            .map(|i| {
                let x = Reflect::get_u32(v, i)?;
                x.as_string().ok_or_else(|| {
                    arg(self.method, &format!("{}[{i}]", self.name))
                        .refuse("a string", &type_name(&x))
                })
            })
            .collect()
    }

    /// The bytes of a `Uint8Array` (a Node `Buffer` is one), copied.
    fn bytes(self, v: &JsValue) -> Result<Vec<u8>, JsValue> {
        v.dyn_ref::<Uint8Array>()
            .map(Uint8Array::to_vec)
            .ok_or_else(|| self.refuse("a Uint8Array", &type_name(v)))
    }

    /// [`Arg::bytes`], gunzipped when they are gzip-compressed (a `lightembed site` bundle
    /// stores its binary files so, `lightembed_index::gzip`); a damaged stream is refused as
    /// `METHOD: damaged gzip: …`. Only with feature `gunzip` (the Node build): the browser builds
    /// leave it to the browser's `DecompressionStream` (the widget's worker does that), which
    /// keeps ~55 KB of inflate code out of the wasm every site visitor downloads, and refuse
    /// gzip bytes saying so.
    fn file_bytes(self, v: &JsValue) -> Result<Vec<u8>, JsValue> {
        let method = self.method;
        let bytes = self.bytes(v)?;
        if !lightembed_index::gzip::is_gzip(&bytes) {
            return Ok(bytes);
        }
        #[cfg(feature = "gunzip")]
        {
            lightembed_index::gzip::decompress_if_gzip(&bytes)
                .map(std::borrow::Cow::into_owned)
                .map_err(|e| js_error(format!("{method}: {e}")))
        }
        #[cfg(not(feature = "gunzip"))]
        {
            Err(js_error(format!(
                "{method}: these bytes are gzip-compressed (a `lightembed site` bundle file): \
                 decompress them first (in a browser: DecompressionStream('gzip')); the package's \
                 Node build reads them as they are"
            )))
        }
    }

    /// An integer in `min..=max` (`max` at most `MAX_SAFE_INTEGER`).
    fn integer(self, v: &JsValue, min: f64, max: f64) -> Result<f64, JsValue> {
        match v.as_f64() {
            Some(x) if x.fract() == 0.0 && x >= min && x <= max => Ok(x),
            _ if max >= MAX_SAFE_INTEGER => {
                Err(self.refuse(&format!("an integer ≥ {min}"), &value_text(v)))
            }
            _ => Err(self.refuse(&format!("an integer from {min} to {max}"), &value_text(v))),
        }
    }

    /// A count ≥ 0 (`undefined` or `null`: `default`); past `usize::MAX` it saturates, which
    /// means "all" wherever a count limits something.
    fn count(self, v: Option<&JsValue>, default: usize) -> Result<usize, JsValue> {
        match v.and_then(given) {
            None => Ok(default),
            Some(v) => Ok(self.integer(v, 0.0, MAX_SAFE_INTEGER)? as usize),
        }
    }

    /// A passage number of an index of `len` passages.
    fn passage(self, v: &JsValue, len: usize) -> Result<u32, JsValue> {
        if len == 0 {
            return Err(js_error(format!(
                "{}: {} {}: the index has no passages",
                self.method,
                self.name,
                value_text(v)
            )));
        }
        Ok(self.integer(v, 0.0, (len - 1) as f64)? as u32)
    }

    /// `dims` of `model.embed` (`undefined` or `null`: `outputDim`): one of its valid dims.
    #[cfg(feature = "model")]
    fn dims(self, v: Option<&JsValue>, model: &lightembed::Model) -> Result<usize, JsValue> {
        let Some(v) = v.and_then(given) else {
            return Ok(model.output_dim());
        };
        let valid = model.valid_dims();
        match v.as_f64() {
            Some(x) if valid.iter().any(|&d| d as f64 == x) => Ok(x as usize),
            _ => {
                let list: Vec<String> = valid.iter().map(ToString::to_string).collect();
                Err(self.refuse(&format!("one of {}", list.join(", ")), &value_text(v)))
            }
        }
    }

    /// `len` numbers from a `Float32Array` or an array of numbers (`verb`: "be" for an argument,
    /// "return" for what a callback gave; `len_must`: the message's demand on the length). The
    /// length is checked before anything is copied.
    fn floats(
        self,
        v: &JsValue,
        len: usize,
        verb: &str,
        len_must: &str,
    ) -> Result<Vec<f32>, JsValue> {
        let type_must = format!("{verb} a Float32Array or an array of numbers");
        if let Some(a) = v.dyn_ref::<Float32Array>() {
            let n = a.length() as usize;
            if n != len {
                return Err(self.fail(len_must, &n.to_string()));
            }
            return Ok(a.to_vec());
        }
        let n = array_len(v).ok_or_else(|| self.fail(&type_must, &type_name(v)))? as usize;
        if n != len {
            return Err(self.fail(len_must, &n.to_string()));
        }
        (0..n as u32)
            .map(|i| {
                let x = Reflect::get_u32(v, i)?;
                x.as_f64().map(|x| x as f32).ok_or_else(|| {
                    arg(self.method, &format!("{}[{i}]", self.name))
                        .refuse("a number", &type_name(&x))
                })
            })
            .collect()
    }

    /// The `Model` in `v`, found by its key ([`registered_model`]).
    #[cfg(feature = "model")]
    fn model(self, v: &JsValue) -> Result<Rc<lightembed::Model>, JsValue> {
        match registered_model(v) {
            Some(Ok(model)) => Ok(model),
            Some(Err(())) => Err(self.refuse("a Model", "a freed Model")),
            None => Err(self.refuse("a Model", &type_name(v))),
        }
    }
}

/// The `Model` whose JS object `v` is: `None` when `v` is no `Model`, `Some(Err(()))` for a freed
/// one (its key getter throws, or its key is no longer registered).
#[cfg(feature = "model")]
fn registered_model(v: &JsValue) -> Option<Result<Rc<lightembed::Model>, ()>> {
    if !v.is_object() {
        return None;
    }
    let key = match Reflect::get(v, &"__lightembedModelKey".into()) {
        Err(_) => return Some(Err(())),
        Ok(key) => key.as_f64()?,
    };
    let model = MODELS.with(|m| m.borrow().get(&(key as u64)).and_then(Weak::upgrade));
    Some(model.ok_or(()))
}

/// The length of a JS array, `None` for anything else.
fn array_len(v: &JsValue) -> Option<u32> {
    if !is_array(v).unwrap_or(false) {
        return None;
    }
    let n = Reflect::get(v, &"length".into()).ok()?.as_f64()?;
    Some(n as u32)
}

/// What a JS value is, for messages: `null`, `undefined`, `array`, the class of an object
/// (`ArrayBuffer`, `Float64Array`, `Model`), `object` for a plain one, else its `typeof`.
fn type_name(v: &JsValue) -> String {
    if v.is_null() {
        return "null".into();
    }
    if is_array(v).unwrap_or(false) {
        return "array".into();
    }
    let t = v.js_typeof().as_string().unwrap_or_default();
    if t != "object" {
        return t;
    }
    Reflect::get(v, &"constructor".into())
        .ok()
        .filter(|c| c.is_function())
        .and_then(|c| Reflect::get(&c, &"name".into()).ok())
        .and_then(|n| n.as_string())
        .filter(|n| !n.is_empty() && n != "Object")
        .unwrap_or(t)
}

/// A JS value for messages about its value: a number as JS writes it, a string quoted, anything
/// else by [`type_name`].
fn value_text(v: &JsValue) -> String {
    if let Some(s) = v.as_string() {
        quoted(&s)
    } else if v.as_f64().is_some() {
        js_string(v).unwrap_or_else(|_| type_name(v))
    } else {
        type_name(v)
    }
}

/// `s` in double quotes, as `JSON.stringify` writes it.
fn quoted(s: &str) -> String {
    js_sys::JSON::stringify(&JsValue::from_str(s))
        .ok()
        .and_then(|q| q.as_string())
        .unwrap_or_else(|| format!("{s:?}"))
}

/// Byte ranges of `text` (on `char` boundaries) as UTF-16 code-unit offsets, the indices of a JS
/// string. One pass when the ranges are sorted (as excerpts give them).
pub fn utf16_ranges(text: &str, ranges: &[(usize, usize)]) -> Vec<(u32, u32)> {
    let (mut byte, mut unit) = (0usize, 0usize);
    let mut to_unit = |b: usize| {
        if b < byte {
            (byte, unit) = (0, 0);
        }
        unit += text[byte..b].encode_utf16().count();
        byte = b;
        unit as u32
    };
    ranges
        .iter()
        .map(|&(a, b)| (to_unit(a), to_unit(b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_ranges_count_code_units() {
        // "é" is 2 bytes / 1 unit, "日" 3 bytes / 1 unit, "😀" 4 bytes / 2 units.
        let text = "café 日本 😀 mulch";
        let m = text.find("mulch").unwrap();
        let c = text.find("café").unwrap();
        let got = utf16_ranges(text, &[(c, c + "café".len()), (m, m + 5)]);
        let units: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(got, vec![(0, 4), (11, 16)]);
        assert_eq!(String::from_utf16(&units[11..16]).unwrap(), "mulch");
    }

    #[test]
    fn utf16_ranges_out_of_order_still_right() {
        let text = "ü a ü b";
        let got = utf16_ranges(text, &[(8, 9), (0, 2)]);
        assert_eq!(got, vec![(6, 7), (0, 1)]);
    }
}
