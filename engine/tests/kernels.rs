//! Kernels and numeric ops: every SIMD backend available here equals the scalar reference
//! (integer kernels bit-exact, f32 within re-association error) on random shapes with ragged
//! tails; numpy-compatible pairwise sums; erf/GELU accuracy.

// Test inputs near √2 and 1/√2 are deliberate sample points, not stand-ins for the constants.
#![allow(clippy::approx_constant)]

mod common;

use common::Rng;
use lightembed::kernels::{self, Backend, TernaryMatrix};
use lightembed::ops;
use lightembed::quant;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

fn random_activations(rng: &mut Rng, m: usize, k: usize, stride: usize) -> Vec<i8> {
    let mut x = vec![0i8; m * stride];
    for i in 0..m {
        for c in 0..k {
            x[i * stride + c] = match rng.below(8) {
                0 => -128,
                1 => 127,
                _ => rng.i8(),
            };
        }
    }
    x
}

fn naive_ternary(x: &[i8], m: usize, stride: usize, codes: &[i8], n: usize, k: usize) -> Vec<i32> {
    let mut out = vec![0i32; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k)
                .map(|c| x[i * stride + c] as i32 * codes[j * k + c] as i32)
                .sum();
        }
    }
    out
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn ternary_matmul_backends_equal_scalar_on_random_shapes() {
    let mut rng = Rng::new(42);
    let backends = Backend::available();
    report!("backends: {backends:?}");
    for trial in 0..120 {
        let m = 1 + rng.below(9);
        let n = 1 + rng.below(14);
        let k = match trial % 4 {
            0 => 4 * (1 + rng.below(80)),
            1 => 32 * (1 + rng.below(8)),
            _ => 1 + rng.below(320),
        };
        let codes: Vec<i8> = (0..n * k).map(|_| rng.ternary()).collect();
        let w = TernaryMatrix::from_codes(n, k, &codes);
        let x = random_activations(&mut rng, m, k, w.stride());
        let want = naive_ternary(&x, m, w.stride(), &codes, n, k);
        for &b in &backends {
            let mut out = vec![i32::MIN; m * n];
            kernels::ternary_matmul_with(b, &x, m, &w, &mut out);
            assert_eq!(out, want, "{b:?} m={m} n={n} k={k}");
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn ternary_matmul_extremes_do_not_overflow() {
    // All activations −128 against all −1 / all +1 weights, with k past the i16 accumulation
    // chunk (2048) of the AVX2 kernel.
    for &k in &[32usize, 2048, 2080, 5000] {
        for &wv in &[-1i8, 1] {
            let n = 5;
            let w = TernaryMatrix::from_codes(n, k, &vec![wv; n * k]);
            let m = 3;
            let mut x = vec![0i8; m * w.stride()];
            for i in 0..m {
                for c in 0..k {
                    x[i * w.stride() + c] = if i == 1 { 127 } else { -128 };
                }
            }
            for &b in &Backend::available() {
                let mut out = vec![0i32; m * n];
                kernels::ternary_matmul_with(b, &x, m, &w, &mut out);
                for i in 0..m {
                    let xv = if i == 1 { 127 } else { -128 };
                    for j in 0..n {
                        assert_eq!(out[i * n + j], xv * wv as i32 * k as i32, "{b:?} k={k}");
                    }
                }
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn f32_matmul_backends_match_scalar_on_random_shapes() {
    let mut rng = Rng::new(7);
    for _ in 0..120 {
        let m = 1 + rng.below(9);
        let n = 1 + rng.below(14);
        let k = 1 + rng.below(300);
        let a = rng.vec(m * k, 1.0);
        let b = rng.vec(n * k, 1.0);
        let mut want = vec![0f32; m * n];
        kernels::scalar::matmul_nt(&a, m, k, &b, n, &mut want);
        for &be in &Backend::available() {
            let mut out = vec![f32::NAN; m * n];
            kernels::matmul_nt_with(be, &a, m, k, &b, n, &mut out);
            for i in 0..m {
                for j in 0..n {
                    let mag: f32 = (0..k).map(|c| (a[i * k + c] * b[j * k + c]).abs()).sum();
                    let diff = (out[i * n + j] - want[i * n + j]).abs();
                    assert!(
                        diff <= 1e-6 * mag + 1e-7,
                        "{be:?} m={m} n={n} k={k}: diff {diff} (mag {mag})"
                    );
                }
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn matmul_nn_equals_sequential_sums() {
    let mut rng = Rng::new(8);
    for _ in 0..60 {
        let (m, k, n) = (1 + rng.below(9), 1 + rng.below(40), 1 + rng.below(70));
        let a = rng.vec(m * k, 1.0);
        let b = rng.vec(k * n, 1.0);
        let mut out = vec![f32::NAN; m * n];
        kernels::matmul_nn(&a, m, k, &b, n, &mut out);
        for i in 0..m {
            for j in 0..n {
                let want = (0..k).fold(0f32, |s, p| s + a[i * k + p] * b[p * n + j]);
                assert_eq!(out[i * n + j], want, "m={m} k={k} n={n}");
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn ternary_packing_roundtrips_and_rejects_reserved_code() {
    let mut rng = Rng::new(3);
    let (rows, cols) = (7, 36);
    let codes: Vec<i8> = (0..rows * cols).map(|_| rng.ternary()).collect();
    let packed = quant::pack_ternary(&codes);
    assert_eq!(packed.len(), rows * cols / 4);
    let m = TernaryMatrix::from_packed(rows, cols, &packed).unwrap();
    assert_eq!(m.codes(), codes);
    assert_eq!(quant::unpack_ternary(&packed, codes.len()).unwrap(), codes);
    // Low bits = low index: codes [+1, −1, 0, +1] → 0b01_00_10_01.
    assert_eq!(quant::pack_ternary(&[1, -1, 0, 1]), vec![0b0100_1001]);
    let mut bad = packed.clone();
    bad[9 * 2 + 1] |= 0b1100_0000; // row 2 (9 bytes per row), byte 1, field 3 → column 7
    assert_eq!(TernaryMatrix::from_packed(rows, cols, &bad), Err((2, 7)));
    assert_eq!(quant::unpack_ternary(&bad, codes.len()), Err(2 * cols + 7));
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn int4_packing_sign_extends() {
    let codes: Vec<i8> = (-8..=7).collect();
    let packed = quant::pack_int4(&codes);
    assert_eq!(quant::unpack_int4(&packed, codes.len()), codes);
    // Low nibble = element 2k.
    assert_eq!(quant::pack_int4(&[-1, 3]), vec![0x3F]);
    assert_eq!(quant::int4_low(0x08), -8);
    assert_eq!(quant::int4_high(0x80), -8);
    assert_eq!(quant::int4_high(0x70), 7);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn pairwise_sum_matches_numpy_bits() {
    // Expected bits from numpy 2.3 `x.sum(dtype=np.float32)`; sequential summation differs.
    for &(n, want, sequential) in &[
        (1000usize, 0x4631_7492u32, 0x4631_7493u32),
        (300, 0x4557_a000, 0x4557_a005),
        (77, 0x4449_edb6, 0x4449_edb8),
    ] {
        let x: Vec<f32> = (0..n)
            .map(|i| (((i * 7919) % 1000) as f64 / 7.0 - 60.0) as f32)
            .collect();
        assert_eq!(ops::pairwise_sum(&x).to_bits(), want, "n={n}");
        let seq = x.iter().fold(0f32, |a, &b| a + b);
        assert_eq!(seq.to_bits(), sequential, "n={n} sequential");
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn erf_is_accurate() {
    // (x, Python math.erf(x))
    let cases: &[(f64, f64)] = &[
        (-8.0, -1.0),
        (-5.5, -0.9999999999999927),
        (-4.0, -0.9999999845827421),
        (-3.1, -0.9999883513426328),
        (-2.0, -0.9953222650189527),
        (-1.0, -0.8427007929497149),
        (-0.5, -0.5204998778130465),
        (-0.001, -0.0011283787909692365),
        (0.0, 0.0),
        (0.3, 0.3286267594591274),
        (0.7071, 0.682684851094082),
        (1.5, 0.9661051464753108),
        (2.5, 0.999593047982555),
        (3.7, 0.9999998328489421),
        (5.0, 0.9999999999984626),
        (9.0, 1.0),
    ];
    for &(x, want) in cases {
        let got = ops::erf(x);
        assert!((got - want).abs() < 1e-12, "erf({x}) = {got}, want {want}");
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn gelu_matches_reference_bits() {
    // Bits of reference/forward.py `gelu` (float64 math.erf, rounded to float32).
    let xs: [f32; 19] = [
        -8.0, -5.5, -4.0, -3.1, -2.0, -1.4142135, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.3, 0.7071, 1.0,
        1.5, 2.5, 3.7, 5.0, 9.0,
    ];
    let want: [u32; 19] = [
        0xa7b00000, 0xb3e049ec, 0xb904d6bd, 0xbb449473, 0xbd3a5e7c, 0xbde3cb29, 0xbe227686,
        0xbe1df8a2, 0xba02f7a9, 0x0, 0x3a032d35, 0x3e3dd289, 0x3f099e44, 0x3f57625f, 0x3fb32c4b,
        0x401f01a7, 0x406cc644, 0x409ffffd, 0x41100000,
    ];
    for (&x, &w) in xs.iter().zip(&want) {
        let got = ops::gelu_exact(x);
        let wf = f32::from_bits(w);
        if x >= -7.0 {
            assert_eq!(got.to_bits(), w, "gelu({x}) = {got}, want {wf}");
        } else {
            // Far tail: both are ~1e-15; only absolute accuracy matters there.
            assert!((got - wf).abs() < 1e-14, "gelu({x}) = {got}, want {wf}");
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn fast_gelu_is_within_a_few_ulp_of_the_exact_one() {
    // Dense sweep over [−14, 14] plus random values; the fast f32 GELU the forward pass uses
    // against the f64 evaluation the reference uses.
    let mut worst_ulp = 0i64;
    let mut exact = 0usize;
    let mut total = 0usize;
    let mut rng = Rng::new(11);
    let sweep = (0..=280_000).map(|i| -14.0f32 + i as f32 * 1e-4);
    let random = (0..100_000).map(|_| rng.normal(3.0));
    for x in sweep.chain(random) {
        let (g, e) = (ops::gelu(x), ops::gelu_exact(x));
        let abs = (g - e).abs();
        assert!(
            abs <= 2.5e-7 * x.abs().max(1.0),
            "gelu({x}) = {g}, exact {e}"
        );
        if e.abs() > 1e-8 {
            let ulp = (g.to_bits() as i64 - e.to_bits() as i64).abs();
            worst_ulp = worst_ulp.max(ulp);
            exact += (ulp == 0) as usize;
            total += 1;
        }
    }
    report!(
        "fast gelu: worst {worst_ulp} ulp, {:.1}% bit-exact",
        100.0 * exact as f64 / total as f64
    );
    assert!(worst_ulp <= 8, "worst {worst_ulp} ulp");
    let mut v = vec![-1.0f32, 0.0, 1.0, 2.0];
    ops::gelu_in_place(&mut v);
    assert_eq!(v, [ops::gelu(-1.0), 0.0, ops::gelu(1.0), ops::gelu(2.0)]);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn magic_rounding_is_round_half_to_even() {
    let mut rng = Rng::new(5);
    let ties = (-260..=260).map(|i| i as f32 * 0.5);
    let random = (0..200_000).map(|_| rng.unit() * 140.0);
    let near = (-1000..1000).map(|i| f32::from_bits((2.5f32 + i as f32 * 1e-3).to_bits()));
    for v in ties.chain(random).chain(near) {
        assert_eq!(ops::round_ties_even_small(v), v.round_ties_even(), "{v}");
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn activation_quantisation_follows_bitlinear_rules() {
    // A row whose normalised max is exactly hit: the absmax element maps to ±128 → clamped 127.
    let x = [1.0f32, -1.0, 3.0, -3.0];
    let mut tmp = [0f32; 4];
    let mut q = [0i8; 4];
    let xs = ops::quantize_activations_row(&x, &mut tmp, &mut q);
    // x_norm = x / sqrt(5 + 1e-5); absmax = 3/sqrt(5.00001); x_scale = 128 / absmax.
    let denom = (5.0f32 + 1e-5).sqrt();
    let absmax = 3.0 / denom;
    assert_eq!(xs, 128.0 / absmax);
    assert_eq!(
        q,
        [((1.0 / denom) * xs).round_ties_even() as i8, -43, 127, -128]
    );
    // A constant row normalises to 0 → x_scale = 128 / 1e-5, codes 0.
    let xs = ops::quantize_activations_row(&[2.0; 4], &mut tmp, &mut q);
    assert_eq!(q, [0; 4]);
    assert_eq!(xs, 128.0 / 1e-5);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn backend_name_says_which_kernels_this_build_runs() {
    let name = Backend::detect().name();
    report!("kernels: {name}");
    let want: &[&str] = if cfg!(target_feature = "relaxed-simd") {
        &["relaxed-simd"]
    } else if cfg!(target_arch = "wasm32") {
        &["simd128"]
    } else if cfg!(target_arch = "x86_64") {
        &["avx2", "scalar"]
    } else {
        &["scalar"]
    };
    assert!(want.contains(&name), "{name} not in {want:?}");
    assert_eq!(Backend::Scalar.name(), "scalar");
}

/// `matmul_nt_portable` (the static model's projection) gives the same bits on every target and
/// backend: here against an 8-partial-sum reference written out in scalar code, and against a
/// digest of its output bits that is the same natively and in wasm (this test runs in both; the
/// inputs are made from integers only, no libm). Within re-association error of `matmul_nt`.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn portable_matmul_is_bit_identical_across_targets() {
    let mut rng = Rng::new(11);
    let mut u = || ((rng.next_u64() >> 40) as f32) / (1u32 << 24) as f32 - 0.5;
    let (m, k, n) = (3, 387, 29); // k: 48 lanes of 8 and a tail of 3
    let a: Vec<f32> = (0..m * k).map(|_| u()).collect();
    let b: Vec<f32> = (0..n * k).map(|_| u()).collect();
    let mut out = vec![f32::NAN; m * n];
    kernels::matmul_nt_portable(&a, m, k, &b, n, &mut out);
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..m {
        for j in 0..n {
            let (ar, br) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
            let mut s = [0f32; 8];
            for c in 0..(k / 8) * 8 {
                s[c % 8] += ar[c] * br[c];
            }
            let mut want = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
            for c in (k / 8) * 8..k {
                want += ar[c] * br[c];
            }
            let got = out[i * n + j];
            assert_eq!(got.to_bits(), want.to_bits(), "out[{i}][{j}]");
            for byte in got.to_bits().to_le_bytes() {
                digest = (digest ^ byte as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    // Every backend and every row count (the kernels block rows by 8 and take outputs four at
    // a time): each output still equals the reference bit for bit.
    for rows in [1, 2, 4, 5, 9, 17] {
        let a: Vec<f32> = (0..rows * k)
            .map(|i| a[i % (m * k)] * (1.0 + i as f32 / 1e4))
            .collect();
        for backend in [Backend::Scalar, Backend::detect()] {
            let mut got = vec![f32::NAN; rows * n];
            kernels::matmul_nt_portable_with(backend, &a, rows, k, &b, n, &mut got);
            let mut one = vec![f32::NAN; n];
            for i in 0..rows {
                kernels::matmul_nt_portable_with(
                    Backend::Scalar,
                    &a[i * k..(i + 1) * k],
                    1,
                    k,
                    &b,
                    n,
                    &mut one,
                );
                for j in 0..n {
                    assert_eq!(
                        got[i * n + j].to_bits(),
                        one[j].to_bits(),
                        "{backend:?}, {rows} rows, out[{i}][{j}]"
                    );
                }
            }
        }
    }
    let mut fast = vec![0f32; m * n];
    kernels::matmul_nt(&a, m, k, &b, n, &mut fast);
    for (x, y) in out.iter().zip(&fast) {
        assert!((x - y).abs() <= 1e-5, "{x} vs {y}");
    }
    assert_eq!(
        digest, 13_407_282_339_718_627_419,
        "digest of the output bits"
    );
}
