//! `.bin` v1 wire-format types: the 64-byte [`Header`] (§3), the [`SectionTable`] (§4), the
//! quantisation enums, and [`LoadError`] — one variant per load rule, each with a message that says
//! what was found and what was expected.
//!
//! Parsing here is purely structural (byte layout, enum decoding). The semantic validation of
//! every rule lives in [`crate::Model::from_bytes`].
//!
//! One file per part: `header.rs` (the header, the quantisation enums, flags, model version),
//! `sections.rs` (the section table), `error.rs` ([`LoadError`], each variant with its message
//! and rule name). This file holds the layout constants and the byte helpers they share.

mod error;
mod header;
mod sections;

pub use error::LoadError;
pub use header::{dims_list, EmbeddingQuant, Flags, Header, ModelVersion, WeightQuant};
pub use sections::{SectionEntry, SectionTable, SectionType};

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
