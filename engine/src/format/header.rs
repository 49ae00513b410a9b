//! The 64-byte header at offset 0 (§3): [`Header`], the enums and flags it decodes into
//! ([`EmbeddingQuant`], [`WeightQuant`], [`Flags`]), the model version and the dims list.
//! Decoding only; every §3 rule is checked by [`crate::Model::from_bytes`].

use std::fmt;

use super::{le_u16, le_u32, LoadError, HEADER_LEN, MAGIC, MAX_MATRYOSHKA, MIN_FILE_LEN};

/// Encoding of the `EMBEDDING_WEIGHTS` section (header byte 6, §3 and §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbeddingQuant {
    /// 0: `d_model × 4` bytes per row, fp32 values, no scales.
    Fp32,
    /// 1: `d_model` bytes per row, signed int8 codes × per-row scale.
    Int8,
    /// 2: `d_model / 2` bytes per row; low nibble = element `2k`; signed codes × per-row scale.
    Int4,
    /// 3: `d_model / 4` bytes per row; 2 bits per element, low bits = low index;
    /// `00`=0, `01`=+1, `10`=−1, `11` reserved (a load error, decision 5).
    Ternary,
}

impl EmbeddingQuant {
    /// Decodes header byte 6; `None` for values other than 0..=3.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Fp32),
            1 => Some(Self::Int8),
            2 => Some(Self::Int4),
            3 => Some(Self::Ternary),
            _ => None,
        }
    }

    /// The header byte for this encoding.
    pub fn to_u8(self) -> u8 {
        match self {
            Self::Fp32 => 0,
            Self::Int8 => 1,
            Self::Int4 => 2,
            Self::Ternary => 3,
        }
    }

    /// Bytes used by one embedding row of `d_model` values (`d_model` must be a multiple of 4).
    pub fn bytes_per_row(self, d_model: u64) -> u64 {
        match self {
            Self::Fp32 => d_model * 4,
            Self::Int8 => d_model,
            Self::Int4 => d_model / 2,
            Self::Ternary => d_model / 4,
        }
    }

    /// Lower-case name as used in messages and by `inspect` (`fp32`, `int8`, `int4`, `ternary`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Int8 => "int8",
            Self::Int4 => "int4",
            Self::Ternary => "ternary",
        }
    }
}

impl fmt::Display for EmbeddingQuant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Encoding of the transformer weight matrices in `LAYERS` (header byte 7, §3 and §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightQuant {
    /// 0: fp32 matrices; BitLinear degenerates to a plain linear layer (§6.3).
    Fp32,
    /// 1: 2-bit packed ternary matrices, four values per byte (§5.5).
    Ternary,
    /// Any other byte. Only possible when `n_layers == 0`, where the field is ignored (§3);
    /// with `n_layers > 0` it is a load error (decision 5). Kept so files round-trip.
    Unknown(u8),
}

impl WeightQuant {
    /// Decodes header byte 7 (never fails; see [`WeightQuant::Unknown`]).
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Fp32,
            1 => Self::Ternary,
            other => Self::Unknown(other),
        }
    }

    /// The header byte for this encoding.
    pub fn to_u8(self) -> u8 {
        match self {
            Self::Fp32 => 0,
            Self::Ternary => 1,
            Self::Unknown(v) => v,
        }
    }

    /// Bytes used by an `[out × in]` matrix in this encoding; `None` for `Unknown`.
    /// For ternary, `in` must be a multiple of 4.
    pub fn matrix_bytes(self, out: u64, inp: u64) -> Option<u64> {
        match self {
            Self::Fp32 => out.checked_mul(inp)?.checked_mul(4),
            Self::Ternary => out.checked_mul(inp / 4),
            Self::Unknown(_) => None,
        }
    }
}

impl fmt::Display for WeightQuant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fp32 => f.write_str("fp32"),
            Self::Ternary => f.write_str("ternary"),
            Self::Unknown(v) => write!(f, "unknown({v})"),
        }
    }
}

/// Header `flags` byte (§3): bit 0 `has_fingerprint`, bit 1 `do_lower_case`, bit 2
/// `strip_accents`, bits 3–7 reserved (must be 0, decision 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    /// Bit 0: a customer rotation is folded into the projection (§7).
    pub const HAS_FINGERPRINT: u8 = 1 << 0;
    /// Bit 1: the tokenizer lowercases (Unicode default mapping, decision 7).
    pub const DO_LOWER_CASE: u8 = 1 << 1;
    /// Bit 2: the tokenizer strips combining marks.
    pub const STRIP_ACCENTS: u8 = 1 << 2;
    /// Bits 3–7.
    pub const RESERVED_MASK: u8 = 0b1111_1000;

    /// Bit 0.
    pub fn has_fingerprint(self) -> bool {
        self.0 & Self::HAS_FINGERPRINT != 0
    }
    /// Bit 1.
    pub fn do_lower_case(self) -> bool {
        self.0 & Self::DO_LOWER_CASE != 0
    }
    /// Bit 2.
    pub fn strip_accents(self) -> bool {
        self.0 & Self::STRIP_ACCENTS != 0
    }
    /// Bits 3–7 (non-zero is a load error).
    pub fn reserved_bits(self) -> u8 {
        self.0 & Self::RESERVED_MASK
    }
}

/// A list of Matryoshka / output dims as text, `sep` between them: `dims_list(&[128, 384], ", ")`
/// → `"128, 384"`. The one formatter behind every "valid dims" message and listing.
///
/// ```
/// assert_eq!(lightembed::format::dims_list(&[64, 128, 384], ", "), "64, 128, 384");
/// assert_eq!(lightembed::format::dims_list(&[], ","), "");
/// ```
pub fn dims_list(dims: &[usize], sep: &str) -> String {
    let mut out = String::new();
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&d.to_string());
    }
    out
}

/// A model's `major.minor.patch` version (spec §3 header bytes 44–47, §8 `model_version`): the
/// one representation the header, the index manifest and `ModelIdentity` share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelVersion {
    /// `version_major`: a bump invalidates existing indexes.
    pub major: u8,
    /// `version_minor`: indexes stay valid.
    pub minor: u8,
    /// `version_patch`: indexes stay valid.
    pub patch: u16,
}

impl ModelVersion {
    /// `ModelVersion { major, minor, patch }`.
    pub const fn new(major: u8, minor: u8, patch: u16) -> Self {
        ModelVersion {
            major,
            minor,
            patch,
        }
    }

    /// `major.minor`, the short form the §8 mismatch message uses (`"1.2"`).
    pub fn short(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }
}

impl From<(u8, u8, u16)> for ModelVersion {
    fn from((major, minor, patch): (u8, u8, u16)) -> Self {
        ModelVersion {
            major,
            minor,
            patch,
        }
    }
}

impl core::fmt::Display for ModelVersion {
    /// `major.minor.patch`, e.g. `1.2.0`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The 64-byte header at offset 0 (§3). Fields are the decoded values of the bytes; a `Header`
/// returned by [`crate::Model::header`] has passed every §3 rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Offset 4. Must be 1.
    pub format_version: u16,
    /// Offset 6.
    pub embedding_quant: EmbeddingQuant,
    /// Offset 7. Ignored when `n_layers == 0`.
    pub weight_quant: WeightQuant,
    /// Offset 8. Number of tokens (rows of the embedding table).
    pub vocab_size: u32,
    /// Offset 12. Hidden width; a multiple of 4.
    pub d_model: u16,
    /// Offset 14. 0 = static model.
    pub n_layers: u8,
    /// Offset 15. Divides `d_model`; ignored when `n_layers == 0`.
    pub n_heads: u8,
    /// Offset 16. Ignored when `n_layers == 0`.
    pub ffn_dim: u16,
    /// Offset 18. Length of the full embedding.
    pub output_dim: u16,
    /// Offset 20. The tokenizer truncates here (including `[CLS]`/`[SEP]`); ≥ 2.
    pub max_seq_len: u16,
    /// Offset 22. Number of used `matryoshka_dims` entries, 0–8.
    pub n_matryoshka: u8,
    /// Offset 23.
    pub flags: Flags,
    /// Offset 24. 8 × u16; the first `n_matryoshka` strictly ascending and ≤ `output_dim`, the
    /// rest 0.
    pub matryoshka_dims: [u16; 8],
    /// Offset 40. Provenance only; 0 = development build (§7).
    pub license_id: u32,
    /// Offset 44.
    pub version_major: u8,
    /// Offset 45.
    pub version_minor: u8,
    /// Offset 46.
    pub version_patch: u16,
    /// Offset 48. The 16 raw bytes (UTF-8, NUL-padded); see [`Header::model_id`].
    pub model_id_bytes: [u8; 16],
}

impl Header {
    /// Decodes the first 64 bytes of `bytes` without semantic validation. Errors only on
    /// [`LoadError::FileTooShort`] and [`LoadError::UnknownEmbeddingQuant`] (the latter because the
    /// field is an enum); every other rule is checked by [`crate::Model::from_bytes`].
    pub fn parse(bytes: &[u8]) -> Result<Header, LoadError> {
        if bytes.len() < HEADER_LEN {
            return Err(LoadError::FileTooShort {
                len: bytes.len(),
                min: MIN_FILE_LEN,
            });
        }
        let b = &bytes[..HEADER_LEN];
        let embedding_quant = EmbeddingQuant::from_u8(b[6])
            .ok_or(LoadError::UnknownEmbeddingQuant { found: b[6] })?;
        let mut matryoshka_dims = [0u16; 8];
        for (i, d) in matryoshka_dims.iter_mut().enumerate() {
            *d = le_u16(b, 24 + 2 * i);
        }
        let mut model_id_bytes = [0u8; 16];
        model_id_bytes.copy_from_slice(&b[48..64]);
        Ok(Header {
            format_version: le_u16(b, 4),
            embedding_quant,
            weight_quant: WeightQuant::from_u8(b[7]),
            vocab_size: le_u32(b, 8),
            d_model: le_u16(b, 12),
            n_layers: b[14],
            n_heads: b[15],
            ffn_dim: le_u16(b, 16),
            output_dim: le_u16(b, 18),
            max_seq_len: le_u16(b, 20),
            n_matryoshka: b[22],
            flags: Flags(b[23]),
            matryoshka_dims,
            license_id: le_u32(b, 40),
            version_major: b[44],
            version_minor: b[45],
            version_patch: le_u16(b, 46),
            model_id_bytes,
        })
    }

    /// Encodes the header as its 64 bytes (magic included). Exact inverse of [`Header::parse`].
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4..6].copy_from_slice(&self.format_version.to_le_bytes());
        b[6] = self.embedding_quant.to_u8();
        b[7] = self.weight_quant.to_u8();
        b[8..12].copy_from_slice(&self.vocab_size.to_le_bytes());
        b[12..14].copy_from_slice(&self.d_model.to_le_bytes());
        b[14] = self.n_layers;
        b[15] = self.n_heads;
        b[16..18].copy_from_slice(&self.ffn_dim.to_le_bytes());
        b[18..20].copy_from_slice(&self.output_dim.to_le_bytes());
        b[20..22].copy_from_slice(&self.max_seq_len.to_le_bytes());
        b[22] = self.n_matryoshka;
        b[23] = self.flags.0;
        for (i, d) in self.matryoshka_dims.iter().enumerate() {
            b[24 + 2 * i..26 + 2 * i].copy_from_slice(&d.to_le_bytes());
        }
        b[40..44].copy_from_slice(&self.license_id.to_le_bytes());
        b[44] = self.version_major;
        b[45] = self.version_minor;
        b[46..48].copy_from_slice(&self.version_patch.to_le_bytes());
        b[48..64].copy_from_slice(&self.model_id_bytes);
        b
    }

    /// `model_id` as a string: the 16 bytes up to the first NUL, if they are UTF-8 (always the
    /// case for a loaded model).
    pub fn model_id(&self) -> Option<&str> {
        let end = self
            .model_id_bytes
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(16);
        std::str::from_utf8(&self.model_id_bytes[..end]).ok()
    }

    /// Encodes `id` into the 16-byte NUL-padded field; `None` if it is longer than 16 bytes.
    pub fn model_id_field(id: &str) -> Option<[u8; 16]> {
        if id.len() > 16 {
            return None;
        }
        let mut b = [0u8; 16];
        b[..id.len()].copy_from_slice(id.as_bytes());
        Some(b)
    }

    /// The used Matryoshka dims, `matryoshka_dims[..n_matryoshka]` (clamped to 8 entries).
    pub fn matryoshka(&self) -> &[u16] {
        &self.matryoshka_dims[..(self.n_matryoshka as usize).min(MAX_MATRYOSHKA)]
    }

    /// The `dims` values `embed` accepts (decision 8): the used Matryoshka dims followed by
    /// `output_dim` (not repeated when the last Matryoshka dim equals it), ascending.
    pub fn valid_dims(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.matryoshka().iter().map(|&d| d as usize).collect();
        if v.last() != Some(&(self.output_dim as usize)) {
            v.push(self.output_dim as usize);
        }
        v
    }

    /// `version_major.version_minor.version_patch` (`Display`: `1.2.3`).
    pub fn model_version(&self) -> ModelVersion {
        ModelVersion::new(self.version_major, self.version_minor, self.version_patch)
    }

    /// True when `n_layers == 0` (§6.2).
    pub fn is_static(&self) -> bool {
        self.n_layers == 0
    }
}
