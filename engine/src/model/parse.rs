//! Section contents (§5) read into the parts a [`Model`](super::Model) is assembled from: the
//! vocabulary and tokenizer config, the embedding table, the layers (Q, K, V fused), the final
//! LayerNorm, the projection and the metadata. Each checks its section's content rules
//! (UTF-8, unique tokens, ids in range, ternary codes, finite floats, positive scales) as it reads;
//! the section lengths were checked before (`validate.rs`).

use std::collections::HashSet;

use crate::format::*;
use crate::kernels::TernaryMatrix;
use crate::tokenizer::TokenizerConfig;

use super::{EmbeddingTable, Layer, Linear, LinearWeights};

/// Reads `count` little-endian f32 from `raw` (exactly `4·count` bytes), rejecting NaN/±inf
/// with a message naming `what[index]`.
fn read_f32s(
    raw: &[u8],
    what: &dyn Fn(usize) -> String,
    check: bool,
) -> Result<Vec<f32>, LoadError> {
    let mut out = Vec::with_capacity(raw.len() / 4);
    for (i, c) in raw.chunks_exact(4).enumerate() {
        let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        if check && !v.is_finite() {
            return Err(LoadError::NonFiniteFloat {
                what: what(i),
                value: v.to_bits(),
            });
        }
        out.push(v);
    }
    Ok(out)
}

/// Sequential reader over a section whose total length was already verified.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        // The section length equals the sum of all takes (checked before parsing); `min` keeps
        // this panic-free even if that invariant were broken.
        let end = self.pos.saturating_add(n).min(self.data.len());
        let s = &self.data[self.pos.min(end)..end];
        self.pos = end;
        s
    }
}

pub(super) fn parse_vocab(raw: &[u8], vocab_size: u32) -> Result<Vec<String>, LoadError> {
    // Every entry takes ≥ 1 byte, so the section length bounds the allocation.
    let cap = (vocab_size as usize).min(raw.len());
    let mut tokens: Vec<String> = Vec::with_capacity(cap);
    let mut seen: HashSet<&str> = HashSet::with_capacity(cap);
    let mut pos = 0usize;
    for i in 0..vocab_size {
        if pos >= raw.len() {
            return Err(LoadError::VocabTruncated {
                token_id: i as u64,
                vocab_size,
            });
        }
        let n = raw[pos] as usize;
        if pos + 1 + n > raw.len() {
            return Err(LoadError::VocabTruncated {
                token_id: i as u64,
                vocab_size,
            });
        }
        let bytes = &raw[pos + 1..pos + 1 + n];
        let token = std::str::from_utf8(bytes).map_err(|_| LoadError::VocabNotUtf8 {
            token_id: i,
            bytes: bytes.to_vec(),
        })?;
        if n == 0 {
            return Err(LoadError::VocabEmptyToken { token_id: i });
        }
        if !seen.insert(token) {
            // Rare path: find the first id only when reporting.
            let first = tokens.iter().position(|t| t == token).unwrap_or(0) as u32;
            return Err(LoadError::VocabDuplicateToken {
                token: token.to_owned(),
                first_id: first,
                second_id: i,
            });
        }
        tokens.push(token.to_owned());
        pos += 1 + n;
    }
    if pos != raw.len() {
        return Err(LoadError::VocabTrailingBytes {
            extra: (raw.len() - pos) as u64,
            vocab_size,
        });
    }
    Ok(tokens)
}

pub(super) fn parse_tokenizer_config(raw: &[u8], h: &Header) -> Result<TokenizerConfig, LoadError> {
    if raw.len() < TOKENIZER_CONFIG_FIXED_LEN {
        return Err(LoadError::TokenizerConfigTruncated {
            length: raw.len() as u64,
            needed: TOKENIZER_CONFIG_FIXED_LEN as u64,
        });
    }
    let ids = [
        le_u32(raw, 0),
        le_u32(raw, 4),
        le_u32(raw, 8),
        le_u32(raw, 12),
        le_u32(raw, 16),
    ];
    let max_chars = le_u16(raw, 20);
    let prefix_len = raw[22] as usize;
    let end = TOKENIZER_CONFIG_FIXED_LEN + prefix_len;
    if raw.len() < end {
        return Err(LoadError::TokenizerConfigTruncated {
            length: raw.len() as u64,
            needed: end as u64,
        });
    }
    if raw.len() > end {
        return Err(LoadError::TokenizerConfigTrailingBytes {
            extra: (raw.len() - end) as u64,
        });
    }
    const NAMES: [&str; 5] = [
        "unk_token_id",
        "cls_token_id",
        "sep_token_id",
        "pad_token_id",
        "mask_token_id",
    ];
    for (name, &id) in NAMES.iter().zip(&ids) {
        if id >= h.vocab_size {
            return Err(LoadError::SpecialTokenOutOfRange {
                name,
                id,
                vocab_size: h.vocab_size,
            });
        }
    }
    let prefix_bytes = &raw[TOKENIZER_CONFIG_FIXED_LEN..end];
    let prefix = std::str::from_utf8(prefix_bytes).map_err(|_| LoadError::PrefixNotUtf8 {
        bytes: prefix_bytes.to_vec(),
    })?;
    Ok(TokenizerConfig {
        unk_token_id: ids[0],
        cls_token_id: ids[1],
        sep_token_id: ids[2],
        pad_token_id: ids[3],
        mask_token_id: ids[4],
        max_input_chars_per_word: max_chars as usize,
        continuing_subword_prefix: prefix.to_owned(),
        do_lower_case: h.flags.do_lower_case(),
        strip_accents: h.flags.strip_accents(),
        max_seq_len: h.max_seq_len as usize,
    })
}

/// `EMBEDDING_WEIGHTS` (§5.3) in its file encoding, with `EMBEDDING_SCALES` (§5.4, empty for
/// fp32) for the quantised ones: reserved ternary codes and non-finite floats are load errors.
pub(super) fn parse_embeddings(
    emb_raw: &[u8],
    scales_raw: &[u8],
    h: &Header,
) -> Result<EmbeddingTable, LoadError> {
    let d = h.d_model as usize;
    let vocab_n = h.vocab_size as usize;
    let embeddings = match h.embedding_quant {
        EmbeddingQuant::Fp32 => EmbeddingTable::Fp32(read_f32s(
            emb_raw,
            &|i| format!("EMBEDDING_WEIGHTS row {} column {}", i / d, i % d),
            true,
        )?),
        q => {
            if q == EmbeddingQuant::Ternary {
                for (bi, &b) in emb_raw.iter().enumerate() {
                    for j in 0..4 {
                        if crate::quant::ternary_code(b >> (2 * j)).is_none() {
                            let idx = bi as u64 * 4 + j as u64;
                            return Err(LoadError::TernaryReservedCodeEmbedding {
                                row: idx / d as u64,
                                col: idx % d as u64,
                            });
                        }
                    }
                }
            }
            let scales = read_f32s(scales_raw, &|i| format!("EMBEDDING_SCALES[{i}]"), true)?;
            match q {
                EmbeddingQuant::Int8 => EmbeddingTable::Int8 {
                    codes: emb_raw.iter().map(|&b| b as i8).collect(),
                    scales,
                },
                EmbeddingQuant::Int4 => EmbeddingTable::Int4 {
                    packed: emb_raw.to_vec(),
                    scales,
                },
                _ => EmbeddingTable::Ternary {
                    packed: emb_raw.to_vec(),
                    scales,
                },
            }
        }
    };
    debug_assert!(
        vocab_n * EmbeddingQuant::bytes_per_row(h.embedding_quant, d as u64) as usize
            == emb_raw.len()
    );
    Ok(embeddings)
}

const TENSOR_NAMES: [&str; 7] = [
    "attn.q", "attn.k", "attn.v", "attn.out", "ffn.up", "ffn.down", "",
];

/// One linear's weight, scale and optional bias, as in the file.
struct RawLinear {
    weights: LinearWeights,
    scale: f32,
    bias: Option<Vec<f32>>,
}

pub(super) fn parse_layers(raw: &[u8], h: &Header) -> Result<Vec<Layer>, LoadError> {
    let ternary = h.weight_quant == WeightQuant::Ternary;
    let d = h.d_model as usize;
    let f = h.ffn_dim as usize;
    let mut cur = Cursor { data: raw, pos: 0 };
    let mut layers = Vec::with_capacity(h.n_layers as usize);
    for li in 0..h.n_layers as usize {
        let vec = |cur: &mut Cursor, n: usize, what: &str| -> Result<Vec<f32>, LoadError> {
            read_f32s(
                cur.take(4 * n),
                &|i| format!("layers.{li}.{what}[{i}]"),
                true,
            )
        };
        let linear = |cur: &mut Cursor,
                      out_f: usize,
                      in_f: usize,
                      has_bias: bool,
                      ti: usize|
         -> Result<RawLinear, LoadError> {
            let name = TENSOR_NAMES[ti];
            let weights = if ternary {
                let packed = cur.take(out_f * in_f / 4);
                LinearWeights::Ternary(TernaryMatrix::from_packed(out_f, in_f, packed).map_err(
                    |(row, col)| LoadError::TernaryReservedCodeLayers {
                        layer: li,
                        tensor: name,
                        row: row as u64,
                        col: col as u64,
                    },
                )?)
            } else {
                LinearWeights::Fp32(read_f32s(
                    cur.take(4 * out_f * in_f),
                    &|i| {
                        format!(
                            "layers.{li}.{name}.weight row {} column {}",
                            i / in_f,
                            i % in_f
                        )
                    },
                    true,
                )?)
            };
            // Decision 3: with fp32 weights the scale is present but ignored (not validated).
            let scale = read_f32s(
                cur.take(4),
                &|_| format!("layers.{li}.{name}.scale"),
                ternary,
            )?[0];
            if ternary && scale <= 0.0 {
                return Err(LoadError::NonPositiveLayerScale {
                    layer: li,
                    tensor: name,
                    value: scale,
                });
            }
            let bias = if has_bias {
                Some(vec(cur, out_f, &format!("{name}.bias"))?)
            } else {
                None
            };
            Ok(RawLinear {
                weights,
                scale,
                bias,
            })
        };
        let ln1_weight = vec(&mut cur, d, "ln1.weight")?;
        let ln1_bias = vec(&mut cur, d, "ln1.bias")?;
        let q = linear(&mut cur, d, d, false, 0)?;
        let k = linear(&mut cur, d, d, false, 1)?;
        let v = linear(&mut cur, d, d, false, 2)?;
        let out = linear(&mut cur, d, d, true, 3)?;
        let ln2_weight = vec(&mut cur, d, "ln2.weight")?;
        let ln2_bias = vec(&mut cur, d, "ln2.bias")?;
        let up = linear(&mut cur, f, d, true, 4)?;
        let down = linear(&mut cur, d, f, true, 5)?;
        layers.push(Layer {
            ln1_weight,
            ln1_bias,
            qkv: fuse_qkv(d, q, k, v),
            out: into_linear(d, d, out),
            ln2_weight,
            ln2_bias,
            up: into_linear(f, d, up),
            down: into_linear(d, f, down),
        });
    }
    debug_assert_eq!(cur.pos, raw.len());
    Ok(layers)
}

fn into_linear(rows: usize, cols: usize, r: RawLinear) -> Linear {
    Linear {
        rows,
        cols,
        weights: r.weights,
        row_scales: vec![r.scale; rows],
        bias: r.bias,
    }
}

fn fuse_qkv(d: usize, q: RawLinear, k: RawLinear, v: RawLinear) -> Linear {
    let mut row_scales = Vec::with_capacity(3 * d);
    for s in [q.scale, k.scale, v.scale] {
        row_scales.extend(std::iter::repeat_n(s, d));
    }
    let weights = match (q.weights, k.weights, v.weights) {
        (LinearWeights::Fp32(a), LinearWeights::Fp32(b), LinearWeights::Fp32(c)) => {
            let mut w = a;
            w.extend_from_slice(&b);
            w.extend_from_slice(&c);
            LinearWeights::Fp32(w)
        }
        (LinearWeights::Ternary(a), LinearWeights::Ternary(b), LinearWeights::Ternary(c)) => {
            let mut codes = a.codes();
            codes.extend(b.codes());
            codes.extend(c.codes());
            LinearWeights::Ternary(TernaryMatrix::from_codes(3 * d, d, &codes))
        }
        _ => unreachable!("one weight_quant per file"),
    };
    Linear {
        rows: 3 * d,
        cols: d,
        weights,
        row_scales,
        bias: None,
    }
}

/// `FINAL_LN` (§5.6): `(weight, bias)`, `[d_model]` fp32 each.
pub(super) fn parse_final_ln(fl: &[u8], h: &Header) -> Result<(Vec<f32>, Vec<f32>), LoadError> {
    let d = h.d_model as usize;
    let final_ln_weight = read_f32s(&fl[..4 * d], &|i| format!("FINAL_LN weight[{i}]"), true)?;
    let final_ln_bias = read_f32s(&fl[4 * d..], &|i| format!("FINAL_LN bias[{i}]"), true)?;
    Ok((final_ln_weight, final_ln_bias))
}

/// `PROJECTION` (§5.7): `(weight, bias)`, weight `[output_dim × d_model]` and bias
/// `[output_dim]`, fp32.
pub(super) fn parse_projection(pr: &[u8], h: &Header) -> Result<(Vec<f32>, Vec<f32>), LoadError> {
    let d = h.d_model as usize;
    let od = h.output_dim as usize;
    let projection_weight = read_f32s(
        &pr[..4 * od * d],
        &|i| format!("PROJECTION weight row {} column {}", i / d, i % d),
        true,
    )?;
    let projection_bias = read_f32s(
        &pr[4 * od * d..],
        &|i| format!("PROJECTION bias[{i}]"),
        true,
    )?;
    Ok((projection_weight, projection_bias))
}

/// `METADATA` (§5.8): UTF-8 text, not parsed.
pub(super) fn parse_metadata(raw: &[u8]) -> Result<String, LoadError> {
    match std::str::from_utf8(raw) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => Err(LoadError::MetadataNotUtf8 {
            valid_up_to: e.valid_up_to(),
        }),
    }
}
