//! The section table at offset 64 (§4): [`SectionType`], [`SectionEntry`], [`SectionTable`].
//! Decoding only; the placement rules (bounds, overlaps, alignment, the section set) are checked
//! by [`crate::Model::from_bytes`].

use std::fmt;

use super::{le_u16, le_u64, LoadError, HASH_LEN, HEADER_LEN, MIN_FILE_LEN, SECTION_ENTRY_LEN};

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
