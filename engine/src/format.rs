//! `.bin` v1 wire-format types: the 64-byte [`Header`] (§3), the [`SectionTable`] (§4), the
//! quantisation enums, and [`LoadError`] — one variant per load rule, each with a message that says
//! what was found and what was expected.
//!
//! Parsing here is purely structural (byte layout, enum decoding). The semantic validation of
//! every rule lives in [`crate::Model::from_bytes`].

use std::fmt;

/// `"LEMB"` — the first four bytes of every file (§3).
pub const MAGIC: [u8; 4] = *b"LEMB";
/// The only `format_version` this engine reads (decision 10).
pub const FORMAT_VERSION: u16 = 1;
/// Lowest accepted `format_version` (inclusive).
pub const MIN_FORMAT_VERSION: u16 = 1;
/// Highest accepted `format_version` (inclusive).
pub const MAX_FORMAT_VERSION: u16 = 1;
/// Size of the header in bytes (§3).
pub const HEADER_LEN: usize = 64;
/// Size of the trailing SHA-256 in bytes (§2).
pub const HASH_LEN: usize = 32;
/// Size of one section-table entry in bytes (§4).
pub const SECTION_ENTRY_LEN: usize = 20;
/// Sections start at offsets that are multiples of this (§2).
pub const SECTION_ALIGN: u64 = 8;
/// Maximum number of Matryoshka dims (`n_matryoshka` ≤ 8, §3).
pub const MAX_MATRYOSHKA: usize = 8;
/// Smallest possible file: header, the `u16` section count, and the hash.
pub const MIN_FILE_LEN: usize = HEADER_LEN + 2 + HASH_LEN;
/// Fixed part of `TOKENIZER_CONFIG` before the prefix bytes (§5.2): 5 × u32 + u16 + u8.
pub const TOKENIZER_CONFIG_FIXED_LEN: usize = 23;

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

/// Section type (§4). Unknown types are skipped by the loader, never rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectionType {
    /// 1, required (§5.1).
    TokenizerVocab,
    /// 2, required (§5.2).
    TokenizerConfig,
    /// 3, required (§5.3).
    EmbeddingWeights,
    /// 4, required when `embedding_quant != fp32` (§5.4).
    EmbeddingScales,
    /// 5, required when `n_layers > 0` (§5.5).
    Layers,
    /// 6, required (§5.6).
    FinalLn,
    /// 7, required (§5.7).
    Projection,
    /// 8, optional (§5.8).
    Metadata,
    /// Any other type number; skipped.
    Unknown(u16),
}

impl SectionType {
    /// Every known type, in type-number order.
    pub const KNOWN: [SectionType; 8] = [
        SectionType::TokenizerVocab,
        SectionType::TokenizerConfig,
        SectionType::EmbeddingWeights,
        SectionType::EmbeddingScales,
        SectionType::Layers,
        SectionType::FinalLn,
        SectionType::Projection,
        SectionType::Metadata,
    ];

    /// Decodes a type number.
    pub fn from_u16(v: u16) -> Self {
        match v {
            1 => Self::TokenizerVocab,
            2 => Self::TokenizerConfig,
            3 => Self::EmbeddingWeights,
            4 => Self::EmbeddingScales,
            5 => Self::Layers,
            6 => Self::FinalLn,
            7 => Self::Projection,
            8 => Self::Metadata,
            other => Self::Unknown(other),
        }
    }

    /// The type number.
    pub fn to_u16(self) -> u16 {
        match self {
            Self::TokenizerVocab => 1,
            Self::TokenizerConfig => 2,
            Self::EmbeddingWeights => 3,
            Self::EmbeddingScales => 4,
            Self::Layers => 5,
            Self::FinalLn => 6,
            Self::Projection => 7,
            Self::Metadata => 8,
            Self::Unknown(v) => v,
        }
    }

    /// Spec name, e.g. `TOKENIZER_VOCAB`; `UNKNOWN` for unknown types.
    pub fn name(self) -> &'static str {
        match self {
            Self::TokenizerVocab => "TOKENIZER_VOCAB",
            Self::TokenizerConfig => "TOKENIZER_CONFIG",
            Self::EmbeddingWeights => "EMBEDDING_WEIGHTS",
            Self::EmbeddingScales => "EMBEDDING_SCALES",
            Self::Layers => "LAYERS",
            Self::FinalLn => "FINAL_LN",
            Self::Projection => "PROJECTION",
            Self::Metadata => "METADATA",
            Self::Unknown(_) => "UNKNOWN",
        }
    }

    /// True for types 1–8.
    pub fn is_known(self) -> bool {
        !matches!(self, Self::Unknown(_))
    }
}

impl fmt::Display for SectionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(v) => write!(f, "unknown section type {v}"),
            known => write!(f, "{} (type {})", known.name(), known.to_u16()),
        }
    }
}

/// One 20-byte section-table entry (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionEntry {
    /// Decoded `section_type`.
    pub section_type: SectionType,
    /// The `reserved` u16 (must be 0).
    pub reserved: u16,
    /// Byte offset from the start of the file (multiple of 8).
    pub offset: u64,
    /// Length in bytes, excluding alignment padding.
    pub length: u64,
}

impl SectionEntry {
    /// `offset + length`, or `None` on overflow.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.length)
    }
}

/// The section table at offset 64 (§4): entries in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SectionTable {
    /// Entries in table order.
    pub entries: Vec<SectionEntry>,
}

impl SectionTable {
    /// Bytes the table occupies for `n` entries: `2 + 20 n`.
    pub fn encoded_len(n: usize) -> usize {
        2 + SECTION_ENTRY_LEN * n
    }

    /// Decodes the table that starts at offset 64 of `file`. Checks only that it fits before the
    /// trailing hash ([`LoadError::SectionTableTruncated`]); allocates only after that check.
    pub fn parse(file: &[u8]) -> Result<SectionTable, LoadError> {
        let hash_start = file.len().saturating_sub(HASH_LEN);
        if hash_start < HEADER_LEN + 2 {
            return Err(LoadError::FileTooShort {
                len: file.len(),
                min: MIN_FILE_LEN,
            });
        }
        let n = le_u16(file, HEADER_LEN) as usize;
        let table_end = HEADER_LEN + Self::encoded_len(n);
        if table_end > hash_start {
            return Err(LoadError::SectionTableTruncated {
                n_sections: n,
                table_end: table_end as u64,
                hash_start: hash_start as u64,
            });
        }
        let mut entries = Vec::with_capacity(n);
        for i in 0..n {
            let o = HEADER_LEN + 2 + SECTION_ENTRY_LEN * i;
            entries.push(SectionEntry {
                section_type: SectionType::from_u16(le_u16(file, o)),
                reserved: le_u16(file, o + 2),
                offset: le_u64(file, o + 4),
                length: le_u64(file, o + 12),
            });
        }
        Ok(SectionTable { entries })
    }

    /// Encodes the table (`u16` count then the entries).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(Self::encoded_len(self.entries.len()));
        v.extend_from_slice(&(self.entries.len() as u16).to_le_bytes());
        for e in &self.entries {
            v.extend_from_slice(&e.section_type.to_u16().to_le_bytes());
            v.extend_from_slice(&e.reserved.to_le_bytes());
            v.extend_from_slice(&e.offset.to_le_bytes());
            v.extend_from_slice(&e.length.to_le_bytes());
        }
        v
    }

    /// File offset just past the table.
    pub fn end_offset(&self) -> u64 {
        (HEADER_LEN + Self::encoded_len(self.entries.len())) as u64
    }

    /// The first entry of type `t`.
    pub fn find(&self, t: SectionType) -> Option<&SectionEntry> {
        self.entries.iter().find(|e| e.section_type == t)
    }
}

/// Why a file was rejected by [`crate::Model::from_bytes`]. One variant per load rule, its
/// message written beside it (`#[error]`, thiserror): what was found and what was expected;
/// [`LoadError::rule`] gives the rule's stable name (the malformed fixture's file stem).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Fewer bytes than header + section count + hash.
    #[error("file too short: {len} bytes, but a .bin v1 file is at least {min} bytes (64-byte header, 2-byte section count, 32-byte SHA-256)")]
    FileTooShort {
        /// The file length in bytes.
        len: usize,
        /// The smallest valid length in bytes.
        min: usize,
    },
    /// First four bytes are not `"LEMB"`.
    #[error("bad magic {}: expected \"LEMB\" (4c454d42); {}", magic_desc(.found), not_a_model(.found))]
    BadMagic {
        /// The value found in the file.
        found: [u8; 4],
    },
    /// `format_version` outside `MIN_FORMAT_VERSION..=MAX_FORMAT_VERSION` (decision 10).
    #[error("unsupported format_version {found}: this engine reads format_version {FORMAT_VERSION} (accepted range {MIN_FORMAT_VERSION}..={MAX_FORMAT_VERSION})", FORMAT_VERSION = FORMAT_VERSION, MIN_FORMAT_VERSION = MIN_FORMAT_VERSION, MAX_FORMAT_VERSION = MAX_FORMAT_VERSION)]
    UnsupportedFormatVersion {
        /// The value found in the file.
        found: u16,
    },
    /// Stored trailing SHA-256 differs from the hash of all preceding bytes.
    #[error("SHA-256 mismatch: the file's trailing hash is {} but its contents hash to {}; the file is corrupt or truncated", to_hex(.stored), to_hex(.computed))]
    HashMismatch {
        /// The trailing 32 bytes of the file.
        stored: [u8; 32],
        /// SHA-256 of every byte before them.
        computed: [u8; 32],
    },
    /// `embedding_quant` not in 0..=3.
    #[error(
        "unknown embedding_quant {found}: expected 0 (fp32), 1 (int8), 2 (int4) or 3 (ternary)"
    )]
    UnknownEmbeddingQuant {
        /// The value found in the file.
        found: u8,
    },
    /// `weight_quant` not in 0..=1 while `n_layers > 0`.
    #[error("unknown weight_quant {found}: expected 0 (fp32) or 1 (ternary) for a model with n_layers > 0")]
    UnknownWeightQuant {
        /// The value found in the file.
        found: u8,
    },
    /// A reserved flag bit (3–7) is set.
    #[error("reserved flag bits set: flags = 0b{flags:08b}, but bits 3-7 must be 0 (only has_fingerprint, do_lower_case and strip_accents are defined)")]
    ReservedFlagsSet {
        /// The header `flags` byte.
        flags: u8,
    },
    /// A dimension that must be non-zero is zero.
    #[error("{field} is 0: it must be at least 1")]
    ZeroDimension {
        /// The header field's name.
        field: &'static str,
    },
    /// `d_model % 4 != 0`.
    #[error("d_model {d_model} is not a multiple of 4: every embedding encoding packs rows in groups of 4")]
    DModelNotMultipleOf4 {
        /// Header `d_model`.
        d_model: u16,
    },
    /// `d_model % n_heads != 0` with `n_layers > 0`.
    #[error("n_heads {n_heads} does not divide d_model {d_model}: d_model % n_heads must be 0 when n_layers > 0")]
    NHeadsNotDividingDModel {
        /// Header `n_heads`.
        n_heads: u8,
        /// Header `d_model`.
        d_model: u16,
    },
    /// `ffn_dim % 4 != 0` with ternary layer weights (`ffn.down` packs `ffn_dim` inputs 4 per byte).
    #[error("ffn_dim {ffn_dim} is not a multiple of 4: ternary ffn.down packs its ffn_dim inputs 4 per byte")]
    FfnDimNotMultipleOf4 {
        /// Header `ffn_dim`.
        ffn_dim: u16,
    },
    /// `n_matryoshka > 8`.
    #[error(
        "n_matryoshka {n_matryoshka} is too large: at most 8 matryoshka_dims fit in the header"
    )]
    NMatryoshkaTooLarge {
        /// Header `n_matryoshka`.
        n_matryoshka: u8,
    },
    /// Used `matryoshka_dims` not strictly ascending (or the first one is 0).
    #[error("matryoshka_dims {dims:?} are not strictly ascending: each used entry must be greater than 0 and than the previous one")]
    MatryoshkaNotAscending {
        /// The used `matryoshka_dims` entries.
        dims: Vec<u16>,
    },
    /// A used Matryoshka dim is larger than `output_dim`.
    #[error("matryoshka dim {dim} exceeds output_dim {output_dim}: every matryoshka dim must be <= output_dim")]
    MatryoshkaExceedsOutputDim {
        /// The offending Matryoshka dim.
        dim: u16,
        /// Header `output_dim`.
        output_dim: u16,
    },
    /// An unused `matryoshka_dims` entry (index ≥ `n_matryoshka`) is not 0.
    #[error("unused matryoshka_dims[{index}] is {value}: entries at index >= n_matryoshka ({n_matryoshka}) must be 0")]
    MatryoshkaUnusedNotZero {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The value found.
        value: u16,
        /// Header `n_matryoshka`.
        n_matryoshka: u8,
    },
    /// `max_seq_len < 2` (no room for `[CLS]` and `[SEP]`).
    #[error(
        "max_seq_len {max_seq_len} is too small: it must be at least 2 to hold [CLS] and [SEP]"
    )]
    MaxSeqLenTooSmall {
        /// Header `max_seq_len`.
        max_seq_len: u16,
    },
    /// The `model_id` bytes before the first NUL are not UTF-8.
    #[error("model_id is not UTF-8: bytes {} (expected UTF-8 text, NUL-padded to 16 bytes)", to_hex(.bytes))]
    ModelIdNotUtf8 {
        /// The raw bytes.
        bytes: [u8; 16],
    },
    /// A non-NUL byte follows the first NUL of `model_id`.
    #[error("model_id is not NUL-padded: bytes {} have non-NUL bytes after the first NUL", to_hex(.bytes))]
    ModelIdNotNulPadded {
        /// The raw bytes.
        bytes: [u8; 16],
    },
    /// The section table runs into (or past) the trailing hash.
    #[error("section table truncated: {n_sections} entries need bytes up to offset {table_end}, but the trailing SHA-256 starts at offset {hash_start}")]
    SectionTableTruncated {
        /// Entries the table declares.
        n_sections: usize,
        /// Offset just past the section table.
        table_end: u64,
        /// Offset of the trailing SHA-256 (file length − 32).
        hash_start: u64,
    },
    /// A section entry's `reserved` field is not 0.
    #[error("{}: reserved field is {reserved}, expected 0", section_at(.index, .section_type))]
    SectionReservedNonzero {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The section's type.
        section_type: SectionType,
        /// The entry's `reserved` field.
        reserved: u16,
    },
    /// A section extends past the end of the file (or its end overflows u64).
    #[error("{} out of bounds: offset {offset} + length {length} runs past the end of the {file_len}-byte file", section_at(.index, .section_type))]
    SectionOutOfBounds {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The section's type.
        section_type: SectionType,
        /// The section's offset from the file start.
        offset: u64,
        /// The section's length in bytes.
        length: u64,
        /// The file length in bytes.
        file_len: u64,
    },
    /// A section starts inside the 64-byte header.
    #[error("{} overlaps the header: it starts at offset {offset}, but sections must start at or after offset {HEADER_LEN}", section_at(.index, .section_type), HEADER_LEN = HEADER_LEN)]
    SectionOverlapsHeader {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The section's type.
        section_type: SectionType,
        /// The section's offset from the file start.
        offset: u64,
    },
    /// A section starts inside the section table.
    #[error("{} overlaps the section table: it starts at offset {offset}, but the table ends at offset {table_end}", section_at(.index, .section_type))]
    SectionOverlapsTable {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The section's type.
        section_type: SectionType,
        /// The section's offset from the file start.
        offset: u64,
        /// Offset just past the section table.
        table_end: u64,
    },
    /// A section runs into the trailing hash.
    #[error("{} overlaps the trailing SHA-256: offset {offset} + length {length} runs past offset {hash_start} where the hash starts", section_at(.index, .section_type))]
    SectionOverlapsHash {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The section's type.
        section_type: SectionType,
        /// The section's offset from the file start.
        offset: u64,
        /// The section's length in bytes.
        length: u64,
        /// Offset of the trailing SHA-256 (file length − 32).
        hash_start: u64,
    },
    /// Two known sections share bytes.
    #[error("sections overlap: {} and {}", span(.first), span(.second))]
    SectionsOverlap {
        /// The earlier entry.
        first: SectionEntry,
        /// The later entry.
        second: SectionEntry,
    },
    /// A section offset is not a multiple of 8.
    #[error("{} misaligned: offset {offset} is not a multiple of {SECTION_ALIGN}", section_at(.index, .section_type), SECTION_ALIGN = SECTION_ALIGN)]
    SectionMisaligned {
        /// Position in the section table (0-based) or in `matryoshka_dims`.
        index: usize,
        /// The section's type.
        section_type: SectionType,
        /// The section's offset from the file start.
        offset: u64,
    },
    /// A known section type appears twice.
    #[error("duplicate section: {section_type} appears at table entries #{first_index} and #{second_index}, but each known section type may appear once")]
    DuplicateSection {
        /// The section's type.
        section_type: SectionType,
        /// Table position of the first occurrence.
        first_index: usize,
        /// Table position of the second occurrence.
        second_index: usize,
    },
    /// A known section the header rules out: `EMBEDDING_SCALES` with fp32 embeddings, or
    /// `LAYERS` with `n_layers == 0`.
    #[error("unexpected section {section_type}: {why}")]
    UnexpectedSection {
        /// The section's type.
        section_type: SectionType,
        /// Why the header requires or rules out this section, or what the expected length is made of.
        why: &'static str,
    },
    /// A required section is absent (`why` says why it is required).
    #[error("missing required section {section_type}: {why}")]
    MissingSection {
        /// The section's type.
        section_type: SectionType,
        /// Why the header requires or rules out this section, or what the expected length is made of.
        why: &'static str,
    },
    /// A fixed-size section's length differs from what the header implies.
    #[error("{section_type} has length {found} bytes, expected {expected} ({why})")]
    SectionLengthMismatch {
        /// The section's type.
        section_type: SectionType,
        /// The value found in the file.
        found: u64,
        /// The length the header implies.
        expected: u64,
        /// Why the header requires or rules out this section, or what the expected length is made of.
        why: String,
    },
    /// The vocab ends before `vocab_size` entries were read.
    #[error("TOKENIZER_VOCAB truncated: the section ends before token {token_id} is complete, but the header declares vocab_size {vocab_size}")]
    VocabTruncated {
        /// The token id (its position in the vocabulary).
        token_id: u64,
        /// Header `vocab_size`.
        vocab_size: u32,
    },
    /// Bytes left in the vocab after `vocab_size` entries.
    #[error("TOKENIZER_VOCAB has {extra} trailing byte(s) after the {vocab_size} tokens the header declares")]
    VocabTrailingBytes {
        /// Bytes left over.
        extra: u64,
        /// Header `vocab_size`.
        vocab_size: u32,
    },
    /// A vocab entry is not valid UTF-8.
    #[error("vocab token {token_id} is not valid UTF-8 (bytes {})", to_hex(.bytes))]
    VocabNotUtf8 {
        /// The token id (its position in the vocabulary).
        token_id: u32,
        /// The raw bytes.
        bytes: Vec<u8>,
    },
    /// A vocab entry has length 0.
    #[error("vocab token {token_id} is empty: every token must be at least 1 byte")]
    VocabEmptyToken {
        /// The token id (its position in the vocabulary).
        token_id: u32,
    },
    /// Two vocab entries are the same string.
    #[error("vocab token {token:?} appears twice (ids {first_id} and {second_id}): tokens must be unique")]
    VocabDuplicateToken {
        /// The duplicated token string.
        token: String,
        /// Id of the first occurrence.
        first_id: u32,
        /// Id of the second occurrence.
        second_id: u32,
    },
    /// `TOKENIZER_CONFIG` is shorter than its fixed fields plus `prefix_len`.
    #[error("TOKENIZER_CONFIG truncated: {length} bytes, but its fields and prefix need {needed}")]
    TokenizerConfigTruncated {
        /// The section's length in bytes.
        length: u64,
        /// Bytes its fixed fields and prefix need.
        needed: u64,
    },
    /// Bytes left in `TOKENIZER_CONFIG` after the prefix.
    #[error("TOKENIZER_CONFIG has {extra} trailing byte(s) after the continuing-subword prefix; expected none")]
    TokenizerConfigTrailingBytes {
        /// Bytes left over.
        extra: u64,
    },
    /// A special-token id is `≥ vocab_size`.
    #[error("{name} {id} is out of range: token ids must be < vocab_size {vocab_size}")]
    SpecialTokenOutOfRange {
        /// The special token's name (e.g. `cls_token_id`).
        name: &'static str,
        /// The id found.
        id: u32,
        /// Header `vocab_size`.
        vocab_size: u32,
    },
    /// The continuing-subword prefix is not UTF-8.
    #[error("continuing-subword prefix is not valid UTF-8 (bytes {})", to_hex(.bytes))]
    PrefixNotUtf8 {
        /// The raw bytes.
        bytes: Vec<u8>,
    },
    /// Ternary code `11` in the embedding table.
    #[error("reserved ternary code 11 in EMBEDDING_WEIGHTS at row {row}, column {col}: valid codes are 00 (0), 01 (+1), 10 (-1)")]
    TernaryReservedCodeEmbedding {
        /// Row (0-based).
        row: u64,
        /// Column (0-based).
        col: u64,
    },
    /// Ternary code `11` in a layer weight matrix.
    #[error("reserved ternary code 11 in layer {layer} {tensor} at row {row}, column {col}: valid codes are 00 (0), 01 (+1), 10 (-1)")]
    TernaryReservedCodeLayers {
        /// Layer index (0-based).
        layer: usize,
        /// Tensor name, e.g. `attn.q`.
        tensor: &'static str,
        /// Row (0-based).
        row: u64,
        /// Column (0-based).
        col: u64,
    },
    /// NaN or ±inf in an fp32 value (`what` names the tensor and element).
    #[error("non-finite float {} in {what}: every fp32 weight, scale, LayerNorm parameter and bias must be finite", float_desc(.value))]
    NonFiniteFloat {
        /// The tensor and element, in words.
        what: String,
        /// The value found.
        value: u32,
    },
    /// A layer weight `scale` is ≤ 0 (BitLinear divides by it).
    #[error("layer {layer} {tensor}.scale is {value}: a ternary weight scale must be > 0")]
    NonPositiveLayerScale {
        /// Layer index (0-based).
        layer: usize,
        /// Tensor name, e.g. `attn.q`.
        tensor: &'static str,
        /// The value found.
        value: f32,
    },
    /// `METADATA` is not UTF-8.
    #[error("METADATA is not valid UTF-8 (invalid byte at section offset {valid_up_to})")]
    MetadataNotUtf8 {
        /// Bytes of valid UTF-8 before the first invalid byte.
        valid_up_to: usize,
    },
}

impl LoadError {
    /// The rule's stable name, equal to the malformed fixture stem (`tests/fixtures/malformed/RULE.bin`)
    /// and to the reference loader's `LoadError.rule`.
    pub fn rule(&self) -> &'static str {
        use LoadError::*;
        match self {
            FileTooShort { .. } => "file_too_short",
            BadMagic { .. } => "bad_magic",
            UnsupportedFormatVersion { .. } => "unsupported_format_version",
            HashMismatch { .. } => "hash_mismatch",
            UnknownEmbeddingQuant { .. } => "unknown_embedding_quant",
            UnknownWeightQuant { .. } => "unknown_weight_quant",
            ReservedFlagsSet { .. } => "reserved_flags_set",
            ZeroDimension { .. } => "zero_dimension",
            DModelNotMultipleOf4 { .. } => "d_model_not_multiple_of_4",
            NHeadsNotDividingDModel { .. } => "n_heads_not_dividing_d_model",
            FfnDimNotMultipleOf4 { .. } => "ffn_dim_not_multiple_of_4",
            NMatryoshkaTooLarge { .. } => "n_matryoshka_too_large",
            MatryoshkaNotAscending { .. } => "matryoshka_not_ascending",
            MatryoshkaExceedsOutputDim { .. } => "matryoshka_exceeds_output_dim",
            MatryoshkaUnusedNotZero { .. } => "matryoshka_unused_not_zero",
            MaxSeqLenTooSmall { .. } => "max_seq_len_too_small",
            ModelIdNotUtf8 { .. } => "model_id_not_utf8",
            ModelIdNotNulPadded { .. } => "model_id_not_nul_padded",
            SectionTableTruncated { .. } => "section_table_truncated",
            SectionReservedNonzero { .. } => "section_reserved_nonzero",
            SectionOutOfBounds { .. } => "section_out_of_bounds",
            SectionOverlapsHeader { .. } => "section_overlaps_header",
            SectionOverlapsTable { .. } => "section_overlaps_table",
            SectionOverlapsHash { .. } => "section_overlaps_hash",
            SectionsOverlap { .. } => "sections_overlap",
            SectionMisaligned { .. } => "section_misaligned",
            DuplicateSection { .. } => "duplicate_section",
            UnexpectedSection { .. } => "unexpected_section",
            MissingSection { section_type, .. } => match section_type {
                SectionType::TokenizerVocab => "missing_section_vocab",
                SectionType::TokenizerConfig => "missing_section_config",
                SectionType::EmbeddingWeights => "missing_section_embedding_weights",
                SectionType::EmbeddingScales => "missing_section_embedding_scales",
                SectionType::Layers => "missing_section_layers",
                SectionType::FinalLn => "missing_section_final_ln",
                SectionType::Projection => "missing_section_projection",
                SectionType::Metadata | SectionType::Unknown(_) => "missing_section",
            },
            SectionLengthMismatch { .. } => "section_length_mismatch",
            VocabTruncated { .. } => "vocab_truncated",
            VocabTrailingBytes { .. } => "vocab_trailing_bytes",
            VocabNotUtf8 { .. } => "vocab_not_utf8",
            VocabEmptyToken { .. } => "vocab_empty_token",
            VocabDuplicateToken { .. } => "vocab_duplicate_token",
            TokenizerConfigTruncated { .. } => "tokenizer_config_truncated",
            TokenizerConfigTrailingBytes { .. } => "tokenizer_config_trailing_bytes",
            SpecialTokenOutOfRange { .. } => "special_token_out_of_range",
            PrefixNotUtf8 { .. } => "prefix_not_utf8",
            TernaryReservedCodeEmbedding { .. } => "ternary_reserved_code_embedding",
            TernaryReservedCodeLayers { .. } => "ternary_reserved_code_layers",
            NonFiniteFloat { .. } => "non_finite_float",
            NonPositiveLayerScale { .. } => "nonpositive_layer_scale",
            MetadataNotUtf8 { .. } => "metadata_not_utf8",
        }
    }
}

fn section_at(index: &usize, t: &SectionType) -> String {
    format!("section #{index} ({})", t)
}

/// `"LEMB"`-like ASCII shown as text with its hex, anything else as hex.
fn magic_desc(found: &[u8; 4]) -> String {
    match std::str::from_utf8(found) {
        Ok(s) if s.chars().all(|c| c.is_ascii_graphic()) => format!("\"{s}\" ({})", to_hex(found)),
        _ => to_hex(found),
    }
}

/// What a file with the wrong magic is, when it is one of ours: a search index (`LEIX`, what
/// `lightembed index` writes) is the usual mix-up.
fn not_a_model(found: &[u8; 4]) -> &'static str {
    if found == b"LEIX" {
        "this is a lightembed search index (index.bin), not a model"
    } else {
        "this is not a lightembed .bin file"
    }
}

/// `TYPE at bytes START..END` (END saturating).
fn span(e: &SectionEntry) -> String {
    format!(
        "{} at bytes {}..{}",
        e.section_type,
        e.offset,
        e.offset.saturating_add(e.length)
    )
}

fn float_desc(bits: &u32) -> String {
    let bits = *bits;
    let v = f32::from_bits(bits);
    if v.is_nan() {
        format!("NaN (bits 0x{bits:08x})")
    } else {
        format!("{v}")
    }
}

#[inline]
pub(crate) fn le_u16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

#[inline]
pub(crate) fn le_u32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

#[inline]
pub(crate) fn le_u64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

/// Lower-case hex of `bytes` (the file SHA-256, the bytes named in load errors): the one hex
/// helper of the engine, the index and the CLI.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
