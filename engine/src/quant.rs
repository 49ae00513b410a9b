//! Encodings of quantised tensors (§5.3, §5.5) and the packer's quantisation rules, so Rust tools
//! (CLI pack, tests, fuzz seeds) can produce exactly what `reference/pack.py` produces.
//!
//! Encodings:
//! * ternary: 2 bits per value, four per byte, low bits = low index; `00`=0, `01`=+1, `10`=−1
//!   (`11` reserved);
//! * int4: two's-complement nibbles, low nibble = element `2k`, high nibble = `2k+1`, −8..=7.

/// Packs ternary codes (each −1, 0 or +1) four per byte. A length not divisible by 4 is padded
/// with zero codes.
///
/// # Panics
/// If a code is outside −1..=1.
pub fn pack_ternary(codes: &[i8]) -> Vec<u8> {
    codes
        .chunks(4)
        .map(|c| {
            c.iter().enumerate().fold(0u8, |acc, (j, &v)| {
                let bits = match v {
                    0 => 0u8,
                    1 => 1,
                    -1 => 2,
                    other => panic!("ternary code {other} out of range -1..=1"),
                };
                acc | (bits << (2 * j))
            })
        })
        .collect()
}

/// Decodes one 2-bit ternary field (§5.3): `00`→0, `01`→+1, `10`→−1, `11`→`None` (reserved).
/// The one ternary decoder: the kernels' matrices, the embedding table's lookup table and the
/// load-time check of the reserved code all use it.
#[inline]
pub const fn ternary_code(bits: u8) -> Option<i8> {
    match bits & 3 {
        0 => Some(0),
        1 => Some(1),
        2 => Some(-1),
        _ => None,
    }
}

/// Unpacks `count` ternary codes; `Err(index)` at the first reserved `11` code.
/// `packed` must hold at least `count.div_ceil(4)` bytes.
pub fn unpack_ternary(packed: &[u8], count: usize) -> Result<Vec<i8>, usize> {
    let mut out = Vec::with_capacity(count.min(packed.len().saturating_mul(4)));
    for i in 0..count {
        let byte = packed[i / 4];
        out.push(ternary_code(byte >> (2 * (i % 4))).ok_or(i)?);
    }
    Ok(out)
}

/// Packs int4 codes (each −8..=7) two per byte, low nibble first; odd lengths pad with 0.
///
/// # Panics
/// If a code is outside −8..=7.
pub fn pack_int4(codes: &[i8]) -> Vec<u8> {
    codes
        .chunks(2)
        .map(|c| {
            let nib = |v: i8| {
                assert!((-8..=7).contains(&v), "int4 code {v} out of range -8..=7");
                (v as u8) & 0x0F
            };
            nib(c[0]) | (c.get(1).map_or(0, |&v| nib(v)) << 4)
        })
        .collect()
}

/// Sign-extends the low nibble of `b` (element `2k`).
#[inline]
pub fn int4_low(b: u8) -> i8 {
    ((b << 4) as i8) >> 4
}

/// Sign-extends the high nibble of `b` (element `2k+1`).
#[inline]
pub fn int4_high(b: u8) -> i8 {
    (b as i8) >> 4
}

/// Unpacks `count` int4 codes (sign-extended, so `0x8` → −8).
pub fn unpack_int4(packed: &[u8], count: usize) -> Vec<i8> {
    (0..count)
        .map(|i| {
            let b = packed[i / 2];
            if i % 2 == 0 {
                int4_low(b)
            } else {
                int4_high(b)
            }
        })
        .collect()
}

/// `torch.median` of `|values|`: the lower of the two middle values for an even count
/// (0 for an empty slice). NaNs sort last.
pub fn lower_median_abs(values: &[f32]) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v: Vec<f32> = values.iter().map(|x| x.abs()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[(v.len() - 1) / 2]
}

/// §6.3 item 5 (AbsMedian): `scale = 1 / max(median|W|, 1e-5)`,
/// `codes = clamp(round_half_even(W · scale), −1, 1)`. Returns `(codes, scale)`; `scale` is the
/// value stored after the matrix in `LAYERS` (BitLinear divides by it).
pub fn absmedian_ternary(w: &[f32]) -> (Vec<i8>, f32) {
    let scale = 1.0f32 / lower_median_abs(w).max(1e-5);
    let codes = w
        .iter()
        .map(|&x| (x * scale).round_ties_even().clamp(-1.0, 1.0) as i8)
        .collect();
    (codes, scale)
}

/// Per-row embedding quantisation exactly as `reference/pack.py`: returns `(codes, scales)`
/// for `[rows × d]` row-major `table`, where dequantisation is `code × scale[row]`.
///
/// * int8: `scale = max|row| / 127`, `codes = clamp(round(row / scale), −127, 127)`;
/// * int4: `scale = max|row| / 7`, codes clamped to −7..=7;
/// * ternary: codes by the AbsMedian rule per row, `scale = mean(|row[i]|)` over non-zero codes.
///
/// An all-zero row gets scale 0 and codes 0. `quant` must not be `Fp32` (returns `None`).
pub fn quantize_embedding(
    table: &[f32],
    d: usize,
    quant: crate::EmbeddingQuant,
) -> Option<(Vec<i8>, Vec<f32>)> {
    use crate::EmbeddingQuant as Q;
    let rows = table.len().checked_div(d).unwrap_or(0);
    let mut codes = vec![0i8; rows * d];
    let mut scales = vec![0f32; rows];
    for r in 0..rows {
        let row = &table[r * d..(r + 1) * d];
        let out = &mut codes[r * d..(r + 1) * d];
        match quant {
            Q::Fp32 => return None,
            Q::Int8 | Q::Int4 => {
                let qmax = if quant == Q::Int8 { 127.0f32 } else { 7.0 };
                let absmax = row.iter().fold(0f32, |m, x| m.max(x.abs()));
                let scale = absmax / qmax;
                scales[r] = scale;
                if scale > 0.0 {
                    for (o, &x) in out.iter_mut().zip(row) {
                        *o = (x / scale).round_ties_even().clamp(-qmax, qmax) as i8;
                    }
                }
            }
            Q::Ternary => {
                let (c, _) = absmedian_ternary(row);
                out.copy_from_slice(&c);
                let nz: Vec<f32> = row
                    .iter()
                    .zip(&c)
                    .filter(|(_, &c)| c != 0)
                    .map(|(x, _)| x.abs())
                    .collect();
                scales[r] = if nz.is_empty() {
                    0.0
                } else {
                    crate::ops::pairwise_sum(&nz) / nz.len() as f32
                };
            }
        }
    }
    Some((codes, scales))
}
