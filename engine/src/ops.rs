//! Element-wise and row-wise operations of the forward pass (§6), written to round exactly like
//! `reference/forward.py` (numpy float32) wherever that is possible:
//!
//! * sums along a row use numpy's pairwise summation ([`pairwise_sum`]), so `mean`/`var` — and
//!   therefore LayerNorm and BitLinear's activation quantisation — are bit-identical;
//! * GELU is evaluated in f64 and rounded to f32, like the reference;
//! * divisions stay divisions (no reciprocal multiplies), and nothing is fused into FMAs.

/// numpy's float32 pairwise summation (`add.reduce` over a contiguous axis): blocks of up to 128
/// elements summed with 8 interleaved accumulators, larger inputs split in halves (rounded down
/// to a multiple of 8). Reproduces `np.sum(x, dtype=np.float32)` bit for bit.
pub fn pairwise_sum(x: &[f32]) -> f32 {
    pairwise_sum_by(x.len(), &|i| x[i])
}

/// [`pairwise_sum`] of `f(0), …, f(n-1)` (e.g. squares) without materialising them.
#[inline]
pub fn pairwise_sum_by<F: Fn(usize) -> f32>(n: usize, f: &F) -> f32 {
    pairwise_rec(0, n, f)
}

fn pairwise_rec<F: Fn(usize) -> f32>(start: usize, n: usize, f: &F) -> f32 {
    if n < 8 {
        let mut res = 0.0f32;
        for i in 0..n {
            res += f(start + i);
        }
        res
    } else if n <= 128 {
        let mut r = [0f32; 8];
        for (j, rj) in r.iter_mut().enumerate() {
            *rj = f(start + j);
        }
        let mut i = 8;
        let end = n - n % 8;
        while i < end {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += f(start + i + j);
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += f(start + i);
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_rec(start, n2, f) + pairwise_rec(start + n2, n - n2, f)
    }
}

/// LayerNorm epsilon (§6.1, §6.3).
pub const LAYER_NORM_EPS: f32 = 1e-5;

/// LayerNorm of one row (§6.1): `(x − mean) / sqrt(var + 1e-5)` with biased variance, then
/// `· weight + bias` when `affine` is given. `out.len() == x.len()`; `out` may not alias `x`.
pub fn layer_norm_row(x: &[f32], affine: Option<(&[f32], &[f32])>, out: &mut [f32]) {
    let n = x.len() as f32;
    let mean = pairwise_sum(x) / n;
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v - mean;
    }
    let var = {
        let c: &[f32] = out;
        pairwise_sum_by(c.len(), &|i| c[i] * c[i]) / n
    };
    let denom = (var + LAYER_NORM_EPS).sqrt();
    match affine {
        Some((w, b)) => {
            for ((o, &wi), &bi) in out.iter_mut().zip(w).zip(b) {
                *o = (*o / denom) * wi + bi;
            }
        }
        None => {
            for o in out.iter_mut() {
                *o /= denom;
            }
        }
    }
}

/// Row-wise [`layer_norm_row`] over a `[rows × d]` matrix.
pub fn layer_norm(x: &[f32], d: usize, affine: Option<(&[f32], &[f32])>, out: &mut [f32]) {
    for (xr, or) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        layer_norm_row(xr, affine, or);
    }
}

/// BitLinear activation quantisation of one row (§6.3 items 1–3, decision 2): internal
/// non-affine LayerNorm, `x_scale = 128 / max(max|x_norm|, 1e-5)`,
/// `q = clamp(round_ties_even(x_norm · x_scale), −128, 127)`. Writes `x.len()` codes to `q`
/// (entries past that are left as they are) and returns `x_scale`. `tmp.len() == x.len()`.
pub fn quantize_activations_row(x: &[f32], tmp: &mut [f32], q: &mut [i8]) -> f32 {
    layer_norm_row(x, None, tmp);
    let absmax = tmp.iter().fold(0f32, |m, v| m.max(v.abs()));
    let x_scale = 128.0f32 / absmax.max(1e-5);
    for (qi, &v) in q.iter_mut().zip(tmp.iter()) {
        *qi = (v * x_scale).round_ties_even().clamp(-128.0, 127.0) as i8;
    }
    x_scale
}

/// `erf(x)` in f64, absolute error below 1e-12 everywhere (piecewise Chebyshev-fitted
/// polynomials: `x·P(2x²−1)` on `[0, 1]`, `1 − erfc` pieces on `[1, 6)`, ±1 beyond).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 1.0 {
        a * horner(&ERF_0_1, 2.0 * a * a - 1.0)
    } else {
        1.0 - erfc_ge1(a)
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// `erfc(a)` for `a ≥ 1` (0 for `a ≥ 6`, where it is below 2.2e-17).
fn erfc_ge1(a: f64) -> f64 {
    if a < 2.0 {
        horner(&ERFC_1_2, 2.0 * a - 3.0)
    } else if a < 3.0 {
        horner(&ERFC_2_3, 2.0 * a - 5.0)
    } else if a < 4.0 {
        horner(&ERFC_3_4, 2.0 * a - 7.0)
    } else if a < 5.0 {
        horner(&ERFC_4_5, 2.0 * a - 9.0)
    } else if a < 6.0 {
        horner(&ERFC_5_6, 2.0 * a - 11.0)
    } else {
        0.0
    }
}

#[inline(always)]
fn horner(c: &[f64], t: f64) -> f64 {
    let mut r = 0.0;
    for &ci in c.iter().rev() {
        r = r * t + ci;
    }
    r
}

/// Exact (erf) GELU of one value (§6.1): `0.5·x·(1 + erf(x/√2))`, computed in f64 and rounded
/// to f32 like the reference. Never the tanh approximation.
#[inline]
pub fn gelu(x: f32) -> f32 {
    let x = x as f64;
    let z = x / std::f64::consts::SQRT_2;
    let a = z.abs();
    // 1 + erf(z); for z ≤ −1 use erfc directly so the tail keeps its relative accuracy.
    let one_plus_erf = if a < 1.0 {
        1.0 + z * horner(&ERF_0_1, 2.0 * z * z - 1.0)
    } else if z < 0.0 {
        erfc_ge1(a)
    } else {
        2.0 - erfc_ge1(a)
    };
    (0.5 * x * one_plus_erf) as f32
}

/// In-place softmax of one row, as the reference: `e = exp(x − max)`, `e / pairwise_sum(e)`.
pub fn softmax_row(x: &mut [f32]) {
    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    for v in x.iter_mut() {
        *v = (*v - m).exp();
    }
    let s = pairwise_sum(x);
    for v in x.iter_mut() {
        *v /= s;
    }
}

// Coefficients (power basis in the mapped variable t ∈ [−1, 1]) of least-squares Chebyshev fits
// made for this crate with numpy against Python's `math.erf`.

/// erf(x)/x on [0, 1] as a polynomial in t = 2x² − 1 (abs error < 2e-14).
const ERF_0_1: [f64; 10] = [
    0.9654687386698856,
    -0.1405360890227212,
    0.01985249668808643,
    -0.002285485561062172,
    0.0002175171632215411,
    -1.753716990115485e-05,
    1.2233626339450974e-06,
    -7.511464210625797e-08,
    4.1387681774982765e-09,
    -2.0457190326957655e-10,
];

/// erfc(x) on [1, 2] as a polynomial in t = 2x − 3 (abs error < 1e-13).
const ERFC_1_2: [f64; 14] = [
    0.0338948535247839,
    -0.05946514461182276,
    0.04459885844956408,
    -0.017344000511473785,
    0.0027874288028818988,
    0.000464571438884299,
    -0.00030197233638273364,
    3.7055119931085276e-05,
    9.231793389692494e-06,
    -3.33953463100865e-06,
    8.690857485375605e-08,
    1.2430400038112224e-07,
    -1.6127238908096435e-08,
    -2.239506685263259e-09,
];

/// erfc(x) on [2, 3] as a polynomial in t = 2x − 5 (abs error < 4e-15).
const ERFC_2_3: [f64; 14] = [
    0.00040695201744244715,
    -0.001089142115158997,
    0.0013614276442144438,
    -0.0010437611943590794,
    0.000538898438548266,
    -0.00019116712466555144,
    4.3726431446462196e-05,
    -4.2376120201124155e-06,
    -1.0183061302527515e-06,
    4.889204845891974e-07,
    -7.686587562448911e-08,
    -2.615778767309691e-09,
    3.379379833837054e-09,
    -5.005275712687747e-10,
];

/// erfc(x) on [3, 4] as a polynomial in t = 2x − 7 (abs error < 5e-18, rel 3e-10).
const ERFC_3_4: [f64; 16] = [
    7.430983723372599e-07,
    -2.6997133886847584e-06,
    4.724498430743237e-06,
    -5.286938719889759e-06,
    4.232363165915933e-06,
    -2.5661338148366817e-06,
    1.214753938889162e-06,
    -4.546308965808457e-07,
    1.338245550777222e-07,
    -2.9942798700889344e-08,
    4.532985299089821e-09,
    -2.1734535223222792e-10,
    -1.0921358291003228e-10,
    3.70464984574009e-11,
    -5.1064408419642484e-12,
    4.720457496108948e-14,
];

/// erfc(x) on [4, 5] as a polynomial in t = 2x − 9 (abs error < 3e-20, rel 5e-9).
const ERFC_4_5: [f64; 16] = [
    1.966160441670694e-10,
    -9.05652948070005e-10,
    2.037719131287056e-09,
    -2.981107614809734e-09,
    3.183936178268786e-09,
    -2.6419595364716246e-09,
    1.7692069271615009e-09,
    -9.800874996250422e-10,
    4.5652150553440833e-10,
    -1.8061870912300932e-10,
    6.098595380351438e-11,
    -1.755769384495607e-11,
    4.277155895879725e-12,
    -8.639314587498918e-13,
    1.3478393329055943e-13,
    -1.2286846571097806e-14,
];

/// erfc(x) on [5, 6] as a polynomial in t = 2x − 11 (abs error < 1e-21, rel 4e-5).
const ERFC_5_6: [f64; 16] = [
    7.35784710783246e-15,
    -4.111657886597619e-14,
    1.130706990876587e-13,
    -2.0386977547288298e-13,
    2.708961355136636e-13,
    -2.826969933812215e-13,
    2.410971237539407e-13,
    -1.7259833926456925e-13,
    1.0567498021719327e-13,
    -5.621151833220793e-14,
    2.6369845055266088e-14,
    -1.0848806012863356e-14,
    3.79617174473625e-15,
    -1.257312684445873e-15,
    4.778537788202704e-16,
    -1.1981325050036163e-16,
];
