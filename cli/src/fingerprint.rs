//! `lightembed fingerprint` — customer fingerprints (spec §7, ARCHITECTURE decision 9).
//!
//! A fingerprinted model stores `W' = R·W`, `b' = R·b` in its PROJECTION section, where `R` is a
//! block-diagonal orthogonal matrix over the Matryoshka segments `[0,d₁), [d₁,d₂), …,
//! [d_k, output_dim)` derived from a 64-bit seed kept in the license registry next to
//! `license_id`. The engine knows nothing about it; this module lives in the CLI on purpose.
//!
//! The algorithm is specified bit for bit in `docs/fingerprinting.md` and implemented the same
//! way in `reference/fingerprint.py`; both are checked against
//! `tests/fixtures/fingerprint/rotations.json`. A library module with typed errors
//! ([`FingerprintError`]); the command (`lightembed fingerprint`, file I/O, printing) is
//! `commands/fingerprint.rs`.
//!
//!
//! * SplitMix64 PRNG ([`SplitMix64`]); block `i`'s state is the `i`-th output of
//!   `SplitMix64(seed)` ([`block_seeds`]);
//! * Box–Muller Gaussians in f64 ([`gaussians`]);
//! * each `m×m` block: a Gaussian matrix filled row-major, orthonormalised column by column with
//!   classical Gram–Schmidt applied twice (CGS2), which is the Haar-distributed `Q` of a QR with
//!   `diag(R) > 0` ([`haar_orthogonal`]).
//!
//! Detection ([`detect`]): embed the committed probe set with the plain reference model and the
//! suspect, recover `R̂ = U·Vᵀ` per block by orthogonal Procrustes (`U·S·Vᵀ = Yᵀ·X`, one-sided
//! Jacobi SVD, [`jacobi_svd`]: exact for the rank-deficient `Yᵀ·X` of a few probes), and score each registry entry by its distance to `R̂` ([`BlockFit`]: the
//! singular-value-weighted form of `‖R̂_b − R_b‖_F / √m_b`) averaged over the blocks.

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde_json::{json, Value};

pub use lightembed::rng::SplitMix64;

/// Why a fingerprint input was refused: the rotation's Matryoshka blocks, a seed, the license
/// registry or the vectors handed to [`detect`]. Messages say what was found and what is valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FingerprintError {
    /// `output_dim` is 0.
    #[error("output_dim must be positive")]
    ZeroOutputDim,
    /// `output_dim` above [`MAX_OUTPUT_DIM`]: the rotation is dense f64 (8·d² bytes).
    #[error(
        "output_dim {0} is above the {max} dims fingerprinting supports (the rotation is a dense \
         output_dim × output_dim f64 matrix)",
        max = MAX_OUTPUT_DIM
    )]
    OutputDimTooLarge(usize),
    /// Matryoshka dims not strictly ascending within `1..=output_dim`.
    #[error("matryoshka_dims {dims:?} must be strictly ascending in 1..={output_dim}")]
    BadMatryoshkaDims {
        /// The dims given.
        dims: Vec<usize>,
        /// The model's output_dim.
        output_dim: usize,
    },
    /// A seed that is not a u64 in decimal or `0x` hex.
    #[error("seed {0:?} is not a u64 (decimal or 0x-hex)")]
    BadSeed(String),
    /// The registry text is not JSON (the parser's message).
    #[error("registry is not JSON: {0}")]
    RegistryNotJson(String),
    /// The registry's `"format"` is missing or another format.
    #[error(
        "not a fingerprint registry (\"format\" must be {:?})",
        REGISTRY_FORMAT
    )]
    NotARegistry,
    /// `"entries"` is not an array.
    #[error("registry \"entries\" must be an array")]
    EntriesNotArray,
    /// An entry's `license_id` is missing or outside `1..=u32::MAX`.
    #[error("registry entry {entry}: \"license_id\" must be an integer in 1..=4294967295")]
    BadLicenseId {
        /// Entry index (0-based).
        entry: usize,
    },
    /// An entry's seed string does not parse.
    #[error("registry entry {entry}: seed {seed:?} is not a u64 (decimal or 0x-hex)")]
    BadEntrySeed {
        /// Entry index (0-based).
        entry: usize,
        /// The seed text.
        seed: String,
    },
    /// An entry's numeric seed is not a u64.
    #[error("registry entry {entry}: \"seed\" must be a u64")]
    SeedNotU64 {
        /// Entry index (0-based).
        entry: usize,
    },
    /// An entry without a seed.
    #[error("registry entry {entry}: needs a \"seed\"")]
    MissingSeed {
        /// Entry index (0-based).
        entry: usize,
    },
    /// An entry's `note` is not a string.
    #[error("registry entry {entry}: \"note\" must be a string")]
    BadNote {
        /// Entry index (0-based).
        entry: usize,
    },
    /// A license id that an earlier entry already has.
    #[error("registry entry {entry}: license_id {license_id} appears twice")]
    DuplicateLicenseId {
        /// Entry index (0-based).
        entry: usize,
        /// The repeated license id.
        license_id: u32,
    },
    /// A seed that an earlier entry already has.
    #[error("registry entry {entry}: seed {seed:#018x} appears twice")]
    DuplicateSeed {
        /// Entry index (0-based).
        entry: usize,
        /// The repeated seed.
        seed: u64,
    },
    /// Reference and suspect probe vectors differ in number, or there are none.
    #[error("{reference} reference vectors but {suspect} suspect vectors (need the same, ≥ 1)")]
    ProbeCountMismatch {
        /// Reference vectors given.
        reference: usize,
        /// Suspect vectors given.
        suspect: usize,
    },
    /// Probe vectors of different lengths.
    #[error("every probe vector must have the same length ({dims})")]
    RaggedVectors {
        /// The first vector's length.
        dims: usize,
    },
    /// The suspect's dims are not a Matryoshka block boundary of the reference.
    #[error("suspect vectors have {dims} dims; expected one of {valid:?}")]
    DimsNotABlockBoundary {
        /// The suspect vectors' length.
        dims: usize,
        /// The block boundaries (valid dims).
        valid: Vec<usize>,
    },
}

/// `Result` of this module.
pub type Result<T, E = FingerprintError> = std::result::Result<T, E>;
/// Default decision rule: a match needs the best distance at most this…
pub const MAX_DISTANCE: f64 = 0.5;
/// …and every other candidate (the identity included) at least this much farther.
pub const MIN_MARGIN: f64 = 0.3;
/// Exit code for "no registry entry matches" (no match, ambiguous, or unfingerprinted).
pub const EXIT_NO_MATCH: u8 = 3;
/// The probe set shipped with the CLI (`cli/assets/probes.txt`), one text per line.
pub const PROBES: &str = include_str!("../assets/probes.txt");
/// The registry file's `"format"` value.
pub const REGISTRY_FORMAT: &str = "lightembed-fingerprint-registry/1";

// ---------------------------------------------------------------------------------------------
// PRNG, Gaussians, rotation
// ---------------------------------------------------------------------------------------------

/// `count` standard normal values from `SplitMix64(state)` by Box–Muller, in f64: from two
/// consecutive outputs `a`, `b`: `u1 = ((a>>11)+1)·2⁻⁵³ ∈ (0,1]`, `u2 = (b>>11)·2⁻⁵³ ∈ [0,1)`,
/// `r = √(−2 ln u1)`, emit `r·cos(2π u2)` then `r·sin(2π u2)`. An odd count drops the last sine.
pub fn gaussians(state: u64, count: usize) -> Vec<f64> {
    const TWO_POW_M53: f64 = 1.0 / (1u64 << 53) as f64;
    let mut rng = SplitMix64::new(state);
    let mut out = Vec::with_capacity(count + 1);
    while out.len() < count {
        let a = rng.next_u64();
        let b = rng.next_u64();
        let u1 = ((a >> 11) + 1) as f64 * TWO_POW_M53;
        let u2 = (b >> 11) as f64 * TWO_POW_M53;
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        out.push(r * theta.cos());
        out.push(r * theta.sin());
    }
    out.truncate(count);
    out
}

/// The largest `output_dim` fingerprinting accepts: the rotation is built as dense f64 blocks, so
/// a model header's `output_dim` (a u16) must not size a 34 GB allocation. 4096 is 10× the shipped
/// models' 384 (128 MiB for a dense `R`).
pub const MAX_OUTPUT_DIM: usize = 4096;

/// The Matryoshka blocks `[(0,d₁), (d₁,d₂), …, (d_k, output_dim)]` (decision 9).
/// `matryoshka_dims` are the used entries; a last entry equal to `output_dim` adds no block.
///
/// # Errors
/// `output_dim == 0` or above [`MAX_OUTPUT_DIM`], or dims not strictly ascending within
/// `1..=output_dim`.
pub fn segments(output_dim: usize, matryoshka_dims: &[usize]) -> Result<Vec<(usize, usize)>> {
    if output_dim == 0 {
        return Err(FingerprintError::ZeroOutputDim);
    }
    if output_dim > MAX_OUTPUT_DIM {
        return Err(FingerprintError::OutputDimTooLarge(output_dim));
    }
    let mut bounds = vec![0usize];
    for &d in matryoshka_dims {
        if d <= *bounds.last().unwrap_or(&0) || d > output_dim {
            return Err(FingerprintError::BadMatryoshkaDims {
                dims: matryoshka_dims.to_vec(),
                output_dim,
            });
        }
        if d < output_dim {
            bounds.push(d);
        }
    }
    bounds.push(output_dim);
    Ok(bounds.windows(2).map(|w| (w[0], w[1])).collect())
}

/// Block `i`'s SplitMix64 state: the `i`-th output (0-based) of `SplitMix64(seed)`.
pub fn block_seeds(seed: u64, n_blocks: usize) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..n_blocks).map(|_| rng.next_u64()).collect()
}

/// The `m×m` orthogonal block for block state `state`: Gaussian `G` (row-major fill), columns
/// orthonormalised in order with CGS2 (each column projected against all previous ones, twice).
///
/// # Panics
/// Never in practice: a zero residual has probability zero and is reported as a panic.
pub fn haar_orthogonal(state: u64, m: usize) -> DMatrix<f64> {
    let g = gaussians(state, m * m); // row-major: G[i][j] = g[i·m + j]
                                     // Plain slices (column-major), not nalgebra views: this runs once per registry entry and
                                     // block, and stays fast in debug builds too.
    let mut q = vec![0f64; m * m];
    let mut v = vec![0f64; m];
    let mut c = vec![0f64; m];
    for j in 0..m {
        for (i, vi) in v.iter_mut().enumerate() {
            *vi = g[i * m + j];
        }
        if j > 0 {
            for _ in 0..2 {
                // Classical Gram–Schmidt: every coefficient from the same v, then subtract.
                for (k, ck) in c[..j].iter_mut().enumerate() {
                    *ck = q[k * m..(k + 1) * m]
                        .iter()
                        .zip(&v)
                        .map(|(a, b)| a * b)
                        .sum();
                }
                for (k, &ck) in c[..j].iter().enumerate() {
                    for (vi, qi) in v.iter_mut().zip(&q[k * m..(k + 1) * m]) {
                        *vi -= ck * qi;
                    }
                }
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(norm > 0.0, "degenerate Gaussian block (probability zero)");
        for (qi, vi) in q[j * m..(j + 1) * m].iter_mut().zip(&v) {
            *qi = vi / norm;
        }
    }
    DMatrix::from_vec(m, m, q)
}

/// The diagonal blocks of `R(seed, output_dim, matryoshka_dims)`, in segment order; only the
/// first `n_blocks` (all when `None`).
pub fn rotation_blocks(
    seed: u64,
    segs: &[(usize, usize)],
    n_blocks: Option<usize>,
) -> Vec<DMatrix<f64>> {
    let n = n_blocks.unwrap_or(segs.len()).min(segs.len());
    block_seeds(seed, segs.len())
        .into_iter()
        .zip(segs)
        .take(n)
        .map(|(s, &(a, b))| haar_orthogonal(s, b - a))
        .collect()
}

/// `R` as a dense `output_dim × output_dim` matrix.
///
/// # Errors
/// Invalid `matryoshka_dims` (see [`segments`]).
pub fn rotation(seed: u64, output_dim: usize, matryoshka_dims: &[usize]) -> Result<DMatrix<f64>> {
    let segs = segments(output_dim, matryoshka_dims)?;
    let mut r = DMatrix::<f64>::zeros(output_dim, output_dim);
    for (&(a, b), blk) in segs.iter().zip(rotation_blocks(seed, &segs, None)) {
        r.view_mut((a, a), (b - a, b - a)).copy_from(&blk);
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// Seeds and the registry
// ---------------------------------------------------------------------------------------------

/// A u64 seed from decimal or `0x` hex text (underscores allowed).
///
/// # Errors
/// Not an integer, or out of the u64 range.
pub fn parse_seed(text: &str) -> Result<u64> {
    let t = text.trim().to_ascii_lowercase().replace('_', "");
    let parsed = match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    parsed.map_err(|_| FingerprintError::BadSeed(text.to_string()))
}

/// One registry row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The license (1..=u32::MAX; 0 is "unlicensed" and never in a registry).
    pub license_id: u32,
    /// The rotation seed.
    pub seed: u64,
    /// Free text (customer, contract…).
    pub note: String,
}

/// Parses a registry file (format in `docs/fingerprinting.md`, "Registry").
///
/// # Errors
/// Not JSON, wrong `"format"`, an entry without a valid `license_id`/`seed`, or a repeated
/// license id or seed.
pub fn parse_registry(text: &str) -> Result<Vec<Entry>> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| FingerprintError::RegistryNotJson(e.to_string()))?;
    if doc.get("format").and_then(Value::as_str) != Some(REGISTRY_FORMAT) {
        return Err(FingerprintError::NotARegistry);
    }
    let rows = match doc.get("entries") {
        None => return Ok(Vec::new()),
        Some(Value::Array(rows)) => rows,
        Some(_) => return Err(FingerprintError::EntriesNotArray),
    };
    let mut out: Vec<Entry> = Vec::with_capacity(rows.len());
    let mut ids = std::collections::HashSet::new();
    let mut seeds = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let license_id = row
            .get("license_id")
            .and_then(Value::as_u64)
            .filter(|&v| (1..=u32::MAX as u64).contains(&v))
            .ok_or(FingerprintError::BadLicenseId { entry: i })? as u32;
        let seed = match row.get("seed") {
            Some(Value::String(s)) => {
                parse_seed(s).map_err(|_| FingerprintError::BadEntrySeed {
                    entry: i,
                    seed: s.clone(),
                })?
            }
            Some(Value::Number(n)) => n
                .as_u64()
                .ok_or(FingerprintError::SeedNotU64 { entry: i })?,
            _ => return Err(FingerprintError::MissingSeed { entry: i }),
        };
        let note = match row.get("note") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(FingerprintError::BadNote { entry: i }),
        };
        if !ids.insert(license_id) {
            return Err(FingerprintError::DuplicateLicenseId {
                entry: i,
                license_id,
            });
        }
        if !seeds.insert(seed) {
            return Err(FingerprintError::DuplicateSeed { entry: i, seed });
        }
        out.push(Entry {
            license_id,
            seed,
            note,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

/// How a candidate rotation is compared with the probes (see [`BlockFit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// `⟨Q, Yᵀ·X⟩ / Σ singular values`: every direction of `R̂` counts as much as the probes pin
    /// it down (the default; identifies with far fewer probes).
    Weighted,
    /// `‖R̂ − Q‖_F / √m` exactly.
    Frobenius,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Weighted => "weighted",
            Metric::Frobenius => "frobenius",
        }
    }
}

/// A singular value decomposition `A = U·diag(s)·Vᵀ` of a square matrix (see [`jacobi_svd`]).
#[derive(Clone, Debug)]
pub struct Svd {
    /// Left singular vectors (columns); for a zero singular value, an orthonormal completion.
    pub u: DMatrix<f64>,
    /// Singular values, ≥ 0, in no particular order (paired with the columns of `u` and `v`).
    pub singular_values: Vec<f64>,
    /// Right singular vectors (columns).
    pub v: DMatrix<f64>,
}

impl Svd {
    /// `U·Vᵀ`: the orthogonal polar factor of `A`, i.e. the Procrustes rotation. Unique when `A`
    /// has full rank; otherwise one of the optimal rotations (the probes do not pin the rest).
    pub fn polar_factor(&self) -> DMatrix<f64> {
        &self.u * self.v.transpose()
    }
}

/// SVD of a square `m×m` matrix by one-sided Jacobi rotations (Hestenes): columns of `W = A·V`
/// are rotated in pairs until mutually orthogonal; then `s_j = ‖w_j‖`, `u_j = w_j / s_j`.
/// Singular values come out with high relative accuracy, and exactly-zero ones stay zero, so
/// rank-deficient inputs (fewer probes than the block's dims) are exact where nalgebra's
/// `svd(true, true)` is not (dimforge/nalgebra#1172: its singular values can be wrong whenever
/// singular vectors are requested). Columns of `U` for zero singular values are completed to
/// an orthonormal basis. Cost: O(m³) per sweep, ≤ 60 sweeps (typically 6–10).
pub fn jacobi_svd(a: &DMatrix<f64>) -> Svd {
    let m = a.nrows();
    assert_eq!(m, a.ncols(), "jacobi_svd: square matrices only");
    let mut w: Vec<f64> = a.as_slice().to_vec(); // column-major: column j = w[j·m .. (j+1)·m]
    let mut v: Vec<f64> = DMatrix::<f64>::identity(m, m).as_slice().to_vec();
    let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
    let rotate = |buf: &mut [f64], p: usize, q: usize, c: f64, s: f64| {
        let (lo, hi) = buf.split_at_mut(q * m);
        for (x, y) in lo[p * m..(p + 1) * m].iter_mut().zip(&mut hi[..m]) {
            let (xp, yq) = (*x, *y);
            *x = c * xp - s * yq;
            *y = s * xp + c * yq;
        }
    };
    for _sweep in 0..60 {
        let mut rotated = false;
        for p in 0..m.saturating_sub(1) {
            for q in p + 1..m {
                let (cp, cq) = (&w[p * m..(p + 1) * m], &w[q * m..(q + 1) * m]);
                let (alpha, beta, gamma) = (dot(cp, cp), dot(cq, cq), dot(cp, cq));
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                rotate(&mut w, p, q, c, s);
                rotate(&mut v, p, q, c, s);
            }
        }
        if !rotated {
            break;
        }
    }
    let singular_values: Vec<f64> = (0..m)
        .map(|j| dot(&w[j * m..(j + 1) * m], &w[j * m..(j + 1) * m]).sqrt())
        .collect();
    let s_max = singular_values.iter().cloned().fold(0.0, f64::max);
    let tiny = s_max * 1e-13;
    // U: normalised columns for the non-zero singular values, then Gram–Schmidt (twice) over the
    // standard basis to complete the rest (their direction is free).
    let mut u = vec![0f64; m * m];
    let mut done: Vec<usize> = Vec::with_capacity(m);
    for j in 0..m {
        if singular_values[j] > tiny {
            for (ui, wi) in u[j * m..(j + 1) * m].iter_mut().zip(&w[j * m..(j + 1) * m]) {
                *ui = wi / singular_values[j];
            }
            done.push(j);
        }
    }
    let mut basis = 0usize;
    for j in 0..m {
        if singular_values[j] > tiny {
            continue;
        }
        loop {
            let mut col = vec![0f64; m];
            col[basis % m] = 1.0;
            basis += 1;
            for _ in 0..2 {
                for &k in &done {
                    let c = dot(&u[k * m..(k + 1) * m], &col);
                    for (x, uk) in col.iter_mut().zip(&u[k * m..(k + 1) * m]) {
                        *x -= c * uk;
                    }
                }
            }
            let norm = dot(&col, &col).sqrt();
            if norm > 1e-6 {
                for (ui, x) in u[j * m..(j + 1) * m].iter_mut().zip(&col) {
                    *ui = x / norm;
                }
                done.push(j);
                break;
            }
        }
    }
    Svd {
        u: DMatrix::from_vec(m, m, u),
        singular_values,
        v: DMatrix::from_vec(m, m, v),
    }
}

/// Orthogonal Procrustes for one Matryoshka block: `cross = Σᵢ yᵢ·xᵢᵀ = U·diag(s)·Vᵀ`,
/// `R̂ = U·Vᵀ`. A candidate `Q` scores `d(Q) = √max(0, 2 − 2·⟨Q, T⟩/N)` with `T = cross`,
/// `N = Σ s` ([`Metric::Weighted`]) or `T = R̂`, `N = m` ([`Metric::Frobenius`], where
/// `d(Q) = ‖R̂ − Q‖_F/√m`). Both give 0 for `Q = R̂`, ≈ √2 for an unrelated rotation, and agree
/// when all singular values are equal.
#[derive(Clone, Debug)]
pub struct BlockFit {
    /// `R̂ = U·Vᵀ` (the CLI only needs `target`; kept for tests and inspection).
    #[cfg_attr(not(test), allow(dead_code))]
    pub rhat: DMatrix<f64>,
    target: DMatrix<f64>,
    norm: f64,
}

impl BlockFit {
    /// Fits one block from paired rows (`x` reference, `y` suspect, each `m` long).
    pub fn new(x: &[&[f64]], y: &[&[f64]], metric: Metric) -> BlockFit {
        let m = x.first().map_or(0, |r| r.len());
        let mut cross = vec![0f64; m * m]; // column-major
        for (xi, yi) in x.iter().zip(y) {
            for (c, &xc) in xi.iter().enumerate() {
                for (acc, &yr) in cross[c * m..(c + 1) * m].iter_mut().zip(yi.iter()) {
                    *acc += yr * xc;
                }
            }
        }
        let cross = DMatrix::from_vec(m, m, cross);
        let svd = jacobi_svd(&cross);
        let nuclear: f64 = svd.singular_values.iter().sum();
        let rhat = svd.polar_factor();
        match metric {
            Metric::Weighted => BlockFit {
                rhat,
                target: cross,
                norm: nuclear,
            },
            Metric::Frobenius => BlockFit {
                target: rhat.clone(),
                rhat,
                norm: m as f64,
            },
        }
    }

    /// `d(Q)` for a candidate block `q`.
    pub fn distance(&self, q: &DMatrix<f64>) -> f64 {
        let sim = if self.norm > 0.0 {
            q.dot(&self.target) / self.norm
        } else {
            0.0
        };
        (2.0 - 2.0 * sim).max(0.0).sqrt()
    }
}

/// How [`detect`] scores and decides.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// Candidate scoring.
    pub metric: Metric,
    /// Largest best distance that still counts as a match.
    pub max_distance: f64,
    /// Smallest gap to the runner-up for a match.
    pub min_margin: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            metric: Metric::Weighted,
            max_distance: MAX_DISTANCE,
            min_margin: MIN_MARGIN,
        }
    }
}

/// A scored candidate (`license_id` 0 = the identity, i.e. the unfingerprinted reference).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Registry license, or 0 for the identity.
    pub license_id: u32,
    /// Mean over observed blocks of `‖R̂_b − R_b‖_F / √m_b`.
    pub distance: f64,
    /// The per-block distances.
    pub per_block: Vec<f64>,
}

/// What [`detect`] concludes.
#[derive(Clone, Debug)]
pub struct Detection {
    /// `match`, `no_match` (best above the threshold), `ambiguous` (margin too small) or
    /// `unfingerprinted` (the identity fits best).
    pub verdict: &'static str,
    /// The closest candidate.
    pub best: Candidate,
    /// The second closest, if any.
    pub runner_up: Option<Candidate>,
    /// The identity's score (how far the suspect is from the plain model).
    pub identity: Candidate,
    /// The blocks used (those inside the observed prefix).
    pub blocks: Vec<(usize, usize)>,
    /// Number of probe vectors.
    pub n_probes: usize,
    /// The threshold applied.
    pub max_distance: f64,
    /// The margin required.
    pub min_margin: f64,
    /// The scoring metric.
    pub metric: Metric,
}

impl Detection {
    /// `runner_up.distance − best.distance`.
    pub fn margin(&self) -> Option<f64> {
        self.runner_up
            .as_ref()
            .map(|r| r.distance - self.best.distance)
    }

    /// The `--json` report (the same keys as `reference/fingerprint.py`).
    pub fn to_json(&self) -> Value {
        let cand = |c: &Candidate| json!({"license_id": c.license_id, "distance": c.distance, "per_block": c.per_block});
        json!({
            "verdict": self.verdict,
            "license_id": if self.verdict == "match" { json!(self.best.license_id) } else { Value::Null },
            "best": cand(&self.best),
            "runner_up": self.runner_up.as_ref().map(cand),
            "margin": self.margin(),
            "identity_distance": self.identity.distance,
            "blocks": self.blocks.iter().map(|&(a, b)| json!([a, b])).collect::<Vec<_>>(),
            "n_probes": self.n_probes,
            "max_distance": self.max_distance,
            "min_margin": self.min_margin,
            "metric": self.metric.name(),
        })
    }
}

fn score(fits: &[BlockFit], blocks: &[DMatrix<f64>]) -> (f64, Vec<f64>) {
    let per: Vec<f64> = fits
        .iter()
        .zip(blocks)
        .map(|(f, q)| f.distance(q))
        .collect();
    (per.iter().sum::<f64>() / per.len().max(1) as f64, per)
}

/// Scores the identity and every registry entry against `R̂` recovered from paired probe vectors
/// (a candidate's distance is the mean of [`BlockFit::distance`] over the observed blocks).
///
/// `reference`, `suspect`: one row per probe, each `dims` long, where `dims` is a valid dims of a
/// model with `output_dim` / `matryoshka_dims` (only blocks inside `[0, dims)` are used).
///
/// # Errors
/// Row counts or lengths differ, no probes, or `dims` is not a block boundary.
pub fn detect(
    reference: &[Vec<f64>],
    suspect: &[Vec<f64>],
    output_dim: usize,
    matryoshka_dims: &[usize],
    registry: &[Entry],
    rule: Rule,
) -> Result<Detection> {
    let Rule {
        metric,
        max_distance,
        min_margin,
    } = rule;
    if reference.len() != suspect.len() || reference.is_empty() {
        return Err(FingerprintError::ProbeCountMismatch {
            reference: reference.len(),
            suspect: suspect.len(),
        });
    }
    let dims = suspect[0].len();
    if reference.iter().chain(suspect).any(|v| v.len() != dims) {
        return Err(FingerprintError::RaggedVectors { dims });
    }
    let segs = segments(output_dim, matryoshka_dims)?;
    if !segs.iter().any(|&(_, b)| b == dims) {
        let valid: Vec<usize> = segs.iter().map(|&(_, b)| b).collect();
        return Err(FingerprintError::DimsNotABlockBoundary { dims, valid });
    }
    let blocks: Vec<(usize, usize)> = segs.iter().copied().filter(|&(_, b)| b <= dims).collect();
    let fits: Vec<BlockFit> = blocks
        .iter()
        .map(|&(a, b)| {
            let x: Vec<&[f64]> = reference.iter().map(|v| &v[a..b]).collect();
            let y: Vec<&[f64]> = suspect.iter().map(|v| &v[a..b]).collect();
            BlockFit::new(&x, &y, metric)
        })
        .collect();
    let eye: Vec<DMatrix<f64>> = blocks
        .iter()
        .map(|&(a, b)| DMatrix::identity(b - a, b - a))
        .collect();
    let (d, per) = score(&fits, &eye);
    let identity = Candidate {
        license_id: 0,
        distance: d,
        per_block: per,
    };
    let mut cands: Vec<Candidate> = registry
        .par_iter()
        .map(|e| {
            let (distance, per_block) =
                score(&fits, &rotation_blocks(e.seed, &segs, Some(blocks.len())));
            Candidate {
                license_id: e.license_id,
                distance,
                per_block,
            }
        })
        .collect();
    cands.push(identity.clone());
    cands.sort_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then(a.license_id.cmp(&b.license_id))
    });
    let mut ranked = cands.into_iter();
    let best = ranked.next().expect("the identity is always a candidate");
    let runner_up = ranked.next();
    let verdict = if best.distance > max_distance {
        "no_match"
    } else if runner_up
        .as_ref()
        .is_some_and(|r| r.distance - best.distance < min_margin)
    {
        "ambiguous"
    } else if best.license_id == 0 {
        "unfingerprinted"
    } else {
        "match"
    };
    Ok(Detection {
        verdict,
        best,
        runner_up,
        identity,
        blocks,
        n_probes: suspect.len(),
        max_distance,
        min_margin,
        metric,
    })
}

/// The probe texts of `text` (one per line; a final newline ends the last probe).
pub fn probe_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `n` Gaussian probes `x` (seed `state`, length `r`'s size) and their images `y = R·x`: what
    /// a model fingerprinted with `r` returns for the reference's vectors.
    fn rotated_probes(r: &DMatrix<f64>, state: u64, n: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let m = r.nrows();
        let x: Vec<Vec<f64>> = gaussians(state, m * n)
            .chunks(m)
            .map(<[f64]>::to_vec)
            .collect();
        let y = x
            .iter()
            .map(|v| {
                (r * nalgebra::DVector::from_column_slice(v))
                    .iter()
                    .copied()
                    .collect()
            })
            .collect();
        (x, y)
    }

    fn check_svd(a: &DMatrix<f64>, want_sorted: &[f64]) {
        let svd = jacobi_svd(a);
        let m = a.nrows();
        let mut s = svd.singular_values.clone();
        s.sort_by(|x, y| y.partial_cmp(x).unwrap());
        for (g, w) in s.iter().zip(want_sorted) {
            assert!(
                (g - w).abs() <= 1e-12 * want_sorted[0].max(1.0),
                "σ {g} vs {w}"
            );
        }
        let eye = DMatrix::<f64>::identity(m, m);
        assert!(
            (svd.u.transpose() * &svd.u - &eye).amax() < 1e-12,
            "U orthonormal"
        );
        assert!(
            (svd.v.transpose() * &svd.v - &eye).amax() < 1e-12,
            "V orthonormal"
        );
        let recomposed = &svd.u
            * DMatrix::from_diagonal(&nalgebra::DVector::from_vec(svd.singular_values.clone()))
            * svd.v.transpose();
        assert!(
            (recomposed - a).amax() < 1e-12 * a.amax().max(1.0),
            "U·S·Vᵀ = A"
        );
    }

    #[test]
    fn jacobi_svd_is_exact_on_rank_deficient_and_full_rank_matrices() {
        // All-ones 3×3: rank 1, σ = (3, 0, 0) (nalgebra's svd(true, true) gets such inputs wrong).
        check_svd(&DMatrix::from_element(3, 3, 1.0), &[3.0, 0.0, 0.0]);
        // Full rank, σ² = eigenvalues of AᵀA = {9, 9, 3}... checked via the invariants only.
        let a = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 2.0, 2.0, -1.0, -1.0, 2.0, 1.0, -1.0]);
        let svd = jacobi_svd(&a);
        let frob2: f64 = svd.singular_values.iter().map(|s| s * s).sum();
        assert!(
            (frob2 - 21.0).abs() < 1e-12,
            "Σσ² = ‖A‖²_F = 21, got {frob2}"
        );
        check_svd(&a, &[]);
        // Rank 1 and 2 outer products in 12 dims, like the cross matrix of one or two probes.
        let x = nalgebra::DVector::from_fn(12, |i, _| ((i * 7 % 5) as f64) - 1.7);
        let y = nalgebra::DVector::from_fn(12, |i, _| ((i * 3 % 7) as f64) * 0.3 + 0.1);
        let r1 = &y * x.transpose();
        check_svd(&r1, &[y.norm() * x.norm(), 0.0, 0.0]);
        let z = nalgebra::DVector::from_fn(12, |i, _| if i % 2 == 0 { 1.0 } else { -0.5 });
        let r2 = &r1 + &z * z.transpose();
        let svd = jacobi_svd(&r2);
        let nonzero = svd.singular_values.iter().filter(|&&s| s > 1e-9).count();
        assert_eq!(nonzero, 2, "{:?}", svd.singular_values);
        check_svd(&r2, &[]);
        check_svd(&DMatrix::zeros(4, 4), &[0.0; 4]);
    }

    #[test]
    fn one_probe_against_itself_is_distance_zero() {
        // The plain model against itself with a single probe: cross = x·xᵀ, the identity is an
        // exact fit (issue: nalgebra's SVD reported 0.349).
        let x: Vec<f64> = (0..16)
            .map(|i| ((i * 5 % 11) as f64) / 11.0 - 0.4)
            .collect();
        let fit = BlockFit::new(&[&x], &[&x], Metric::Weighted);
        let d = fit.distance(&DMatrix::identity(16, 16));
        assert!(d < 1e-6, "identity distance {d}");
    }

    fn fixture(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/fingerprint")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn hex(v: &Value) -> u64 {
        parse_seed(v.as_str().unwrap()).unwrap()
    }

    #[test]
    fn splitmix64_and_gaussians_match_the_fixture() {
        let doc: Value = serde_json::from_str(&fixture("rotations.json")).unwrap();
        for case in doc["splitmix64"].as_array().unwrap() {
            let mut rng = SplitMix64::new(hex(&case["state"]));
            for want in case["outputs"].as_array().unwrap() {
                assert_eq!(rng.next_u64(), hex(want));
            }
        }
        for case in doc["gaussians"].as_array().unwrap() {
            let want: Vec<f64> = case["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let got = gaussians(hex(&case["state"]), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-14, "{g} vs {w}");
            }
        }
    }

    #[test]
    fn rotations_match_python_within_1e_12() {
        let doc: Value = serde_json::from_str(&fixture("rotations.json")).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            let seed = parse_seed(case["seed"].as_str().unwrap()).unwrap();
            let n = case["output_dim"].as_u64().unwrap() as usize;
            let dims: Vec<usize> = case["matryoshka_dims"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect();
            let segs = segments(n, &dims).unwrap();
            let want_blocks: Vec<(usize, usize)> = case["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        b[0].as_u64().unwrap() as usize,
                        b[1].as_u64().unwrap() as usize,
                    )
                })
                .collect();
            assert_eq!(segs, want_blocks);
            let seeds: Vec<u64> = case["block_seeds"]
                .as_array()
                .unwrap()
                .iter()
                .map(hex)
                .collect();
            assert_eq!(block_seeds(seed, segs.len()), seeds);
            let r = rotation(seed, n, &dims).unwrap();
            let want = case["rotation"].as_array().unwrap();
            let mut worst = 0f64;
            for (i, row) in want.iter().enumerate() {
                for (j, w) in row.as_array().unwrap().iter().enumerate() {
                    worst = worst.max((r[(i, j)] - w.as_f64().unwrap()).abs());
                }
            }
            assert!(worst <= 1e-12, "case {case}: max |diff| {worst:e}");
            let err = (r.transpose() * &r - DMatrix::<f64>::identity(n, n))
                .abs()
                .max();
            assert!(err < 1e-13, "RᵀR − I = {err:e}");
        }
    }

    #[test]
    fn blocks_have_positive_gram_schmidt_diagonal_and_are_orthogonal() {
        // Q from CGS2 with positive norms ⇔ QR with diag(R) > 0: Qᵀ·G is upper triangular with a
        // positive diagonal.
        for (state, m) in [(1u64, 1usize), (7, 2), (99, 17), (12345, 64)] {
            let q = haar_orthogonal(state, m);
            let g = DMatrix::from_row_slice(m, m, &gaussians(state, m * m));
            let rr = q.transpose() * &g;
            for i in 0..m {
                assert!(rr[(i, i)] > 0.0);
                for j in 0..i {
                    assert!(rr[(i, j)].abs() < 1e-9, "R[{i},{j}] = {}", rr[(i, j)]);
                }
            }
            assert!(
                (q.transpose() * &q - DMatrix::<f64>::identity(m, m))
                    .abs()
                    .max()
                    < 1e-13
            );
        }
    }

    #[test]
    fn frobenius_metric_is_the_normalised_distance_to_rhat_and_weighted_needs_fewer_probes() {
        let r = rotation(77, 16, &[]).unwrap();
        let other = rotation(78, 16, &[]).unwrap();
        // 6 probes in a 16-dim block: R̂ is only partly determined
        let (x, y) = rotated_probes(&r, 9, 6);
        let xs: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
        let ys: Vec<&[f64]> = y.iter().map(Vec::as_slice).collect();
        let fro = BlockFit::new(&xs, &ys, Metric::Frobenius);
        let want = (&fro.rhat - &other).norm() / 4.0;
        assert!((fro.distance(&other) - want).abs() < 1e-12);
        assert!(fro.distance(&fro.rhat) < 1e-7);
        assert!(
            fro.distance(&r) > 0.5,
            "the unobserved directions of R̂ are arbitrary"
        );
        let w = BlockFit::new(&xs, &ys, Metric::Weighted);
        assert!(
            w.distance(&r) < 1e-6,
            "the true rotation explains every probe exactly"
        );
        assert!(w.distance(&other) > 1.0);
    }

    #[test]
    fn segments_follow_decision_9() {
        assert_eq!(
            segments(384, &[32, 64, 128, 256]).unwrap(),
            vec![(0, 32), (32, 64), (64, 128), (128, 256), (256, 384)]
        );
        assert_eq!(segments(16, &[8, 16]).unwrap(), vec![(0, 8), (8, 16)]);
        assert_eq!(segments(5, &[]).unwrap(), vec![(0, 5)]);
        assert_eq!(
            segments(8, &[4, 4]).unwrap_err().to_string(),
            "matryoshka_dims [4, 4] must be strictly ascending in 1..=8"
        );
        assert!(matches!(
            segments(8, &[9]),
            Err(FingerprintError::BadMatryoshkaDims { output_dim: 8, .. })
        ));
        assert_eq!(segments(0, &[]), Err(FingerprintError::ZeroOutputDim));
        // A header's u16 output_dim must not size a dense d×d f64 allocation (65535 → 34 GB).
        assert_eq!(
            segments(65535, &[]),
            Err(FingerprintError::OutputDimTooLarge(65535))
        );
        assert_eq!(
            segments(MAX_OUTPUT_DIM, &[]).unwrap(),
            vec![(0, MAX_OUTPUT_DIM)]
        );
    }

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed("42").unwrap(), 42);
        assert_eq!(parse_seed("0xFFFF_FFFF_FFFF_FFFF").unwrap(), u64::MAX);
        assert!(parse_seed("18446744073709551616").is_err());
        assert!(parse_seed("0x").is_err());
        assert_eq!(
            parse_seed("-1").unwrap_err().to_string(),
            "seed \"-1\" is not a u64 (decimal or 0x-hex)"
        );
    }

    #[test]
    fn registry_fixture_parses_and_bad_registries_fail() {
        let reg = parse_registry(&fixture("registry.json")).unwrap();
        assert_eq!(reg.len(), 1000);
        assert_eq!(reg[16].license_id, 17);
        let ok = r#"{"format":"lightembed-fingerprint-registry/1","entries":[{"license_id":1,"seed":12}]}"#;
        assert_eq!(parse_registry(ok).unwrap()[0].seed, 12);
        use FingerprintError::*;
        for (bad, want) in [
            (r#"{"entries":[]}"#, NotARegistry),
            (
                r#"{"format":"lightembed-fingerprint-registry/1","entries":[{"license_id":0,"seed":"1"}]}"#,
                BadLicenseId { entry: 0 },
            ),
            (
                r#"{"format":"lightembed-fingerprint-registry/1","entries":[{"license_id":1}]}"#,
                MissingSeed { entry: 0 },
            ),
            (
                r#"{"format":"lightembed-fingerprint-registry/1","entries":[{"license_id":1,"seed":"1"},{"license_id":1,"seed":"2"}]}"#,
                DuplicateLicenseId {
                    entry: 1,
                    license_id: 1,
                },
            ),
            (
                r#"{"format":"lightembed-fingerprint-registry/1","entries":[{"license_id":1,"seed":"1"},{"license_id":2,"seed":"0x1"}]}"#,
                DuplicateSeed { entry: 1, seed: 1 },
            ),
            (
                r#"{"format":"lightembed-fingerprint-registry/1","entries":[{"license_id":1,"seed":"x"}]}"#,
                BadEntrySeed {
                    entry: 0,
                    seed: "x".into(),
                },
            ),
            (
                r#"{"format":"lightembed-fingerprint-registry/1","entries":{}}"#,
                EntriesNotArray,
            ),
        ] {
            assert_eq!(parse_registry(bad).unwrap_err(), want, "{bad}");
        }
        assert_eq!(
            DuplicateSeed { entry: 1, seed: 1 }.to_string(),
            "registry entry 1: seed 0x0000000000000001 appears twice"
        );
        assert!(matches!(parse_registry("{"), Err(RegistryNotJson(_))));
    }

    #[test]
    fn procrustes_recovers_a_known_rotation_and_detect_ranks_it_first() {
        let segs = segments(12, &[4, 8]).unwrap();
        let reg: Vec<Entry> = (1..=20u32)
            .map(|i| Entry {
                license_id: i,
                seed: 1000 + i as u64,
                note: String::new(),
            })
            .collect();
        let r = rotation(1007, 12, &[4, 8]).unwrap();
        let (x, y) = rotated_probes(&r, 5, 40);
        let d = detect(&x, &y, 12, &[4, 8], &reg, Rule::default()).unwrap();
        assert_eq!((d.verdict, d.best.license_id), ("match", 7));
        assert!(d.best.distance < 1e-6); // √(2 − 2·sim): f64 rounding of sim ≈ 1 shows as ~1e-8
        assert_eq!(d.blocks, segs);
        // Only the first 8 dims observed: two blocks, still a match.
        let xp: Vec<Vec<f64>> = x.iter().map(|v| v[..8].to_vec()).collect();
        let yp: Vec<Vec<f64>> = y.iter().map(|v| v[..8].to_vec()).collect();
        let d = detect(&xp, &yp, 12, &[4, 8], &reg, Rule::default()).unwrap();
        assert_eq!(
            (d.verdict, d.best.license_id, d.blocks.len()),
            ("match", 7, 2)
        );
        // The plain vectors: the identity wins.
        let d = detect(&x, &x, 12, &[4, 8], &reg, Rule::default()).unwrap();
        assert_eq!((d.verdict, d.best.license_id), ("unfingerprinted", 0));
        // 6 dims is not a block boundary.
        let x6: Vec<Vec<f64>> = x.iter().map(|v| v[..6].to_vec()).collect();
        assert!(detect(&x6, &x6, 12, &[4, 8], &reg, Rule::default()).is_err());
    }
}
