//! [`Model`]: a fully validated `.bin` v1 file, ready to embed text.
//!
//! [`Model::from_bytes`] performs every load rule of §3–§5 and decisions 5, 6 and 10, in the
//! same order as `reference/forward.py::load`, so a file breaking several rules reports the same
//! rule in both. It never panics on any input, never loads partially, and allocates nothing
//! sized by a header field before that field has been checked against the file length.

use std::collections::HashSet;
use std::fmt;

use sha2::{Digest, Sha256};

use crate::format::*;
use crate::kernels::TernaryMatrix;
use crate::quant::{int4_high, int4_low};
use crate::tokenizer::{Tokenizer, TokenizerConfig};

/// A loaded, validated model: header, section table, tokenizer, weights.
///
/// `Model` is immutable, `Send` and `Sync`; embedding calls take `&self` and allocate their own
/// scratch space, so one model can serve many threads.
#[derive(Debug, Clone)]
pub struct Model {
    pub(crate) header: Header,
    pub(crate) sections: SectionTable,
    pub(crate) file_len: u64,
    pub(crate) sha256: [u8; 32],
    pub(crate) metadata: Option<String>,
    pub(crate) tokenizer: Tokenizer,
    pub(crate) embeddings: EmbeddingTable,
    pub(crate) layers: Vec<Layer>,
    pub(crate) final_ln_weight: Vec<f32>,
    pub(crate) final_ln_bias: Vec<f32>,
    /// `[output_dim × d_model]`.
    pub(crate) projection_weight: Vec<f32>,
    /// `[output_dim]`.
    pub(crate) projection_bias: Vec<f32>,
    pub(crate) valid_dims: Vec<usize>,
}

/// The token-embedding table, kept in its file encoding; rows are dequantised on lookup.
#[derive(Debug, Clone)]
pub(crate) enum EmbeddingTable {
    Fp32(Vec<f32>),
    Int8 { codes: Vec<i8>, scales: Vec<f32> },
    Int4 { packed: Vec<u8>, scales: Vec<f32> },
    Ternary { packed: Vec<u8>, scales: Vec<f32> },
}

/// Dequantised values of the four 2-bit fields of a byte (reserved `11` never reaches here).
const TERNARY_LUT: [[f32; 4]; 256] = {
    let mut t = [[0f32; 4]; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 4 {
            t[b][j] = match crate::quant::ternary_code((b >> (2 * j)) as u8) {
                Some(c) => c as f32,
                None => 0.0,
            };
            j += 1;
        }
        b += 1;
    }
    t
};

impl EmbeddingTable {
    /// Writes row `id` (`d` values, `code × scale[id]` for quantised tables) into `out`.
    pub(crate) fn row_into(&self, id: usize, d: usize, out: &mut [f32]) {
        match self {
            EmbeddingTable::Fp32(v) => out.copy_from_slice(&v[id * d..(id + 1) * d]),
            EmbeddingTable::Int8 { codes, scales } => {
                let s = scales[id];
                for (o, &c) in out.iter_mut().zip(&codes[id * d..(id + 1) * d]) {
                    *o = c as f32 * s;
                }
            }
            EmbeddingTable::Int4 { packed, scales } => {
                let s = scales[id];
                let bpr = d / 2;
                for (o, &b) in out
                    .chunks_exact_mut(2)
                    .zip(&packed[id * bpr..(id + 1) * bpr])
                {
                    o[0] = int4_low(b) as f32 * s;
                    o[1] = int4_high(b) as f32 * s;
                }
            }
            EmbeddingTable::Ternary { packed, scales } => {
                let s = scales[id];
                let bpr = d / 4;
                for (o, &b) in out
                    .chunks_exact_mut(4)
                    .zip(&packed[id * bpr..(id + 1) * bpr])
                {
                    let c = &TERNARY_LUT[b as usize];
                    o[0] = c[0] * s;
                    o[1] = c[1] * s;
                    o[2] = c[2] * s;
                    o[3] = c[3] * s;
                }
            }
        }
    }
}

/// Weights of one linear map `[rows × cols]` (§5.5).
#[derive(Debug, Clone)]
pub(crate) enum LinearWeights {
    /// Plain fp32 `[rows × cols]` (weight_quant = fp32).
    Fp32(Vec<f32>),
    /// Ternary codes unpacked once at load.
    Ternary(TernaryMatrix),
}

/// One BitLinear (ternary) or plain linear (fp32) layer. Q, K and V are fused into one
/// `[3·d_model × d_model]` `Linear` (they share their input and its quantisation), so the scale is
/// stored per output row.
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) weights: LinearWeights,
    /// Per output row: the file's `*.scale` of the matrix the row came from (ignored for fp32).
    pub(crate) row_scales: Vec<f32>,
    pub(crate) bias: Option<Vec<f32>>,
}

/// One transformer block (§5.5).
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub(crate) ln1_weight: Vec<f32>,
    pub(crate) ln1_bias: Vec<f32>,
    /// Fused Q, K, V: rows `0..d` are Q, `d..2d` K, `2d..3d` V.
    pub(crate) qkv: Linear,
    pub(crate) out: Linear,
    pub(crate) ln2_weight: Vec<f32>,
    pub(crate) ln2_bias: Vec<f32>,
    pub(crate) up: Linear,
    pub(crate) down: Linear,
}

/// Why [`Model::embed`] (or a sibling) refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedError {
    /// `dims` is not one of the model's valid dims (decision 8).
    InvalidDims {
        /// The requested length.
        dims: usize,
        /// The accepted lengths, ascending ([`Model::valid_dims`]).
        valid: Vec<usize>,
    },
    /// [`Model::embed_ids`] got a token id `≥ vocab_size`.
    TokenIdOutOfRange {
        /// The offending id.
        id: u32,
        /// The model's vocabulary size.
        vocab_size: u32,
    },
    /// [`Model::embed_ids`] got no ids (the tokenizer always yields at least `[CLS] [SEP]`).
    EmptyInput,
    /// The forward pass overflowed: the projected vector holds NaN or ±inf (possible only with
    /// weights of absurd magnitude; the file loaded because every stored value is finite). Never
    /// returned silently as a vector, so it cannot poison an index (clarification F.8).
    NonFinite,
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::InvalidDims { dims, valid } => {
                write!(
                    f,
                    "invalid dims {dims}: this model's valid dims are {}",
                    crate::format::dims_list(valid, ", ")
                )
            }
            EmbedError::TokenIdOutOfRange { id, vocab_size } => {
                write!(
                    f,
                    "token id {id} is out of range: ids must be < vocab_size {vocab_size}"
                )
            }
            EmbedError::EmptyInput => {
                write!(f, "no token ids: a sequence needs at least one token (the tokenizer emits [CLS] [SEP] for empty text)")
            }
            EmbedError::NonFinite => {
                write!(f, "the forward pass overflowed: the embedding is not finite (the model's weights are numerically broken)")
            }
        }
    }
}

impl std::error::Error for EmbedError {}

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

/// Expected `LAYERS` length for a header with `n_layers > 0` and a known weight_quant.
fn expected_layers_len(h: &Header) -> Option<u64> {
    let d = h.d_model as u64;
    let f = h.ffn_dim as u64;
    let wq = h.weight_quant;
    let m = |o: u64, i: u64| wq.matrix_bytes(o, i);
    let block = (2 * d * 4)
        .checked_add(4 * (m(d, d)? + 4))?
        .checked_add(d * 4)?
        .checked_add(2 * d * 4)?
        .checked_add(m(f, d)? + 4 + f * 4)?
        .checked_add(m(d, f)? + 4 + d * 4)?;
    block.checked_mul(h.n_layers as u64)
}

const TENSOR_NAMES: [&str; 7] = [
    "attn.q", "attn.k", "attn.v", "attn.out", "ffn.up", "ffn.down", "",
];

impl Model {
    /// Parses and validates a complete `.bin` v1 file (§2–§5).
    ///
    /// Checks, in the reference's order: envelope (length ≥ 98, magic `LEMB`, `format_version`
    /// 1, trailing SHA-256), every header rule of §3 and decisions 5 and 10, the section table
    /// entry by entry (reserved 0, within the file, clear of header, table and hash, 8-aligned),
    /// the section set (no duplicate known type, known sections disjoint, no section the header
    /// rules out, every required section present, exact lengths, decision 6), then each
    /// section's contents (vocab, tokenizer config, ternary codes, finite floats, positive
    /// ternary scales, UTF-8 metadata). Unknown section types are skipped (§4).
    ///
    /// # Errors
    /// The first violated rule as a [`LoadError`]; nothing is partially loaded.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, LoadError> {
        Model::load(bytes, None)
    }

    /// [`Model::from_bytes`] with the SHA-256 of `bytes[..len − 32]` already computed by the
    /// caller — e.g. by the browser's `crypto.subtle.digest`, which hashes a 4.7 MB model in a
    /// few milliseconds where the wasm `sha2` takes hundreds. Every rule is checked as by
    /// `from_bytes`; rule 5 (§3, the trailing SHA-256) compares the trailer with `digest`, so
    /// `digest` must be the hash of exactly these bytes (a digest of other bytes makes a corrupt
    /// file load). Files shorter than the envelope are refused before `digest` is looked at.
    ///
    /// # Errors
    /// As [`Model::from_bytes`]; [`LoadError::HashMismatch`] reports `digest` as `computed`.
    pub fn from_bytes_with_digest(bytes: &[u8], digest: [u8; 32]) -> Result<Model, LoadError> {
        Model::load(bytes, Some(digest))
    }

    fn load(bytes: &[u8], digest: Option<[u8; 32]>) -> Result<Model, LoadError> {
        let file_len = bytes.len();
        // --- envelope
        if file_len < MIN_FILE_LEN {
            return Err(LoadError::FileTooShort {
                len: file_len,
                min: MIN_FILE_LEN,
            });
        }
        let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
        if magic != MAGIC {
            return Err(LoadError::BadMagic { found: magic });
        }
        let version = le_u16(bytes, 4);
        if !(MIN_FORMAT_VERSION..=MAX_FORMAT_VERSION).contains(&version) {
            return Err(LoadError::UnsupportedFormatVersion { found: version });
        }
        let hash_start = file_len - HASH_LEN;
        let computed: [u8; 32] =
            digest.unwrap_or_else(|| Sha256::digest(&bytes[..hash_start]).into());
        let mut stored = [0u8; 32];
        stored.copy_from_slice(&bytes[hash_start..]);
        if computed != stored {
            return Err(LoadError::HashMismatch { stored, computed });
        }

        // --- header
        let header = Header::parse(bytes)?;
        validate_header(&header)?;

        // --- section table, entry by entry
        let table = SectionTable::parse(bytes)?;
        let table_end = table.end_offset();
        for (i, e) in table.entries.iter().enumerate() {
            let t = e.section_type;
            if e.reserved != 0 {
                return Err(LoadError::SectionReservedNonzero {
                    index: i,
                    section_type: t,
                    reserved: e.reserved,
                });
            }
            let end = match e.end() {
                Some(end) if end <= file_len as u64 => end,
                _ => {
                    return Err(LoadError::SectionOutOfBounds {
                        index: i,
                        section_type: t,
                        offset: e.offset,
                        length: e.length,
                        file_len: file_len as u64,
                    })
                }
            };
            if e.offset < HEADER_LEN as u64 {
                return Err(LoadError::SectionOverlapsHeader {
                    index: i,
                    section_type: t,
                    offset: e.offset,
                });
            }
            if e.offset < table_end {
                return Err(LoadError::SectionOverlapsTable {
                    index: i,
                    section_type: t,
                    offset: e.offset,
                    table_end,
                });
            }
            if end > hash_start as u64 {
                return Err(LoadError::SectionOverlapsHash {
                    index: i,
                    section_type: t,
                    offset: e.offset,
                    length: e.length,
                    hash_start: hash_start as u64,
                });
            }
            if e.offset % SECTION_ALIGN != 0 {
                return Err(LoadError::SectionMisaligned {
                    index: i,
                    section_type: t,
                    offset: e.offset,
                });
            }
        }

        // --- section table as a whole
        let by_type = check_section_set(&header, &table)?;
        let raw = |t: SectionType| -> &[u8] {
            match by_type[type_slot(t)] {
                // In bounds: checked above.
                Some(i) => {
                    let e = &table.entries[i];
                    &bytes[e.offset as usize..(e.offset + e.length) as usize]
                }
                None => &[],
            }
        };

        // --- section contents
        let h = &header;
        let vocab = parse_vocab(raw(SectionType::TokenizerVocab), h.vocab_size)?;
        let tok_cfg = parse_tokenizer_config(raw(SectionType::TokenizerConfig), h)?;

        let d = h.d_model as usize;
        let vocab_n = h.vocab_size as usize;
        let emb_raw = raw(SectionType::EmbeddingWeights);
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
                let scales = read_f32s(
                    raw(SectionType::EmbeddingScales),
                    &|i| format!("EMBEDDING_SCALES[{i}]"),
                    true,
                )?;
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

        let layers = if h.n_layers > 0 {
            parse_layers(raw(SectionType::Layers), h)?
        } else {
            Vec::new()
        };

        let fl = raw(SectionType::FinalLn);
        let final_ln_weight = read_f32s(&fl[..4 * d], &|i| format!("FINAL_LN weight[{i}]"), true)?;
        let final_ln_bias = read_f32s(&fl[4 * d..], &|i| format!("FINAL_LN bias[{i}]"), true)?;
        let od = h.output_dim as usize;
        let pr = raw(SectionType::Projection);
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

        let metadata = match by_type[type_slot(SectionType::Metadata)] {
            Some(_) => match std::str::from_utf8(raw(SectionType::Metadata)) {
                Ok(s) => Some(s.to_owned()),
                Err(e) => {
                    return Err(LoadError::MetadataNotUtf8 {
                        valid_up_to: e.valid_up_to(),
                    })
                }
            },
            None => None,
        };

        let valid_dims = header.valid_dims();
        let tokenizer = Tokenizer::new(vocab, tok_cfg);
        Ok(Model {
            sections: table,
            file_len: file_len as u64,
            sha256: stored,
            metadata,
            tokenizer,
            embeddings,
            layers,
            final_ln_weight,
            final_ln_bias,
            projection_weight,
            projection_bias,
            valid_dims,
            header,
        })
    }

    /// The validated header (§3).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The section table in file order, unknown types included (§4).
    pub fn sections(&self) -> &SectionTable {
        &self.sections
    }

    /// The `METADATA` section (UTF-8 JSON, not parsed), if present (§5.8).
    pub fn metadata(&self) -> Option<&str> {
        self.metadata.as_deref()
    }

    /// The file's SHA-256 (its trailing 32 bytes, verified at load).
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// [`Model::sha256`] as 64 lower-case hex digits.
    pub fn sha256_hex(&self) -> String {
        to_hex(&self.sha256)
    }

    /// Total file size in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_len
    }

    /// `model_id` (header offset 48, NUL padding removed).
    pub fn model_id(&self) -> &str {
        self.header.model_id().unwrap_or("")
    }

    /// Length of the full embedding (`output_dim`).
    pub fn output_dim(&self) -> usize {
        self.header.output_dim as usize
    }

    /// The `dims` accepted by [`Model::embed`] (decision 8): used `matryoshka_dims` then
    /// `output_dim`, ascending, no repeats.
    pub fn valid_dims(&self) -> &[usize] {
        &self.valid_dims
    }

    /// `Ok(dims)` if valid, else [`EmbedError::InvalidDims`] naming the valid set.
    pub fn check_dims(&self, dims: usize) -> Result<usize, EmbedError> {
        if self.valid_dims.contains(&dims) {
            Ok(dims)
        } else {
            Err(EmbedError::InvalidDims {
                dims,
                valid: self.valid_dims.clone(),
            })
        }
    }

    /// The tokenizer built from `TOKENIZER_VOCAB`, `TOKENIZER_CONFIG` and the header flags.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Token ids of `text` as the model sees them: `[CLS]`, word pieces cut to
    /// `max_seq_len − 2`, `[SEP]` (§5.2, decision 1).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }
}

fn type_slot(t: SectionType) -> usize {
    match t {
        SectionType::Unknown(_) => 0,
        k => k.to_u16() as usize,
    }
}

fn validate_header(h: &Header) -> Result<(), LoadError> {
    let layered = h.n_layers > 0;
    if let (true, WeightQuant::Unknown(v)) = (layered, h.weight_quant) {
        return Err(LoadError::UnknownWeightQuant { found: v });
    }
    if h.flags.reserved_bits() != 0 {
        return Err(LoadError::ReservedFlagsSet { flags: h.flags.0 });
    }
    let mut zero_fields: Vec<(&'static str, u64)> = vec![
        ("vocab_size", h.vocab_size as u64),
        ("d_model", h.d_model as u64),
        ("output_dim", h.output_dim as u64),
    ];
    if layered {
        zero_fields.push(("n_heads", h.n_heads as u64));
        zero_fields.push(("ffn_dim", h.ffn_dim as u64));
    }
    if let Some((field, _)) = zero_fields.into_iter().find(|&(_, v)| v == 0) {
        return Err(LoadError::ZeroDimension { field });
    }
    if h.d_model % 4 != 0 {
        return Err(LoadError::DModelNotMultipleOf4 { d_model: h.d_model });
    }
    if layered && h.d_model % h.n_heads as u16 != 0 {
        return Err(LoadError::NHeadsNotDividingDModel {
            n_heads: h.n_heads,
            d_model: h.d_model,
        });
    }
    if layered && h.weight_quant == WeightQuant::Ternary && h.ffn_dim % 4 != 0 {
        return Err(LoadError::FfnDimNotMultipleOf4 { ffn_dim: h.ffn_dim });
    }
    let n = h.n_matryoshka as usize;
    if n > MAX_MATRYOSHKA {
        return Err(LoadError::NMatryoshkaTooLarge {
            n_matryoshka: h.n_matryoshka,
        });
    }
    let used = &h.matryoshka_dims[..n];
    let mut prev = 0u16;
    for &dim in used {
        if dim <= prev {
            return Err(LoadError::MatryoshkaNotAscending {
                dims: used.to_vec(),
            });
        }
        prev = dim;
    }
    if let Some(&dim) = used.iter().find(|&&dim| dim > h.output_dim) {
        return Err(LoadError::MatryoshkaExceedsOutputDim {
            dim,
            output_dim: h.output_dim,
        });
    }
    if let Some((i, &v)) = h
        .matryoshka_dims
        .iter()
        .enumerate()
        .skip(n)
        .find(|(_, &v)| v != 0)
    {
        return Err(LoadError::MatryoshkaUnusedNotZero {
            index: i,
            value: v,
            n_matryoshka: h.n_matryoshka,
        });
    }
    if h.max_seq_len < 2 {
        return Err(LoadError::MaxSeqLenTooSmall {
            max_seq_len: h.max_seq_len,
        });
    }
    let raw = &h.model_id_bytes;
    let nul = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    if std::str::from_utf8(&raw[..nul]).is_err() {
        return Err(LoadError::ModelIdNotUtf8 { bytes: *raw });
    }
    if raw[nul..].iter().any(|&b| b != 0) {
        return Err(LoadError::ModelIdNotNulPadded { bytes: *raw });
    }
    Ok(())
}

/// Duplicates, overlaps between known sections, unexpected/missing sections, exact lengths.
/// Returns, per type slot (1..=8), the table index of that known section.
fn check_section_set(h: &Header, table: &SectionTable) -> Result<[Option<usize>; 9], LoadError> {
    let mut by_type: [Option<usize>; 9] = [None; 9];
    for (i, e) in table.entries.iter().enumerate() {
        if !e.section_type.is_known() {
            continue;
        }
        let slot = &mut by_type[type_slot(e.section_type)];
        if let Some(first) = *slot {
            return Err(LoadError::DuplicateSection {
                section_type: e.section_type,
                first_index: first,
                second_index: i,
            });
        }
        *slot = Some(i);
    }

    let mut spans: Vec<(u64, usize)> = by_type
        .iter()
        .flatten()
        .filter(|&&i| table.entries[i].length > 0)
        .map(|&i| (table.entries[i].offset, i))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        let a = &table.entries[w[0].1];
        let b = &table.entries[w[1].1];
        // Ends fit in u64: bounds were checked entry by entry.
        if b.offset < a.offset + a.length {
            return Err(LoadError::SectionsOverlap {
                first: *a,
                second: *b,
            });
        }
    }

    let present = |t: SectionType| by_type[type_slot(t)].is_some();
    if h.embedding_quant == EmbeddingQuant::Fp32 && present(SectionType::EmbeddingScales) {
        return Err(LoadError::UnexpectedSection {
            section_type: SectionType::EmbeddingScales,
            why: "embedding_quant is fp32, which has no per-row scales",
        });
    }
    if h.n_layers == 0 && present(SectionType::Layers) {
        return Err(LoadError::UnexpectedSection {
            section_type: SectionType::Layers,
            why: "n_layers is 0 (static model)",
        });
    }

    let mut required: Vec<(SectionType, &'static str)> = vec![
        (
            SectionType::TokenizerVocab,
            "every model carries its vocabulary",
        ),
        (
            SectionType::TokenizerConfig,
            "every model carries its tokenizer configuration",
        ),
        (
            SectionType::EmbeddingWeights,
            "every model carries its embedding table",
        ),
    ];
    if h.embedding_quant != EmbeddingQuant::Fp32 {
        required.push((
            SectionType::EmbeddingScales,
            "embedding_quant is not fp32, so per-row scales are required",
        ));
    }
    if h.n_layers > 0 {
        required.push((SectionType::Layers, "n_layers > 0"));
    }
    required.push((
        SectionType::FinalLn,
        "every model carries a final layer norm, static ones too",
    ));
    required.push((
        SectionType::Projection,
        "every model carries its output projection",
    ));
    for (t, why) in required {
        if !present(t) {
            return Err(LoadError::MissingSection {
                section_type: t,
                why,
            });
        }
    }

    let d = h.d_model as u64;
    let v = h.vocab_size as u64;
    let od = h.output_dim as u64;
    let mut expected: Vec<(SectionType, Option<u64>, String)> = vec![(
        SectionType::EmbeddingWeights,
        v.checked_mul(h.embedding_quant.bytes_per_row(d)),
        format!(
            "vocab_size {} x {} bytes per {} row of d_model {}",
            v,
            h.embedding_quant.bytes_per_row(d),
            h.embedding_quant,
            d
        ),
    )];
    if h.embedding_quant != EmbeddingQuant::Fp32 {
        expected.push((
            SectionType::EmbeddingScales,
            v.checked_mul(4),
            format!("vocab_size {v} x 4-byte fp32 scale"),
        ));
    }
    if h.n_layers > 0 {
        expected.push((
            SectionType::Layers,
            expected_layers_len(h),
            format!(
                "{} layers of d_model {}, ffn_dim {}, {} weights",
                h.n_layers, d, h.ffn_dim, h.weight_quant
            ),
        ));
    }
    expected.push((
        SectionType::FinalLn,
        Some(2 * d * 4),
        format!("weight and bias of d_model {d} fp32"),
    ));
    expected.push((
        SectionType::Projection,
        Some((od * d + od) * 4),
        format!("fp32 weight output_dim {od} x d_model {d} plus bias"),
    ));
    for (t, want, why) in expected {
        let e = &table.entries[by_type[type_slot(t)].unwrap_or(0)];
        // `want` cannot overflow for u16/u32 header fields; treat overflow as a mismatch anyway.
        if Some(e.length) != want {
            return Err(LoadError::SectionLengthMismatch {
                section_type: t,
                found: e.length,
                expected: want.unwrap_or(u64::MAX),
                why,
            });
        }
    }
    Ok(by_type)
}

fn parse_vocab(raw: &[u8], vocab_size: u32) -> Result<Vec<String>, LoadError> {
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

fn parse_tokenizer_config(raw: &[u8], h: &Header) -> Result<TokenizerConfig, LoadError> {
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

/// One linear's weight, scale and optional bias, as in the file.
struct RawLinear {
    weights: LinearWeights,
    scale: f32,
    bias: Option<Vec<f32>>,
}

fn parse_layers(raw: &[u8], h: &Header) -> Result<Vec<Layer>, LoadError> {
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
