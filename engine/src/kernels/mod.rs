//! Compute kernels: ternary-weight × int8-activation matmul (BitLinear, §6.3) and f32 matmul.
//!
//! Each kernel has a scalar reference ([`scalar`]), an x86_64 AVX2 version ([`avx2`], chosen at
//! run time by `is_x86_feature_detected!`, detection cached) and a wasm32 SIMD128 version
//! (`simd128`, compiled in when `target_feature = "simd128"`). The integer kernels are bit-exact
//! with the scalar reference; the f32 kernels agree within float re-association error.
//!
//! Layout conventions: every matrix is row-major. `matmul_nt` computes `out = A · Bᵀ`, which is
//! `F.linear` for a weight stored `[out_features × in_features]` (§5.5).

use std::sync::atomic::{AtomicU8, Ordering};

/// Defines `pub fn $name(args) -> ret` that runs `$imp` (an `#[inline(always)]` function) compiled
/// for AVX2 when [`Backend::detect`] says so, else the baseline build. Element-wise loops in
/// `$imp` are then vectorised 8-wide instead of 4-wide. The arithmetic is identical (no FMA
/// contraction happens in Rust), so results are bit-identical across the two builds.
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? => $imp:ident) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $imp($($arg),*)
                }
                if $crate::kernels::Backend::detect() == $crate::kernels::Backend::Avx2 {
                    // SAFETY: AVX2 was detected at run time.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $imp($($arg),*)
        }
    };
}
pub(crate) use multiversion;

pub mod scalar;

#[cfg(target_arch = "x86_64")]
pub mod avx2;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub mod simd128;

/// Row stride (in elements) of [`TernaryMatrix`] codes and of int8 activation rows: `cols`
/// rounded up to a multiple of this, zero padded, so SIMD loops need no tail.
pub const K_ALIGN: usize = 32;

/// `cols` rounded up to a multiple of [`K_ALIGN`].
pub fn padded_len(cols: usize) -> usize {
    cols.div_ceil(K_ALIGN) * K_ALIGN
}

/// A `[rows × cols]` ternary weight matrix unpacked once at load to one `i8` code per weight
/// (−1, 0, +1), rows padded with zeros to [`padded_len`]`(cols)`, plus per-row code sums (used by
/// the AVX2 kernel's unsigned-offset trick).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TernaryMatrix {
    rows: usize,
    cols: usize,
    stride: usize,
    codes: Vec<i8>,
    row_sums: Vec<i32>,
    /// The padded codes sign-extended to `i16` once at load (wasm32 SIMD128 only): SIMD128's
    /// widest integer product is `i32x4.dot_i16x8_s`, and extending in the kernel cost more
    /// than the products (`bench/RESULTS.md`, issue 15 item 7).
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(target_feature = "relaxed-simd")
    ))]
    codes16: Vec<i16>,
    /// The padded codes plus one (0, 1, 2) for relaxed SIMD's `i16x8.relaxed_dot_i8x16_i7x16_s`,
    /// whose second operand must lie in 0..=127 (wasm32 `+relaxed-simd` builds only).
    #[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
    codes_p1: Vec<i8>,
}

pub use crate::quant::ternary_code;

impl TernaryMatrix {
    /// Builds from row-major codes (`codes.len() == rows * cols`, each in −1..=1).
    ///
    /// # Panics
    /// If the length is wrong or a code is outside −1..=1 (caller bug, never file data).
    pub fn from_codes(rows: usize, cols: usize, codes: &[i8]) -> TernaryMatrix {
        assert_eq!(codes.len(), rows * cols, "ternary codes length");
        let stride = padded_len(cols);
        let mut out = vec![0i8; rows * stride];
        let mut row_sums = vec![0i32; rows];
        for r in 0..rows {
            let src = &codes[r * cols..(r + 1) * cols];
            assert!(
                src.iter().all(|&c| (-1..=1).contains(&c)),
                "ternary code out of range"
            );
            out[r * stride..r * stride + cols].copy_from_slice(src);
            row_sums[r] = src.iter().map(|&c| c as i32).sum();
        }
        TernaryMatrix::assemble(rows, cols, stride, out, row_sums)
    }

    /// Unpacks §5.5's 2-bit encoding (row-major, `cols / 4` bytes per row, `cols % 4 == 0`,
    /// `packed.len() == rows * cols / 4`). Errors with the `(row, col)` of the first reserved
    /// code `11`.
    pub fn from_packed(
        rows: usize,
        cols: usize,
        packed: &[u8],
    ) -> Result<TernaryMatrix, (usize, usize)> {
        debug_assert!(cols % 4 == 0 && packed.len() == rows * (cols / 4));
        let stride = padded_len(cols);
        let bpr = cols / 4;
        let mut codes = vec![0i8; rows * stride];
        let mut row_sums = vec![0i32; rows];
        for r in 0..rows {
            let src = &packed[r * bpr..(r + 1) * bpr];
            let dst = &mut codes[r * stride..r * stride + cols];
            let mut sum = 0i32;
            for (bi, &byte) in src.iter().enumerate() {
                for j in 0..4 {
                    let c = ternary_code(byte >> (2 * j)).ok_or((r, bi * 4 + j))?;
                    dst[bi * 4 + j] = c;
                    sum += c as i32;
                }
            }
            row_sums[r] = sum;
        }
        Ok(TernaryMatrix::assemble(rows, cols, stride, codes, row_sums))
    }

    fn assemble(
        rows: usize,
        cols: usize,
        stride: usize,
        codes: Vec<i8>,
        row_sums: Vec<i32>,
    ) -> TernaryMatrix {
        TernaryMatrix {
            rows,
            cols,
            stride,
            #[cfg(all(
                target_arch = "wasm32",
                target_feature = "simd128",
                not(target_feature = "relaxed-simd")
            ))]
            codes16: codes.iter().map(|&c| c as i16).collect(),
            #[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
            codes_p1: codes.iter().map(|&c| c + 1).collect(),
            codes,
            row_sums,
        }
    }

    /// Output features.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Input features.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Padded row stride (multiple of [`K_ALIGN`]).
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// Padded codes, `rows × stride`.
    pub fn padded_codes(&self) -> &[i8] {
        &self.codes
    }
    /// [`Self::padded_codes`] sign-extended to `i16` (`rows × stride`), built at load.
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(target_feature = "relaxed-simd")
    ))]
    pub fn padded_codes_i16(&self) -> &[i16] {
        &self.codes16
    }
    /// [`Self::padded_codes`] plus one (each 0, 1 or 2; `rows × stride`), built at load.
    #[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
    pub fn padded_codes_plus_one(&self) -> &[i8] {
        &self.codes_p1
    }
    /// Sum of the codes of each row.
    pub fn row_sums(&self) -> &[i32] {
        &self.row_sums
    }
    /// The codes of row `r` (unpadded, length `cols`).
    pub fn row(&self, r: usize) -> &[i8] {
        &self.codes[r * self.stride..r * self.stride + self.cols]
    }
    /// Row-major unpadded codes (`rows × cols`), e.g. for re-packing.
    pub fn codes(&self) -> Vec<i8> {
        (0..self.rows)
            .flat_map(|r| self.row(r).iter().copied())
            .collect()
    }
}

/// A kernel implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Portable scalar reference.
    Scalar,
    /// x86_64 AVX2 (+FMA for f32), selected at run time.
    Avx2,
    /// wasm32 SIMD128, selected at compile time.
    Simd128,
}

static DETECTED: AtomicU8 = AtomicU8::new(0);

impl Backend {
    /// The fastest backend available on this machine (detected once, then cached).
    pub fn detect() -> Backend {
        match DETECTED.load(Ordering::Relaxed) {
            1 => return Backend::Scalar,
            2 => return Backend::Avx2,
            3 => return Backend::Simd128,
            _ => {}
        }
        let b = Self::detect_uncached();
        let code = match b {
            Backend::Scalar => 1,
            Backend::Avx2 => 2,
            Backend::Simd128 => 3,
        };
        DETECTED.store(code, Ordering::Relaxed);
        b
    }

    fn detect_uncached() -> Backend {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            return Backend::Simd128;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if avx2::is_available() {
                return Backend::Avx2;
            }
        }
        #[allow(unreachable_code)]
        Backend::Scalar
    }

    /// The name of this backend as this build runs it: `scalar`, `avx2`, `simd128`, or
    /// `relaxed-simd` (SIMD128 with relaxed SIMD's integer dot product, in builds with
    /// `+relaxed-simd`; `kernels::simd128`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Simd128 if cfg!(target_feature = "relaxed-simd") => "relaxed-simd",
            Backend::Simd128 => "simd128",
        }
    }

    /// Every backend usable on this machine, scalar first (for tests and benchmarks).
    pub fn available() -> Vec<Backend> {
        let mut v = vec![Backend::Scalar];
        let best = Self::detect();
        if best != Backend::Scalar {
            v.push(best);
        }
        v
    }
}

/// `out[i][j] = Σ_k x[i][k] · w[j][k]` for `m` activation rows of stride `w.stride()` (zero
/// padded past `w.cols()`), ternary `w`; `out` is `m × w.rows()` (row-major, overwritten).
/// Exact integer arithmetic; every backend gives identical results.
///
/// # Panics
/// If `x.len() < m * w.stride()` or `out.len() < m * w.rows()`, or `backend` is not available.
pub fn ternary_matmul_with(
    backend: Backend,
    x: &[i8],
    m: usize,
    w: &TernaryMatrix,
    out: &mut [i32],
) {
    assert!(
        x.len() >= m * w.stride && out.len() >= m * w.rows,
        "ternary_matmul: buffer too small"
    );
    match backend {
        Backend::Scalar => scalar::ternary_matmul(x, m, w, out),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            assert!(avx2::is_available(), "AVX2 not available");
            // SAFETY: AVX2 availability checked above; buffer sizes asserted.
            unsafe { avx2::ternary_matmul(x, m, w, out) }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Backend::Simd128 => simd128::ternary_matmul(x, m, w, out),
        #[allow(unreachable_patterns)]
        other => panic!("kernel backend {other:?} not available on this target"),
    }
}

/// [`ternary_matmul_with`] on [`Backend::detect`].
pub fn ternary_matmul(x: &[i8], m: usize, w: &TernaryMatrix, out: &mut [i32]) {
    ternary_matmul_with(Backend::detect(), x, m, w, out)
}

/// `out[i][j] = Σ_k a[i][k] · b[j][k]` (`out = A · Bᵀ`): `a` is `m × k`, `b` is `n × k`, `out` is
/// `m × n` (all row-major, dense; `out` overwritten). SIMD backends re-associate the sum.
///
/// # Panics
/// On short buffers or an unavailable backend.
#[allow(clippy::too_many_arguments)]
pub fn matmul_nt_with(
    backend: Backend,
    a: &[f32],
    m: usize,
    k: usize,
    b: &[f32],
    n: usize,
    out: &mut [f32],
) {
    assert!(
        a.len() >= m * k && b.len() >= n * k && out.len() >= m * n,
        "matmul_nt: buffer too small"
    );
    match backend {
        Backend::Scalar => scalar::matmul_nt(a, m, k, b, n, out),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            assert!(avx2::is_available(), "AVX2 not available");
            // SAFETY: AVX2+FMA availability checked above; buffer sizes asserted.
            unsafe { avx2::matmul_nt(a, m, k, b, n, out) }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Backend::Simd128 => simd128::matmul_nt(a, m, k, b, n, out),
        #[allow(unreachable_patterns)]
        other => panic!("kernel backend {other:?} not available on this target"),
    }
}

/// `out[i][j] = Σ_p a[i][p] · b[p][j]` (`out = A · B`): `a` is `m × k`, `b` is `k × n`, `out` is
/// `m × n` (row-major, dense, overwritten). Each output is accumulated in `p` order (like
/// [`scalar::matmul_nt`]); the loop over `j` is vectorised (AVX2 when detected). Best when `k`
/// is small, e.g. attention weights × values.
pub fn matmul_nn(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    assert!(
        a.len() >= m * k && b.len() >= k * n && out.len() >= m * n,
        "matmul_nn: buffer too small"
    );
    matmul_nn_dispatch(a, m, k, b, n, out)
}

#[inline(always)]
fn matmul_nn_impl(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    for i in 0..m {
        let o = &mut out[i * n..(i + 1) * n];
        o.fill(0.0);
        for p in 0..k {
            let ap = a[i * k + p];
            for (oj, &bj) in o.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *oj += ap * bj;
            }
        }
    }
}

multiversion! {
    fn matmul_nn_dispatch(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) => matmul_nn_impl
}

/// `out = A · Bᵀ` like [`matmul_nt`], with one summation order on every target and backend, so
/// the results are bit-identical natively (scalar or AVX2) and in wasm (SIMD128): each dot
/// product keeps 8 partial sums (partial `l` adds the products of `k ≡ l (mod 8)` in `k` order,
/// a multiply then an add, never fused), sums them as `((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7))`,
/// then adds the last `k mod 8` products in order. The lanes are independent, so the compiler
/// vectorises them (8-wide with AVX2, 2 × 4-wide with SIMD128) without changing a bit.
///
/// The static model's projection uses it: a site's passages then embed to the same floats in the
/// native CLI and in the npm package, and their bundles are byte-identical.
pub fn matmul_nt_portable(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    // `matmul_nt_portable_with` checks the buffers.
    matmul_nt_portable_with(Backend::detect(), a, m, k, b, n, out)
}

/// [`matmul_nt_portable`] on a given backend (every backend gives the same bits; tests compare
/// them). A backend this machine lacks falls back to the portable code.
pub fn matmul_nt_portable_with(
    backend: Backend,
    a: &[f32],
    m: usize,
    k: usize,
    b: &[f32],
    n: usize,
    out: &mut [f32],
) {
    assert!(
        a.len() >= m * k && b.len() >= n * k && out.len() >= m * n,
        "matmul_nt_portable: buffer too small"
    );
    #[cfg(target_arch = "x86_64")]
    if backend == Backend::Avx2 && avx2::is_available() {
        // SAFETY: AVX2 was detected; the sizes were checked above.
        return unsafe { avx2::matmul_nt_portable(a, m, k, b, n, out) };
    }
    let _ = backend;
    matmul_nt_portable_dispatch(a, m, k, b, n, out)
}

#[inline(always)]
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let mut s = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let (at, bt) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for l in 0..8 {
            s[l] += x[l] * y[l];
        }
    }
    let mut acc = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
    for (&x, &y) in at.iter().zip(bt) {
        acc += x * y;
    }
    acc
}

/// Rows of `a` per pass over `b` in the portable fallback of [`matmul_nt_portable`].
const PORTABLE_ROW_BLOCK: usize = 8;

#[inline(always)]
fn matmul_nt_portable_impl(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    // Each output is one `dot_portable` whatever the blocking: the bits do not depend on `m`.
    for i0 in (0..m).step_by(PORTABLE_ROW_BLOCK) {
        let i1 = (i0 + PORTABLE_ROW_BLOCK).min(m);
        for j in 0..n {
            let br = &b[j * k..(j + 1) * k];
            for i in i0..i1 {
                out[i * n + j] = dot_portable(&a[i * k..(i + 1) * k], br);
            }
        }
    }
}

multiversion! {
    fn matmul_nt_portable_dispatch(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) => matmul_nt_portable_impl
}

/// [`matmul_nt_with`] on [`Backend::detect`].
pub fn matmul_nt(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    matmul_nt_with(Backend::detect(), a, m, k, b, n, out)
}
