//! The HNSW graph (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
//! using Hierarchical Navigable Small World graphs", 2016/2018): layered proximity graphs, greedy
//! descent through the upper layers, beam search (`ef`) on each layer, and the neighbour-selection
//! heuristic (the paper's Algorithm 4, without `extendCandidates`/`keepPrunedConnections`).
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

    /// The neighbour-selection heuristic (Algorithm 4): walking `cands` best first, keep a
    /// candidate only if it is closer to the base point than to every candidate kept so far;
    /// stop at `m`. Spreads links over directions instead of piling them into one cluster.
    fn select(&self, vecs: Vectors<'_>, cands: &[Scored], m: usize, out: &mut Vec<u32>) {
        out.clear();
        for c in cands {
            if out.len() >= m {
                break;
            }
            let cv = vecs.get(c.id);
            if out.iter().all(|&r| dot(cv, vecs.get(r)) <= c.score) {
                out.push(c.id);
            }
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
        for layer in (0..=level.min(self.max_level)).rev() {
            visited.reset(self.len());
            let found = self.search_layer(vecs, q, &entries, ef_construction, layer, visited, None);
            self.select(vecs, &found, self.m, &mut selected);
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
                self.select(vecs, &scratch, self.cap(layer), &mut pruned);
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
