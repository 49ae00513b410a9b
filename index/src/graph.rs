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
    /// returned. Returns up to `ef` nodes, best first.
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
            for &n in &fresh {
                let s = Scored {
                    score: dot(q, vecs.get(n)),
                    id: n,
                };
                let admit =
                    results.len() < ef || results.peek().is_some_and(|Reverse(worst)| s > *worst);
                if admit {
                    candidates.push(s);
                    if !skipped(n) {
                        results.push(Reverse(s));
                        if results.len() > ef {
                            results.pop();
                        }
                    }
                }
            }
        }
        let mut out: Vec<Scored> = results.into_iter().map(|Reverse(s)| s).collect();
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
    /// Copies (cosine distance ≤ [`COPY_EPS`]) need two extra rules, because "closer" means
    /// nothing at distance 0 and a crowd of copies would otherwise fill the whole list:
    ///
    /// * a candidate that is a copy of a kept neighbour adds no direction and is set aside, so
    ///   the diversity pass keeps one copy of each point;
    /// * a kept neighbour that is a copy of `b` itself hides no candidate (it is exactly as far
    ///   from every candidate as `b` is; float noise must not decide).
    ///
    /// Set-aside copies *of `b`* then fill the room the diversity pass left, best first and,
    /// among equal scores, newest (highest slot) first — the paper's `keepPrunedConnections`,
    /// restricted to copies, so a node's copies stay linked to each other (and the newest copy
    /// gets reverse links) without ever displacing a link to a distinct point.
    ///
    /// Unless some candidate is a copy of `b`, the result is exactly Algorithm 4's.
    fn select(
        &self,
        vecs: Vectors<'_>,
        cands: &[Scored],
        m: usize,
        out: &mut Vec<u32>,
        spare: &mut Vec<Scored>,
    ) {
        out.clear();
        spare.clear();
        // `out[..lead]` are copies of `b`: they score highest, so they are kept first.
        let mut lead = 0;
        for c in cands {
            if out.len() >= m {
                break;
            }
            let cv = vecs.get(c.id);
            let mut keep = true;
            for (i, &r) in out.iter().enumerate() {
                let sim = dot(cv, vecs.get(r));
                if is_copy(sim) {
                    if is_copy(c.score) {
                        spare.push(*c);
                    }
                    keep = false;
                    break;
                }
                if sim > c.score && i >= lead {
                    keep = false;
                    break;
                }
            }
            if keep {
                if is_copy(c.score) {
                    lead += 1;
                }
                out.push(c.id);
            }
        }
        if out.len() < m && !spare.is_empty() {
            spare.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(b.id.cmp(&a.id)));
            let room = m - out.len();
            out.extend(spare.iter().take(room).map(|s| s.id));
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
        let mut spare: Vec<Scored> = Vec::new();
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
mod debug_tests {
    use crate::index::{Document, Index, Params};
    use crate::manifest::{ManifestFields, Metric, ModelVersion};

    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn uniform(&mut self) -> f32 {
            (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
        }
        fn normal(&mut self) -> f32 {
            (0..12).map(|_| self.uniform()).sum::<f32>() - 6.0
        }
    }

    #[test]
    fn debug_dups_random() {
        const DIMS: usize = 8;
        let mut rng = Rng(42);
        let fields = ManifestFields {
            model_id: "x".into(),
            model_version: ModelVersion::new(1, 0, 0),
            dims: DIMS,
            metric: Metric::Cosine,
            model_sha256: [0; 32],
        };
        let mut index = Index::new(fields, Params::default()).unwrap();
        let dup = [1.0f32; DIMS];
        let d = |s: String| Document::new(s, "", "", "");
        for i in 0..100 {
            index.insert(d(format!("dup-{i}")), &dup).unwrap();
        }
        for i in 0..300 {
            let v: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
            index.insert(d(format!("rnd-{i}")), &v).unwrap();
            if i % 3 == 0 {
                index.insert(d(format!("dup-x{i}")), &dup).unwrap();
            }
        }
        let g = &index.graph;
        let n = g.len();
        let name = |s: u32| index.docs[s as usize].id.clone();
        let mut indeg = vec![0; n];
        for s in 0..n as u32 {
            for &t in g.neighbors(s, 0) {
                indeg[t as usize] += 1;
            }
        }
        let mut seen = vec![false; n];
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
        let unreach: Vec<String> = (0..n as u32)
            .filter(|&s| !seen[s as usize])
            .map(name)
            .collect();
        eprintln!(
            "entry {} max_level {} unreachable {}: {:?}",
            name(g.entry),
            g.max_level,
            unreach.len(),
            unreach
        );
        let zero: Vec<String> = (0..n as u32)
            .filter(|&s| indeg[s as usize] == 0)
            .map(name)
            .collect();
        eprintln!("in-degree 0: {}", zero.len());
        for id in [
            "rnd-23", "rnd-65", "rnd-258", "rnd-2", "dup-0", "dup-5", "dup-x3",
        ] {
            let s = index.ids[id];
            let l: Vec<String> = g.neighbors(s, 0).iter().map(|&t| name(t)).collect();
            eprintln!(
                "{id} (level {}, indeg {}): {:?}",
                g.levels[s as usize], indeg[s as usize], l
            );
        }
        // how many rnd nodes link to a copy; how many copies link to rnd nodes
        let is_dup = |s: u32| name(s).starts_with("dup");
        let copies_with_rnd = (0..n as u32)
            .filter(|&s| is_dup(s) && g.neighbors(s, 0).iter().any(|&t| !is_dup(t)))
            .count();
        eprintln!("copies with a rnd neighbour: {copies_with_rnd}");
        let avg_rnd_deg: f64 = (0..n as u32)
            .filter(|&s| !is_dup(s))
            .map(|s| g.neighbors(s, 0).len() as f64)
            .sum::<f64>()
            / 300.0;
        eprintln!("avg rnd out-degree {avg_rnd_deg}");
    }
}
