//! wasm32 SIMD128 kernels (compiled only with `target_feature = "simd128"`).
//!
//! Ternary × int8: both operands are sign-extended to i16 (weights once at load, activations once
//! per call) and multiplied with `i32x4.dot_i16x8_s` (8 products per instruction, exact; no
//! saturation possible). Builds with `+relaxed-simd` use `i16x8.relaxed_dot_i8x16_i7x16_s`
//! instead (16 products per instruction): its second operand must lie in 0..=127, so the weights
//! enter as `w + 1 ∈ {0, 1, 2}` and `Σx` is subtracted, `Σ x·w = Σ x·(w + 1) − Σ x`. Every pair
//! sum is at most 2·128·2 = 512 in magnitude, far from the i16 saturation of x86's `pmaddubsw`;
//! the i16 lanes add up at most 64 of them before widening to i32; no operand leaves the range
//! where the instruction is deterministic, so the result is exact on every engine. (The fused
//! `i32x4.relaxed_dot_i8x16_i7x16_add_s` is not used: under Node 20's V8 the golden fixtures fail
//! with it, `bench/RESULTS.md`.)
//!
//! All kernels share one tiling driver ([`tiled`]): `MT` activation rows × `NT` weight rows per
//! tile, weight rows outer (read once), activation rows inner (cache-resident), smaller tiles at
//! the edges.

#![allow(clippy::needless_range_loop)] // tile loops index several arrays in lockstep

use super::TernaryMatrix;
use core::arch::wasm32::*;

/// Rows of activations per tile.
const MT: usize = 2;
/// Rows of weights per tile. 2×4 measured fastest (more than ~14 live `v128` values spill on
/// x86-64's 16 registers; `bench/RESULTS.md`, issue 15 item 7).
const NT: usize = 4;

/// A tile kernel: the `mt × nt` block of outputs whose activation rows start at `i` and weight
/// rows at `j`.
trait Tile {
    type Out: Copy + Default;
    fn tile<const M: usize, const N: usize>(&self, i: usize, j: usize) -> [[Self::Out; N]; M];
}

/// Runs `k` over the `m × n` output (row-major into `out`) in `MT × NT` tiles, `1 × NT` and
/// `1 × 1` tiles at the edges.
fn tiled<K: Tile>(k: &K, m: usize, n: usize, out: &mut [K::Out]) {
    let mut j = 0;
    while j < n {
        let nt = (n - j).min(NT);
        let mut i = 0;
        while i < m {
            let mt = (m - i).min(MT);
            if mt == MT && nt == NT {
                let r = k.tile::<MT, NT>(i, j);
                for ii in 0..MT {
                    out[(i + ii) * n + j..(i + ii) * n + j + NT].copy_from_slice(&r[ii]);
                }
            } else if nt == NT {
                for ii in 0..mt {
                    let r = k.tile::<1, NT>(i + ii, j);
                    out[(i + ii) * n + j..(i + ii) * n + j + NT].copy_from_slice(&r[0]);
                }
            } else {
                for ii in 0..mt {
                    for jj in 0..nt {
                        out[(i + ii) * n + j + jj] = k.tile::<1, 1>(i + ii, j + jj)[0][0];
                    }
                }
            }
            i += mt;
        }
        j += nt;
    }
}

#[inline(always)]
fn hsum_i32(v: v128) -> i32 {
    i32x4_extract_lane::<0>(v)
        .wrapping_add(i32x4_extract_lane::<1>(v))
        .wrapping_add(i32x4_extract_lane::<2>(v))
        .wrapping_add(i32x4_extract_lane::<3>(v))
}

#[inline(always)]
fn hsum_f32(v: v128) -> f32 {
    (f32x4_extract_lane::<0>(v) + f32x4_extract_lane::<1>(v))
        + (f32x4_extract_lane::<2>(v) + f32x4_extract_lane::<3>(v))
}

/// Ternary tiles on `i16` operands: `x` and `w` rows of `stride` elements.
#[cfg(not(target_feature = "relaxed-simd"))]
struct TernaryI16<'a> {
    x: &'a [i16],
    w: &'a [i16],
    stride: usize,
}

#[cfg(not(target_feature = "relaxed-simd"))]
impl Tile for TernaryI16<'_> {
    type Out = i32;
    #[inline(always)]
    fn tile<const M: usize, const N: usize>(&self, i: usize, j: usize) -> [[i32; N]; M] {
        let s = self.stride;
        assert!((i + M) * s <= self.x.len() && (j + N) * s <= self.w.len() && s % 8 == 0);
        let (x, w) = (self.x[i * s..].as_ptr(), self.w[j * s..].as_ptr());
        let mut acc = [[i32x4_splat(0); N]; M];
        let mut kk = 0;
        while kk < s {
            let mut xv = [i32x4_splat(0); M];
            for ii in 0..M {
                // SAFETY: kk + 8 <= s and rows i..i+M of `x` are in bounds (asserted above).
                xv[ii] = unsafe { v128_load(x.add(ii * s + kk) as *const v128) };
            }
            for jj in 0..N {
                // SAFETY: as above for rows j..j+N of `w`.
                let wv = unsafe { v128_load(w.add(jj * s + kk) as *const v128) };
                for ii in 0..M {
                    acc[ii][jj] = i32x4_add(acc[ii][jj], i32x4_dot_i16x8(xv[ii], wv));
                }
            }
            kk += 8;
        }
        acc.map(|row| row.map(hsum_i32))
    }
}

#[cfg(not(target_feature = "relaxed-simd"))]
thread_local! {
    /// The activation rows sign-extended to `i16` (reused across calls).
    static X16: core::cell::RefCell<Vec<i16>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// SIMD128 version of [`super::ternary_matmul`]: activations are sign-extended to `i16` once per
/// call and the weights were at load ([`TernaryMatrix::padded_codes_i16`]), so the inner loop is
/// loads, `i32x4.dot_i16x8_s` and adds only.
#[cfg(not(target_feature = "relaxed-simd"))]
pub fn ternary_matmul(x: &[i8], m: usize, w: &TernaryMatrix, out: &mut [i32]) {
    let (n, stride) = (w.rows(), w.stride());
    assert!(x.len() >= m * stride && out.len() >= m * n && stride % 16 == 0);
    X16.with(|cell| {
        let mut x16 = cell.borrow_mut();
        x16.clear();
        x16.extend(x[..m * stride].iter().map(|&v| v as i16));
        let k = TernaryI16 {
            x: &x16,
            w: w.padded_codes_i16(),
            stride,
        };
        tiled(&k, m, n, out);
    });
}

/// Ternary tiles with relaxed SIMD: `x` int8 rows, `w` rows of codes plus one, `x_sums` the sum of
/// each activation row.
#[cfg(target_feature = "relaxed-simd")]
struct TernaryRelaxed<'a> {
    x: &'a [i8],
    w: &'a [i8],
    x_sums: &'a [i32],
    stride: usize,
}

#[cfg(target_feature = "relaxed-simd")]
impl Tile for TernaryRelaxed<'_> {
    type Out = i32;
    #[inline(always)]
    fn tile<const M: usize, const N: usize>(&self, i: usize, j: usize) -> [[i32; N]; M] {
        let s = self.stride;
        assert!((i + M) * s <= self.x.len() && (j + N) * s <= self.w.len() && s % 16 == 0);
        let (x, w) = (self.x[i * s..].as_ptr(), self.w[j * s..].as_ptr());
        let mut acc = [[i32x4_splat(0); N]; M];
        let mut kk = 0;
        while kk < s {
            // i16 lanes add up pair sums of at most 512 in magnitude: 64 steps stay within i16.
            let end = (kk + 16 * 64).min(s);
            let mut acc16 = [[i16x8_splat(0); N]; M];
            while kk < end {
                let mut xv = [i16x8_splat(0); M];
                for ii in 0..M {
                    // SAFETY: kk + 16 <= s and rows i..i+M of `x` are in bounds (asserted above).
                    xv[ii] = unsafe { v128_load(x.add(ii * s + kk) as *const v128) };
                }
                for jj in 0..N {
                    // SAFETY: as above for rows j..j+N of `w`.
                    let wv = unsafe { v128_load(w.add(jj * s + kk) as *const v128) };
                    for ii in 0..M {
                        acc16[ii][jj] =
                            i16x8_add(acc16[ii][jj], i16x8_relaxed_dot_i8x16_i7x16(xv[ii], wv));
                    }
                }
                kk += 16;
            }
            for ii in 0..M {
                for jj in 0..N {
                    let wide = i32x4_extadd_pairwise_i16x8(acc16[ii][jj]);
                    acc[ii][jj] = i32x4_add(acc[ii][jj], wide);
                }
            }
        }
        let mut r = [[0i32; N]; M];
        for ii in 0..M {
            for jj in 0..N {
                r[ii][jj] = hsum_i32(acc[ii][jj]).wrapping_sub(self.x_sums[i + ii]);
            }
        }
        r
    }
}

/// Relaxed-SIMD version of [`super::ternary_matmul`] (builds with `+relaxed-simd`): the weights
/// enter as [`TernaryMatrix::padded_codes_plus_one`] and each row's `Σx` is subtracted.
#[cfg(target_feature = "relaxed-simd")]
pub fn ternary_matmul(x: &[i8], m: usize, w: &TernaryMatrix, out: &mut [i32]) {
    let (n, stride) = (w.rows(), w.stride());
    assert!(x.len() >= m * stride && out.len() >= m * n && stride % 16 == 0);
    X_SUMS.with(|cell| {
        let mut x_sums = cell.borrow_mut();
        x_sums.clear();
        x_sums.extend(
            x[..m * stride]
                .chunks_exact(stride)
                .map(|r| r.iter().map(|&v| v as i32).sum::<i32>()),
        );
        let k = TernaryRelaxed {
            x: &x[..m * stride],
            w: w.padded_codes_plus_one(),
            x_sums: &x_sums,
            stride,
        };
        tiled(&k, m, n, out);
    });
}

#[cfg(target_feature = "relaxed-simd")]
thread_local! {
    /// Each activation row's `Σx` (reused across calls, like `X16` in SIMD128 builds).
    static X_SUMS: core::cell::RefCell<Vec<i32>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// f32 tiles: `a` rows and `b` rows of `k` floats.
struct F32Nt<'a> {
    a: &'a [f32],
    b: &'a [f32],
    k: usize,
}

impl Tile for F32Nt<'_> {
    type Out = f32;
    #[inline(always)]
    fn tile<const M: usize, const N: usize>(&self, i: usize, j: usize) -> [[f32; N]; M] {
        let k = self.k;
        assert!((i + M) * k <= self.a.len() && (j + N) * k <= self.b.len());
        let (a, b) = (&self.a[i * k..(i + M) * k], &self.b[j * k..(j + N) * k]);
        let mut acc = [[f32x4_splat(0.0); N]; M];
        let k4 = k & !3;
        let mut kk = 0;
        while kk < k4 {
            let mut av = [f32x4_splat(0.0); M];
            for (ii, v) in av.iter_mut().enumerate() {
                // SAFETY: kk + 4 <= k and `a` holds M rows of k floats.
                *v = unsafe { v128_load(a.as_ptr().add(ii * k + kk) as *const v128) };
            }
            for jj in 0..N {
                // SAFETY: as above for `b`.
                let bv = unsafe { v128_load(b.as_ptr().add(jj * k + kk) as *const v128) };
                for ii in 0..M {
                    acc[ii][jj] = f32x4_add(acc[ii][jj], f32x4_mul(av[ii], bv));
                }
            }
            kk += 4;
        }
        let mut r = [[0f32; N]; M];
        for ii in 0..M {
            for jj in 0..N {
                let mut s = hsum_f32(acc[ii][jj]);
                for t in k4..k {
                    s += a[ii * k + t] * b[jj * k + t];
                }
                r[ii][jj] = s;
            }
        }
        r
    }
}

/// SIMD128 version of [`super::matmul_nt`].
pub fn matmul_nt(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= n * k && out.len() >= m * n);
    tiled(&F32Nt { a, b, k }, m, n, out);
}
