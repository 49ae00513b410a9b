//! Element-wise and row-wise operations of the forward pass (§6), written to round exactly like
//! `reference/forward.py` (numpy float32) wherever that is possible:
//!
//! * sums along a row use numpy's pairwise summation ([`pairwise_sum`]), so `mean`/`var` — and
//!   therefore LayerNorm and BitLinear's activation quantisation — are bit-identical;
//! * GELU is the exact-erf form, evaluated in f32 to within a few ulp of the reference's f64
//!   evaluation ([`gelu`]; [`gelu_exact`] reproduces the reference's rounding);
//! * divisions stay divisions (no reciprocal multiplies), and nothing is fused into FMAs.

/// numpy's float32 pairwise summation (`add.reduce` over a contiguous axis): blocks of up to 128
/// elements summed with 8 interleaved accumulators, larger inputs split in halves (rounded down
/// to a multiple of 8). Reproduces `np.sum(x, dtype=np.float32)` bit for bit.
pub fn pairwise_sum(x: &[f32]) -> f32 {
    pairwise::<false>(x)
}

/// [`pairwise_sum`] of the squares `x[i] * x[i]` (each rounded to f32 first, as numpy's
/// `(c * c).sum()`), without materialising them.
pub fn pairwise_sum_sq(x: &[f32]) -> f32 {
    pairwise::<true>(x)
}

#[inline(always)]
fn term<const SQ: bool>(v: f32) -> f32 {
    if SQ {
        v * v
    } else {
        v
    }
}

/// One leaf block (n ≤ 128) of numpy's pairwise sum: 8 interleaved accumulators (independent
/// lanes, so this vectorises), combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`, then the
/// remainder added in order.
#[inline(always)]
fn pairwise_block<const SQ: bool>(x: &[f32]) -> f32 {
    let n = x.len();
    if n < 8 {
        let mut res = 0.0f32;
        for &v in x {
            res += term::<SQ>(v);
        }
        return res;
    }
    let mut r = [0f32; 8];
    for (rj, &v) in r.iter_mut().zip(&x[..8]) {
        *rj = term::<SQ>(v);
    }
    let end = n - n % 8;
    for c in x[8..end].chunks_exact(8) {
        for (rj, &v) in r.iter_mut().zip(c) {
            *rj += term::<SQ>(v);
        }
    }
    let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for &v in &x[end..] {
        res += term::<SQ>(v);
    }
    res
}

/// numpy's recursive split (`n2 = n/2` rounded down to a multiple of 8, `sum(left) +
/// sum(right)`) evaluated with an explicit stack, so that it inlines into SIMD-specialised
/// callers. Same additions in the same order as the recursion.
#[inline(always)]
fn pairwise<const SQ: bool>(x: &[f32]) -> f32 {
    if x.len() <= 128 {
        return pairwise_block::<SQ>(x);
    }
    // Task: (start, len), len == usize::MAX marks "combine the top two values".
    const COMBINE: usize = usize::MAX;
    let mut tasks = [(0usize, 0usize); 96];
    let mut nt = 1;
    tasks[0] = (0, x.len());
    let mut vals = [0f32; 48];
    let mut nv = 0;
    while nt > 0 {
        nt -= 1;
        let (start, len) = tasks[nt];
        if len == COMBINE {
            let b = vals[nv - 1];
            let a = vals[nv - 2];
            nv -= 1;
            vals[nv - 1] = a + b;
        } else if len <= 128 {
            vals[nv] = pairwise_block::<SQ>(&x[start..start + len]);
            nv += 1;
        } else {
            let mut n2 = len / 2;
            n2 -= n2 % 8;
            tasks[nt] = (0, COMBINE);
            tasks[nt + 1] = (start + n2, len - n2);
            tasks[nt + 2] = (start, n2);
            nt += 3;
        }
    }
    vals[0]
}

/// LayerNorm epsilon (§6.1, §6.3).
pub const LAYER_NORM_EPS: f32 = 1e-5;

#[inline(always)]
fn layer_norm_row_impl(x: &[f32], affine: Option<(&[f32], &[f32])>, out: &mut [f32]) {
    let n = x.len() as f32;
    let mean = pairwise::<false>(x) / n;
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v - mean;
    }
    let var = pairwise::<true>(out) / n;
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

#[inline(always)]
fn layer_norm_impl(x: &[f32], d: usize, affine: Option<(&[f32], &[f32])>, out: &mut [f32]) {
    for (xr, or) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        layer_norm_row_impl(xr, affine, or);
    }
}

#[inline(always)]
fn quantize_activations_row_impl(x: &[f32], tmp: &mut [f32], q: &mut [i8]) -> f32 {
    layer_norm_row_impl(x, None, tmp);
    // max|x_norm| with 8 independent lanes (max is exact in any order, so this vectorises).
    let mut lanes = [0f32; 8];
    let mut chunks = tmp.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            let a = v.abs();
            *l = if a > *l { a } else { *l };
        }
    }
    let mut absmax = 0f32;
    for a in lanes
        .into_iter()
        .chain(chunks.remainder().iter().map(|v| v.abs()))
    {
        absmax = if a > absmax { a } else { absmax };
    }
    let x_scale = 128.0f32 / absmax.max(1e-5);
    for (qi, &v) in q.iter_mut().zip(tmp.iter()) {
        // round_ties_even by adding 1.5·2²³ (see `round_ties_even_small`); the rounded integer
        // is then the low mantissa bits, read back without a float→int conversion so the loop
        // vectorises.
        let y = (v * x_scale).clamp(-129.0, 128.0) + ROUND_MAGIC;
        *qi = (y.to_bits() as i32 - ROUND_MAGIC_BITS).clamp(-128, 127) as i8;
    }
    x_scale
}

/// `f32::round_ties_even` for `|v| ≤ 2²²` (exact there), as two additions that vectorise on
/// every target (`round_ties_even` is a libm call on x86_64 without SSE4.1). Adding
/// `1.5 · 2²³` moves `v` to where the f32 spacing is 1, so the addition itself rounds to the
/// nearest integer, ties to even, under the default rounding mode.
#[inline(always)]
pub fn round_ties_even_small(v: f32) -> f32 {
    (v + ROUND_MAGIC) - ROUND_MAGIC
}

/// 1.5 · 2²³: `v + ROUND_MAGIC` rounds `v` to an integer (ties to even) for `|v| ≤ 2²²`.
const ROUND_MAGIC: f32 = 12_582_912.0;
/// Bit pattern of [`ROUND_MAGIC`]; `(v + ROUND_MAGIC).to_bits() − ROUND_MAGIC_BITS` is the
/// rounded integer.
const ROUND_MAGIC_BITS: i32 = 0x4B40_0000;

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

/// Exact (erf) GELU of one value, `0.5·x·(1 + erf(x/√2))`, computed in f64 and rounded to f32
/// exactly like `reference/forward.py` (correctly rounded up to the ~1e-13 error of [`erf`]).
/// Slow (scalar f64, branches); the forward pass uses [`gelu`], which is tested against this.
#[inline]
pub fn gelu_exact(x: f32) -> f32 {
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

/// Exact-erf GELU (§6.1), `0.5·x·(1 + erf(x/√2))` — never the tanh form — evaluated in f32
/// without branches or table lookups so that loops over it vectorise (SSE2, AVX2, SIMD128).
///
/// Accuracy against [`gelu_exact`] (the reference's f64 evaluation): absolute error below
/// 1e-7·max(1, |x|), at most 6 ulp where |gelu(x)| > 1e-8, about 93% of inputs bit-identical.
/// How: `z = x/√2` is kept as an f32 pair (`z_hi + z_lo`) so no precision is lost before the
/// exponential; `1 + erf(z)` is `1 + z·P(z²)` for −0.5 < z < 1, else built from
/// `erfc(|z|) = exp(−z²)·R(1/(1 + |z|/2))` (`exp` with Cody–Waite reduction of the exact split
/// `−z²`); P, R and the exp polynomial are least-squares fits made for this crate.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    const C: f32 = std::f32::consts::FRAC_1_SQRT_2;
    const C_LO: f32 = 1.210_161_75e-8; // 1/√2 − C
    const C_HI12: f32 = 0.707_031_25; // C with its low 12 mantissa bits cleared
    const C_LO12: f32 = 7.551_908_5e-5; // C − C_HI12 (exact)
    const TWO_OVER_SQRT_PI: f32 = std::f32::consts::FRAC_2_SQRT_PI;
    let zh = x * C;
    let (xh, xl) = split12(x);
    let err = (((xh * C_HI12 - zh) + xh * C_LO12) + xl * C_HI12) + xl * C_LO12;
    let zl = err + x * C_LO;
    let s = zh * zh;
    // 1 + erf(z) near 0: z·P(z²) plus the first-order correction for z_lo.
    let d = TWO_OVER_SQRT_PI * (((1.0 - s) + (0.5 * s) * s) - ((s * s) * s) / 6.0);
    let small = 1.0 + (zh * poly(&GELU_P, s) + zl * d);
    // erfc(|z|) = exp(−z²)·R(t), with −z² split exactly into hi + lo.
    let a = zh.abs();
    let e = if zh < 0.0 { -zl } else { zl };
    // A compare-and-select, not `f32::min`: the same value for every input (NaN included), but
    // `min` lowers to a scalar `fminf` call on wasm32 (1.7 % of the 2-layer forward there).
    let ac = if a < 9.3 { a } else { 9.3 };
    let t = 1.0 / (1.0 + 0.5 * ac);
    let (ahi, alo) = split12(ac);
    let yh = -(ahi * ahi);
    let yl = -(alo * (ac + ahi) + 2.0 * ac * e);
    let ec = exp_hilo(yh, yl) * poly(&GELU_R, t);
    let large = if zh < 0.0 { ec } else { 2.0 - ec };
    let one_plus_erf = if zh > -0.5 && zh < 1.0 { small } else { large };
    0.5 * x * one_plus_erf
}

#[inline(always)]
fn gelu_in_place_impl(v: &mut [f32]) {
    // Blocks of 16 give the vectoriser two or four independent dependency chains.
    let mut chunks = v.chunks_exact_mut(16);
    for c in &mut chunks {
        let mut t = [0f32; 16];
        for (ti, &x) in t.iter_mut().zip(c.iter()) {
            *ti = gelu(x);
        }
        c.copy_from_slice(&t);
    }
    for x in chunks.into_remainder() {
        *x = gelu(*x);
    }
}

/// `(hi, lo)` with `hi` = `v` with the low 12 mantissa bits cleared (so `hi·hi` is exact) and
/// `lo = v − hi` (exact).
#[inline(always)]
fn split12(v: f32) -> (f32, f32) {
    let hi = f32::from_bits(v.to_bits() & 0xFFFF_F000);
    (hi, v - hi)
}

/// `exp(yh + yl)` for `−87 < yh ≤ 0`, `|yl|` ≪ 1: Cody–Waite reduction by ln 2 with `yl` added
/// to the reduced argument, degree-6 polynomial, scaling by `2^k` through the exponent bits.
#[inline(always)]
fn exp_hilo(yh: f32, yl: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4; // 0x3f318000, few bits so k·LN2_HI is exact
    const LN2_LO: f32 = -2.121_944_4e-4; // ln 2 − LN2_HI
    let kb = yh * LOG2E + ROUND_MAGIC;
    let k = kb - ROUND_MAGIC; // round_ties_even(yh · log2 e)
    let ki = kb.to_bits() as i32 - ROUND_MAGIC_BITS; // the same integer, without a conversion
    let r = ((yh - k * LN2_HI) + yl) - k * LN2_LO;
    let scale = f32::from_bits(((ki + 127) << 23) as u32);
    poly(&GELU_EXP, r) * scale
}

#[inline(always)]
fn poly<const N: usize>(c: &[f32; N], t: f32) -> f32 {
    let mut r = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        r = r * t + c[i];
    }
    r
}

/// erf(z)/z ≈ P(z²) on [0, 1].
const GELU_P: [f32; 7] = [
    std::f32::consts::FRAC_2_SQRT_PI, // the fit lands on 2/√π exactly in f32
    -0.376_126_3,
    0.112_836_346,
    -0.026_856_07,
    0.005_192_958,
    -0.000_805_375_1,
    8.006_874e-5,
];

/// erfc(a)·exp(a²) ≈ R(1/(1 + a/2)) on [0.45, 9.3].
const GELU_R: [f32; 10] = [
    4.486_193e-6,
    0.281_961_26,
    0.283_838_9,
    0.233_681_29,
    0.239_549_86,
    -0.117_768_96,
    0.420_999_5,
    -0.624_837_3,
    0.358_722_63,
    -0.076_161_68,
];

/// exp(r) on [−ln2/2, ln2/2].
const GELU_EXP: [f32; 7] = [
    1.0,
    1.0,
    0.499_999_94,
    0.166_664_53,
    0.041_668_296,
    0.008_372_304,
    0.001_382_357_4,
];

/// In-place softmax of one row, as the reference: `e = exp(x − max)`, `e / pairwise_sum(e)`.
pub fn softmax_row(x: &mut [f32]) {
    // Compare-and-select rather than `f32::max` (a scalar `fmaxf` call on wasm32); NaNs are
    // skipped either way.
    let m = x
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
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

crate::kernels::multiversion! {
    /// LayerNorm of one row (§6.1): `(x − mean) / sqrt(var + 1e-5)` with biased variance (sums
    /// in numpy's pairwise order), then `· weight + bias` when `affine` is given.
    /// `out.len() == x.len()`.
    pub fn layer_norm_row(x: &[f32], affine: Option<(&[f32], &[f32])>, out: &mut [f32]) => layer_norm_row_impl
}

crate::kernels::multiversion! {
    /// Row-wise [`layer_norm_row`] over a `[rows × d]` matrix.
    pub fn layer_norm(x: &[f32], d: usize, affine: Option<(&[f32], &[f32])>, out: &mut [f32]) => layer_norm_impl
}

crate::kernels::multiversion! {
    /// BitLinear activation quantisation of one row (§6.3 items 1–3, decision 2): internal
    /// non-affine LayerNorm, `x_scale = 128 / max(max|x_norm|, 1e-5)`,
    /// `q = clamp(round_ties_even(x_norm · x_scale), −128, 127)`. Writes `x.len()` codes to `q`
    /// (entries past that are left as they are) and returns `x_scale`. `tmp.len() == x.len()`.
    pub fn quantize_activations_row(x: &[f32], tmp: &mut [f32], q: &mut [i8]) -> f32 => quantize_activations_row_impl
}

crate::kernels::multiversion! {
    /// [`gelu`] over a slice, in place.
    pub fn gelu_in_place(v: &mut [f32]) => gelu_in_place_impl
}
