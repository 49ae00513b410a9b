//! The structural load rules, in the reference's order: the envelope (§2), the header (§3,
//! decisions 5 and 10), the section table entry by entry and as a whole (§4, decision 6).
//! Section contents are checked as they are parsed (`parse.rs`).

use sha2::{Digest, Sha256};

use crate::format::*;

/// The envelope (§2): length ≥ [`MIN_FILE_LEN`], magic `LEMB`, `format_version` (decision 10),
/// then the trailing SHA-256 against `digest` if given, else against the hash of every byte
/// before it. Returns the stored (verified) SHA-256.
pub(super) fn check_envelope(
    bytes: &[u8],
    digest: Option<[u8; 32]>,
) -> Result<[u8; 32], LoadError> {
    let file_len = bytes.len();
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
    let computed: [u8; 32] = digest.unwrap_or_else(|| Sha256::digest(&bytes[..hash_start]).into());
    let mut stored = [0u8; 32];
    stored.copy_from_slice(&bytes[hash_start..]);
    if computed != stored {
        return Err(LoadError::HashMismatch { stored, computed });
    }
    Ok(stored)
}

/// Each section-table entry on its own (§4), in table order: reserved 0, within the file, clear
/// of header, table and hash, 8-aligned. `file_len` has passed [`check_envelope`].
pub(super) fn check_table_entries(table: &SectionTable, file_len: usize) -> Result<(), LoadError> {
    let hash_start = file_len - HASH_LEN;
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
    Ok(())
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

/// Index of a section type in the per-type arrays: its type number (1..=8), 0 for unknown types.
pub(super) fn type_slot(t: SectionType) -> usize {
    match t {
        SectionType::Unknown(_) => 0,
        k => k.to_u16() as usize,
    }
}

/// Every header rule of §3 and decision 5, in the reference's order.
pub(super) fn validate_header(h: &Header) -> Result<(), LoadError> {
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
pub(super) fn check_section_set(
    h: &Header,
    table: &SectionTable,
) -> Result<[Option<usize>; 9], LoadError> {
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
