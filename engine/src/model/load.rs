//! [`Model::from_bytes`]: the load phases in the order of `reference/forward.py::load` — envelope,
//! header, section table entry by entry, section table as a whole (`validate.rs`), then each
//! section's contents (`parse.rs`) — and the [`Model`] assembled from the parts.

use crate::format::{Header, LoadError, SectionTable, SectionType};
use crate::tokenizer::Tokenizer;

use super::parse::{
    parse_embeddings, parse_final_ln, parse_layers, parse_metadata, parse_projection,
    parse_tokenizer_config, parse_vocab,
};
use super::validate::{
    check_envelope, check_section_set, check_table_entries, type_slot, validate_header,
};
use super::Model;

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
        let stored = check_envelope(bytes, digest)?;

        // --- header
        let header = Header::parse(bytes)?;
        validate_header(&header)?;

        // --- section table, entry by entry
        let table = SectionTable::parse(bytes)?;
        check_table_entries(&table, file_len)?;

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
        let embeddings = parse_embeddings(
            raw(SectionType::EmbeddingWeights),
            raw(SectionType::EmbeddingScales),
            h,
        )?;
        let layers = if h.n_layers > 0 {
            parse_layers(raw(SectionType::Layers), h)?
        } else {
            Vec::new()
        };
        let (final_ln_weight, final_ln_bias) = parse_final_ln(raw(SectionType::FinalLn), h)?;
        let (projection_weight, projection_bias) =
            parse_projection(raw(SectionType::Projection), h)?;

        let metadata = match by_type[type_slot(SectionType::Metadata)] {
            Some(_) => Some(parse_metadata(raw(SectionType::Metadata))?),
            None => None,
        };

        // --- assemble
        let valid_dims = header.valid_dims();
        let tokenizer = Tokenizer::new(vocab, tok_cfg);
        let static_rows = layers
            .is_empty()
            .then(|| crate::static_rows::StaticRows::new(header.vocab_size as usize));
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
            static_rows,
            header,
        })
    }
}
