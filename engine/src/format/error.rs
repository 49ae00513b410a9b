//! [`LoadError`]: why a file was rejected, one variant per load rule. Each variant is written
//! once, with its doc, its message (`#[error]`, thiserror: what was found and what was expected)
//! and its rule name (`=> "rule"`, the malformed fixture's file stem) together.

use super::{
    to_hex, SectionEntry, SectionType, FORMAT_VERSION, HEADER_LEN, MAX_FORMAT_VERSION,
    MIN_FORMAT_VERSION, SECTION_ALIGN,
};

/// Defines an error enum whose variants each end in `=> RULE`: the rule's stable name, a string
/// literal, or an expression over the variant's fields when the name depends on them. Expands to
/// the enum as written (attributes, docs and `#[error]` messages pass through unchanged) and to
/// its `rule()` method, one arm per variant, in the same order.
macro_rules! with_rule_names {
    (
        $(#[$enum_attr:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$variant_attr:meta])*
                $variant:ident {
                    $($(#[$field_attr:meta])* $field:ident: $field_ty:ty),* $(,)?
                } => $rule:expr
            ),* $(,)?
        }
    ) => {
        $(#[$enum_attr])*
        $vis enum $name {
            $(
                $(#[$variant_attr])*
                $variant {
                    $($(#[$field_attr])* $field: $field_ty),*
                },
            )*
        }

        impl $name {
            /// The rule's stable name, equal to the malformed fixture stem
            /// (`tests/fixtures/malformed/RULE.bin`) and to the reference loader's `LoadError.rule`.
            // Every arm binds all its fields; most rules name none of them.
            #[allow(unused_variables)]
            pub fn rule(&self) -> &'static str {
                match self {
                    $(Self::$variant { $($field),* } => $rule,)*
                }
            }
        }
    };
}

with_rule_names! {
    /// Why a file was rejected by [`crate::Model::from_bytes`]. One variant per load rule, its
    /// message written beside it (`#[error]`, thiserror): what was found and what was expected;
    /// [`LoadError::rule`] gives the rule's stable name (the malformed fixture's file stem),
    /// written beside the variant too.
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
        } => "file_too_short",
        /// First four bytes are not `"LEMB"`.
        #[error("bad magic {}: expected \"LEMB\" (4c454d42); {}", magic_desc(.found), not_a_model(.found))]
        BadMagic {
            /// The value found in the file.
            found: [u8; 4],
        } => "bad_magic",
        /// `format_version` outside `MIN_FORMAT_VERSION..=MAX_FORMAT_VERSION` (decision 10).
        #[error("unsupported format_version {found}: this engine reads format_version {FORMAT_VERSION} (accepted range {MIN_FORMAT_VERSION}..={MAX_FORMAT_VERSION})", FORMAT_VERSION = FORMAT_VERSION, MIN_FORMAT_VERSION = MIN_FORMAT_VERSION, MAX_FORMAT_VERSION = MAX_FORMAT_VERSION)]
        UnsupportedFormatVersion {
            /// The value found in the file.
            found: u16,
        } => "unsupported_format_version",
        /// Stored trailing SHA-256 differs from the hash of all preceding bytes.
        #[error("SHA-256 mismatch: the file's trailing hash is {} but its contents hash to {}; the file is corrupt or truncated", to_hex(.stored), to_hex(.computed))]
        HashMismatch {
            /// The trailing 32 bytes of the file.
            stored: [u8; 32],
            /// SHA-256 of every byte before them.
            computed: [u8; 32],
        } => "hash_mismatch",
        /// `embedding_quant` not in 0..=3.
        #[error(
            "unknown embedding_quant {found}: expected 0 (fp32), 1 (int8), 2 (int4) or 3 (ternary)"
        )]
        UnknownEmbeddingQuant {
            /// The value found in the file.
            found: u8,
        } => "unknown_embedding_quant",
        /// `weight_quant` not in 0..=1 while `n_layers > 0`.
        #[error("unknown weight_quant {found}: expected 0 (fp32) or 1 (ternary) for a model with n_layers > 0")]
        UnknownWeightQuant {
            /// The value found in the file.
            found: u8,
        } => "unknown_weight_quant",
        /// A reserved flag bit (3–7) is set.
        #[error("reserved flag bits set: flags = 0b{flags:08b}, but bits 3-7 must be 0 (only has_fingerprint, do_lower_case and strip_accents are defined)")]
        ReservedFlagsSet {
            /// The header `flags` byte.
            flags: u8,
        } => "reserved_flags_set",
        /// A dimension that must be non-zero is zero.
        #[error("{field} is 0: it must be at least 1")]
        ZeroDimension {
            /// The header field's name.
            field: &'static str,
        } => "zero_dimension",
        /// `d_model % 4 != 0`.
        #[error("d_model {d_model} is not a multiple of 4: every embedding encoding packs rows in groups of 4")]
        DModelNotMultipleOf4 {
            /// Header `d_model`.
            d_model: u16,
        } => "d_model_not_multiple_of_4",
        /// `d_model % n_heads != 0` with `n_layers > 0`.
        #[error("n_heads {n_heads} does not divide d_model {d_model}: d_model % n_heads must be 0 when n_layers > 0")]
        NHeadsNotDividingDModel {
            /// Header `n_heads`.
            n_heads: u8,
            /// Header `d_model`.
            d_model: u16,
        } => "n_heads_not_dividing_d_model",
        /// `ffn_dim % 4 != 0` with ternary layer weights (`ffn.down` packs `ffn_dim` inputs 4 per byte).
        #[error("ffn_dim {ffn_dim} is not a multiple of 4: ternary ffn.down packs its ffn_dim inputs 4 per byte")]
        FfnDimNotMultipleOf4 {
            /// Header `ffn_dim`.
            ffn_dim: u16,
        } => "ffn_dim_not_multiple_of_4",
        /// `n_matryoshka > 8`.
        #[error(
            "n_matryoshka {n_matryoshka} is too large: at most 8 matryoshka_dims fit in the header"
        )]
        NMatryoshkaTooLarge {
            /// Header `n_matryoshka`.
            n_matryoshka: u8,
        } => "n_matryoshka_too_large",
        /// Used `matryoshka_dims` not strictly ascending (or the first one is 0).
        #[error("matryoshka_dims {dims:?} are not strictly ascending: each used entry must be greater than 0 and than the previous one")]
        MatryoshkaNotAscending {
            /// The used `matryoshka_dims` entries.
            dims: Vec<u16>,
        } => "matryoshka_not_ascending",
        /// A used Matryoshka dim is larger than `output_dim`.
        #[error("matryoshka dim {dim} exceeds output_dim {output_dim}: every matryoshka dim must be <= output_dim")]
        MatryoshkaExceedsOutputDim {
            /// The offending Matryoshka dim.
            dim: u16,
            /// Header `output_dim`.
            output_dim: u16,
        } => "matryoshka_exceeds_output_dim",
        /// An unused `matryoshka_dims` entry (index ≥ `n_matryoshka`) is not 0.
        #[error("unused matryoshka_dims[{index}] is {value}: entries at index >= n_matryoshka ({n_matryoshka}) must be 0")]
        MatryoshkaUnusedNotZero {
            /// Position in the section table (0-based) or in `matryoshka_dims`.
            index: usize,
            /// The value found.
            value: u16,
            /// Header `n_matryoshka`.
            n_matryoshka: u8,
        } => "matryoshka_unused_not_zero",
        /// `max_seq_len < 2` (no room for `[CLS]` and `[SEP]`).
        #[error(
            "max_seq_len {max_seq_len} is too small: it must be at least 2 to hold [CLS] and [SEP]"
        )]
        MaxSeqLenTooSmall {
            /// Header `max_seq_len`.
            max_seq_len: u16,
        } => "max_seq_len_too_small",
        /// The `model_id` bytes before the first NUL are not UTF-8.
        #[error("model_id is not UTF-8: bytes {} (expected UTF-8 text, NUL-padded to 16 bytes)", to_hex(.bytes))]
        ModelIdNotUtf8 {
            /// The raw bytes.
            bytes: [u8; 16],
        } => "model_id_not_utf8",
        /// A non-NUL byte follows the first NUL of `model_id`.
        #[error("model_id is not NUL-padded: bytes {} have non-NUL bytes after the first NUL", to_hex(.bytes))]
        ModelIdNotNulPadded {
            /// The raw bytes.
            bytes: [u8; 16],
        } => "model_id_not_nul_padded",
        /// The section table runs into (or past) the trailing hash.
        #[error("section table truncated: {n_sections} entries need bytes up to offset {table_end}, but the trailing SHA-256 starts at offset {hash_start}")]
        SectionTableTruncated {
            /// Entries the table declares.
            n_sections: usize,
            /// Offset just past the section table.
            table_end: u64,
            /// Offset of the trailing SHA-256 (file length − 32).
            hash_start: u64,
        } => "section_table_truncated",
        /// A section entry's `reserved` field is not 0.
        #[error("{}: reserved field is {reserved}, expected 0", section_at(.index, .section_type))]
        SectionReservedNonzero {
            /// Position in the section table (0-based) or in `matryoshka_dims`.
            index: usize,
            /// The section's type.
            section_type: SectionType,
            /// The entry's `reserved` field.
            reserved: u16,
        } => "section_reserved_nonzero",
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
        } => "section_out_of_bounds",
        /// A section starts inside the 64-byte header.
        #[error("{} overlaps the header: it starts at offset {offset}, but sections must start at or after offset {HEADER_LEN}", section_at(.index, .section_type), HEADER_LEN = HEADER_LEN)]
        SectionOverlapsHeader {
            /// Position in the section table (0-based) or in `matryoshka_dims`.
            index: usize,
            /// The section's type.
            section_type: SectionType,
            /// The section's offset from the file start.
            offset: u64,
        } => "section_overlaps_header",
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
        } => "section_overlaps_table",
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
        } => "section_overlaps_hash",
        /// Two known sections share bytes.
        #[error("sections overlap: {} and {}", span(.first), span(.second))]
        SectionsOverlap {
            /// The earlier entry.
            first: SectionEntry,
            /// The later entry.
            second: SectionEntry,
        } => "sections_overlap",
        /// A section offset is not a multiple of 8.
        #[error("{} misaligned: offset {offset} is not a multiple of {SECTION_ALIGN}", section_at(.index, .section_type), SECTION_ALIGN = SECTION_ALIGN)]
        SectionMisaligned {
            /// Position in the section table (0-based) or in `matryoshka_dims`.
            index: usize,
            /// The section's type.
            section_type: SectionType,
            /// The section's offset from the file start.
            offset: u64,
        } => "section_misaligned",
        /// A known section type appears twice.
        #[error("duplicate section: {section_type} appears at table entries #{first_index} and #{second_index}, but each known section type may appear once")]
        DuplicateSection {
            /// The section's type.
            section_type: SectionType,
            /// Table position of the first occurrence.
            first_index: usize,
            /// Table position of the second occurrence.
            second_index: usize,
        } => "duplicate_section",
        /// A known section the header rules out: `EMBEDDING_SCALES` with fp32 embeddings, or
        /// `LAYERS` with `n_layers == 0`.
        #[error("unexpected section {section_type}: {why}")]
        UnexpectedSection {
            /// The section's type.
            section_type: SectionType,
            /// Why the header requires or rules out this section, or what the expected length is made of.
            why: &'static str,
        } => "unexpected_section",
        /// A required section is absent (`why` says why it is required).
        #[error("missing required section {section_type}: {why}")]
        MissingSection {
            /// The section's type.
            section_type: SectionType,
            /// Why the header requires or rules out this section, or what the expected length is made of.
            why: &'static str,
        } => match section_type {
            SectionType::TokenizerVocab => "missing_section_vocab",
            SectionType::TokenizerConfig => "missing_section_config",
            SectionType::EmbeddingWeights => "missing_section_embedding_weights",
            SectionType::EmbeddingScales => "missing_section_embedding_scales",
            SectionType::Layers => "missing_section_layers",
            SectionType::FinalLn => "missing_section_final_ln",
            SectionType::Projection => "missing_section_projection",
            SectionType::Metadata | SectionType::Unknown(_) => "missing_section",
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
        } => "section_length_mismatch",
        /// The vocab ends before `vocab_size` entries were read.
        #[error("TOKENIZER_VOCAB truncated: the section ends before token {token_id} is complete, but the header declares vocab_size {vocab_size}")]
        VocabTruncated {
            /// The token id (its position in the vocabulary).
            token_id: u64,
            /// Header `vocab_size`.
            vocab_size: u32,
        } => "vocab_truncated",
        /// Bytes left in the vocab after `vocab_size` entries.
        #[error("TOKENIZER_VOCAB has {extra} trailing byte(s) after the {vocab_size} tokens the header declares")]
        VocabTrailingBytes {
            /// Bytes left over.
            extra: u64,
            /// Header `vocab_size`.
            vocab_size: u32,
        } => "vocab_trailing_bytes",
        /// A vocab entry is not valid UTF-8.
        #[error("vocab token {token_id} is not valid UTF-8 (bytes {})", to_hex(.bytes))]
        VocabNotUtf8 {
            /// The token id (its position in the vocabulary).
            token_id: u32,
            /// The raw bytes.
            bytes: Vec<u8>,
        } => "vocab_not_utf8",
        /// A vocab entry has length 0.
        #[error("vocab token {token_id} is empty: every token must be at least 1 byte")]
        VocabEmptyToken {
            /// The token id (its position in the vocabulary).
            token_id: u32,
        } => "vocab_empty_token",
        /// Two vocab entries are the same string.
        #[error("vocab token {token:?} appears twice (ids {first_id} and {second_id}): tokens must be unique")]
        VocabDuplicateToken {
            /// The duplicated token string.
            token: String,
            /// Id of the first occurrence.
            first_id: u32,
            /// Id of the second occurrence.
            second_id: u32,
        } => "vocab_duplicate_token",
        /// `TOKENIZER_CONFIG` is shorter than its fixed fields plus `prefix_len`.
        #[error("TOKENIZER_CONFIG truncated: {length} bytes, but its fields and prefix need {needed}")]
        TokenizerConfigTruncated {
            /// The section's length in bytes.
            length: u64,
            /// Bytes its fixed fields and prefix need.
            needed: u64,
        } => "tokenizer_config_truncated",
        /// Bytes left in `TOKENIZER_CONFIG` after the prefix.
        #[error("TOKENIZER_CONFIG has {extra} trailing byte(s) after the continuing-subword prefix; expected none")]
        TokenizerConfigTrailingBytes {
            /// Bytes left over.
            extra: u64,
        } => "tokenizer_config_trailing_bytes",
        /// A special-token id is `≥ vocab_size`.
        #[error("{name} {id} is out of range: token ids must be < vocab_size {vocab_size}")]
        SpecialTokenOutOfRange {
            /// The special token's name (e.g. `cls_token_id`).
            name: &'static str,
            /// The id found.
            id: u32,
            /// Header `vocab_size`.
            vocab_size: u32,
        } => "special_token_out_of_range",
        /// The continuing-subword prefix is not UTF-8.
        #[error("continuing-subword prefix is not valid UTF-8 (bytes {})", to_hex(.bytes))]
        PrefixNotUtf8 {
            /// The raw bytes.
            bytes: Vec<u8>,
        } => "prefix_not_utf8",
        /// Ternary code `11` in the embedding table.
        #[error("reserved ternary code 11 in EMBEDDING_WEIGHTS at row {row}, column {col}: valid codes are 00 (0), 01 (+1), 10 (-1)")]
        TernaryReservedCodeEmbedding {
            /// Row (0-based).
            row: u64,
            /// Column (0-based).
            col: u64,
        } => "ternary_reserved_code_embedding",
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
        } => "ternary_reserved_code_layers",
        /// NaN or ±inf in an fp32 value (`what` names the tensor and element).
        #[error("non-finite float {} in {what}: every fp32 weight, scale, LayerNorm parameter and bias must be finite", float_desc(.value))]
        NonFiniteFloat {
            /// The tensor and element, in words.
            what: String,
            /// The value found.
            value: u32,
        } => "non_finite_float",
        /// A layer weight `scale` is ≤ 0 (BitLinear divides by it).
        #[error("layer {layer} {tensor}.scale is {value}: a ternary weight scale must be > 0")]
        NonPositiveLayerScale {
            /// Layer index (0-based).
            layer: usize,
            /// Tensor name, e.g. `attn.q`.
            tensor: &'static str,
            /// The value found.
            value: f32,
        } => "nonpositive_layer_scale",
        /// `METADATA` is not UTF-8.
        #[error("METADATA is not valid UTF-8 (invalid byte at section offset {valid_up_to})")]
        MetadataNotUtf8 {
            /// Bytes of valid UTF-8 before the first invalid byte.
            valid_up_to: usize,
        } => "metadata_not_utf8",
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
