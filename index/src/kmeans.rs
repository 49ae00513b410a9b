//! Spherical k-means: the partitions of a fragmented index's vector codes
//! ([`crate::fragments`]).
//!
//! Deterministic: the same rows, `k` and seed give the same clusters on every target (the
//! training sample and the first centroids come from a seeded SplitMix64; sums are `f64` in row
//! order; similarities use [`crate::util::dot`], whose summation order is fixed).

use crate::util::{dot, SplitMix64};

/// The seed [`crate::fragments`] trains with (any fixed value: the clusters, and so the bytes a
/// build writes, must not change between runs).
pub(crate) const SEED: u64 = 0x6c65_6976_6621; // "lefiv!"

/// Training rows per centroid at most: k-means on a sample of `TRAIN_PER_CLUSTER · k` rows, then
/// every row assigned to its nearest centroid (the centroids barely move past ~100 rows each).
const TRAIN_PER_CLUSTER: usize = 128;

/// Lloyd iterations at most (it stops earlier once no training row changes cluster).
const MAX_ITERS: usize = 16;

/// The clusters of `n` rows.
#[derive(Debug, Clone)]
pub(crate) struct Clusters {
    /// `k × dims`, row-major: each cluster's mean row (not normalised: its length says how
    /// tight the cluster is).
    pub means: Vec<f32>,
    /// The cluster of each row, `0..k`; every cluster has at least one row.
    pub assign: Vec<u32>,
}

impl Clusters {
    /// Number of clusters.
    pub(crate) fn k(&self, dims: usize) -> usize {
        self.means.len() / dims.max(1)
    }
}

/// Index of the row of `centroids` (`k × dims`, unit rows) with the largest inner product with
/// `x` (ties: the lower index).
fn nearest(centroids: &[f32], dims: usize, x: &[f32]) -> (u32, f32) {
    let mut best = (0u32, f32::NEG_INFINITY);
    for (j, c) in centroids.chunks_exact(dims).enumerate() {
        let s = dot(c, x);
        if s > best.1 {
            best = (j as u32, s);
        }
    }
    best
}

/// Spherical k-means of `rows` (`n × dims`, each L2-normalised) into at most `k` clusters
/// (fewer when there are fewer distinct rows than `k`: empty clusters are dropped), seeded by
/// `seed`. `n = 0` or `k = 0` gives no clusters.
pub(crate) fn spherical_kmeans(rows: &[f32], dims: usize, k: usize, seed: u64) -> Clusters {
    let n = if dims == 0 { 0 } else { rows.len() / dims };
    let k = k.min(n);
    if k == 0 {
        return Clusters {
            means: Vec::new(),
            assign: vec![0; n],
        };
    }
    let row = |i: usize| &rows[i * dims..(i + 1) * dims];
    // A seeded shuffle of the row numbers: its first rows train, its first k seed the centroids.
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let train = &order[..n.min(TRAIN_PER_CLUSTER.saturating_mul(k))];
    let mut centroids: Vec<f32> = train[..k].iter().flat_map(|&i| row(i).to_vec()).collect();
    let mut assign = vec![u32::MAX; train.len()];
    let mut sims = vec![0.0f32; train.len()];
    for _ in 0..MAX_ITERS {
        let mut changed = false;
        for (t, &i) in train.iter().enumerate() {
            let (c, s) = nearest(&centroids, dims, row(i));
            changed |= assign[t] != c;
            assign[t] = c;
            sims[t] = s;
        }
        if !changed {
            break;
        }
        let mut sums = vec![0.0f64; k * dims];
        let mut counts = vec![0usize; k];
        for (t, &i) in train.iter().enumerate() {
            let c = assign[t] as usize;
            counts[c] += 1;
            for (s, &x) in sums[c * dims..(c + 1) * dims].iter_mut().zip(row(i)) {
                *s += x as f64;
            }
        }
        // An empty cluster restarts at the training row farthest from its centroid (each such
        // row used once), so no centroid is wasted.
        let mut far: Vec<usize> = (0..train.len()).collect();
        far.sort_by(|&a, &b| sims[a].total_cmp(&sims[b]).then(a.cmp(&b)));
        let mut far = far.into_iter();
        for c in 0..k {
            let out = &mut centroids[c * dims..(c + 1) * dims];
            if counts[c] == 0 {
                if let Some(t) = far.next() {
                    out.copy_from_slice(row(train[t]));
                }
                continue;
            }
            let sum = &sums[c * dims..(c + 1) * dims];
            let norm = sum.iter().map(|s| s * s).sum::<f64>().sqrt();
            if norm > 0.0 {
                for (o, s) in out.iter_mut().zip(sum) {
                    *o = (s / norm) as f32;
                }
            }
        }
    }
    // Every row to its nearest centroid; empty clusters dropped, the rest renumbered in order.
    let mut all: Vec<u32> = (0..n)
        .map(|i| nearest(&centroids, dims, row(i)).0)
        .collect();
    let mut sums = vec![0.0f64; k * dims];
    let mut counts = vec![0usize; k];
    for (i, &c) in all.iter().enumerate() {
        counts[c as usize] += 1;
        for (s, &x) in sums[c as usize * dims..(c as usize + 1) * dims]
            .iter_mut()
            .zip(row(i))
        {
            *s += x as f64;
        }
    }
    let mut renumber = vec![u32::MAX; k];
    let mut means = Vec::new();
    for c in 0..k {
        if counts[c] > 0 {
            renumber[c] = (means.len() / dims) as u32;
            means.extend(
                sums[c * dims..(c + 1) * dims]
                    .iter()
                    .map(|&s| (s / counts[c] as f64) as f32),
            );
        }
    }
    for c in &mut all {
        *c = renumber[*c as usize];
    }
    Clusters { means, assign: all }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` unit rows around `centres` directions (deterministic noise).
    fn blobs(n: usize, dims: usize, centres: usize, seed: u64) -> Vec<f32> {
        let mut rng = SplitMix64::new(seed);
        let mut out = Vec::new();
        for i in 0..n {
            let c = i % centres;
            let mut v: Vec<f32> = (0..dims)
                .map(|j| {
                    let base = if j % centres == c { 1.0 } else { 0.0 };
                    base + 0.2 * (rng.uniform_f32() - 0.5)
                })
                .collect();
            let norm = dot(&v, &v).sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            out.extend(v);
        }
        out
    }

    #[test]
    fn same_rows_same_clusters() {
        let rows = blobs(600, 16, 6, 7);
        let a = spherical_kmeans(&rows, 16, 6, SEED);
        let b = spherical_kmeans(&rows, 16, 6, SEED);
        assert_eq!(a.assign, b.assign);
        assert_eq!(
            a.means.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.means.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        // Six well-separated blobs: each cluster is one blob (rows i and i + 6 together).
        assert_eq!(a.k(16), 6);
        for i in 0..594 {
            assert_eq!(a.assign[i], a.assign[i + 6], "row {i}");
        }
        let distinct: std::collections::HashSet<u32> = a.assign[..6].iter().copied().collect();
        assert_eq!(distinct.len(), 6);
    }

    #[test]
    fn fewer_rows_than_k_and_empty_input() {
        let rows = blobs(3, 8, 3, 1);
        let c = spherical_kmeans(&rows, 8, 10, SEED);
        assert_eq!(c.k(8), 3);
        let mut a = c.assign.clone();
        a.sort_unstable();
        assert_eq!(a, vec![0, 1, 2]);
        let e = spherical_kmeans(&[], 8, 4, SEED);
        assert_eq!((e.k(8), e.assign.len()), (0, 0));
        // Identical rows: one cluster holds them all.
        let same: Vec<f32> = (0..5).flat_map(|_| [1.0, 0.0]).collect();
        let c = spherical_kmeans(&same, 2, 3, SEED);
        assert!(c.assign.iter().all(|&x| x == c.assign[0]));
        assert!(c.k(2) >= 1);
    }
}
