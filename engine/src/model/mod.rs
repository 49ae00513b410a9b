//! [`Model`]: a fully validated `.bin` v1 file, ready to embed text.
//!
//! [`Model::from_bytes`] performs every load rule of §3–§5 and decisions 5, 6 and 10, in the
//! same order as `reference/forward.py::load`, so a file breaking several rules reports the same
//! rule in both. It never panics on any input, never loads partially, and allocates nothing
//! sized by a header field before that field has been checked against the file length.
//!
//! The loader is cut by phase: `load.rs` runs the phases in that order, `validate.rs` checks the
//! envelope, the header and the section table, `parse.rs` reads each section's contents into the
//! parts a `Model` is assembled from. This file holds the model's types and accessors.

mod load;
mod parse;
mod validate;

use std::fmt;

use crate::format::{to_hex, Header, SectionTable};
use crate::kernels::TernaryMatrix;
use crate::quant::{int4_high, int4_low};
use crate::tokenizer::Tokenizer;

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
    /// Static models only: the per-token projected rows, filled on first use
    /// (`static_rows.rs`).
    pub(crate) static_rows: Option<crate::static_rows::StaticRows>,
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

impl Model {
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
