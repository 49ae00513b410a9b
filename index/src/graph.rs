//! The HNSW graph (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
//! using Hierarchical Navigable Small World graphs", 2016/2018): layered proximity graphs, greedy
//! descent through the upper layers, beam search (`ef`) on each layer, and the neighbour-selection
//! heuristic (the paper's Algorithm 4, without `extendCandidates`; `keepPrunedConnections` only
//! for copies of the base point, see [`Graph::select`]).
//!
//! Duplicate vectors: two stored vectors whose cosine distance is at most [`COPY_EPS`] are
//! *copies* of one point. The paper's heuristic has no answer for distance 0 (every copy ties
//! with every other), so without special care a crowd of copies fills each other's lists and
//! the links to anything inserted later are pruned away; `select` keeps one copy per list in the
//! diversity pass and lets the other copies only fill the room that is left.
//!
//! Nodes are *slots* `0..n` (`u32`); their vectors live outside the graph in one flat
//! `[f32; n·dims]` array owned by the index. Similarity is the inner product of L2-normalised
//! vectors: higher is closer.

use std::collections::BinaryHeap;

use core::cmp::Reverse;

use crate::util::{dot, sort_best_first, Scored};

/// Highest layer a node can be drawn into (levels are `0..=MAX_LEVEL`). With `M ≥ 2` the chance
/// of a level above 16 is ≤ 2⁻¹⁷ per node, so the cap changes nothing in practice and bounds what
/// a loaded file may claim.
pub(crate) const MAX_LEVEL: u8 = 16;

/// Sentinel for "no entry point" (empty graph) in the byte layout.
pub(crate) const NO_ENTRY: u32 = u32::MAX;

/// Largest cosine distance (`1 − similarity`, unit-free) at which two stored vectors count as
/// copies of one point: `1e-5`, about 170 `f32` steps below 1 (an angle of ≈ 0.26°). Exact
/// duplicates score 1 up to rounding (a few steps at hundreds of dimensions); vectors that
/// differ only by float noise land in the same band, where `f32` can no longer order distances
/// reliably. Distinct passages of real text are far outside it.
pub(crate) const COPY_EPS: f32 = 1e-5;

/// How close (absolute, in similarity units) a neighbour's score must be to another node's
/// score before [`Graph::search_layer`] checks whether the two are copies: `1e-4`. For unit
/// vectors `u`, `v` and a unit query `q`, `|q·u − q·v| ≤ ‖u − v‖ = √(2·(1 − u·v))`, so copies
/// closer than a cosine distance of `5·10⁻⁹` (exact copies, and float noise of a few `f32` steps
/// per component) always fall inside it; looser copies (up to [`COPY_EPS`]) only when the query
/// happens to score them that close. Keeps the extra vector comparisons rare (≈ 2% more
/// instructions per search than without the check).
const COPY_SCORE_WINDOW: f32 = 1e-4;

/// `true` when a similarity (inner product of two unit vectors) makes them copies (see
/// [`COPY_EPS`]).
#[inline]
fn is_copy(similarity: f32) -> bool {
    similarity >= 1.0 - COPY_EPS
}

/// Per-query "already visited" marks: one `u32` per slot holding the epoch of the last visit,
/// so clearing is `epoch += 1` instead of a fill.
#[derive(Debug, Clone, Default)]
pub(crate) struct Visited {
    marks: Vec<u32>,
    epoch: u32,
}

impl Visited {
    /// Starts a new query over `n` slots.
    pub(crate) fn reset(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.fill(0);
            self.epoch = 1;
        }
    }

    /// Marks `id`; `true` when it was not yet visited in this query.
    #[inline]
    pub(crate) fn insert(&mut self, id: u32) -> bool {
        let m = &mut self.marks[id as usize];
        if *m == self.epoch {
            false
        } else {
            *m = self.epoch;
            true
        }
    }
}

/// Hints the CPU to start loading `v` (up to its first 512 bytes) into cache. A no-op where the
/// target has no prefetch instruction (wasm32).
#[inline(always)]
fn prefetch(v: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // 16 floats per 64-byte cache line
        for line in v.chunks(16).take(8) {
            // SAFETY: SSE is part of the x86_64 baseline, and a prefetch is only a hint: it never
            // faults and never reads into the program, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast::<i8>()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// Flat vector storage view: slot `i` is `data[i·dims .. (i+1)·dims]`.
#[derive(Clone, Copy)]
pub(crate) struct Vectors<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) dims: usize,
}

impl<'a> Vectors<'a> {
    #[inline]
    pub(crate) fn get(&self, id: u32) -> &'a [f32] {
        let s = id as usize * self.dims;
        &self.data[s..s + self.dims]
    }
}

/// Adjacency of every layer.
///
/// * Layer 0: `layer0[i·(1+m0)]` is node `i`'s neighbour count, followed by `m0 = 2·M` slots.
/// * Layers `1..=level(i)`: `upper[i][(l−1)·(1+M)]` is the count, followed by `M` slots.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    pub(crate) m: usize,
    pub(crate) m0: usize,
    pub(crate) levels: Vec<u8>,
    pub(crate) layer0: Vec<u32>,
    pub(crate) upper: Vec<Vec<u32>>,
    pub(crate) entry: u32,
    pub(crate) max_level: u8,
}

impl Graph {
    pub(crate) fn new(m: usize) -> Graph {
        Graph {
            m,
            m0: 2 * m,
            levels: Vec::new(),
            layer0: Vec::new(),
            upper: Vec::new(),
            entry: NO_ENTRY,
            max_level: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.levels.len()
    }

    /// Capacity of a neighbour list on `layer`.
    #[inline]
    pub(crate) fn cap(&self, layer: u8) -> usize {
        if layer == 0 {
            self.m0
        } else {
            self.m
        }
    }

    /// Adds an isolated node of `level` (its vector must already be stored).
    pub(crate) fn push_node(&mut self, level: u8) {
        self.levels.push(level);
        self.layer0.resize(self.layer0.len() + 1 + self.m0, 0);
        self.upper.push(vec![0; level as usize * (1 + self.m)]);
    }

    #[inline]
    fn list_range(&self, id: u32, layer: u8) -> (bool, usize) {
        if layer == 0 {
            (true, id as usize * (1 + self.m0))
        } else {
            (false, (layer as usize - 1) * (1 + self.m))
        }
    }

    /// Neighbours of `id` on `layer` (requires `layer <= levels[id]`).
    #[inline]
    pub(crate) fn neighbors(&self, id: u32, layer: u8) -> &[u32] {
        let (l0, s) = self.list_range(id, layer);
        let buf: &[u32] = if l0 {
            &self.layer0
        } else {
            &self.upper[id as usize]
        };
        let n = buf[s] as usize;
        &buf[s + 1..s + 1 + n]
    }

    /// Replaces the neighbours of `id` on `layer` (`list.len() <= cap(layer)`).
    pub(crate) fn set_neighbors(&mut self, id: u32, layer: u8, list: &[u32]) {
        let (l0, s) = self.list_range(id, layer);
        let buf: &mut [u32] = if l0 {
            &mut self.layer0
        } else {
            &mut self.upper[id as usize]
        };
        buf[s] = list.len() as u32;
        buf[s + 1..s + 1 + list.len()].copy_from_slice(list);
    }

    /// Appends `n` to the neighbours of `id` on `layer` when there is room; `false` when full.
    fn try_push_neighbor(&mut self, id: u32, layer: u8, n: u32) -> bool {
        let cap = self.cap(layer);
        let (l0, s) = self.list_range(id, layer);
        let buf: &mut [u32] = if l0 {
            &mut self.layer0
        } else {
            &mut self.upper[id as usize]
        };
        let len = buf[s] as usize;
        if len >= cap {
            return false;
        }
        buf[s + 1 + len] = n;
        buf[s] += 1;
        true
    }

    /// Greedy walk on `layer` from `cur` towards `q` (beam width 1).
    fn greedy(&self, vecs: Vectors<'_>, q: &[f32], mut cur: Scored, layer: u8) -> Scored {
        loop {
            let mut improved = false;
            for &n in self.neighbors(cur.id, layer) {
                let s = Scored {
                    score: dot(q, vecs.get(n)),
                    id: n,
                };
                if s > cur {
                    cur = s;
                    improved = true;
                }
            }
            if !improved {
                return cur;
            }
        }
    }

    /// Beam search on one layer (the paper's Algorithm 2, SEARCH-LAYER) from `entries` with beam
    /// width `ef`. Nodes with `skip[id] == true` (tombstones) are walked through but not
    /// returned. Returns up to `ef` distinct points plus up to `ef` copies of them, best first.
    ///
    /// Copies (see [`COPY_EPS`]) take no place in the beam: a neighbour that would enter it but
    /// is a copy of the node being expanded, or of a neighbour admitted earlier in the same
    /// expansion, is walked and returned without counting against `ef` (at most `ef` such copies
    /// per call, which bounds the work in a crowd of thousands; [`Graph::select`] makes every
    /// copy link the crowd's lowest slot, so a few are enough to find its exits). Otherwise a
    /// crowd of copies, all at one score, fills the beam with a single point and the search
    /// cannot leave it. Only a neighbour scoring within [`COPY_SCORE_WINDOW`] of the other node
    /// gets the vector check; without copies the result is exactly Algorithm 2's.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn search_layer(
        &self,
        vecs: Vectors<'_>,
        q: &[f32],
        entries: &[Scored],
        ef: usize,
        layer: u8,
        visited: &mut Visited,
        skip: Option<&[bool]>,
    ) -> Vec<Scored> {
        let ef = ef.max(1);
        let mut candidates: BinaryHeap<Scored> = BinaryHeap::with_capacity(ef * 2);
        let mut results: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(ef + 1);
        let skipped = |id: u32| skip.is_some_and(|s| s[id as usize]);
        let mut fresh: Vec<u32> = Vec::with_capacity(self.m0);
        // neighbours admitted in the current expansion (copy checks), and copies met so far
        let mut admitted: Vec<Scored> = Vec::with_capacity(self.m0);
        let mut copies: Vec<Scored> = Vec::new();
        let mut copies_left = ef;
        for &e in entries {
            if visited.insert(e.id) {
                candidates.push(e);
                if !skipped(e.id) {
                    results.push(Reverse(e));
                    if results.len() > ef {
                        results.pop();
                    }
                }
            }
        }
        while let Some(c) = candidates.pop() {
            if results.len() >= ef {
                if let Some(Reverse(worst)) = results.peek() {
                    if c.score < worst.score {
                        break;
                    }
                }
            }
            // Two passes: mark the unvisited neighbours and start fetching their vectors, then
            // score them — the memory loads overlap instead of stalling one after another.
            fresh.clear();
            for &n in self.neighbors(c.id, layer) {
                if visited.insert(n) {
                    prefetch(vecs.get(n));
                    fresh.push(n);
                }
            }
            admitted.clear();
            for &n in &fresh {
                let nv = vecs.get(n);
                let s = Scored {
                    score: dot(q, nv),
                    id: n,
                };
                let admit =
                    results.len() < ef || results.peek().is_some_and(|Reverse(worst)| s > *worst);
                if !admit {
                    continue;
                }
                let near = |o: &Scored| (s.score - o.score).abs() <= COPY_SCORE_WINDOW;
                let copy_of = |o: u32| is_copy(dot(nv, vecs.get(o)));
                if (near(&c) && copy_of(c.id)) || admitted.iter().any(|a| near(a) && copy_of(a.id))
                {
                    if copies_left > 0 {
                        copies_left -= 1;
                        candidates.push(s);
                        if !skipped(n) {
                            copies.push(s);
                        }
                    }
                    continue;
                }
                candidates.push(s);
                admitted.push(s);
                if !skipped(n) {
                    results.push(Reverse(s));
                    if results.len() > ef {
                        results.pop();
                    }
                }
            }
        }
        let mut out: Vec<Scored> = results.into_iter().map(|Reverse(s)| s).collect();
        out.append(&mut copies);
        sort_best_first(&mut out);
        out
    }

    /// Full k-NN search: greedy descent to layer 1, then beam `ef` on layer 0, skipping
    /// tombstones in the result. Returns up to `ef` nodes, best first.
    pub(crate) fn search(
        &self,
        vecs: Vectors<'_>,
        q: &[f32],
        ef: usize,
        visited: &mut Visited,
        skip: Option<&[bool]>,
    ) -> Vec<Scored> {
        if self.entry == NO_ENTRY {
            return Vec::new();
        }
        let mut cur = Scored {
            score: dot(q, vecs.get(self.entry)),
            id: self.entry,
        };
        for layer in (1..=self.max_level).rev() {
            cur = self.greedy(vecs, q, cur, layer);
        }
        visited.reset(self.len());
        self.search_layer(vecs, q, &[cur], ef, 0, visited, skip)
    }

    /// The neighbour-selection heuristic (Algorithm 4) for a base point `b`: walking `cands`
    /// (scored against `b`, best first), keep a candidate only if it is closer to `b` than to
    /// every candidate kept so far; stop at `m`. Spreads links over directions instead of piling
    /// them into one cluster. Writes at most `m` slot ids to `out`; `spare` is scratch.
    ///
    /// Copies (cosine distance ≤ [`COPY_EPS`]) are one point, and "closer" means nothing
    /// between them (at distance 0 every copy ties with every other; a few `f32` steps apart,
    /// rounding decides). So:
    ///
    /// * a candidate that is a copy of a kept neighbour adds no direction and is set aside; the
    ///   one kept is the lowest slot of the copies met, so every list that reaches a crowd of
    ///   copies shares the same entry into it;
    /// * a kept neighbour that is a copy of `b` itself hides no candidate (it is as far from
    ///   every candidate as `b` is).
    ///
    /// Set-aside copies *of `b`* then fill the room the diversity pass left, newest (highest
    /// slot) first — the paper's `keepPrunedConnections`, restricted to copies: a node's copies
    /// stay linked to each other, and a new copy gets reverse links, without ever displacing a
    /// link to a distinct point.
    ///
    /// Unless some candidate is a copy of another or of `b`, the result is exactly Algorithm 4's.
    fn select(
        &self,
        vecs: Vectors<'_>,
        cands: &[Scored],
        m: usize,
        out: &mut Vec<u32>,
        spare: &mut Vec<u32>,
    ) {
        out.clear();
        spare.clear();
        // `out[..lead]` are copies of `b`: they score highest, so they are kept first.
        let mut lead = 0;
        'cands: for c in cands {
            if out.len() >= m {
                break;
            }
            let cv = vecs.get(c.id);
            for (i, r) in out.iter_mut().enumerate() {
                let sim = dot(cv, vecs.get(*r));
                if is_copy(sim) {
                    let set_aside = if c.id < *r {
                        let kept = core::mem::replace(r, c.id);
                        (i < lead).then_some(kept)
                    } else {
                        is_copy(c.score).then_some(c.id)
                    };
                    spare.extend(set_aside);
                    continue 'cands;
                }
                if sim > c.score && i >= lead {
                    continue 'cands;
                }
            }
            if is_copy(c.score) {
                lead += 1;
            }
            out.push(c.id);
        }
        if out.len() < m && !spare.is_empty() {
            spare.sort_unstable_by(|a, b| b.cmp(a));
            let room = m - out.len();
            out.extend(spare.iter().take(room));
        }
    }

    /// Inserts node `id` (already pushed with [`Graph::push_node`], vector stored) with
    /// construction beam `ef_construction` (the paper's Algorithm 1, INSERT).
    pub(crate) fn insert(
        &mut self,
        vecs: Vectors<'_>,
        id: u32,
        ef_construction: usize,
        visited: &mut Visited,
    ) {
        let level = self.levels[id as usize];
        if self.entry == NO_ENTRY {
            self.entry = id;
            self.max_level = level;
            return;
        }
        let q = vecs.get(id);
        let mut cur = Scored {
            score: dot(q, vecs.get(self.entry)),
            id: self.entry,
        };
        for layer in (level.saturating_add(1)..=self.max_level).rev() {
            cur = self.greedy(vecs, q, cur, layer);
        }
        let mut entries = vec![cur];
        let mut selected = Vec::with_capacity(self.m0 + 1);
        let mut pruned = Vec::with_capacity(self.m0 + 1);
        let mut scratch: Vec<Scored> = Vec::with_capacity(self.m0 + 1);
        let mut spare: Vec<u32> = Vec::new();
        for layer in (0..=level.min(self.max_level)).rev() {
            visited.reset(self.len());
            let found = self.search_layer(vecs, q, &entries, ef_construction, layer, visited, None);
            self.select(vecs, &found, self.m, &mut selected, &mut spare);
            self.set_neighbors(id, layer, &selected);
            for &n in &selected {
                if self.try_push_neighbor(n, layer, id) {
                    continue;
                }
                // `n`'s list is full: re-select its neighbours among the old ones plus `id`.
                let nv = vecs.get(n);
                scratch.clear();
                scratch.extend(
                    self.neighbors(n, layer)
                        .iter()
                        .chain(core::iter::once(&id))
                        .map(|&o| Scored {
                            score: dot(nv, vecs.get(o)),
                            id: o,
                        }),
                );
                sort_best_first(&mut scratch);
                self.select(vecs, &scratch, self.cap(layer), &mut pruned, &mut spare);
                self.set_neighbors(n, layer, &pruned);
            }
            entries = found;
        }
        if level > self.max_level {
            self.entry = id;
            self.max_level = level;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Document, Index, Params};
    use crate::manifest::{ManifestFields, Metric, ModelVersion};
    use crate::util::{normalize_into, SplitMix64};

    fn index(dims: usize) -> Index {
        let fields = ManifestFields {
            model_id: "test".into(),
            model_version: ModelVersion::new(1, 0, 0),
            dims,
            metric: Metric::Cosine,
            model_sha256: [0; 32],
        };
        Index::new(fields, Params::default()).unwrap()
    }

    fn insert(index: &mut Index, id: &str, v: &[f32]) {
        index.insert(Document::new(id, "", "", ""), v).unwrap();
    }

    /// A seeded vector with components uniform in `[-1, 1)`.
    fn random(rng: &mut SplitMix64, dims: usize) -> Vec<f32> {
        (0..dims)
            .map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
            .collect()
    }

    /// Slots that a walk over layer-0 links from the entry point never reaches.
    fn unreachable(index: &Index) -> Vec<String> {
        let g = &index.graph;
        let mut seen = vec![false; g.len()];
        let mut stack = vec![g.entry];
        seen[g.entry as usize] = true;
        while let Some(s) = stack.pop() {
            for &t in g.neighbors(s, 0) {
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    stack.push(t);
                }
            }
        }
        (0..g.len())
            .filter(|&s| !seen[s])
            .map(|s| index.docs[s].id.clone())
            .collect()
    }

    /// Every slot stays reachable when copies of one vector make up most of the index, whether
    /// the distinct vectors come after the copies, among them or before them.
    #[test]
    fn copies_leave_every_node_reachable() {
        // 120 copies, then three distinct vectors (the tracker's case)
        let mut a = index(4);
        for i in 0..120 {
            insert(&mut a, &format!("dup-{i}"), &[1.0; 4]);
        }
        insert(&mut a, "a", &[2.0, 1.0, 1.0, 1.0]);
        insert(&mut a, "b", &[2.1, 1.0, 1.0, 1.0]);
        insert(&mut a, "c", &[1.9, 1.0, 1.0, 1.0]);
        assert_eq!(unreachable(&a), Vec::<String>::new());

        // 310 copies with 4 distinct vectors at the front, middle and end
        let mut rng = SplitMix64 { state: 1 };
        let mut b = index(16);
        let copy = random(&mut rng, 16);
        for i in 0..314 {
            if [0, 150, 312, 313].contains(&i) {
                insert(&mut b, &format!("real-{i}"), &random(&mut rng, 16));
            } else {
                insert(&mut b, &format!("dup-{i}"), &copy);
            }
        }
        assert_eq!(unreachable(&b), Vec::<String>::new());

        // copies interleaved with random vectors, and copies that differ by float noise
        let mut c = index(8);
        for i in 0..400 {
            insert(&mut c, &format!("rnd-{i}"), &random(&mut rng, 8));
            let mut noisy = Vec::new();
            let mut v = [1.0f32; 8];
            v[i % 8] += 1e-4 * (i % 5) as f32;
            normalize_into(&v, &mut noisy);
            insert(&mut c, &format!("dup-{i}"), &noisy);
        }
        assert_eq!(unreachable(&c), Vec::<String>::new());
    }

    /// Without copies, `select` is the plain heuristic: the same lists as the paper's rule.
    #[test]
    fn select_without_copies_is_algorithm_4() {
        let mut rng = SplitMix64 { state: 7 };
        let dims = 8;
        let mut data = Vec::new();
        for _ in 0..64 {
            normalize_into(&random(&mut rng, dims), &mut data);
        }
        let vecs = Vectors { data: &data, dims };
        let g = Graph::new(4);
        for base in 0..8u32 {
            let mut cands: Vec<Scored> = (8..64u32)
                .map(|id| Scored {
                    score: dot(vecs.get(base), vecs.get(id)),
                    id,
                })
                .collect();
            sort_best_first(&mut cands);
            let (mut out, mut spare) = (Vec::new(), Vec::new());
            g.select(vecs, &cands, 8, &mut out, &mut spare);
            let mut plain: Vec<u32> = Vec::new();
            for c in &cands {
                if plain.len() < 8
                    && plain
                        .iter()
                        .all(|&r| dot(vecs.get(c.id), vecs.get(r)) <= c.score)
                {
                    plain.push(c.id);
                }
            }
            assert_eq!(out, plain);
        }
    }

    /// A crowd of copies of the base point gets one place in the diversity pass; the other
    /// copies only fill the room left (newest first), after every distinct neighbour.
    #[test]
    fn select_keeps_one_copy_in_the_diversity_pass() {
        let dims = 4;
        let mut data = Vec::new();
        for _ in 0..6 {
            normalize_into(&[1.0, 1.0, 1.0, 1.0], &mut data); // slots 0..=5: copies
        }
        normalize_into(&[2.0, 1.0, 1.0, 1.0], &mut data); // slot 6
        normalize_into(&[1.0, 1.0, 1.0, 2.0], &mut data); // slot 7
        let vecs = Vectors { data: &data, dims };
        let g = Graph::new(2);
        let mut cands: Vec<Scored> = (1..8u32)
            .map(|id| Scored {
                score: dot(vecs.get(0), vecs.get(id)),
                id,
            })
            .collect();
        sort_best_first(&mut cands);
        let (mut out, mut spare) = (Vec::new(), Vec::new());
        g.select(vecs, &cands, 5, &mut out, &mut spare);
        assert_eq!(out, [1, 6, 7, 5, 4]);
        g.select(vecs, &cands, 3, &mut out, &mut spare);
        assert_eq!(out, [1, 6, 7]);
    }
}
