//! wasm32 SIMD128 kernels (compiled only with `target_feature = "simd128"`).
//!
//! Ternary × int8: both operands are sign-extended to i16 (weights once at load, activations once
//! per call) and multiplied with `i32x4.dot_i16x8_s` (8 products per instruction, exact; no
//! saturation possible).

#![allow(clippy::needless_range_loop)] // tile loops index several arrays in lockstep

use super::TernaryMatrix;
use core::arch::wasm32::*;

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

#[inline(always)]
fn ternary_tile<const MT: usize, const NT: usize>(
    x: &[i16],
    w: &[i16],
    stride: usize,
    res: &mut [[i32; NT]; MT],
) {
    let mut acc = [[i32x4_splat(0); NT]; MT];
    let mut kk = 0;
    while kk + 8 <= stride {
        let mut xv = [i32x4_splat(0); MT];
        for i in 0..MT {
            // SAFETY: kk + 8 <= stride and the slice holds MT rows of `stride` i16s.
            xv[i] = unsafe { v128_load(x.as_ptr().add(i * stride + kk) as *const v128) };
        }
        for j in 0..NT {
            // SAFETY: as above for the NT weight rows.
            let wv = unsafe { v128_load(w.as_ptr().add(j * stride + kk) as *const v128) };
            for i in 0..MT {
                acc[i][j] = i32x4_add(acc[i][j], i32x4_dot_i16x8(xv[i], wv));
            }
        }
        kk += 8;
    }
    for i in 0..MT {
        for j in 0..NT {
            res[i][j] = hsum_i32(acc[i][j]);
        }
    }
}

thread_local! {
    /// The activation rows sign-extended to `i16` (reused across calls).
    static X16: core::cell::RefCell<Vec<i16>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// SIMD128 version of [`super::ternary_matmul`]: activations are sign-extended to `i16` once per
/// call and the weights were at load ([`TernaryMatrix::padded_codes_i16`]), so the inner loop is
/// loads, `i32x4.dot_i16x8_s` and adds only.
pub fn ternary_matmul(x: &[i8], m: usize, w: &TernaryMatrix, out: &mut [i32]) {
    const MT: usize = 2;
    const NT: usize = 4;
    let (n, stride) = (w.rows(), w.stride());
    assert!(x.len() >= m * stride && out.len() >= m * n && stride % 16 == 0);
    let codes = w.padded_codes_i16();
    X16.with(|cell| {
        let mut x16 = cell.borrow_mut();
        x16.clear();
        x16.extend(x[..m * stride].iter().map(|&v| v as i16));
        let x16 = &x16[..];
        // Weight rows outer, activation rows inner (weights read once, activations cache-resident).
        let mut j = 0;
        while j < n {
            let nt = (n - j).min(NT);
            let wa = &codes[j * stride..(j + nt) * stride];
            let mut i = 0;
            while i < m {
                let mt = (m - i).min(MT);
                let xa = &x16[i * stride..(i + mt) * stride];
                let mut res = [[0i32; NT]; MT];
                if mt == MT && nt == NT {
                    ternary_tile::<MT, NT>(xa, wa, stride, &mut res);
                } else if nt == NT {
                    for ii in 0..mt {
                        let mut r = [[0i32; NT]; 1];
                        ternary_tile::<1, NT>(
                            &xa[ii * stride..(ii + 1) * stride],
                            wa,
                            stride,
                            &mut r,
                        );
                        res[ii] = r[0];
                    }
                } else {
                    for ii in 0..mt {
                        for jj in 0..nt {
                            let mut r = [[0i32; 1]; 1];
                            ternary_tile::<1, 1>(
                                &xa[ii * stride..(ii + 1) * stride],
                                &wa[jj * stride..(jj + 1) * stride],
                                stride,
                                &mut r,
                            );
                            res[ii][jj] = r[0][0];
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
    });
}

#[inline(always)]
fn f32_tile<const MT: usize, const NT: usize>(
    a: &[f32],
    b: &[f32],
    k: usize,
    res: &mut [[f32; NT]; MT],
) {
    let mut acc = [[f32x4_splat(0.0); NT]; MT];
    let k4 = k & !3;
    let mut kk = 0;
    while kk < k4 {
        let mut av = [f32x4_splat(0.0); MT];
        for (i, v) in av.iter_mut().enumerate() {
            // SAFETY: kk + 4 <= k and `a` holds MT rows of k floats.
            *v = unsafe { v128_load(a.as_ptr().add(i * k + kk) as *const v128) };
        }
        for j in 0..NT {
            // SAFETY: as above for `b`.
            let bv = unsafe { v128_load(b.as_ptr().add(j * k + kk) as *const v128) };
            for i in 0..MT {
                acc[i][j] = f32x4_add(acc[i][j], f32x4_mul(av[i], bv));
            }
        }
        kk += 4;
    }
    for i in 0..MT {
        for j in 0..NT {
            let mut s = hsum_f32(acc[i][j]);
            for t in k4..k {
                s += a[i * k + t] * b[j * k + t];
            }
            res[i][j] = s;
        }
    }
}

/// SIMD128 version of [`super::matmul_nt`].
pub fn matmul_nt(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    const MT: usize = 2;
    const NT: usize = 4;
    assert!(a.len() >= m * k && b.len() >= n * k && out.len() >= m * n);
    let mut j = 0;
    while j < n {
        let nt = (n - j).min(NT);
        let ba = &b[j * k..(j + nt) * k];
        let mut i = 0;
        while i < m {
            let mt = (m - i).min(MT);
            let aa = &a[i * k..(i + mt) * k];
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
                            f32_tile::<1, 1>(
                                &aa[ii * k..(ii + 1) * k],
                                &ba[jj * k..(jj + 1) * k],
                                k,
                                &mut r,
                            );
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
