//! Writing `.bin` v1 files: [`ModelBuilder`] (the inverse of [`Model::from_bytes`]) and raw
//! helpers ([`assemble`], [`rehash`], the `encode_*` functions) for crafting unusual or
//! deliberately broken files in tests and fuzz seeds.
//!
//! The byte layout is exactly `reference/pack.py::assemble`: header, section table, then each
//! section at the next 8-byte boundary (zero padding, not counted in `length`), zero padding to
//! a multiple of 8 after the last section, then the SHA-256 of everything before it. So a model
//! built here from the same values is byte-identical to the reference packer's file.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::format::*;
use crate::model::{EmbeddingTable, Linear, LinearWeights, Model};
use crate::quant::{self, pack_int4, pack_ternary};

/// An embedding table for [`ModelBuilder`]: `vocab_size × d_model` row-major values or codes,
/// plus per-row scales for the quantised encodings (§5.3, §5.4).
#[derive(Debug, Clone, PartialEq)]
pub enum EmbeddingData {
    /// fp32 values.
    Fp32(Vec<f32>),
    /// int8 codes (−128..=127) and per-row scales.
    Int8 {
        /// `vocab_size × d_model` codes.
        codes: Vec<i8>,
        /// `vocab_size` multipliers (`value = code × scale`).
        scales: Vec<f32>,
    },
    /// int4 codes (−8..=7) and per-row scales.
    Int4 {
        /// `vocab_size × d_model` codes.
        codes: Vec<i8>,
        /// `vocab_size` multipliers.
        scales: Vec<f32>,
    },
    /// Ternary codes (−1..=1) and per-row scales.
    Ternary {
        /// `vocab_size × d_model` codes.
        codes: Vec<i8>,
        /// `vocab_size` multipliers.
        scales: Vec<f32>,
    },
}

impl EmbeddingData {
    /// Quantises an fp32 `[rows × d]` table with the reference packer's per-row rules
    /// ([`quant::quantize_embedding`]).
    pub fn quantize(table: &[f32], d: usize, q: EmbeddingQuant) -> EmbeddingData {
        match quant::quantize_embedding(table, d, q) {
            None => EmbeddingData::Fp32(table.to_vec()),
            Some((codes, scales)) => match q {
                EmbeddingQuant::Int8 => EmbeddingData::Int8 { codes, scales },
                EmbeddingQuant::Int4 => EmbeddingData::Int4 { codes, scales },
                _ => EmbeddingData::Ternary { codes, scales },
            },
        }
    }

    /// The header `embedding_quant` for this data.
    pub fn quant(&self) -> EmbeddingQuant {
        match self {
            EmbeddingData::Fp32(_) => EmbeddingQuant::Fp32,
            EmbeddingData::Int8 { .. } => EmbeddingQuant::Int8,
            EmbeddingData::Int4 { .. } => EmbeddingQuant::Int4,
            EmbeddingData::Ternary { .. } => EmbeddingQuant::Ternary,
        }
    }

    /// The rows `ids` (in that order) of a `[rows × d]` table.
    fn select_rows(&self, ids: &[usize], d: usize) -> EmbeddingData {
        fn pick<T: Copy>(v: &[T], ids: &[usize], d: usize) -> Vec<T> {
            ids.iter()
                .flat_map(|&i| v[i * d..(i + 1) * d].iter().copied())
                .collect()
        }
        let scales_of = |s: &[f32]| ids.iter().map(|&i| s[i]).collect::<Vec<f32>>();
        match self {
            EmbeddingData::Fp32(v) => EmbeddingData::Fp32(pick(v, ids, d)),
            EmbeddingData::Int8 { codes, scales } => EmbeddingData::Int8 {
                codes: pick(codes, ids, d),
                scales: scales_of(scales),
            },
            EmbeddingData::Int4 { codes, scales } => EmbeddingData::Int4 {
                codes: pick(codes, ids, d),
                scales: scales_of(scales),
            },
            EmbeddingData::Ternary { codes, scales } => EmbeddingData::Ternary {
                codes: pick(codes, ids, d),
                scales: scales_of(scales),
            },
        }
    }

    fn values_len(&self) -> usize {
        match self {
            EmbeddingData::Fp32(v) => v.len(),
            EmbeddingData::Int8 { codes, .. }
            | EmbeddingData::Int4 { codes, .. }
            | EmbeddingData::Ternary { codes, .. } => codes.len(),
        }
    }
}

/// A weight matrix `[out × in]` row-major (§5.5).
#[derive(Debug, Clone, PartialEq)]
pub enum MatrixData {
    /// fp32 weights (weight_quant = fp32).
    Fp32(Vec<f32>),
    /// Ternary codes −1..=1 (weight_quant = ternary).
    Ternary(Vec<i8>),
}

/// One linear layer's fields in `LAYERS` order: weight, scale, optional bias.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearData {
    /// `[out × in]`.
    pub weight: MatrixData,
    /// The stored `*.scale` (BitLinear divides by it; written but ignored for fp32, decision 3).
    pub scale: f32,
    /// `[out]`, for `attn.out`, `ffn.up`, `ffn.down`; `None` for q, k, v.
    pub bias: Option<Vec<f32>>,
}

impl LinearData {
    /// From fp32 weights like the reference packer: ternary via AbsMedian
    /// ([`quant::absmedian_ternary`]); fp32 kept as is with scale 1.0 (decision 3).
    pub fn from_f32(w: &[f32], ternary: bool, bias: Option<Vec<f32>>) -> LinearData {
        if ternary {
            let (codes, scale) = quant::absmedian_ternary(w);
            LinearData {
                weight: MatrixData::Ternary(codes),
                scale,
                bias,
            }
        } else {
            LinearData {
                weight: MatrixData::Fp32(w.to_vec()),
                scale: 1.0,
                bias,
            }
        }
    }
}

/// One transformer block (§5.5), fields in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerData {
    /// `ln1.weight`, `[d_model]`.
    pub ln1_weight: Vec<f32>,
    /// `ln1.bias`, `[d_model]`.
    pub ln1_bias: Vec<f32>,
    /// `attn.q`, `[d_model × d_model]`, no bias.
    pub q: LinearData,
    /// `attn.k`, `[d_model × d_model]`, no bias.
    pub k: LinearData,
    /// `attn.v`, `[d_model × d_model]`, no bias.
    pub v: LinearData,
    /// `attn.out`, `[d_model × d_model]`, bias `[d_model]`.
    pub out: LinearData,
    /// `ln2.weight`, `[d_model]`.
    pub ln2_weight: Vec<f32>,
    /// `ln2.bias`, `[d_model]`.
    pub ln2_bias: Vec<f32>,
    /// `ffn.up`, `[ffn_dim × d_model]`, bias `[ffn_dim]`.
    pub up: LinearData,
    /// `ffn.down`, `[d_model × ffn_dim]`, bias `[d_model]`.
    pub down: LinearData,
}

/// Why [`ModelBuilder::build`] refused: the data does not fit the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub String);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot build model: {}", self.0)
    }
}

impl std::error::Error for BuildError {}

/// One section to place with [`assemble`]. `offset`, `length` and `reserved` override what goes
/// into the table (for malformed files); `gap` adds bytes after the alignment padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSection {
    /// Section type number (unknown numbers allowed).
    pub section_type: u16,
    /// The entry's `reserved` field.
    pub reserved: u16,
    /// The bytes written.
    pub data: Vec<u8>,
    /// Table offset override (default: where the data was placed).
    pub offset: Option<u64>,
    /// Table length override (default: `data.len()`).
    pub length: Option<u64>,
    /// Extra zero bytes inserted before the data, after aligning.
    pub gap: usize,
}

impl RawSection {
    /// A section of type `t` holding `data`, no overrides.
    pub fn new(t: SectionType, data: Vec<u8>) -> RawSection {
        RawSection {
            section_type: t.to_u16(),
            reserved: 0,
            data,
            offset: None,
            length: None,
            gap: 0,
        }
    }
}

/// `n` rounded up to a multiple of 8.
pub fn align_up(n: usize) -> usize {
    n.div_ceil(SECTION_ALIGN as usize) * SECTION_ALIGN as usize
}

/// Lays out `header` (64 bytes, written as given), the section table (`n_sections` overrides
/// the count written, not the entries), the sections (each 8-aligned, zero padding), zero
/// padding to a multiple of 8, and the SHA-256 trailer (32 zero bytes instead when `hash` is
/// false). Mirrors `reference/pack.py::assemble`.
pub fn assemble(
    header: &[u8; HEADER_LEN],
    sections: &[RawSection],
    n_sections: Option<u16>,
    hash: bool,
) -> Vec<u8> {
    let table_len = SectionTable::encoded_len(sections.len());
    let mut out = Vec::with_capacity(
        HEADER_LEN
            + table_len
            + sections
                .iter()
                .map(|s| s.data.len() + s.gap + 8)
                .sum::<usize>()
            + HASH_LEN,
    );
    out.extend_from_slice(header);
    out.extend_from_slice(&n_sections.unwrap_or(sections.len() as u16).to_le_bytes());
    let table_at = out.len();
    out.resize(table_at + SECTION_ENTRY_LEN * sections.len(), 0);
    for (i, s) in sections.iter().enumerate() {
        let off = align_up(out.len()) + s.gap;
        out.resize(off, 0);
        out.extend_from_slice(&s.data);
        let e = table_at + SECTION_ENTRY_LEN * i;
        out[e..e + 2].copy_from_slice(&s.section_type.to_le_bytes());
        out[e + 2..e + 4].copy_from_slice(&s.reserved.to_le_bytes());
        out[e + 4..e + 12].copy_from_slice(&s.offset.unwrap_or(off as u64).to_le_bytes());
        out[e + 12..e + 20].copy_from_slice(&s.length.unwrap_or(s.data.len() as u64).to_le_bytes());
    }
    out.resize(align_up(out.len()), 0);
    if hash {
        let digest: [u8; 32] = Sha256::digest(&out).into();
        out.extend_from_slice(&digest);
    } else {
        out.extend_from_slice(&[0u8; HASH_LEN]);
    }
    out
}

/// Replaces the last 32 bytes of `file` with the SHA-256 of everything before them (no-op for
/// files shorter than 32 bytes).
pub fn rehash(file: &mut [u8]) {
    if file.len() < HASH_LEN {
        return;
    }
    let split = file.len() - HASH_LEN;
    let digest: [u8; 32] = Sha256::digest(&file[..split]).into();
    file[split..].copy_from_slice(&digest);
}

/// Sets header `version_major.version_minor.version_patch` (bytes 44–47, §3) of the model file
/// `file` to `v` and recomputes its trailing SHA-256: the same weights under another version
/// (the §8 checks, re-identifying a shipped file). A buffer shorter than header + hash is left as
/// it is.
pub fn set_model_version(file: &mut [u8], v: crate::ModelVersion) {
    if file.len() < HEADER_LEN + HASH_LEN {
        return;
    }
    file[44] = v.major;
    file[45] = v.minor;
    file[46..48].copy_from_slice(&v.patch.to_le_bytes());
    rehash(file);
}

/// Sets header `model_id` (bytes 48–64, UTF-8, NUL-padded, §3) of the model file `file` to `id`
/// and recomputes its trailing SHA-256: the same vectors under another identity.
///
/// # Errors
/// `id` empty, longer than 16 bytes or containing NUL; `file` shorter than header + hash.
pub fn set_model_id(file: &mut [u8], id: &str) -> Result<(), BuildError> {
    if id.is_empty() || id.len() > 16 || id.contains('\0') {
        return Err(BuildError(format!(
            "model_id {id:?} must be 1..=16 bytes of UTF-8 without NUL"
        )));
    }
    if file.len() < HEADER_LEN + HASH_LEN {
        return Err(BuildError(format!(
            "{} bytes is shorter than a model's header and hash",
            file.len()
        )));
    }
    file[48..64].fill(0);
    file[48..48 + id.len()].copy_from_slice(id.as_bytes());
    rehash(file);
    Ok(())
}

/// Little-endian fp32 bytes of `values`.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `TOKENIZER_VOCAB` bytes (§5.1): `u8` length + UTF-8 per token.
///
/// # Errors
/// A token longer than 255 bytes.
pub fn encode_vocab<S: AsRef<str>>(tokens: &[S]) -> Result<Vec<u8>, BuildError> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let b = t.as_ref().as_bytes();
        let n = u8::try_from(b.len()).map_err(|_| {
            BuildError(format!(
                "vocab token {i} is {} bytes; at most 255 fit",
                b.len()
            ))
        })?;
        out.push(n);
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// `TOKENIZER_CONFIG` bytes (§5.2): five ids (unk, cls, sep, pad, mask), max chars, prefix.
///
/// # Errors
/// A prefix longer than 255 bytes.
pub fn encode_tokenizer_config(
    ids: [u32; 5],
    max_input_chars_per_word: u16,
    prefix: &[u8],
) -> Result<Vec<u8>, BuildError> {
    let n = u8::try_from(prefix.len())
        .map_err(|_| BuildError("continuing-subword prefix longer than 255 bytes".into()))?;
    let mut out = Vec::with_capacity(TOKENIZER_CONFIG_FIXED_LEN + prefix.len());
    for id in ids {
        out.extend_from_slice(&id.to_le_bytes());
    }
    out.extend_from_slice(&max_input_chars_per_word.to_le_bytes());
    out.push(n);
    out.extend_from_slice(prefix);
    Ok(out)
}

fn encode_linear(l: &LinearData, out: &mut Vec<u8>) {
    match &l.weight {
        MatrixData::Fp32(w) => out.extend(f32_bytes(w)),
        MatrixData::Ternary(c) => out.extend(pack_ternary(c)),
    }
    out.extend_from_slice(&l.scale.to_le_bytes());
    if let Some(b) = &l.bias {
        out.extend(f32_bytes(b));
    }
}

/// `LAYERS` bytes (§5.5) for `layers` in file order. Shapes are not checked here.
pub fn encode_layers(layers: &[LayerData]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in layers {
        out.extend(f32_bytes(&l.ln1_weight));
        out.extend(f32_bytes(&l.ln1_bias));
        for lin in [&l.q, &l.k, &l.v, &l.out] {
            encode_linear(lin, &mut out);
        }
        out.extend(f32_bytes(&l.ln2_weight));
        out.extend(f32_bytes(&l.ln2_bias));
        encode_linear(&l.up, &mut out);
        encode_linear(&l.down, &mut out);
    }
    out
}

/// Everything a `.bin` v1 file holds, as plain values. [`ModelBuilder::build`] checks the shapes
/// against the header and writes the file; [`ModelBuilder::from_model`] recovers the values of
/// a loaded model, so `build(from_model(from_bytes(f)))` reproduces `f` byte for byte when `f`
/// has the standard layout (no unknown sections, no gaps).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelBuilder {
    /// Header fields. `build` derives `vocab_size`, `embedding_quant`, `n_layers` and (when there
    /// are layers) `weight_quant` from the data; everything else is written as given.
    pub header: Header,
    /// Tokens in id order.
    pub vocab: Vec<String>,
    /// unk, cls, sep, pad, mask token ids.
    pub special_ids: [u32; 5],
    /// `TOKENIZER_CONFIG.max_input_chars_per_word` (BERT default 100).
    pub max_input_chars_per_word: u16,
    /// Continuing-subword prefix (typically `"##"`).
    pub continuing_subword_prefix: String,
    /// The embedding table, `vocab.len() × d_model`.
    pub embeddings: EmbeddingData,
    /// Transformer blocks (empty for a static model).
    pub layers: Vec<LayerData>,
    /// `[d_model]`.
    pub final_ln_weight: Vec<f32>,
    /// `[d_model]`.
    pub final_ln_bias: Vec<f32>,
    /// `[output_dim × d_model]`.
    pub projection_weight: Vec<f32>,
    /// `[output_dim]`.
    pub projection_bias: Vec<f32>,
    /// `METADATA` contents, if any.
    pub metadata: Option<String>,
    /// Extra (e.g. unknown-type) sections appended after the known ones.
    pub extra_sections: Vec<(u16, Vec<u8>)>,
    /// Section type numbers in the order to write them; types not listed follow in ascending
    /// order, extras last (as `pack.py`'s `section_order`).
    pub section_order: Option<Vec<u16>>,
}

/// A header with every field zero except `format_version` 1 (a starting point for builders).
pub fn blank_header() -> Header {
    Header {
        format_version: FORMAT_VERSION,
        embedding_quant: EmbeddingQuant::Fp32,
        weight_quant: WeightQuant::Fp32,
        vocab_size: 0,
        d_model: 0,
        n_layers: 0,
        n_heads: 0,
        ffn_dim: 0,
        output_dim: 0,
        max_seq_len: 0,
        n_matryoshka: 0,
        flags: Flags(0),
        matryoshka_dims: [0; 8],
        license_id: 0,
        version_major: 0,
        version_minor: 0,
        version_patch: 0,
        model_id_bytes: [0; 16],
    }
}

impl ModelBuilder {
    /// Recovers every value of a loaded model (quantised codes included), with the model's
    /// order of known sections.
    pub fn from_model(m: &Model) -> ModelBuilder {
        let h = m.header.clone();
        let d = h.d_model as usize;
        let tok = m.tokenizer();
        let cfg = tok.config();
        let vocab = (0..h.vocab_size)
            .map(|i| tok.id_to_token(i).unwrap_or_default().to_owned())
            .collect();
        let n = h.vocab_size as usize * d;
        let embeddings = match &m.embeddings {
            EmbeddingTable::Fp32(v) => EmbeddingData::Fp32(v.clone()),
            EmbeddingTable::Int8 { codes, scales } => EmbeddingData::Int8 {
                codes: codes.clone(),
                scales: scales.clone(),
            },
            EmbeddingTable::Int4 { packed, scales } => EmbeddingData::Int4 {
                codes: quant::unpack_int4(packed, n),
                scales: scales.clone(),
            },
            EmbeddingTable::Ternary { packed, scales } => EmbeddingData::Ternary {
                codes: quant::unpack_ternary(packed, n).unwrap_or_default(),
                scales: scales.clone(),
            },
        };
        let layers = m
            .layers
            .iter()
            .map(|l| {
                let [q, k, v] = split_qkv(&l.qkv, d);
                LayerData {
                    ln1_weight: l.ln1_weight.clone(),
                    ln1_bias: l.ln1_bias.clone(),
                    q,
                    k,
                    v,
                    out: linear_data(&l.out),
                    ln2_weight: l.ln2_weight.clone(),
                    ln2_bias: l.ln2_bias.clone(),
                    up: linear_data(&l.up),
                    down: linear_data(&l.down),
                }
            })
            .collect();
        ModelBuilder {
            vocab,
            special_ids: [
                cfg.unk_token_id,
                cfg.cls_token_id,
                cfg.sep_token_id,
                cfg.pad_token_id,
                cfg.mask_token_id,
            ],
            max_input_chars_per_word: cfg.max_input_chars_per_word.min(u16::MAX as usize) as u16,
            continuing_subword_prefix: cfg.continuing_subword_prefix.clone(),
            embeddings,
            layers,
            final_ln_weight: m.final_ln_weight.clone(),
            final_ln_bias: m.final_ln_bias.clone(),
            projection_weight: m.projection_weight.clone(),
            projection_bias: m.projection_bias.clone(),
            metadata: m.metadata.clone(),
            extra_sections: Vec::new(),
            section_order: Some(
                m.sections
                    .entries
                    .iter()
                    .filter(|e| e.section_type.is_known())
                    .map(|e| e.section_type.to_u16())
                    .collect(),
            ),
            header: h,
        }
    }

    /// Seed §9's site model: keeps only the tokens `keep(id, token)` accepts (the five special
    /// tokens always), renumbered in their original order, and with `dims` only the first `dims`
    /// outputs of the projection (a Matryoshka prefix; Matryoshka dims above it are dropped).
    /// Any text whose WordPiece tokens are all kept tokenises to the same tokens and embeds to the
    /// same vector at `dims` as with the original model (greedy longest-match can only pick a
    /// token that was its original choice when nothing longer was added); other words fall back
    /// to the shorter kept pieces (keep the single characters and `##` characters so every word
    /// still has a segmentation).
    ///
    /// # Errors
    /// `dims` is not one of the model's valid dims (Matryoshka dims or `output_dim`).
    pub fn prune(
        &mut self,
        keep: impl Fn(u32, &str) -> bool,
        dims: Option<usize>,
    ) -> Result<(), BuildError> {
        let d = self.header.d_model as usize;
        let special: Vec<u32> = self.special_ids.to_vec();
        let kept: Vec<usize> = (0..self.vocab.len())
            .filter(|&i| special.contains(&(i as u32)) || keep(i as u32, &self.vocab[i]))
            .collect();
        let mut new_id = vec![u32::MAX; self.vocab.len()];
        for (n, &old) in kept.iter().enumerate() {
            new_id[old] = n as u32;
        }
        self.embeddings = self.embeddings.select_rows(&kept, d);
        self.vocab = kept.iter().map(|&i| self.vocab[i].clone()).collect();
        for id in &mut self.special_ids {
            *id = new_id[*id as usize];
        }
        if let Some(dims) = dims {
            let od = self.header.output_dim as usize;
            let n = self.header.n_matryoshka as usize;
            let mut prefixes: Vec<usize> = self.header.matryoshka_dims[..n]
                .iter()
                .map(|&x| x as usize)
                .collect();
            if !(prefixes.contains(&dims) || dims == od) {
                prefixes.push(od);
                return Err(BuildError(format!(
                    "dims {dims} is not one of the model's valid dims {prefixes:?}"
                )));
            }
            self.projection_weight.truncate(dims * d);
            self.projection_bias.truncate(dims);
            prefixes.retain(|&p| p < dims);
            self.header.matryoshka_dims = [0; 8];
            for (slot, p) in self.header.matryoshka_dims.iter_mut().zip(&prefixes) {
                *slot = *p as u16;
            }
            self.header.n_matryoshka = prefixes.len() as u8;
            self.header.output_dim = dims as u16;
        }
        Ok(())
    }

    /// The header `build` writes (derived fields filled in) and the sections in write order.
    ///
    /// # Errors
    /// A shape that does not match the header (vocab, embeddings, scales, layer tensors,
    /// LayerNorm, projection), mixed fp32/ternary layers, or an over-long token or prefix.
    pub fn sections(&self) -> Result<(Header, Vec<RawSection>), BuildError> {
        let mut h = self.header.clone();
        let err = |s: String| Err(BuildError(s));
        h.vocab_size =
            u32::try_from(self.vocab.len()).map_err(|_| BuildError("vocab too large".into()))?;
        h.embedding_quant = self.embeddings.quant();
        h.n_layers = u8::try_from(self.layers.len())
            .map_err(|_| BuildError("more than 255 layers".into()))?;
        let d = h.d_model as usize;
        let f = h.ffn_dim as usize;
        let od = h.output_dim as usize;
        let v = self.vocab.len();
        if self.embeddings.values_len() != v * d {
            return err(format!(
                "embedding table has {} values, expected vocab {v} x d_model {d}",
                self.embeddings.values_len()
            ));
        }
        if let EmbeddingData::Int8 { scales, .. }
        | EmbeddingData::Int4 { scales, .. }
        | EmbeddingData::Ternary { scales, .. } = &self.embeddings
        {
            if scales.len() != v {
                return err(format!("{} embedding scales, expected {v}", scales.len()));
            }
        }
        let mut ternary = None;
        for (li, l) in self.layers.iter().enumerate() {
            for (name, vec, n) in [
                ("ln1.weight", &l.ln1_weight, d),
                ("ln1.bias", &l.ln1_bias, d),
                ("ln2.weight", &l.ln2_weight, d),
                ("ln2.bias", &l.ln2_bias, d),
            ] {
                if vec.len() != n {
                    return err(format!(
                        "layers.{li}.{name} has {} values, expected {n}",
                        vec.len()
                    ));
                }
            }
            for (name, lin, o, i, has_bias) in [
                ("attn.q", &l.q, d, d, false),
                ("attn.k", &l.k, d, d, false),
                ("attn.v", &l.v, d, d, false),
                ("attn.out", &l.out, d, d, true),
                ("ffn.up", &l.up, f, d, true),
                ("ffn.down", &l.down, d, f, true),
            ] {
                let (len, t) = match &lin.weight {
                    MatrixData::Fp32(w) => (w.len(), false),
                    MatrixData::Ternary(c) => (c.len(), true),
                };
                if len != o * i {
                    return err(format!(
                        "layers.{li}.{name}.weight has {len} values, expected {o} x {i}"
                    ));
                }
                if t && i % 4 != 0 {
                    return err(format!(
                        "layers.{li}.{name}: ternary in_features {i} is not a multiple of 4"
                    ));
                }
                if *ternary.get_or_insert(t) != t {
                    return err(
                        "layers mix fp32 and ternary weights; one weight_quant per file".into(),
                    );
                }
                if lin.bias.is_some() != has_bias || lin.bias.as_ref().is_some_and(|b| b.len() != o)
                {
                    return err(format!(
                        "layers.{li}.{name}.bias must be {}",
                        if has_bias {
                            format!("{o} values")
                        } else {
                            "absent".into()
                        }
                    ));
                }
            }
        }
        if let Some(t) = ternary {
            h.weight_quant = if t {
                WeightQuant::Ternary
            } else {
                WeightQuant::Fp32
            };
        }
        if self.final_ln_weight.len() != d || self.final_ln_bias.len() != d {
            return err(format!(
                "final LayerNorm must have {d} weights and {d} biases"
            ));
        }
        if self.projection_weight.len() != od * d || self.projection_bias.len() != od {
            return err(format!(
                "projection must be {od} x {d} weights and {od} biases"
            ));
        }

        let mut known: Vec<RawSection> = vec![
            RawSection::new(SectionType::TokenizerVocab, encode_vocab(&self.vocab)?),
            RawSection::new(
                SectionType::TokenizerConfig,
                encode_tokenizer_config(
                    self.special_ids,
                    self.max_input_chars_per_word,
                    self.continuing_subword_prefix.as_bytes(),
                )?,
            ),
        ];
        let (emb, scales) = match &self.embeddings {
            EmbeddingData::Fp32(v) => (f32_bytes(v), None),
            EmbeddingData::Int8 { codes, scales } => {
                (codes.iter().map(|&c| c as u8).collect(), Some(scales))
            }
            EmbeddingData::Int4 { codes, scales } => {
                if codes.iter().any(|c| !(-8..=7).contains(c)) {
                    return err("int4 embedding code outside -8..=7".into());
                }
                (pack_int4(codes), Some(scales))
            }
            EmbeddingData::Ternary { codes, scales } => {
                if codes.iter().any(|c| !(-1..=1).contains(c)) {
                    return err("ternary embedding code outside -1..=1".into());
                }
                (pack_ternary(codes), Some(scales))
            }
        };
        known.push(RawSection::new(SectionType::EmbeddingWeights, emb));
        if let Some(s) = scales {
            known.push(RawSection::new(SectionType::EmbeddingScales, f32_bytes(s)));
        }
        if !self.layers.is_empty() {
            for l in &self.layers {
                for lin in [&l.q, &l.k, &l.v, &l.out, &l.up, &l.down] {
                    if let MatrixData::Ternary(c) = &lin.weight {
                        if c.iter().any(|c| !(-1..=1).contains(c)) {
                            return err("ternary layer code outside -1..=1".into());
                        }
                    }
                }
            }
            known.push(RawSection::new(
                SectionType::Layers,
                encode_layers(&self.layers),
            ));
        }
        let mut fl = f32_bytes(&self.final_ln_weight);
        fl.extend(f32_bytes(&self.final_ln_bias));
        known.push(RawSection::new(SectionType::FinalLn, fl));
        let mut pr = f32_bytes(&self.projection_weight);
        pr.extend(f32_bytes(&self.projection_bias));
        known.push(RawSection::new(SectionType::Projection, pr));
        if let Some(md) = &self.metadata {
            known.push(RawSection::new(
                SectionType::Metadata,
                md.as_bytes().to_vec(),
            ));
        }

        let mut all = known;
        for (t, data) in &self.extra_sections {
            all.push(RawSection {
                section_type: *t,
                reserved: 0,
                data: data.clone(),
                offset: None,
                length: None,
                gap: 0,
            });
        }
        if let Some(order) = &self.section_order {
            let rank = |t: u16| {
                order
                    .iter()
                    .position(|&o| o == t)
                    .unwrap_or(order.len() + t as usize)
            };
            all.sort_by_key(|s| rank(s.section_type));
        }
        Ok((h, all))
    }

    /// Writes the complete file (header, table, sections, SHA-256).
    ///
    /// # Errors
    /// As [`ModelBuilder::sections`].
    pub fn build(&self) -> Result<Vec<u8>, BuildError> {
        let (h, sections) = self.sections()?;
        Ok(assemble(&h.to_bytes(), &sections, None, true))
    }
}

fn linear_data(l: &Linear) -> LinearData {
    let weight = match &l.weights {
        LinearWeights::Fp32(w) => MatrixData::Fp32(w.clone()),
        LinearWeights::Ternary(t) => MatrixData::Ternary(t.codes()),
    };
    LinearData {
        weight,
        scale: l.row_scales.first().copied().unwrap_or(1.0),
        bias: l.bias.clone(),
    }
}

fn split_qkv(l: &Linear, d: usize) -> [LinearData; 3] {
    let part = |p: usize| {
        let weight = match &l.weights {
            LinearWeights::Fp32(w) => MatrixData::Fp32(w[p * d * d..(p + 1) * d * d].to_vec()),
            LinearWeights::Ternary(t) => MatrixData::Ternary(
                (p * d..(p + 1) * d)
                    .flat_map(|r| t.row(r).iter().copied())
                    .collect(),
            ),
        };
        LinearData {
            weight,
            scale: l.row_scales[p * d],
            bias: None,
        }
    };
    [part(0), part(1), part(2)]
}
