//! [`Index`]: documents + vectors + HNSW graph, with insert, delete, search and persistence.

use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

use core::cmp::Reverse;
use core::fmt;

use crate::error::IndexError;
use crate::graph::{Graph, Vectors, Visited, MAX_LEVEL};
use crate::keywords::Keywords;
use crate::manifest::{CompatWarning, Manifest, ManifestFields, ModelIdentity};
use crate::util::{dot, sort_best_first, Scored, SplitMix64};

/// HNSW construction and search parameters. Stored in the index bytes, so a loaded index keeps
/// building the way it was started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// `M`: links per node on layers ≥ 1; layer 0 allows `2·M`. Default **16**. Range `2..=128`.
    /// Memory per vector grows by about `8·M` bytes (layer 0), recall and build time grow with it.
    pub m: usize,
    /// Beam width while inserting. Default **200**. Range `1..=100_000`. Higher = better graph,
    /// slower build (build time is roughly linear in it).
    pub ef_construction: usize,
    /// Beam width while searching (the effective beam is `max(ef_search, k)`). Default **96**:
    /// recall@10 ≈ 0.975–0.98 at 100k real-text vectors (128 or 384 dims) with `M` 16,
    /// `ef_construction` 200, p50 well under 1 ms natively (`bench/RESULTS.md`). Range
    /// `1..=100_000`. The recall/latency knob: search time is roughly linear in it.
    pub ef_search: usize,
    /// Seed of the level-drawing PRNG (SplitMix64). Same seed + same inserts in the same order →
    /// byte-identical index on every target. Default `0x6c69_6768_7465_6d62` (`"lightemb"`).
    pub seed: u64,
    /// Deleted fraction of slots above which [`Index::delete`] rebuilds the graph from the live
    /// documents (compaction). Default **0.25**. Range `(0, 1]`; `1.0` never compacts on its own.
    pub compaction_threshold: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            m: 16,
            ef_construction: 200,
            ef_search: 96,
            seed: 0x6c69_6768_7465_6d62,
            compaction_threshold: 0.25,
        }
    }
}

/// Largest `ef_construction` / `ef_search` accepted.
pub const MAX_EF: usize = 100_000;

impl Params {
    pub(crate) fn validate(&self) -> Result<(), IndexError> {
        let bad = |what, detail: String| Err(IndexError::InvalidArgument { what, detail });
        if !(2..=128).contains(&self.m) {
            return bad("M", format!("{} is outside 2..=128", self.m));
        }
        if !(1..=MAX_EF).contains(&self.ef_construction) {
            return bad(
                "ef_construction",
                format!("{} is outside 1..={MAX_EF}", self.ef_construction),
            );
        }
        if !(1..=MAX_EF).contains(&self.ef_search) {
            return bad(
                "ef_search",
                format!("{} is outside 1..={MAX_EF}", self.ef_search),
            );
        }
        let t = self.compaction_threshold;
        if !(t > 0.0 && t <= 1.0) {
            return bad("compaction_threshold", format!("{t} is outside (0, 1]"));
        }
        Ok(())
    }
}

/// What is shown for a search hit: everything about a document except its vector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Payload {
    /// Document title.
    pub title: String,
    /// Where the document lives (absolute or site-relative URL).
    pub url: String,
    /// A short text excerpt shown under the title.
    pub snippet: String,
}

/// A document to index: a caller-chosen unique `id` and its [`Payload`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Document {
    /// Unique among live documents (e.g. a URL plus chunk number). Any UTF-8 string.
    pub id: String,
    /// Title, URL and snippet.
    pub payload: Payload,
}

impl Document {
    /// A document from its four fields.
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        url: impl Into<String>,
        snippet: impl Into<String>,
    ) -> Document {
        Document {
            id: id.into(),
            payload: Payload {
                title: title.into(),
                url: url.into(),
                snippet: snippet.into(),
            },
        }
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Hit {
    /// The document's id.
    pub id: String,
    /// Higher is better. From [`Index::search`] and [`Index::exact_search`]: cosine similarity
    /// to the query, in `[-1, 1]`. From [`Index::keyword_search`]: the BM25 score, `> 0`.
    pub score: f32,
    /// The document's title, URL and snippet.
    pub payload: Payload,
}

/// A semantic-search index: documents, their L2-normalised vectors, an HNSW graph over them and
/// the [`Manifest`] recording which model produced the vectors (spec §8).
///
/// Internally every inserted document gets a *slot* (`0, 1, 2, …` in insertion order).
/// Deleting a document leaves a tombstone: its slot keeps its vector and links (so the graph stays
/// navigable) but it is never returned. When tombstones exceed
/// [`Params::compaction_threshold`] of all slots the graph is rebuilt from the live documents.
///
/// Every slot also carries its keyword terms for BM25 ([`Index::keyword_search`], tokenised as
/// described in [`crate::keywords`]), maintained by insert, delete and compaction like the graph.
///
/// Costs (n live documents, d = dims, M, ef = beam width, T = tokens of a document's keyword
/// text, t = its distinct terms, P = Σ postings lengths of the query's terms ≤ n per term;
/// expected, as in the HNSW paper):
///
/// | operation | time | notes |
/// |---|---|---|
/// | [`Index::insert`] / [`Index::insert_with_text`] | O(log n · ef_construction · M · d + T log T) | |
/// | [`Index::search`] | O(log n · M · d + ef · M · d) | exact scan when n ≤ ef |
/// | [`Index::exact_search`] | O(n · d + n log k) | ground truth |
/// | [`Index::keyword_search`] | O(query length + P + k log k) | one pass over the query terms' postings into a reused dense score buffer |
/// | [`Index::delete`] | O(t); a compaction is n inserts | amortised O(insert) |
/// | [`Index::to_bytes`] / [`Index::from_bytes`] | O(bytes) | plus full validation on load; postings are rebuilt on load |
///
/// Memory ≈ `4·d + 8·M + 8` bytes per slot for vectors and graph (layer 0 reserves `2·M` links),
/// plus payloads, plus for keywords: 16 bytes per distinct term of each slot (its `(term, tf)`
/// pair and the posting), 12 bytes per slot (offset and length), about `2·len + 70` bytes per
/// vocabulary term (the term twice, in the list and the lookup table, with their overheads), and
/// while a keyword query runs 4 bytes per slot of scratch (kept for reuse). Deleted slots keep
/// their terms until compaction.
pub struct Index {
    pub(crate) manifest: Manifest,
    pub(crate) params: Params,
    pub(crate) rng: SplitMix64,
    /// `slots × dims`, row-major, each row L2-normalised.
    pub(crate) vectors: Vec<f32>,
    pub(crate) docs: Vec<Document>,
    pub(crate) deleted: Vec<bool>,
    pub(crate) n_deleted: usize,
    /// Live ids → slot.
    pub(crate) ids: HashMap<String, u32>,
    pub(crate) graph: Graph,
    /// Keyword terms per slot, postings and BM25 statistics.
    pub(crate) keywords: Keywords,
    /// `Some(per-slot scale)` when vectors are stored as int8 ([`Index::set_int8_vectors`]):
    /// `vectors` then holds the dequantised values `code × scale`.
    pub(crate) int8_scales: Option<Vec<f32>>,
    /// Scratch "visited" arrays reused across searches (`search` takes `&self`).
    pub(crate) pool: Mutex<Vec<Visited>>,
}

impl Clone for Index {
    fn clone(&self) -> Self {
        Index {
            manifest: self.manifest.clone(),
            params: self.params,
            rng: self.rng,
            vectors: self.vectors.clone(),
            docs: self.docs.clone(),
            deleted: self.deleted.clone(),
            n_deleted: self.n_deleted,
            ids: self.ids.clone(),
            graph: self.graph.clone(),
            keywords: self.keywords.clone(),
            int8_scales: self.int8_scales.clone(),
            pool: Mutex::new(Vec::new()),
        }
    }
}

impl fmt::Debug for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Index")
            .field("manifest", &self.manifest)
            .field("params", &self.params)
            .field("slots", &self.docs.len())
            .field("deleted", &self.n_deleted)
            .field("max_level", &self.graph.max_level)
            .field("keyword_terms", &self.keywords.vocab.len())
            .field("keyword_stemming", &self.keywords.stem)
            .finish()
    }
}

impl Index {
    /// An empty index for vectors described by `fields`, built with `params`.
    ///
    /// Errors: [`IndexError::InvalidArgument`] when `fields.model_id` is empty, longer than 16
    /// bytes or contains NUL, `fields.dims` is outside `1..=65535`, or a parameter is out of the
    /// range documented on [`Params`].
    pub fn new(fields: ManifestFields, params: Params) -> Result<Index, IndexError> {
        fields.validate()?;
        params.validate()?;
        Ok(Index {
            manifest: Manifest::from_fields(fields),
            rng: SplitMix64 { state: params.seed },
            graph: Graph::new(params.m),
            params,
            vectors: Vec::new(),
            docs: Vec::new(),
            deleted: Vec::new(),
            n_deleted: 0,
            ids: HashMap::new(),
            keywords: Keywords::new(true),
            int8_scales: None,
            pool: Mutex::new(Vec::new()),
        })
    }

    /// `true` when keyword text is stemmed with the English Snowball stemmer (the default; see
    /// [`crate::keywords`]). Recorded in the index bytes: queries are tokenised the same way.
    pub fn keyword_stemming(&self) -> bool {
        self.keywords.stem
    }

    /// `true` when this index was read from bytes written before keyword terms folded `ı` to `i`
    /// (layout keyword flag bit 1 clear): its terms were re-folded on load, so it searches like a
    /// fresh build, and [`Index::to_bytes`] writes the current layout (not the bytes it was read
    /// from). A caller that stores indexes may write it back once.
    pub fn keywords_refolded(&self) -> bool {
        self.keywords.refolded
    }

    /// Turns English stemming of keyword text on or off. Only while the index has never held a
    /// document (stored terms cannot be re-tokenised); setting the current value always succeeds.
    ///
    /// Errors: [`IndexError::InvalidArgument`] when documents were already inserted.
    pub fn set_keyword_stemming(&mut self, stem: bool) -> Result<(), IndexError> {
        if stem == self.keywords.stem {
            return Ok(());
        }
        if !self.docs.is_empty() {
            return Err(IndexError::InvalidArgument {
                what: "keyword stemming",
                detail: format!(
                    "the index already holds {} slots tokenised with stemming {}; choose it \
                     before the first insert",
                    self.docs.len(),
                    if self.keywords.stem { "on" } else { "off" }
                ),
            });
        }
        self.keywords = Keywords::new(stem);
        Ok(())
    }

    /// Stores vectors as int8 codes with one f32 scale per vector (`code = round(v / scale)`,
    /// `scale = max|v| / 127`): about a quarter of the bytes of f32 in [`Index::to_bytes`] (a
    /// static-site bundle is downloaded by every visitor). Each inserted vector is quantised on the
    /// way in and the graph is built on the dequantised values, so an index searches the same
    /// before and after a round trip; cosines move by about 1e-3. Choose it before the first insert
    /// (the layout's header flag bit 0); setting the current value always succeeds.
    ///
    /// Errors: [`IndexError::InvalidArgument`] when documents were already inserted.
    pub fn set_int8_vectors(&mut self, int8: bool) -> Result<(), IndexError> {
        if int8 == self.int8_scales.is_some() {
            return Ok(());
        }
        if !self.docs.is_empty() {
            return Err(IndexError::InvalidArgument {
                what: "int8 vectors",
                detail: format!(
                    "the index already holds {} vectors; choose the encoding before the first insert",
                    self.docs.len()
                ),
            });
        }
        self.int8_scales = int8.then(Vec::new);
        Ok(())
    }

    /// `true` when vectors are stored as int8 ([`Index::set_int8_vectors`]).
    pub fn int8_vectors(&self) -> bool {
        self.int8_scales.is_some()
    }

    /// The manifest (spec §8); `count` is the number of live documents.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The construction/search parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Changes the default search beam (`1..=100_000`); the graph is unaffected.
    pub fn set_ef_search(&mut self, ef_search: usize) -> Result<(), IndexError> {
        let p = Params {
            ef_search,
            ..self.params
        };
        p.validate()?;
        self.params = p;
        Ok(())
    }

    /// Vector length.
    pub fn dims(&self) -> usize {
        self.manifest.dims
    }

    /// Number of live (searchable) documents.
    pub fn len(&self) -> usize {
        self.docs.len() - self.n_deleted
    }

    /// `true` when no live document is left.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of tombstones (deleted documents still in the graph).
    pub fn deleted_count(&self) -> usize {
        self.n_deleted
    }

    /// `true` when a live document has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    /// The live document with this id.
    pub fn get(&self, id: &str) -> Option<&Document> {
        self.ids.get(id).map(|&s| &self.docs[s as usize])
    }

    /// The stored (L2-normalised) vector of the live document with this id.
    pub fn vector(&self, id: &str) -> Option<&[f32]> {
        let d = self.dims();
        self.ids
            .get(id)
            .map(|&s| &self.vectors[s as usize * d..(s as usize + 1) * d])
    }

    /// Live documents in insertion order.
    pub fn documents(&self) -> impl Iterator<Item = &Document> + '_ {
        self.docs
            .iter()
            .zip(&self.deleted)
            .filter(|(_, &del)| !del)
            .map(|(d, _)| d)
    }

    /// Checks that this index may be searched with vectors from `model` (spec §8): same
    /// `model_id`, same major version, `dims` valid for the model, known `index_version`.
    /// See [`Manifest::check_compatible`] for the errors and the warnings returned on success.
    pub fn check_compatible(
        &self,
        model: &ModelIdentity,
    ) -> Result<Vec<CompatWarning>, IndexError> {
        self.manifest.check_compatible(model)
    }

    pub(crate) fn vecs(&self) -> Vectors<'_> {
        Vectors {
            data: &self.vectors,
            dims: self.manifest.dims,
        }
    }

    /// `v` checked (length `dims`, finite) and L2-normalised: the query form [`Index::cosine`]
    /// expects.
    pub(crate) fn checked_query(&self, v: &[f32]) -> Result<Vec<f32>, IndexError> {
        crate::util::checked_query(v, self.dims())
    }

    fn draw_level(&mut self) -> u8 {
        // P(level ≥ l) = M^-l, the paper's mL = 1/ln M, drawn with integers only so every target
        // draws the same levels.
        let threshold = u64::MAX / self.params.m as u64;
        let mut level = 0u8;
        while level < MAX_LEVEL && self.rng.next_u64() < threshold {
            level += 1;
        }
        level
    }

    pub(crate) fn take_visited(&self) -> Visited {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.pop().unwrap_or_default()
    }

    pub(crate) fn put_visited(&self, v: Visited) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < 64 {
            pool.push(v);
        }
    }

    /// Adds `doc` with its embedding `vector` (any length-`dims` finite vector; it is
    /// L2-normalised on the way in). Works at any time, before or after a load. Any number of
    /// documents may share one vector (boilerplate passages, repeated text): copies are linked
    /// so that they never cut the documents around them off from search.
    ///
    /// The keyword side indexes `title + "\n" + snippet`; use [`Index::insert_with_text`] to
    /// index the full passage text when the stored snippet is shortened.
    ///
    /// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`],
    /// [`IndexError::DuplicateId`] when a live document already has `doc.id`, [`IndexError::Full`].
    pub fn insert(&mut self, doc: Document, vector: &[f32]) -> Result<(), IndexError> {
        let text = format!("{}\n{}", doc.payload.title, doc.payload.snippet);
        self.insert_with_text(doc, vector, &text)
    }

    /// [`Index::insert`] with the text BM25 indexes for this document given explicitly
    /// (typically heading + the full passage text, while the stored snippet may be truncated).
    /// Only the terms of `keyword_text` are kept, not the text.
    ///
    /// Errors: as [`Index::insert`]; nothing is changed on error.
    pub fn insert_with_text(
        &mut self,
        doc: Document,
        vector: &[f32],
        keyword_text: &str,
    ) -> Result<(), IndexError> {
        let mut v = self.checked_query(vector)?;
        if self.ids.contains_key(&doc.id) {
            return Err(IndexError::DuplicateId(doc.id));
        }
        if self.docs.len() >= (u32::MAX - 1) as usize {
            return Err(IndexError::Full);
        }
        let slot = self.docs.len() as u32;
        let level = self.draw_level();
        if let Some(scales) = self.int8_scales.as_mut() {
            scales.push(quantize_in_place(&mut v));
        }
        self.vectors.extend_from_slice(&v);
        self.ids.insert(doc.id.clone(), slot);
        self.docs.push(doc);
        self.deleted.push(false);
        self.keywords.push_text(keyword_text);
        self.graph.push_node(level);
        let mut visited = self.take_visited();
        let vecs = Vectors {
            data: &self.vectors,
            dims: self.manifest.dims,
        };
        self.graph
            .insert(vecs, slot, self.params.ef_construction, &mut visited);
        self.put_visited(visited);
        self.manifest.count = self.len() as u64;
        Ok(())
    }

    /// Removes the document with this id; `false` when no live document has it. Leaves a
    /// tombstone, and compacts (see [`Index::compact`]) once tombstones exceed
    /// [`Params::compaction_threshold`] of all slots.
    pub fn delete(&mut self, id: &str) -> bool {
        let Some(slot) = self.ids.remove(id) else {
            return false;
        };
        self.deleted[slot as usize] = true;
        self.n_deleted += 1;
        self.keywords.delete(slot);
        self.manifest.count = self.len() as u64;
        if self.n_deleted as f64 > self.params.compaction_threshold as f64 * self.docs.len() as f64
        {
            self.compact();
        }
        true
    }

    /// Drops every tombstone and rebuilds the graph from the live documents, re-inserted in their
    /// insertion order with their original levels (deterministic). O(n) inserts. No-op without
    /// tombstones.
    pub fn compact(&mut self) {
        if self.n_deleted == 0 {
            return;
        }
        let d = self.dims();
        let live = self.len();
        let mut vectors = Vec::with_capacity(live * d);
        let mut docs = Vec::with_capacity(live);
        let mut levels = Vec::with_capacity(live);
        for (slot, doc) in core::mem::take(&mut self.docs).into_iter().enumerate() {
            if !self.deleted[slot] {
                vectors.extend_from_slice(&self.vectors[slot * d..(slot + 1) * d]);
                if let Some(scales) = self.int8_scales.as_mut() {
                    let s = scales[slot];
                    scales.push(s);
                }
                docs.push(doc);
                levels.push(self.graph.levels[slot]);
            }
        }
        self.vectors = vectors;
        if let Some(scales) = self.int8_scales.as_mut() {
            // Live slots' scales were appended after the old ones.
            scales.drain(..scales.len() - live);
        }
        self.keywords = self.keywords.compacted(&self.deleted);
        self.deleted = vec![false; live];
        self.n_deleted = 0;
        self.ids = docs
            .iter()
            .enumerate()
            .map(|(s, doc)| (doc.id.clone(), s as u32))
            .collect();
        self.docs = docs;
        self.graph = Graph::new(self.params.m);
        let mut visited = self.take_visited();
        let vecs = Vectors {
            data: &self.vectors,
            dims: d,
        };
        for (slot, &level) in levels.iter().enumerate() {
            self.graph.push_node(level);
            self.graph
                .insert(vecs, slot as u32, self.params.ef_construction, &mut visited);
        }
        self.put_visited(visited);
    }

    /// The [`Hit`] for `slot` with `score`.
    pub(crate) fn hit(&self, slot: u32, score: f32) -> Hit {
        let doc = &self.docs[slot as usize];
        Hit {
            id: doc.id.clone(),
            score,
            payload: doc.payload.clone(),
        }
    }

    fn hits(&self, found: Vec<Scored>, k: usize) -> Vec<Hit> {
        found
            .into_iter()
            .take(k)
            .map(|s| self.hit(s.id, s.score))
            .collect()
    }

    /// `true` when `slot` exists and is not deleted.
    #[cfg(test)]
    pub(crate) fn is_live(&self, slot: u32) -> bool {
        self.deleted.get(slot as usize) == Some(&false)
    }

    /// The `k` live documents with the highest BM25 score for `query` (see [`crate::keywords`]),
    /// best first, ties broken by insertion order. Only documents containing at least one query
    /// term are returned; a query without known terms returns nothing.
    pub fn keyword_search(&self, query: &str, k: usize) -> Vec<Hit> {
        if k == 0 {
            return Vec::new();
        }
        let terms = self.query_terms(query);
        let found = self.keywords.top(&terms, k, &self.deleted, self.len());
        self.hits(found, k)
    }

    /// The query's term ids, tokenised like the documents ([`Index::keyword_stemming`]), in order
    /// of first appearance, without duplicates and without terms outside the vocabulary. Compute
    /// once per query and pass to [`Index::bm25_top`] / [`Index::bm25_score`].
    pub(crate) fn query_terms(&self, query: &str) -> Vec<u32> {
        self.keywords.query_terms(query)
    }

    /// The `n` best live slots by BM25 for `terms` (from [`Index::query_terms`]), best first,
    /// ties by slot; slots without any query term are left out.
    pub(crate) fn bm25_top(&self, terms: &[u32], n: usize) -> Vec<(u32, f32)> {
        self.keywords
            .top(terms, n, &self.deleted, self.len())
            .into_iter()
            .map(|s| (s.id, s.score))
            .collect()
    }

    /// BM25 of one slot for `terms`: bit-identical to that slot's score in
    /// [`Index::bm25_top`]; 0 for a slot without query terms, a deleted slot or one out of
    /// range. O(|terms| · log t) (binary search in the slot's sorted term list).
    pub(crate) fn bm25_score(&self, terms: &[u32], slot: u32) -> f32 {
        self.keywords.score(terms, slot, &self.deleted, self.len())
    }

    /// Inner product of `q` (already L2-normalised, length `dims`) with `slot`'s stored vector:
    /// the cosine similarity [`Index::search`] scores with. Panics if `slot` is out of range.
    pub(crate) fn cosine(&self, q: &[f32], slot: u32) -> f32 {
        dot(q, self.vecs().get(slot))
    }

    /// The (approximately) `k` most similar live documents to `query`, best first, with the
    /// default beam [`Params::ef_search`]. `query` is L2-normalised first. See
    /// [`Index::search_with_ef`].
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<Hit>, IndexError> {
        self.search_with_ef(query, k, self.params.ef_search)
    }

    /// [`Index::search`] with an explicit beam: the effective beam is `max(ef, k)`. When the
    /// index holds no more slots than the beam, this is an exact scan (same result as
    /// [`Index::exact_search`]). Ties are broken by insertion order.
    ///
    /// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`].
    pub fn search_with_ef(
        &self,
        query: &[f32],
        k: usize,
        ef: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        let q = self.checked_query(query)?;
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.hits(self.vector_top(&q, k, Some(ef)), k))
    }

    pub(crate) fn exact(&self, q: &[f32], k: usize) -> Vec<Scored> {
        let vecs = self.vecs();
        let mut heap: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(k + 1);
        for slot in 0..self.docs.len() {
            if self.deleted[slot] {
                continue;
            }
            let s = Scored {
                score: dot(q, vecs.get(slot as u32)),
                id: slot as u32,
            };
            if heap.len() < k {
                heap.push(Reverse(s));
            } else if heap.peek().is_some_and(|Reverse(w)| s > *w) {
                heap.pop();
                heap.push(Reverse(s));
            }
        }
        let mut out: Vec<Scored> = heap.into_iter().map(|Reverse(s)| s).collect();
        sort_best_first(&mut out);
        out
    }

    /// The exact `k` most similar live documents (brute force over every vector), best first,
    /// ties broken by insertion order. The ground truth for recall; also the right choice for a
    /// few thousand documents.
    ///
    /// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`].
    pub fn exact_search(&self, query: &[f32], k: usize) -> Result<Vec<Hit>, IndexError> {
        let q = self.checked_query(query)?;
        if k == 0 {
            return Ok(Vec::new());
        }
        Ok(self.hits(self.exact(&q, k), k))
    }
}

/// Quantises a vector to int8 codes and replaces it with the dequantised values `code × scale`;
/// returns the scale `max|v| / 127` (1 for an all-zero vector). Codes lie in `-127..=127`, so
/// `round(v / scale)` gives them back exactly (what [`Index::to_bytes`] writes).
pub(crate) fn quantize_in_place(v: &mut [f32]) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    for x in v.iter_mut() {
        *x = (*x / scale).round().clamp(-127.0, 127.0) * scale;
    }
    scale
}
