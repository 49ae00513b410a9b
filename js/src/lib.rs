//! `lightembed-wasm`: the engine ([`lightembed`]) and the search index ([`lightembed_index`]) for
//! JavaScript — the npm package `lightembed`, built by `js/build.sh` with wasm-bindgen for Node
//! and for bundlers, with TypeScript types generated from these doc comments.
//!
//! Glue only: loading, embedding, tokenising, the §8 compatibility check, ranking and excerpts
//! are the crates' own code, so results equal `lightembed search --json` on the same index. What
//! this file adds is the JS shape of things:
//! - errors are thrown as JS `Error`s carrying the crates' messages (a model load error also
//!   carries `rule`, the stable name of the load rule, as `LoadError::rule` gives it);
//! - search hits are plain objects, their `highlights` converted from the Rust byte ranges to
//!   UTF-16 code-unit offsets (JS string indices) into `snippet`;
//! - the query of a search is embedded by calling `options.model.embed(query, index.dims)` back
//!   through JS, so a `Model` is borrowed, never moved out of its JS object.
//!
//! SIMD128 is required on wasm32: the engine's `compile_error!` guard stops a build whose
//! `RUSTFLAGS` replaced `.cargo/config.toml`'s flags.

use js_sys::{Array, Float32Array, Function, Object, Reflect};
use lightembed_index::fragments::FragmentedIndex;
use lightembed_index::snippet::excerpt;
use lightembed_index::{Index, Mode, ModelIdentity, SearchOptions as RankOptions};
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
  /** Number of results (at most one per section), default 10. */
  k?: number;
  /** Default `"hybrid"`. `"hybrid"` and `"vector"` need `vector` or `model`; `"keyword"` neither. */
  mode?: SearchMode;
  /** The query's embedding, `index.dims` floats (any scale; normalised inside). Wins over `model`. */
  vector?: Float32Array | number[];
  /** Embeds the query as `model.embed(query, index.dims)`. Call `index.checkCompatible(model)` once first. */
  model?: Model;
  /** Characters of each excerpt (plus `…` marks where cut), default 240; 0 = the whole stored snippet. */
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
  title: string;
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

/// A JS `Error` with `msg` as its message.
fn js_error(msg: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&msg.to_string()).into()
}

/// A sentence-embedding model (`.bin` v1), verified on load.
#[wasm_bindgen(js_name = Model)]
pub struct JsModel {
    inner: lightembed::Model,
}

#[wasm_bindgen(js_class = Model)]
impl JsModel {
    /// Loads a `.bin` v1 model from its bytes, checking every load rule and the trailing
    /// SHA-256 (the bytes are copied; the array can be dropped afterwards).
    ///
    /// @throws {Error} the load error's message, e.g. `"SHA-256 mismatch: …"`; its `rule`
    /// property names the load rule (e.g. `"hash_mismatch"`; the names of the files in
    /// `tests/fixtures/malformed/`).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<JsModel, JsValue> {
        lightembed::Model::from_bytes(bytes)
            .map(|inner| JsModel { inner })
            .map_err(|e| {
                let err = js_sys::Error::new(&e.to_string());
                // Setting a property on a fresh Error cannot fail.
                let _ = Reflect::set(&err, &"rule".into(), &e.rule().into());
                err.into()
            })
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
    /// @throws {Error} when `dims` is not one of `validDims` (the message lists them).
    pub fn embed(&self, text: &str, dims: Option<u32>) -> Result<Vec<f32>, JsValue> {
        self.inner
            .embed(text, self.dims_or_default(dims))
            .map_err(js_error)
    }

    /// `embed` for many texts at once (faster: their tokens share each matrix product); element
    /// `i` equals `embed(texts[i], dims)`.
    ///
    /// @throws {Error} when `dims` is not one of `validDims`.
    #[wasm_bindgen(js_name = embedBatch)]
    pub fn embed_batch(
        &self,
        texts: Vec<String>,
        dims: Option<u32>,
    ) -> Result<Vec<Float32Array>, JsValue> {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = self
            .inner
            .embed_batch(&texts, self.dims_or_default(dims))
            .map_err(js_error)?;
        Ok(vectors.iter().map(|v| Float32Array::from(&v[..])).collect())
    }

    /// Token ids of `text` as the model sees them: `[CLS]`, word pieces cut to `maxSeqLen − 2`,
    /// `[SEP]`.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.inner.tokenize(text)
    }
}

impl JsModel {
    fn dims_or_default(&self, dims: Option<u32>) -> usize {
        dims.map_or(self.inner.output_dim(), |d| d as usize)
    }
}

/// A search index (`index.bin`, as `lightembed index` writes it and the app stores it): passages
/// with their vectors (HNSW) and words (BM25).
#[wasm_bindgen(js_name = SearchIndex)]
pub struct JsSearchIndex {
    inner: Index,
}

#[wasm_bindgen(js_class = SearchIndex)]
impl JsSearchIndex {
    /// Loads an index from the bytes of `index.bin`, validating the whole layout (the bytes are
    /// copied).
    ///
    /// @throws {Error} e.g. for a truncated file, or an index of an older layout
    /// (`"Index was built with index format v1 but this lightembed reads index format v2. Re-run
    /// \`lightembed index\`."`).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<JsSearchIndex, JsValue> {
        Index::from_bytes(bytes)
            .map(|inner| JsSearchIndex { inner })
            .map_err(js_error)
    }

    /// Checks that `model` is the model this index was built for (spec §8: same `model_id`,
    /// same major version, the index dims valid for it). Returns warnings that do not stop a
    /// search (another minor version, another file), as sentences.
    ///
    /// @throws {Error} with the spec's message, e.g. `"Index was built with lightembed-en-0l v3.0
    /// but the loaded model is v4.0. Re-run \`lightembed index\`."`
    #[wasm_bindgen(js_name = checkCompatible)]
    pub fn check_compatible(&self, model: &JsModel) -> Result<Vec<String>, JsValue> {
        compatibility(self.inner.manifest(), model)
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
    /// @throws {Error} for a bad option, a vector of the wrong length, or a model whose `dims`
    /// do not include the index dims.
    pub fn search(
        &self,
        query: &str,
        options: Option<SearchOptions>,
    ) -> Result<SearchHits, JsValue> {
        let o = Options::parse(options.map(JsValue::from))?;
        if query.trim().is_empty() {
            return Ok(Array::new().unchecked_into());
        }
        let vector = o.vector_for(query, self.inner.dims())?;
        let rank = RankOptions {
            mode: o.mode,
            ..RankOptions::default()
        };
        let hits = self
            .inner
            .query(vector.as_deref(), query, o.k, &rank)
            .map_err(js_error)?;
        let stem = self.inner.keyword_stemming();
        let out = Array::new();
        for h in hits {
            let e = excerpt(&h.payload.snippet, query, stem, o.excerpt_chars);
            let highlights = js_highlights(&e);
            let hit = Object::new();
            for (key, value) in [
                ("id", JsValue::from(h.id)),
                ("title", h.payload.title.into()),
                ("url", h.payload.url.into()),
                ("score", f64::from(h.score).into()),
                ("snippet", e.text.into()),
                ("highlights", highlights.into()),
            ] {
                Reflect::set(&hit, &key.into(), &value)?;
            }
            out.push(&hit);
        }
        Ok(out.unchecked_into())
    }
}

/// A static site's index cut into fragments (`lightembed site`): the core loads first
/// (`fromCore`), then a query needs the term shards of its words (`missingShards` → fetch →
/// `addShard`) and its results' text the chunks they are in (`hit.chunk` → fetch → `addChunk` →
/// `excerpt`). Keyword scores equal `lightembed search` on the unsplit index; the vector side
/// uses one sign bit per dim (see `lightembed_index::fragments`).
#[wasm_bindgen(js_name = SiteIndex)]
pub struct JsSiteIndex {
    inner: FragmentedIndex,
}

#[wasm_bindgen(js_class = SiteIndex)]
impl JsSiteIndex {
    /// Loads the core fragment (checksum and every field validated; the bytes are copied).
    ///
    /// @throws {Error} for a corrupted or truncated core, or one of another layout version.
    #[wasm_bindgen(js_name = fromCore)]
    pub fn from_core(bytes: &[u8]) -> Result<JsSiteIndex, JsValue> {
        FragmentedIndex::from_core(bytes)
            .map(|inner| JsSiteIndex { inner })
            .map_err(js_error)
    }

    /// As `SearchIndex.checkCompatible` (spec §8).
    ///
    /// @throws {Error} with the spec's message when the model is not the index's.
    #[wasm_bindgen(js_name = checkCompatible)]
    pub fn check_compatible(&self, model: &JsModel) -> Result<Vec<String>, JsValue> {
        compatibility(self.inner.manifest(), model)
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

    /// The term shards `query` needs that are not added yet (empty: it can be searched).
    #[wasm_bindgen(js_name = missingShards)]
    pub fn missing_shards(&self, query: &str) -> Vec<u32> {
        self.inner.missing_shards(query)
    }

    /// Adds a term shard; returns its number.
    ///
    /// @throws {Error} for a corrupted shard or one of another build.
    #[wasm_bindgen(js_name = addShard)]
    pub fn add_shard(&mut self, bytes: &[u8]) -> Result<u32, JsValue> {
        self.inner.add_shard(bytes).map_err(js_error)
    }

    /// Adds a text chunk; returns its number.
    ///
    /// @throws {Error} for a corrupted chunk or one of another build.
    #[wasm_bindgen(js_name = addChunk)]
    pub fn add_chunk(&mut self, bytes: &[u8]) -> Result<u32, JsValue> {
        self.inner.add_chunk(bytes).map_err(js_error)
    }

    /// Whether the text of `passage` is here (its chunk was added).
    #[wasm_bindgen(js_name = hasText)]
    pub fn has_text(&self, passage: u32) -> bool {
        self.inner.text(passage).is_some()
    }

    /// The `k` best passages for `query`, best first, at most one per section, without text
    /// (options as `SearchIndex.search`; `excerptChars` is not used here).
    ///
    /// @throws {Error} for a bad option, a missing term shard (`missingShards`), or a model
    /// whose dims do not include the index dims.
    pub fn search(&self, query: &str, options: Option<SearchOptions>) -> Result<SiteHits, JsValue> {
        let o = Options::parse(options.map(JsValue::from))?;
        if query.trim().is_empty() {
            return Ok(Array::new().unchecked_into());
        }
        let vector = o.vector_for(query, self.inner.dims())?;
        let rank = RankOptions {
            mode: o.mode,
            ..RankOptions::default()
        };
        let hits = self
            .inner
            .query(vector.as_deref(), query, o.k, &rank)
            .map_err(js_error)?;
        let out = Array::new();
        for h in hits {
            let hit = Object::new();
            let chunk = self.inner.chunk_of(h.passage).unwrap_or(0);
            for (key, value) in [
                ("passage", JsValue::from(h.passage)),
                ("chunk", chunk.into()),
                ("title", h.title.into()),
                ("url", h.url.into()),
                ("score", f64::from(h.score).into()),
            ] {
                Reflect::set(&hit, &key.into(), &value)?;
            }
            out.push(&hit);
        }
        Ok(out.unchecked_into())
    }

    /// The excerpt of `passage` (at most `chars` characters, default 240; 0 = all) holding the
    /// most words of `query`, with those words marked.
    ///
    /// @throws {Error} when the passage's chunk has not been added.
    pub fn excerpt(
        &self,
        passage: u32,
        query: &str,
        chars: Option<u32>,
    ) -> Result<JsExcerpt, JsValue> {
        let text = self.inner.text(passage).ok_or_else(|| {
            js_error(format!(
                "the text of passage {passage} is not loaded: add chunk {:?} first",
                self.inner.chunk_of(passage)
            ))
        })?;
        let chars = chars.map_or(DEFAULT_EXCERPT_CHARS, |c| c as usize);
        let e = excerpt(text, query, self.inner.keyword_stemming(), chars);
        let highlights = js_highlights(&e);
        let out = Object::new();
        Reflect::set(&out, &"snippet".into(), &e.text.into())?;
        Reflect::set(&out, &"highlights".into(), &highlights.into())?;
        Ok(out.unchecked_into())
    }
}

/// `SearchOptions` read from JS, defaults applied.
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

    fn parse(options: Option<JsValue>) -> Result<Options, JsValue> {
        let mut o = Options {
            k: DEFAULT_K,
            mode: Mode::Hybrid,
            vector: None,
            model: None,
            excerpt_chars: DEFAULT_EXCERPT_CHARS,
        };
        let Some(options) = options.filter(|v| !v.is_undefined() && !v.is_null()) else {
            return Ok(o);
        };
        let Some(obj) = options.dyn_ref::<Object>().filter(|_| options.is_object()) else {
            return Err(js_error("search options must be an object"));
        };
        for key in Object::keys(obj).iter() {
            let key = key.as_string().unwrap_or_default();
            if !OPTION_KEYS.contains(&key.as_str()) {
                return Err(js_error(format!(
                    "unknown search option {key:?}; expected one of {}",
                    OPTION_KEYS.join(", ")
                )));
            }
        }
        let get = |key: &str| -> Result<Option<JsValue>, JsValue> {
            let v = Reflect::get(obj, &key.into())?;
            Ok((!v.is_undefined() && !v.is_null()).then_some(v))
        };
        if let Some(v) = get("k")? {
            o.k = whole_number(&v, "k", 1)?;
        }
        if let Some(v) = get("mode")? {
            let Some(s) = v.as_string() else {
                return Err(js_error(
                    "search option mode must be \"hybrid\", \"vector\" or \"keyword\"",
                ));
            };
            o.mode = s.parse().map_err(js_error)?;
        }
        if let Some(v) = get("vector")? {
            o.vector = Some(float_array(&v).ok_or_else(|| {
                js_error("search option vector must be a Float32Array or an array of numbers")
            })?);
        }
        o.model = get("model")?;
        if let Some(v) = get("excerptChars")? {
            o.excerpt_chars = whole_number(&v, "excerptChars", 0)?;
        }
        Ok(o)
    }
}

/// `v` as a whole number ≥ `min`.
fn whole_number(v: &JsValue, what: &str, min: u32) -> Result<usize, JsValue> {
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x >= f64::from(min) && x <= f64::from(u32::MAX) => {
            Ok(x as usize)
        }
        _ => Err(js_error(format!(
            "search option {what} must be a whole number ≥ {min}, got {}",
            describe(v)
        ))),
    }
}

/// A short description of a JS value for error messages.
fn describe(v: &JsValue) -> String {
    if let Some(s) = v.as_string() {
        format!("{s:?}")
    } else if let Some(x) = v.as_f64() {
        x.to_string()
    } else {
        v.js_typeof().as_string().unwrap_or_default()
    }
}

/// The numbers of a `Float32Array` or a plain array.
fn float_array(v: &JsValue) -> Option<Vec<f32>> {
    if let Some(a) = v.dyn_ref::<Float32Array>() {
        Some(a.to_vec())
    } else if Array::is_array(v) {
        Some(Float32Array::new(v).to_vec())
    } else {
        None
    }
}

/// `model.embed(query, dims)` called through JS, so the `Model` (or any object with that method)
/// stays in its JS object.
fn embed_with(model: &JsValue, query: &str, dims: usize) -> Result<Vec<f32>, JsValue> {
    let not_a_model =
        || js_error("search option model must be a Model (an object with embed(text, dims))");
    let embed: Function = Reflect::get(model, &"embed".into())?
        .dyn_into()
        .map_err(|_| not_a_model())?;
    let v = embed.call2(model, &query.into(), &JsValue::from(dims as u32))?;
    float_array(&v).ok_or_else(not_a_model)
}

/// The spec §8 check of `manifest` against `model`: its warnings as sentences, or the spec's
/// message as a JS error. Shared by `SearchIndex` and `SiteIndex`.
fn compatibility(
    manifest: &lightembed_index::Manifest,
    model: &JsModel,
) -> Result<Vec<String>, JsValue> {
    let warnings = manifest
        .check_compatible(&ModelIdentity::from(&model.inner))
        .map_err(js_error)?;
    Ok(warnings.iter().map(ToString::to_string).collect())
}

/// An excerpt's highlights as a JS array of `[start, end]` UTF-16 offsets into its text.
fn js_highlights(e: &lightembed_index::snippet::Excerpt) -> Array {
    utf16_ranges(&e.text, &e.highlights)
        .into_iter()
        .map(|(a, b)| JsValue::from(Array::of2(&a.into(), &b.into())))
        .collect()
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
