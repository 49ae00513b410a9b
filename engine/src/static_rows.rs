//! The static path's per-token projected rows (§6.2, clarification F.9).
//!
//! A static model's embedding is `normalize(W·mean_t LN(e_t) + b)`. LayerNorm acts on one token
//! row and the projection is linear, so the mean commutes with both:
//! `W·mean_t LN(e_t) = mean_t (W·LN(e_t))`. The projected row `r_t = W·LN(e_t)` (`output_dim`
//! floats) depends on the token alone, so it is computed once, on the token's first use, and a
//! sentence then costs its tokenisation, a sum of rows and one normalisation — instead of an
//! int4 unpack and a LayerNorm per token plus a `d_model × output_dim` projection per sentence.
//!
//! The cache holds only the tokens seen (a `OnceLock` per vocabulary entry, 24 bytes each while
//! empty; a filled row is `4 · output_dim` bytes), is shared by threads (`Model` stays `Sync`),
//! and is filled by the same kernels on every target: rows come from
//! [`crate::kernels::matmul_nt_portable`] (one summation order, no FMA) and sentences add rows in
//! token order, so native and wasm builds give the same bits.

use std::fmt;
use std::sync::OnceLock;

use crate::kernels;
use crate::model::Model;
use crate::ops::layer_norm_row;

/// Rows filled together by [`Model::prepare_static_rows`] (bounds its scratch to
/// `ROW_BATCH × (d_model + output_dim)` floats).
const ROW_BATCH: usize = 256;

/// One lazily filled projected row per vocabulary entry (static models only).
#[derive(Clone)]
pub(crate) struct StaticRows {
    rows: Box<[OnceLock<Box<[f32]>>]>,
}

impl fmt::Debug for StaticRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticRows")
            .field("vocab", &self.rows.len())
            .field("filled", &self.filled())
            .finish()
    }
}

impl StaticRows {
    /// An empty cache for `vocab_size` tokens (nothing is computed yet).
    pub(crate) fn new(vocab_size: usize) -> Self {
        StaticRows {
            rows: (0..vocab_size).map(|_| OnceLock::new()).collect(),
        }
    }

    /// How many rows have been computed.
    pub(crate) fn filled(&self) -> usize {
        self.rows.iter().filter(|r| r.get().is_some()).count()
    }
}

impl Model {
    /// `LN(e_id)` (final LayerNorm of the token's embedding row) into `ln`, using `row` as
    /// scratch; both `d_model` long.
    fn static_ln_row(&self, id: u32, row: &mut [f32], ln: &mut [f32]) {
        let d = self.header.d_model as usize;
        self.embeddings.row_into(id as usize, d, row);
        layer_norm_row(row, Some((&self.final_ln_weight, &self.final_ln_bias)), ln);
    }

    /// The projected row `W·LN(e_id)` (`output_dim` floats, no bias) of a static model,
    /// computed on first use. `id` must be `< vocab_size`; the model must be static.
    #[inline]
    pub(crate) fn static_row(&self, id: u32) -> &[f32] {
        let cache = self
            .static_rows
            .as_ref()
            .expect("static_row on a static model");
        cache.rows[id as usize].get_or_init(|| {
            let d = self.header.d_model as usize;
            let od = self.output_dim();
            let (mut row, mut ln) = (vec![0f32; d], vec![0f32; d]);
            self.static_ln_row(id, &mut row, &mut ln);
            let mut out = vec![0f32; od];
            kernels::matmul_nt_portable(&ln, 1, d, &self.projection_weight, od, &mut out);
            out.into_boxed_slice()
        })
    }

    /// Writes the first `p.len()` values of `mean_t r_t + b` for the ids `ids` (valid, non-empty)
    /// of a static model into `p`: rows added in token order, then one division and the bias.
    pub(crate) fn static_project_prefix(&self, ids: &[u32], p: &mut [f32]) {
        sum_rows(self, ids, p);
        let count = ids.len() as f32;
        for (pi, &bj) in p.iter_mut().zip(&self.projection_bias) {
            *pi = *pi / count + bj;
        }
    }

    /// Fills the static path's cache for every id in `ids` (any order, repeats allowed, all
    /// `< vocab_size`) with batched projections, so a bulk caller pays one pass over the
    /// projection matrix per 8 new tokens (`matmul_nt_portable`'s row blocks). Rows already there are kept. A no-op for
    /// transformer models.
    pub(crate) fn fill_static_rows(&self, ids: impl IntoIterator<Item = u32>) {
        let Some(cache) = &self.static_rows else {
            return;
        };
        let mut ids = ids.into_iter();
        // The common case (everything cached) allocates nothing.
        let Some(first) = ids.find(|&id| cache.rows[id as usize].get().is_none()) else {
            return;
        };
        let mut missing: Vec<u32> = std::iter::once(first)
            .chain(ids.filter(|&id| cache.rows[id as usize].get().is_none()))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let d = self.header.d_model as usize;
        let od = self.output_dim();
        let mut row = vec![0f32; d];
        let mut ln = vec![0f32; ROW_BATCH.min(missing.len()) * d];
        let mut out = vec![0f32; ROW_BATCH.min(missing.len()) * od];
        for chunk in missing.chunks(ROW_BATCH) {
            for (&id, l) in chunk.iter().zip(ln.chunks_exact_mut(d)) {
                self.static_ln_row(id, &mut row, l);
            }
            let m = chunk.len();
            kernels::matmul_nt_portable(
                &ln[..m * d],
                m,
                d,
                &self.projection_weight,
                od,
                &mut out[..m * od],
            );
            for (&id, r) in chunk.iter().zip(out.chunks_exact(od)) {
                // Another thread may have filled it meanwhile: the same bits, so keep either.
                let _ = cache.rows[id as usize].set(r.to_vec().into_boxed_slice());
            }
        }
    }

    /// For a static model, computes the projected row of every vocabulary entry now (about
    /// `4 · vocab_size · output_dim` bytes: 46.9 MB for 30,522 × 384), so later calls never pay
    /// a first use. Embeddings do not change. A no-op for transformer models.
    ///
    /// Worth it only for bulk work over a large, varied corpus; otherwise rows fill as tokens
    /// are met.
    pub fn prepare_static_rows(&self) {
        self.fill_static_rows(0..self.header.vocab_size);
    }

    /// Projected rows cached so far by the static path (`0` for transformer models). For
    /// memory reports: each is `4 · output_dim` bytes.
    pub fn static_rows_cached(&self) -> usize {
        self.static_rows.as_ref().map_or(0, StaticRows::filled)
    }
}

crate::kernels::multiversion! {
    /// `p = Σ_t r_t[..p.len()]` over `ids` (non-empty, valid), added in token order.
    fn sum_rows(model: &Model, ids: &[u32], p: &mut [f32]) => sum_rows_impl
}

/// Four rows per pass over `p` (fewer loads and stores of the running sum), each element still
/// `(((p + r₁) + r₂) + r₃) + r₄`: the same additions in the same order as one row at a time.
#[inline(always)]
fn sum_rows_impl(model: &Model, ids: &[u32], p: &mut [f32]) {
    let n = p.len();
    p.copy_from_slice(&model.static_row(ids[0])[..n]);
    let mut quads = ids[1..].chunks_exact(4);
    for q in &mut quads {
        let (a, b) = (&model.static_row(q[0])[..n], &model.static_row(q[1])[..n]);
        let (c, d) = (&model.static_row(q[2])[..n], &model.static_row(q[3])[..n]);
        for ((((pi, &ai), &bi), &ci), &di) in p.iter_mut().zip(a).zip(b).zip(c).zip(d) {
            *pi = (((*pi + ai) + bi) + ci) + di;
        }
    }
    for &id in quads.remainder() {
        for (pi, &r) in p.iter_mut().zip(&model.static_row(id)[..n]) {
            *pi += r;
        }
    }
}
