//! Portable scalar reference kernels. The SIMD backends are tested against these.

use super::TernaryMatrix;

/// Scalar reference for [`super::ternary_matmul`]: plain `i32` dot products over `w.cols()`.
pub fn ternary_matmul(x: &[i8], m: usize, w: &TernaryMatrix, out: &mut [i32]) {
    let (n, k, stride) = (w.rows(), w.cols(), w.stride());
    for i in 0..m {
        let xr = &x[i * stride..i * stride + k];
        for j in 0..n {
            let wr = w.row(j);
            let mut acc = 0i32;
            for (&a, &b) in xr.iter().zip(wr) {
                acc += a as i32 * b as i32;
            }
            out[i * n + j] = acc;
        }
    }
}

/// Scalar reference for [`super::matmul_nt`]: sequential f32 dot products.
pub fn matmul_nt(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) {
    for i in 0..m {
        let ar = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let br = &b[j * k..(j + 1) * k];
            let mut acc = 0.0f32;
            for (&p, &q) in ar.iter().zip(br) {
                acc += p * q;
            }
            out[i * n + j] = acc;
        }
    }
}
