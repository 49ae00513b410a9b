//! [`Index`]: documents + vectors + HNSW graph, with insert, delete, search and persistence.

use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

use core::cmp::Reverse;
use core::fmt;

use crate::error::IndexError;
use crate::graph::{Graph, Vectors, Visited, MAX_LEVEL};
use crate::manifest::{CompatWarning, Manifest, ManifestFields, ModelIdentity};
use crate::util::{dot, normalize_into, sort_best_first, Scored, SplitMix64};

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
pub struct Hit {
    /// The document's id.
    pub id: String,
    /// Cosine similarity to the query, in `[-1, 1]`; higher is better.
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
/// Costs (n live documents, d = dims, M, ef = beam width; expected, as in the HNSW paper):
///
/// | operation | time | notes |
/// |---|---|---|
/// | [`Index::insert`] | O(log n · ef_construction · M · d) | |
/// | [`Index::search`] | O(log n · M · d + ef · M · d) | exact scan when n ≤ ef |
/// | [`Index::exact_search`] | O(n · d + n log k) | ground truth |
/// | [`Index::delete`] | O(1); a compaction is n inserts | amortised O(insert) |
/// | [`Index::to_bytes`] / [`Index::from_bytes`] | O(bytes) | plus full validation on load |
///
/// Memory ≈ `4·d + 8·M + 8` bytes per slot plus payloads (layer 0 reserves `2·M` links).
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
            pool: Mutex::new(Vec::new()),
        })
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

    fn vecs(&self) -> Vectors<'_> {
        Vectors {
            data: &self.vectors,
            dims: self.manifest.dims,
        }
    }

    fn checked_query(&self, v: &[f32]) -> Result<Vec<f32>, IndexError> {
        if v.len() != self.dims() {
            return Err(IndexError::VectorDims {
                expected: self.dims(),
                found: v.len(),
            });
        }
        if !v.iter().all(|x| x.is_finite()) {
            return Err(IndexError::NonFiniteVector);
        }
        let mut out = Vec::with_capacity(v.len());
        normalize_into(v, &mut out);
        Ok(out)
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

    fn take_visited(&self) -> Visited {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.pop().unwrap_or_default()
    }

    fn put_visited(&self, v: Visited) {
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
    /// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`],
    /// [`IndexError::DuplicateId`] when a live document already has `doc.id`, [`IndexError::Full`].
    pub fn insert(&mut self, doc: Document, vector: &[f32]) -> Result<(), IndexError> {
        let v = self.checked_query(vector)?;
        if self.ids.contains_key(&doc.id) {
            return Err(IndexError::DuplicateId(doc.id));
        }
        if self.docs.len() >= (u32::MAX - 1) as usize {
            return Err(IndexError::Full);
        }
        let slot = self.docs.len() as u32;
        let level = self.draw_level();
        self.vectors.extend_from_slice(&v);
        self.ids.insert(doc.id.clone(), slot);
        self.docs.push(doc);
        self.deleted.push(false);
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
                docs.push(doc);
                levels.push(self.graph.levels[slot]);
            }
        }
        self.vectors = vectors;
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

    fn hits(&self, found: Vec<Scored>, k: usize) -> Vec<Hit> {
        found
            .into_iter()
            .take(k)
            .map(|s| {
                let doc = &self.docs[s.id as usize];
                Hit {
                    id: doc.id.clone(),
                    score: s.score,
                    payload: doc.payload.clone(),
                }
            })
            .collect()
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
        let ef = ef.max(k);
        if self.docs.len() <= ef {
            return Ok(self.hits(self.exact(&q, k), k));
        }
        let mut visited = self.take_visited();
        let skip = (self.n_deleted > 0).then_some(self.deleted.as_slice());
        let found = self.graph.search(self.vecs(), &q, ef, &mut visited, skip);
        self.put_visited(visited);
        Ok(self.hits(found, k))
    }

    fn exact(&self, q: &[f32], k: usize) -> Vec<Scored> {
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
