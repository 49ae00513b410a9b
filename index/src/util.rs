//! Small numeric helpers: the inner product kernel, L2 normalisation, the seeded PRNG and the
//! score ordering shared by the graph and exact search.

use core::cmp::Ordering;

use crate::error::IndexError;

/// Inner product of two equal-length slices.
///
/// Sixteen independent lane accumulators let LLVM vectorise the loop (SSE2/AVX natively,
/// simd128 on wasm32) without reassociating floating-point additions, so the result is
/// bit-identical on every target: the summation order is fixed by this code, not the compiler.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; LANES];
    let ca = a.chunks_exact(LANES);
    let cb = b.chunks_exact(LANES);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut tail = 0.0f32;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    let mut s8 = [0.0f32; 8];
    for i in 0..8 {
        s8[i] = acc[i] + acc[i + 8];
    }
    let s4 = [s8[0] + s8[4], s8[1] + s8[5], s8[2] + s8[6], s8[3] + s8[7]];
    (s4[0] + s4[2]) + (s4[1] + s4[3]) + tail
}

/// `v / max(‖v‖₂, 1e-12)` (the engine's final normalisation), into `out`.
pub(crate) fn normalize_into(v: &[f32], out: &mut Vec<f32>) {
    let norm = dot(v, v).sqrt().max(1e-12);
    out.extend(v.iter().map(|x| x / norm));
}

/// `v` checked (length `dims`, finite) and L2-normalised: the form every query vector is scored
/// in ([`crate::Index`] and [`crate::fragments::FragmentedIndex`]).
///
/// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`].
pub(crate) fn checked_query(v: &[f32], dims: usize) -> Result<Vec<f32>, IndexError> {
    if v.len() != dims {
        return Err(IndexError::VectorDims {
            expected: dims,
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

/// The HNSW level generator: the engine's one SplitMix64 ([`lightembed::rng`]).
pub(crate) use lightembed::rng::SplitMix64;

/// A slot id with its score against the current query. Ordered by score (higher is greater,
/// via `f32::total_cmp`), ties broken towards the **lower** slot id, so every sort and heap in
/// the crate is deterministic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scored {
    pub(crate) score: f32,
    pub(crate) id: u32,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.id.cmp(&self.id))
    }
}

/// Sorts best first (score descending, then slot id ascending).
pub(crate) fn sort_best_first(v: &mut [Scored]) {
    v.sort_unstable_by(|a, b| b.cmp(a));
}
