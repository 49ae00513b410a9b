//! The forward pass (§6): embedding lookup, transformer blocks with BitLinear (§6.3), exact-erf
//! GELU, attention without positions or masks, final LayerNorm, mean pooling over the active
//! tokens, projection, Matryoshka truncate-then-normalise (§6.4, decision 4).
//!
//! Batches are processed as one concatenation of token rows: every op except attention and
//! pooling is per token row (decision 12), so a batched result is bit-identical to embedding each
//! text alone.

use crate::kernels::{self, TernaryMatrix};
use crate::model::{EmbedError, Linear, LinearWeights, Model};
use crate::ops::{
    gelu_in_place, layer_norm, pairwise_sum_sq, quantize_activations_row, softmax_row,
};

/// Decision 4's floor on the norm.
pub const NORMALIZE_EPS: f32 = 1e-12;

/// `v / max(‖v‖₂, 1e-12)` (decision 4), with the norm's sum of squares in numpy's pairwise
/// order.
pub fn normalize(v: &[f32]) -> Vec<f32> {
    let norm = pairwise_sum_sq(v).sqrt();
    let denom = norm.max(NORMALIZE_EPS);
    v.iter().map(|&x| x / denom).collect()
}

/// [`normalize`] of `p`, refusing a non-finite result with [`EmbedError::NonFinite`]: NaN/±inf
/// anywhere in `p`, or a norm that overflows (which would silently give a zero vector)
/// (clarification F.8).
fn normalize_checked(p: &[f32]) -> Result<Vec<f32>, EmbedError> {
    let norm = pairwise_sum_sq(p).sqrt();
    if !norm.is_finite() {
        return Err(EmbedError::NonFinite);
    }
    let denom = norm.max(NORMALIZE_EPS);
    let v: Vec<f32> = p.iter().map(|&x| x / denom).collect();
    if v.iter().all(|x| x.is_finite()) {
        Ok(v)
    } else {
        Err(EmbedError::NonFinite)
    }
}

/// [`normalize_checked`] in place (the same bits), for a vector the caller owns.
pub(crate) fn normalize_checked_owned(mut p: Vec<f32>) -> Result<Vec<f32>, EmbedError> {
    let norm = pairwise_sum_sq(&p).sqrt();
    if !norm.is_finite() {
        return Err(EmbedError::NonFinite);
    }
    let denom = norm.max(NORMALIZE_EPS);
    for x in p.iter_mut() {
        *x /= denom;
    }
    if p.iter().all(|x| x.is_finite()) {
        Ok(p)
    } else {
        Err(EmbedError::NonFinite)
    }
}

thread_local! {
    /// [`Model::embed`]'s token ids on the static path (no allocation per call once grown).
    static STATIC_IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Texts tokenised together by the static path of [`Model::embed_batch`].
const STATIC_CHUNK: usize = 64;

/// Upper bound on token rows processed together by the batched forward pass (bounds scratch
/// memory; results do not depend on it).
const MAX_BATCH_TOKENS: usize = 4096;

impl Model {
    /// The L2-normalised embedding of `text` truncated to `dims` (§6, §6.4): tokenize, forward,
    /// keep the first `dims` projected values, divide by `max(‖·‖₂, 1e-12)`. Returns `dims`
    /// floats.
    ///
    /// # Errors
    /// [`EmbedError::InvalidDims`] unless `dims ∈ valid_dims()` (decision 8);
    /// [`EmbedError::NonFinite`] if the forward pass overflows.
    pub fn embed(&self, text: &str, dims: usize) -> Result<Vec<f32>, EmbedError> {
        self.check_dims(dims)?;
        if self.static_rows.is_some() {
            // Tokenizer ids are < vocab_size (checked at load) and never empty. The id buffer is
            // the thread's own, reused across calls.
            return STATIC_IDS.with_borrow_mut(|ids| {
                self.tokenizer.encode_into(text, ids);
                self.embed_static(ids, dims)
            });
        }
        let ids = self.tokenize(text);
        self.embed_ids(&ids, dims)
    }

    /// The static path (§6.2 via clarification F.9): the normalised first `dims` values of
    /// `mean_t r_t + b` over cached per-token rows. `ids` valid and non-empty.
    fn embed_static(&self, ids: &[u32], dims: usize) -> Result<Vec<f32>, EmbedError> {
        // A text's new tokens are projected together (a pass over the projection per 8 of
        // them); rows already cached are not touched.
        self.fill_static_rows(ids.iter().copied());
        self.embed_static_cached(ids, dims)
    }

    /// [`Model::embed_static`] once every row of `ids` is cached (rows still missing are
    /// computed one at a time): the sum, the bias and the normalisation.
    fn embed_static_cached(&self, ids: &[u32], dims: usize) -> Result<Vec<f32>, EmbedError> {
        let mut p = Vec::with_capacity(dims);
        p.resize(dims, 0f32);
        self.static_project_prefix(ids, &mut p);
        normalize_checked_owned(p)
    }

    /// [`Model::embed`] for many texts; element `i` equals `embed(texts[i], dims)` exactly, but
    /// token rows of several texts share each matmul (faster).
    ///
    /// # Errors
    /// [`EmbedError::InvalidDims`] unless `dims ∈ valid_dims()`; [`EmbedError::NonFinite`] if any
    /// text's forward pass overflows.
    pub fn embed_batch(&self, texts: &[&str], dims: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.check_dims(dims)?;
        if self.static_rows.is_some() {
            // STATIC_CHUNK texts at a time: the chunk's tokens not cached yet are projected
            // together (one pass over the projection per 8 new tokens, not one per token), then
            // each text is a sum of rows.
            let mut ids: Vec<Vec<u32>> = vec![Vec::new(); STATIC_CHUNK.min(texts.len())];
            let mut out = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(STATIC_CHUNK) {
                let ids = &mut ids[..chunk.len()];
                for (t, buf) in chunk.iter().zip(ids.iter_mut()) {
                    self.tokenizer.encode_into(t, buf);
                }
                self.fill_static_rows(ids.iter().flatten().copied());
                for s in ids.iter() {
                    out.push(self.embed_static_cached(s, dims)?);
                }
            }
            return Ok(out);
        }
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.tokenize(t)).collect();
        let seqs: Vec<&[u32]> = ids.iter().map(|v| v.as_slice()).collect();
        let od = self.output_dim();
        let projected = self.project_batch(&seqs)?;
        projected
            .chunks_exact(od)
            .map(|p| normalize_checked(&p[..dims]))
            .collect()
    }

    /// The embedding of an already tokenized sequence (ids as [`Model::tokenize`] returns them,
    /// `[CLS]`/`[SEP]` included; every id counts as active).
    ///
    /// # Errors
    /// [`EmbedError::InvalidDims`], [`EmbedError::TokenIdOutOfRange`], [`EmbedError::EmptyInput`],
    /// [`EmbedError::NonFinite`].
    pub fn embed_ids(&self, ids: &[u32], dims: usize) -> Result<Vec<f32>, EmbedError> {
        self.check_dims(dims)?;
        if self.static_rows.is_some() {
            self.check_ids(ids)?;
            return self.embed_static(ids, dims);
        }
        let p = self.project_batch(&[ids])?;
        normalize_checked(&p[..dims])
    }

    /// The un-normalised projection (`output_dim` values) of one id sequence: §6.1/§6.2 up to
    /// `projected`. Normalising a prefix of it gives every Matryoshka embedding at once. Values
    /// are returned as computed (non-finite only for numerically broken weights, F.8).
    ///
    /// # Errors
    /// [`EmbedError::TokenIdOutOfRange`], [`EmbedError::EmptyInput`].
    pub fn project_ids(&self, ids: &[u32]) -> Result<Vec<f32>, EmbedError> {
        self.project_batch(&[ids])
    }

    /// Un-normalised projections of several id sequences: `seqs.len() × output_dim` row-major.
    ///
    /// # Errors
    /// [`EmbedError::TokenIdOutOfRange`], [`EmbedError::EmptyInput`].
    pub fn project_batch(&self, seqs: &[&[u32]]) -> Result<Vec<f32>, EmbedError> {
        for s in seqs {
            self.check_ids(s)?;
        }
        let od = self.output_dim();
        let mut out = vec![0f32; seqs.len() * od];
        let mut start = 0;
        while start < seqs.len() {
            // Group consecutive sequences up to MAX_BATCH_TOKENS rows (at least one sequence).
            let mut end = start + 1;
            let mut tokens = seqs[start].len();
            while end < seqs.len() && tokens + seqs[end].len() <= MAX_BATCH_TOKENS {
                tokens += seqs[end].len();
                end += 1;
            }
            self.forward_group(&seqs[start..end], &mut out[start * od..end * od]);
            start = end;
        }
        Ok(out)
    }

    /// `Ok` if `ids` is non-empty and every id is `< vocab_size`.
    fn check_ids(&self, ids: &[u32]) -> Result<(), EmbedError> {
        let vocab_size = self.header.vocab_size;
        if ids.is_empty() {
            return Err(EmbedError::EmptyInput);
        }
        if let Some(&id) = ids.iter().find(|&&id| id >= vocab_size) {
            return Err(EmbedError::TokenIdOutOfRange { id, vocab_size });
        }
        Ok(())
    }

    /// Forward for a group of valid sequences; writes `seqs.len() × output_dim` projections.
    fn forward_group(&self, seqs: &[&[u32]], out: &mut [f32]) {
        let d = self.header.d_model as usize;
        let od = self.output_dim();
        if self.static_rows.is_some() {
            // Static model (§6.2): the mean of cached per-token projected rows plus the bias
            // (clarification F.9), per sequence.
            for (s, o) in seqs.iter().zip(out.chunks_exact_mut(od)) {
                self.static_project_prefix(s, o);
            }
            return;
        }
        let total: usize = seqs.iter().map(|s| s.len()).sum();
        let mut x = vec![0f32; total * d];
        for (row, &id) in x
            .chunks_exact_mut(d)
            .zip(seqs.iter().flat_map(|s| s.iter()))
        {
            self.embeddings.row_into(id as usize, d, row);
        }
        let mut h = vec![0f32; total * d];
        if !self.layers.is_empty() {
            let f = self.header.ffn_dim as usize;
            let mut qkv = vec![0f32; total * 3 * d];
            let mut merged = vec![0f32; total * d];
            let mut tmp = vec![0f32; total * d];
            // The FFN runs FFN_ROWS token rows at a time (rows are independent): its
            // `rows × ffn_dim` buffer stays bounded whatever the window and ffn_dim.
            let ffn_rows = total.min(FFN_ROWS);
            let mut up = vec![0f32; ffn_rows * f];
            let mut scratch = LinearScratch::default();
            for layer in &self.layers {
                layer_norm(&x, d, Some((&layer.ln1_weight, &layer.ln1_bias)), &mut h);
                linear(&h, total, &layer.qkv, &mut qkv, &mut scratch);
                let heads = self.header.n_heads as usize;
                attention(&qkv, seqs, d, heads, ATTENTION_BLOCK, &mut merged);
                linear(&merged, total, &layer.out, &mut tmp, &mut scratch);
                for (xi, &a) in x.iter_mut().zip(&tmp) {
                    *xi += a;
                }
                layer_norm(&x, d, Some((&layer.ln2_weight, &layer.ln2_bias)), &mut h);
                for (hc, tc) in h.chunks(ffn_rows * d).zip(tmp.chunks_mut(ffn_rows * d)) {
                    let m = hc.len() / d;
                    let upc = &mut up[..m * f];
                    linear(hc, m, &layer.up, upc, &mut scratch);
                    gelu_in_place(upc);
                    linear(upc, m, &layer.down, tc, &mut scratch);
                }
                for (xi, &a) in x.iter_mut().zip(&tmp) {
                    *xi += a;
                }
            }
        }
        layer_norm(
            &x,
            d,
            Some((&self.final_ln_weight, &self.final_ln_bias)),
            &mut h,
        );

        // Mean over each sequence's rows: sequential row sums, then one division (numpy's
        // `mean(axis=0)`).
        let mut pooled = vec![0f32; seqs.len() * d];
        let mut r0 = 0;
        for (si, s) in seqs.iter().enumerate() {
            let p = &mut pooled[si * d..(si + 1) * d];
            p.copy_from_slice(&h[r0 * d..(r0 + 1) * d]);
            for r in r0 + 1..r0 + s.len() {
                for (pi, &v) in p.iter_mut().zip(&h[r * d..(r + 1) * d]) {
                    *pi += v;
                }
            }
            let n = s.len() as f32;
            for pi in p.iter_mut() {
                *pi /= n;
            }
            r0 += s.len();
        }

        self.project_pooled(&pooled, seqs.len(), out);
    }

    /// `out = pooled · Wᵀ + b` for `b` pooled rows (§6.1 `projected`).
    fn project_pooled(&self, pooled: &[f32], b: usize, out: &mut [f32]) {
        let d = self.header.d_model as usize;
        let od = self.output_dim();
        // One summation order on every target (`matmul_nt_portable`): a static model embeds to
        // the same floats natively and in wasm.
        kernels::matmul_nt_portable(pooled, b, d, &self.projection_weight, od, out);
        for row in out.chunks_exact_mut(od) {
            for (o, &bj) in row.iter_mut().zip(&self.projection_bias) {
                *o += bj;
            }
        }
    }
}

/// Token rows per FFN step: the `FFN_ROWS × ffn_dim` activation buffer is bounded (ffn_dim and the
/// window are header fields); 512 rows hold every sequence of both shipped models' windows.
const FFN_ROWS: usize = 512;

/// Query rows per block of attention scores: the scores buffer is `min(n, 256) × n` floats, not
/// `n × n` — a model whose header allows a long window (`max_seq_len` up to 65,535) must not turn
/// one long input into a 17 GB allocation. Windows of ≤ 256 tokens (both shipped models) are one
/// block, i.e. the same computation as before.
const ATTENTION_BLOCK: usize = 256;

/// Multi-head self-attention of each sequence over itself (§6.1): `qkv` is `[total × 3d]`
/// (Q | K | V), `merged` receives `[total × d]` with head `j` in columns `j·d_head..(j+1)·d_head`.
/// No positions, no mask (padding is never processed). Scores are computed `block` query rows at a
/// time (each row's softmax sees all `n` keys, so any `block ≥ 1` gives the same rows).
fn attention(
    qkv: &[f32],
    seqs: &[&[u32]],
    d: usize,
    heads: usize,
    block: usize,
    merged: &mut [f32],
) {
    let block = block.max(1);
    let dh = d / heads;
    let sqrt_dh = (dh as f64).sqrt() as f32;
    let max_n = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut qh = vec![0f32; max_n * dh];
    let mut kh = vec![0f32; max_n * dh];
    let mut vh = vec![0f32; max_n * dh];
    let mut scores = vec![0f32; max_n.min(block) * max_n];
    let mut ah = vec![0f32; max_n * dh];
    let mut r0 = 0;
    for s in seqs {
        let n = s.len();
        for head in 0..heads {
            let c0 = head * dh;
            for i in 0..n {
                let row = &qkv[(r0 + i) * 3 * d..(r0 + i + 1) * 3 * d];
                qh[i * dh..(i + 1) * dh].copy_from_slice(&row[c0..c0 + dh]);
                kh[i * dh..(i + 1) * dh].copy_from_slice(&row[d + c0..d + c0 + dh]);
                vh[i * dh..(i + 1) * dh].copy_from_slice(&row[2 * d + c0..2 * d + c0 + dh]);
            }
            let mut i0 = 0;
            while i0 < n {
                let bn = block.min(n - i0);
                let sc = &mut scores[..bn * n];
                kernels::matmul_nt(&qh[i0 * dh..(i0 + bn) * dh], bn, dh, &kh[..n * dh], n, sc);
                for row in sc.chunks_exact_mut(n) {
                    for v in row.iter_mut() {
                        *v /= sqrt_dh;
                    }
                    softmax_row(row);
                }
                kernels::matmul_nn(
                    sc,
                    bn,
                    n,
                    &vh[..n * dh],
                    dh,
                    &mut ah[i0 * dh..(i0 + bn) * dh],
                );
                i0 += bn;
            }
            for i in 0..n {
                merged[(r0 + i) * d + c0..(r0 + i) * d + c0 + dh]
                    .copy_from_slice(&ah[i * dh..(i + 1) * dh]);
            }
        }
        r0 += n;
    }
}

/// Reusable buffers for [`linear`].
#[derive(Default)]
struct LinearScratch {
    xq: Vec<i8>,
    x_scale: Vec<f32>,
    tmp: Vec<f32>,
    acc: Vec<i32>,
    /// `1 / row_scale` per output row.
    inv_scale: Vec<f32>,
}

/// `out = bitlinear(x, lin)` for `m` rows (§6.3): `x` is `[m × cols]`, `out` `[m × rows]`.
///
/// Ternary: per-row activation quantisation, exact integer matmul, then
/// `(acc + bias) / (scale · x_scale)` — bias before the rescale. fp32: `x · Wᵀ + bias`.
fn linear(x: &[f32], m: usize, lin: &Linear, out: &mut [f32], s: &mut LinearScratch) {
    let (rows, cols) = (lin.rows, lin.cols);
    match &lin.weights {
        LinearWeights::Fp32(w) => {
            kernels::matmul_nt(x, m, cols, w, rows, out);
            if let Some(b) = &lin.bias {
                for row in out.chunks_exact_mut(rows) {
                    for (o, &bj) in row.iter_mut().zip(b) {
                        *o += bj;
                    }
                }
            }
        }
        LinearWeights::Ternary(tm) => {
            bitlinear_ternary(x, m, tm, &lin.row_scales, lin.bias.as_deref(), out, s)
        }
    }
}

fn bitlinear_ternary(
    x: &[f32],
    m: usize,
    tm: &TernaryMatrix,
    row_scales: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
    s: &mut LinearScratch,
) {
    let (rows, cols, stride) = (tm.rows(), tm.cols(), tm.stride());
    s.xq.clear();
    s.xq.resize(m * stride, 0);
    s.x_scale.clear();
    s.x_scale.resize(m, 0.0);
    s.tmp.clear();
    s.tmp.resize(cols, 0.0);
    s.acc.clear();
    s.acc.resize(m * rows, 0);
    for i in 0..m {
        s.x_scale[i] = quantize_activations_row(
            &x[i * cols..(i + 1) * cols],
            &mut s.tmp,
            &mut s.xq[i * stride..i * stride + cols],
        );
    }
    kernels::ternary_matmul(&s.xq, m, tm, &mut s.acc);
    // `(acc + bias) / (scale · x_scale)` as two multiplications by reciprocals: `rows + m` divisions
    // per call instead of `m · rows` (within an ulp or two of the division; spec §6.3 tolerances).
    s.inv_scale.clear();
    s.inv_scale.extend(row_scales.iter().map(|&r| 1.0 / r));
    for i in 0..m {
        let inv_xs = 1.0 / s.x_scale[i];
        let acc = &s.acc[i * rows..(i + 1) * rows];
        let o = &mut out[i * rows..(i + 1) * rows];
        match bias {
            Some(b) => {
                for (((oj, &aj), &bj), &ij) in o.iter_mut().zip(acc).zip(b).zip(&s.inv_scale) {
                    *oj = (aj as f32 + bj) * ij * inv_xs;
                }
            }
            None => {
                for ((oj, &aj), &ij) in o.iter_mut().zip(acc).zip(&s.inv_scale) {
                    *oj = aj as f32 * ij * inv_xs;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::attention;

    /// Attention scores in blocks of query rows (what bounds the buffer for long windows) give
    /// the rows of one `n × n` block, for block sizes that divide `n`, do not, and exceed it.
    #[test]
    fn attention_in_blocks_equals_one_block() {
        let (d, heads) = (16, 4);
        let seqs: Vec<Vec<u32>> = [37usize, 5, 64, 1].iter().map(|&n| vec![0; n]).collect();
        let seqs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
        let total: usize = seqs.iter().map(|s| s.len()).sum();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let qkv: Vec<f32> = (0..total * 3 * d)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 6.0
            })
            .collect();
        let mut whole = vec![0f32; total * d];
        attention(&qkv, &seqs, d, heads, usize::MAX, &mut whole);
        assert!(whole.iter().any(|&v| v.abs() > 0.1));
        for block in [1, 7, 32, 64, 1000] {
            let mut got = vec![f32::NAN; total * d];
            attention(&qkv, &seqs, d, heads, block, &mut got);
            let diff = whole
                .iter()
                .zip(&got)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff <= 1e-5, "block {block}: max |diff| {diff}");
        }
    }
}
