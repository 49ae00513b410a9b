//! x86_64 AVX2 kernels (f32 also uses FMA). Call only when [`is_available`] is true; the safe
//! dispatchers in [`super`] check it.
//!
//! Ternary × int8: activations are offset to unsigned once per call (`x + 128`, an XOR with
//! `0x80`) so that
//! `_mm256_maddubs_epi16(u8, i8)` can multiply 32 pairs per instruction; with ternary weights a
//! pair sum is at most `2 · 255 = 510`, so neither the instruction's i16 saturation nor 64
//! accumulated i16 steps (`64 · 510 = 32640`) can overflow. The offset is removed exactly with
//! `− 128 · Σ w` per row. (Sign-flipping activations with `_mm256_sign_epi8` instead would
//! overflow on −128.)

#![allow(clippy::needless_range_loop)] // tile loops index several arrays in lockstep

use super::TernaryMatrix;
use core::arch::x86_64::*;

/// AVX2 and FMA both present (detected by std, cached by [`super::Backend::detect`]).
pub fn is_available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

#[inline(always)]
unsafe fn hsum_epi32(v: __m256i) -> i32 {
    let lo = _mm256_castsi256_si128(v);
    let hi = _mm256_extracti128_si256(v, 1);
    let s = _mm_add_epi32(lo, hi);
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
    _mm_cvtsi128_si32(s)
}

#[inline(always)]
unsafe fn hsum_ps(v: __m256) -> f32 {
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps(v, 1);
    let s = _mm_add_ps(lo, hi);
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0b01));
    _mm_cvtss_f32(s)
}

/// Steps of 32 bytes that may accumulate in i16 lanes before widening (see module docs).
const I16_STEPS: usize = 64;

/// `MT` activation rows (already offset to unsigned) against 4 weight rows over `k` (a multiple
/// of 32): returns, per activation row, the 4 dot products in one `__m128i`.
#[inline(always)]
unsafe fn ternary_tile4<const MT: usize>(
    x: *const u8,
    w: *const i8,
    stride: usize,
    k: usize,
) -> [__m128i; MT] {
    let ones = _mm256_set1_epi16(1);
    let mut acc32 = [[_mm256_setzero_si256(); 4]; MT];
    let mut kk = 0;
    while kk < k {
        let end = (kk + 32 * I16_STEPS).min(k);
        let mut acc16 = [[_mm256_setzero_si256(); 4]; MT];
        while kk < end {
            let mut xv = [_mm256_setzero_si256(); MT];
            for (i, v) in xv.iter_mut().enumerate() {
                *v = _mm256_loadu_si256(x.add(i * stride + kk) as *const __m256i);
            }
            for j in 0..4 {
                let wv = _mm256_loadu_si256(w.add(j * stride + kk) as *const __m256i);
                for i in 0..MT {
                    acc16[i][j] = _mm256_add_epi16(acc16[i][j], _mm256_maddubs_epi16(xv[i], wv));
                }
            }
            kk += 32;
        }
        for i in 0..MT {
            for j in 0..4 {
                acc32[i][j] = _mm256_add_epi32(acc32[i][j], _mm256_madd_epi16(acc16[i][j], ones));
            }
        }
    }
    let mut res = [_mm_setzero_si128(); MT];
    for i in 0..MT {
        // Transpose-reduce the four 8-lane sums into one vector of 4 totals.
        let a = &acc32[i];
        let h01 = _mm256_hadd_epi32(a[0], a[1]);
        let h23 = _mm256_hadd_epi32(a[2], a[3]);
        let h = _mm256_hadd_epi32(h01, h23);
        res[i] = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    }
    res
}

/// One activation row (offset to unsigned) against one weight row over `k` (multiple of 32).
#[inline(always)]
unsafe fn ternary_dot1(x: *const u8, w: *const i8, k: usize) -> i32 {
    let ones = _mm256_set1_epi16(1);
    let mut acc32 = _mm256_setzero_si256();
    let mut kk = 0;
    while kk < k {
        let end = (kk + 32 * I16_STEPS).min(k);
        let mut acc16 = _mm256_setzero_si256();
        while kk < end {
            let xv = _mm256_loadu_si256(x.add(kk) as *const __m256i);
            let wv = _mm256_loadu_si256(w.add(kk) as *const __m256i);
            acc16 = _mm256_add_epi16(acc16, _mm256_maddubs_epi16(xv, wv));
            kk += 32;
        }
        acc32 = _mm256_add_epi32(acc32, _mm256_madd_epi16(acc16, ones));
    }
    hsum_epi32(acc32)
}

/// AVX2 version of [`super::ternary_matmul`].
///
/// # Safety
/// AVX2 must be available; `x.len() >= m * w.stride()`, `out.len() >= m * w.rows()`.
#[target_feature(enable = "avx2")]
pub unsafe fn ternary_matmul(x: &[i8], m: usize, w: &TernaryMatrix, out: &mut [i32]) {
    const MT: usize = 2;
    let (n, stride) = (w.rows(), w.stride());
    // Offset activations to unsigned once (x + 128 == x ^ 0x80) instead of once per tile.
    let xu: Vec<u8> = x[..m * stride].iter().map(|&v| v as u8 ^ 0x80).collect();
    let codes = w.padded_codes().as_ptr();
    let sums = w.row_sums();
    let xp = xu.as_ptr();
    // Weight rows outer, activation rows inner: a block of 4 weight rows is read from memory
    // once and reused from L1 for every activation row (the activations stay cache-resident).
    let mut j = 0;
    while j + 4 <= n {
        let wa = codes.add(j * stride);
        let corr = _mm_mullo_epi32(
            _mm_loadu_si128(sums.as_ptr().add(j) as *const __m128i),
            _mm_set1_epi32(128),
        );
        let mut i = 0;
        while i + MT <= m {
            let r = ternary_tile4::<MT>(xp.add(i * stride), wa, stride, stride);
            for (ii, v) in r.iter().enumerate() {
                _mm_storeu_si128(
                    out.as_mut_ptr().add((i + ii) * n + j) as *mut __m128i,
                    _mm_sub_epi32(*v, corr),
                );
            }
            i += MT;
        }
        while i < m {
            let r = ternary_tile4::<1>(xp.add(i * stride), wa, stride, stride);
            _mm_storeu_si128(
                out.as_mut_ptr().add(i * n + j) as *mut __m128i,
                _mm_sub_epi32(r[0], corr),
            );
            i += 1;
        }
        j += 4;
    }
    while j < n {
        let wa = codes.add(j * stride);
        for i in 0..m {
            out[i * n + j] = ternary_dot1(xp.add(i * stride), wa, stride) - 128 * sums[j];
        }
        j += 1;
    }
}

/// One `MT × NT` f32 tile over `k` (any length; scalar tail).
#[inline(always)]
unsafe fn f32_tile<const MT: usize, const NT: usize>(
    a: *const f32,
    b: *const f32,
    k: usize,
    res: &mut [[f32; NT]; MT],
) {
    let mut acc = [[_mm256_setzero_ps(); NT]; MT];
    let k8 = k & !7;
    let mut kk = 0;
    while kk < k8 {
        let mut av = [_mm256_setzero_ps(); MT];
        for (i, v) in av.iter_mut().enumerate() {
            *v = _mm256_loadu_ps(a.add(i * k + kk));
        }
        for j in 0..NT {
            let bv = _mm256_loadu_ps(b.add(j * k + kk));
            for i in 0..MT {
                acc[i][j] = _mm256_fmadd_ps(av[i], bv, acc[i][j]);
            }
        }
        kk += 8;
    }
    for i in 0..MT {
        for j in 0..NT {
            let mut s = hsum_ps(acc[i][j]);
            for t in k8..k {
                s += *a.add(i * k + t) * *b.add(j * k + t);
            }
            res[i][j] = s;
        }
    }
}

/// AVX2+FMA version of [`super::matmul_nt`].
///
/// # Safety
/// AVX2 and FMA must be available; `a.len() >= m*k`, `b.len() >= n*k`, `out.len() >= m*n`.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn matmul_nt(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    const MT: usize = 2;
    const NT: usize = 4;
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    let mut j = 0;
    if m == 1 {
        // Matrix × vector (the projection of one pooled vector): 8 independent FMA chains.
        while j + 8 <= n {
            let mut r = [[0f32; 8]; 1];
            f32_tile::<1, 8>(ap, bp.add(j * k), k, &mut r);
            out[j..j + 8].copy_from_slice(&r[0]);
            j += 8;
        }
    }
    // Weight rows outer, activation rows inner: a block of NT weight rows is read from memory
    // once and reused from L1 for every activation row (the activations stay cache-resident).
    while j < n {
        let nt = (n - j).min(NT);
        let mut i = 0;
        while i < m {
            let mt = (m - i).min(MT);
            let aa = ap.add(i * k);
            let ba = bp.add(j * k);
            let mut res = [[0f32; NT]; MT];
            match (mt, nt) {
                (2, 4) => f32_tile::<2, 4>(aa, ba, k, &mut res),
                (1, 4) => {
                    let mut r = [[0f32; 4]; 1];
                    f32_tile::<1, 4>(aa, ba, k, &mut r);
                    res[0] = r[0];
                }
                _ => {
                    for ii in 0..mt {
                        for jj in 0..nt {
                            let mut r = [[0f32; 1]; 1];
                            f32_tile::<1, 1>(aa.add(ii * k), ba.add(jj * k), k, &mut r);
                            res[ii][jj] = r[0][0];
                        }
                    }
                }
            }
            for ii in 0..mt {
                for jj in 0..nt {
                    out[(i + ii) * n + j + jj] = res[ii][jj];
                }
            }
            i += mt;
        }
        j += nt;
    }
}

/// [`super::matmul_nt_portable`] with AVX2: the same operations per output (8 lanes, a multiply
/// then an add, never an FMA; the fixed reduction of the 8 partial sums; the tail in order), so
/// the same bits as the portable code, but four dot products at a time (independent
/// accumulators: one dot's chain of additions bounds a lone accumulator) and the rows of `a` in
/// blocks of 8 per pass over `b`.
///
/// # Safety
/// AVX2 must be available; the buffers are checked by the caller.
#[target_feature(enable = "avx2")]
pub unsafe fn matmul_nt_portable(
    a: &[f32],
    m: usize,
    k: usize,
    b: &[f32],
    n: usize,
    out: &mut [f32],
) {
    const ROW_BLOCK: usize = 8;
    let full = k - k % 8;
    let finish = |s: __m256, ar: &[f32], br: &[f32]| -> f32 {
        let mut r = [0f32; 8];
        _mm256_storeu_ps(r.as_mut_ptr(), s);
        let mut acc = ((r[0] + r[4]) + (r[2] + r[6])) + ((r[1] + r[5]) + (r[3] + r[7]));
        for (&x, &y) in ar[full..k].iter().zip(&br[full..k]) {
            acc += x * y;
        }
        acc
    };
    // Outputs are taken four at a time in (column, row) order within a block of rows: four
    // rows against one row of `b`, or one row of `a` against four rows of `b`.
    let mut pending = [(0usize, 0usize); 4];
    let mut np = 0;
    let flush4 = |pending: &[(usize, usize); 4], out: &mut [f32]| {
        let ar = |t: usize| &a[pending[t].0 * k..pending[t].0 * k + k];
        let br = |t: usize| &b[pending[t].1 * k..pending[t].1 * k + k];
        let (a0, a1, a2, a3) = (
            ar(0).as_ptr(),
            ar(1).as_ptr(),
            ar(2).as_ptr(),
            ar(3).as_ptr(),
        );
        let (b0, b1, b2, b3) = (
            br(0).as_ptr(),
            br(1).as_ptr(),
            br(2).as_ptr(),
            br(3).as_ptr(),
        );
        let (mut s0, mut s1, mut s2, mut s3) = (
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
        );
        let mut c = 0;
        while c < full {
            s0 = _mm256_add_ps(
                s0,
                _mm256_mul_ps(_mm256_loadu_ps(a0.add(c)), _mm256_loadu_ps(b0.add(c))),
            );
            s1 = _mm256_add_ps(
                s1,
                _mm256_mul_ps(_mm256_loadu_ps(a1.add(c)), _mm256_loadu_ps(b1.add(c))),
            );
            s2 = _mm256_add_ps(
                s2,
                _mm256_mul_ps(_mm256_loadu_ps(a2.add(c)), _mm256_loadu_ps(b2.add(c))),
            );
            s3 = _mm256_add_ps(
                s3,
                _mm256_mul_ps(_mm256_loadu_ps(a3.add(c)), _mm256_loadu_ps(b3.add(c))),
            );
            c += 8;
        }
        for (t, s) in [s0, s1, s2, s3].into_iter().enumerate() {
            out[pending[t].0 * n + pending[t].1] = finish(s, ar(t), br(t));
        }
    };
    for i0 in (0..m).step_by(ROW_BLOCK) {
        let i1 = (i0 + ROW_BLOCK).min(m);
        for j in 0..n {
            for i in i0..i1 {
                pending[np] = (i, j);
                np += 1;
                if np == 4 {
                    flush4(&pending, out);
                    np = 0;
                }
            }
        }
        for &(i, j) in &pending[..np] {
            let (ar, br) = (&a[i * k..i * k + k], &b[j * k..j * k + k]);
            let mut s = _mm256_setzero_ps();
            let mut c = 0;
            while c < full {
                s = _mm256_add_ps(
                    s,
                    _mm256_mul_ps(
                        _mm256_loadu_ps(ar.as_ptr().add(c)),
                        _mm256_loadu_ps(br.as_ptr().add(c)),
                    ),
                );
                c += 8;
            }
            out[i * n + j] = finish(s, ar, br);
        }
        np = 0;
    }
}
