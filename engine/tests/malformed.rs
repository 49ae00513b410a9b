//! Every `tests/fixtures/malformed/RULE.bin` (from `reference/make_fixtures.py`, one broken rule
//! each) is rejected with `LoadError::rule() == RULE` and exactly the message in [`EXPECTED`].
//! A malformed file without a table entry fails the suite, and so does a table entry without a
//! file. Compiled in by `engine/build.rs`, so this also runs as wasm32 under Node.

mod common;

use common::{MALFORMED_CASES, MALFORMED_FIXTURES};
use lightembed::Model;
use serde::Deserialize;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

/// File name → the engine's exact `LoadError` message.
const EXPECTED: &[(&str, &str)] = &[
    ("bad_magic.bin", "bad magic \"LEMX\" (4c454d58): expected \"LEMB\" (4c454d42); this is not a lightembed .bin file"),
    ("d_model_not_multiple_of_4.bin", "d_model 6 is not a multiple of 4: every embedding encoding packs rows in groups of 4"),
    ("duplicate_section.bin", "duplicate section: FINAL_LN (type 6) appears at table entries #5 and #9, but each known section type may appear once"),
    ("ffn_dim_not_multiple_of_4.bin", "ffn_dim 6 is not a multiple of 4: ternary ffn.down packs its ffn_dim inputs 4 per byte"),
    ("file_too_short.bin", "file too short: 97 bytes, but a .bin v1 file is at least 98 bytes (64-byte header, 2-byte section count, 32-byte SHA-256)"),
    ("hash_mismatch.bin", "SHA-256 mismatch: the file's trailing hash is 4c6906cdc79e39ee9957cb2b129a70f85f1b4824b6ad8f3afdc6ec4ec0b17265 but its contents hash to d53853973e6b5ddc606eaee0bb41af893324181cf1310c0a582217f1e84f5336; the file is corrupt or truncated"),
    ("matryoshka_exceeds_output_dim.bin", "matryoshka dim 12 exceeds output_dim 8: every matryoshka dim must be <= output_dim"),
    ("matryoshka_not_ascending.bin", "matryoshka_dims [6, 4] are not strictly ascending: each used entry must be greater than 0 and than the previous one"),
    ("matryoshka_unused_not_zero.bin", "unused matryoshka_dims[1] is 6: entries at index >= n_matryoshka (1) must be 0"),
    ("max_seq_len_too_small.bin", "max_seq_len 1 is too small: it must be at least 2 to hold [CLS] and [SEP]"),
    ("metadata_not_utf8.bin", "METADATA is not valid UTF-8 (invalid byte at section offset 13)"),
    ("missing_section_config.bin", "missing required section TOKENIZER_CONFIG (type 2): every model carries its tokenizer configuration"),
    ("missing_section_embedding_scales.bin", "missing required section EMBEDDING_SCALES (type 4): embedding_quant is not fp32, so per-row scales are required"),
    ("missing_section_embedding_weights.bin", "missing required section EMBEDDING_WEIGHTS (type 3): every model carries its embedding table"),
    ("missing_section_final_ln.bin", "missing required section FINAL_LN (type 6): every model carries a final layer norm, static ones too"),
    ("missing_section_layers.bin", "missing required section LAYERS (type 5): n_layers > 0"),
    ("missing_section_projection.bin", "missing required section PROJECTION (type 7): every model carries its output projection"),
    ("missing_section_vocab.bin", "missing required section TOKENIZER_VOCAB (type 1): every model carries its vocabulary"),
    ("model_id_not_nul_padded.bin", "model_id is not NUL-padded: bytes 61626300007800000000000000000000 have non-NUL bytes after the first NUL"),
    ("model_id_not_utf8.bin", "model_id is not UTF-8: bytes 626164fffe0000000000000000000000 (expected UTF-8 text, NUL-padded to 16 bytes)"),
    ("n_heads_not_dividing_d_model.bin", "n_heads 3 does not divide d_model 8: d_model % n_heads must be 0 when n_layers > 0"),
    ("n_matryoshka_too_large.bin", "n_matryoshka 9 is too large: at most 8 matryoshka_dims fit in the header"),
    ("non_finite_float.bin", "non-finite float NaN (bits 0x7fc00000) in PROJECTION weight row 0 column 5: every fp32 weight, scale, LayerNorm parameter and bias must be finite"),
    ("nonpositive_layer_scale.bin", "layer 0 attn.q.scale is 0: a ternary weight scale must be > 0"),
    ("prefix_not_utf8.bin", "continuing-subword prefix is not valid UTF-8 (bytes 23ff)"),
    ("reserved_flags_set.bin", "reserved flag bits set: flags = 0b00001110, but bits 3-7 must be 0 (only has_fingerprint, do_lower_case and strip_accents are defined)"),
    ("section_length_mismatch.bin", "FINAL_LN (type 6) has length 72 bytes, expected 64 (weight and bias of d_model 8 fp32)"),
    ("section_misaligned.bin", "section #5 (FINAL_LN (type 6)) misaligned: offset 884 is not a multiple of 8"),
    ("section_out_of_bounds.bin", "section #5 (FINAL_LN (type 6)) out of bounds: offset 1360 + length 64 runs past the end of the 1296-byte file"),
    ("section_overlaps_hash.bin", "section #8 (FINAL_LN (type 6)) overlaps the trailing SHA-256: offset 1232 + length 64 runs past offset 1264 where the hash starts"),
    ("section_overlaps_header.bin", "section #5 (FINAL_LN (type 6)) overlaps the header: it starts at offset 0, but sections must start at or after offset 64"),
    ("section_overlaps_table.bin", "section #5 (FINAL_LN (type 6)) overlaps the section table: it starts at offset 64, but the table ends at offset 246"),
    ("section_reserved_nonzero.bin", "section #5 (FINAL_LN (type 6)): reserved field is 1, expected 0"),
    ("section_table_truncated.bin", "section table truncated: 65535 entries need bytes up to offset 1310766, but the trailing SHA-256 starts at offset 1264"),
    ("sections_overlap.bin", "sections overlap: FINAL_LN (type 6) at bytes 944..1008 and PROJECTION (type 7) at bytes 944..1232"),
    ("special_token_out_of_range.bin", "mask_token_id 24 is out of range: token ids must be < vocab_size 24"),
    ("ternary_reserved_code_embedding.bin", "reserved ternary code 11 in EMBEDDING_WEIGHTS at row 2, column 5: valid codes are 00 (0), 01 (+1), 10 (-1)"),
    ("ternary_reserved_code_layers.bin", "reserved ternary code 11 in layer 0 attn.q at row 0, column 3: valid codes are 00 (0), 01 (+1), 10 (-1)"),
    ("tokenizer_config_trailing_bytes.bin", "TOKENIZER_CONFIG has 1 trailing byte(s) after the continuing-subword prefix; expected none"),
    ("tokenizer_config_truncated.bin", "TOKENIZER_CONFIG truncated: 20 bytes, but its fields and prefix need 23"),
    ("unexpected_section.bin", "unexpected section EMBEDDING_SCALES (type 4): embedding_quant is fp32, which has no per-row scales"),
    ("unknown_embedding_quant.bin", "unknown embedding_quant 4: expected 0 (fp32), 1 (int8), 2 (int4) or 3 (ternary)"),
    ("unknown_weight_quant.bin", "unknown weight_quant 2: expected 0 (fp32) or 1 (ternary) for a model with n_layers > 0"),
    ("unsupported_format_version.bin", "unsupported format_version 2: this engine reads format_version 1 (accepted range 1..=1)"),
    ("vocab_duplicate_token.bin", "vocab token \"fox\" appears twice (ids 8 and 9): tokens must be unique"),
    ("vocab_empty_token.bin", "vocab token 9 is empty: every token must be at least 1 byte"),
    ("vocab_not_utf8.bin", "vocab token 9 is not valid UTF-8 (bytes 64c32867)"),
    ("vocab_trailing_bytes.bin", "TOKENIZER_VOCAB has 4 trailing byte(s) after the 24 tokens the header declares"),
    ("vocab_truncated.bin", "TOKENIZER_VOCAB truncated: the section ends before token 23 is complete, but the header declares vocab_size 24"),
    ("zero_dimension.bin", "d_model is 0: it must be at least 1"),
];

fn expected(file: &str) -> Option<&'static str> {
    EXPECTED.iter().find(|(f, _)| *f == file).map(|(_, m)| *m)
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn every_malformed_file_is_rejected_with_its_rule_and_message() {
    assert!(
        !MALFORMED_FIXTURES.is_empty(),
        "no malformed fixtures compiled in: run reference/make_fixtures.py"
    );
    let mut failures = Vec::new();
    for &(file, bytes) in MALFORMED_FIXTURES {
        let rule = file.strip_suffix(".bin").unwrap();
        match Model::from_bytes(bytes) {
            Ok(_) => failures.push(format!("{file}: loaded, expected rule {rule}")),
            Err(e) => {
                if e.rule() != rule {
                    failures.push(format!("{file}: rule {} ({e}), expected {rule}", e.rule()));
                }
                match expected(file) {
                    Some(m) if m == e.to_string() => {}
                    Some(m) => {
                        failures.push(format!("{file}: message\n    {e}\n  expected\n    {m}"))
                    }
                    None => failures.push(format!(
                        "{file}: no entry in EXPECTED; message is\n    ({file:?}, {:?}),",
                        e.to_string()
                    )),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} malformed-file failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn every_table_entry_has_a_file() {
    let missing: Vec<&str> = EXPECTED
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !MALFORMED_FIXTURES.iter().any(|(g, _)| g == f))
        .collect();
    assert!(
        missing.is_empty(),
        "EXPECTED names files that do not exist: {missing:?}"
    );
}

#[derive(Deserialize)]
struct Case {
    file: String,
    rule: String,
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn cases_json_agrees_with_the_files() {
    let Some(json) = MALFORMED_CASES else {
        panic!("tests/fixtures/malformed/cases.json is missing");
    };
    let cases: Vec<Case> = serde_json::from_str(json).expect("cases.json");
    assert_eq!(
        cases.len(),
        MALFORMED_FIXTURES.len(),
        "cases.json and malformed/*.bin disagree"
    );
    for c in &cases {
        let (_, bytes) = MALFORMED_FIXTURES
            .iter()
            .find(|(f, _)| *f == c.file)
            .unwrap_or_else(|| panic!("cases.json names {} which does not exist", c.file));
        assert_eq!(
            Model::from_bytes(bytes).err().map(|e| e.rule()),
            Some(c.rule.as_str()),
            "{}",
            c.file
        );
    }
}

// --- Hand-crafted edge cases beyond the one-file-per-rule fixtures -----------------------------

use common::{builder, Spec};
use lightembed::writer::{self, EmbeddingData, MatrixData};
use lightembed::{EmbeddingQuant, LoadError, SectionType};

fn table_entry_at(bytes: &[u8], t: SectionType) -> usize {
    let n = u16::from_le_bytes([bytes[64], bytes[65]]) as usize;
    (0..n)
        .map(|i| 66 + 20 * i)
        .find(|&o| u16::from_le_bytes([bytes[o], bytes[o + 1]]) == t.to_u16())
        .unwrap()
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn section_end_overflowing_u64_is_out_of_bounds() {
    let mut bytes = builder(&Spec::static_model(EmbeddingQuant::Fp32))
        .build()
        .unwrap();
    let e = table_entry_at(&bytes, SectionType::Metadata);
    bytes[e + 4..e + 12].copy_from_slice(&(u64::MAX - 7).to_le_bytes());
    bytes[e + 12..e + 20].copy_from_slice(&16u64.to_le_bytes());
    writer::rehash(&mut bytes);
    let err = Model::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.rule(), "section_out_of_bounds", "{err}");
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn huge_header_sizes_are_rejected_before_allocating() {
    let base = builder(&Spec::transformer(EmbeddingQuant::Fp32, true))
        .build()
        .unwrap();
    // vocab_size u32::MAX, d_model 65532, ffn_dim 65532, n_layers 255, output_dim 65535.
    for (off, val) in [
        (8usize, vec![0xFF; 4]),
        (12, 65532u16.to_le_bytes().to_vec()),
        (16, 65532u16.to_le_bytes().to_vec()),
        (14, vec![255]),
        (18, vec![0xFF, 0xFF]),
    ] {
        let mut bytes = base.clone();
        bytes[off..off + val.len()].copy_from_slice(&val);
        writer::rehash(&mut bytes);
        let err = Model::from_bytes(&bytes).unwrap_err();
        assert!(
            matches!(
                err,
                LoadError::SectionLengthMismatch { .. } | LoadError::NHeadsNotDividingDModel { .. }
            ),
            "offset {off}: {err}"
        );
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn layer_scale_is_checked_only_for_ternary_weights() {
    for ternary in [true, false] {
        for bad in [f32::NAN, f32::INFINITY, 0.0, -1.0] {
            let mut b = builder(&Spec::transformer(EmbeddingQuant::Int8, ternary));
            b.layers[1].up.scale = bad;
            let r = Model::from_bytes(&b.build().unwrap());
            if ternary {
                let err = r.unwrap_err();
                let want = if bad.is_finite() {
                    "nonpositive_layer_scale"
                } else {
                    "non_finite_float"
                };
                assert_eq!(err.rule(), want, "{bad}: {err}");
                assert!(
                    err.to_string().contains("layer 1 ffn.up")
                        || err.to_string().contains("layers.1.ffn.up"),
                    "{err}"
                );
            } else {
                // Decision 3: the fp32 scale is present but ignored.
                assert!(r.is_ok(), "fp32 weights with scale {bad}");
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn int4_minus_8_is_sign_extended() {
    let mut b = builder(&Spec::static_model(EmbeddingQuant::Int4));
    let EmbeddingData::Int4 { codes, .. } = &mut b.embeddings else {
        unreachable!()
    };
    codes[5 * 16] = -8;
    codes[5 * 16 + 1] = -8;
    let m = Model::from_bytes(&b.build().unwrap()).unwrap();
    assert_eq!(
        lightembed::ModelBuilder::from_model(&m).embeddings,
        b.embeddings
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn non_finite_values_are_named_precisely() {
    let mut b = builder(&Spec::transformer(EmbeddingQuant::Fp32, false));
    let MatrixData::Fp32(w) = &mut b.layers[0].v.weight else {
        unreachable!()
    };
    w[32 * 3 + 5] = f32::NEG_INFINITY;
    let err = Model::from_bytes(&b.build().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "non-finite float -inf in layers.0.attn.v.weight row 3 column 5: every fp32 weight, scale, LayerNorm parameter and bias must be finite"
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_search_index_given_as_the_model_is_named() {
    let mut bytes = builder(&Spec::static_model(EmbeddingQuant::Fp32))
        .build()
        .unwrap();
    bytes[..4].copy_from_slice(b"LEIX");
    writer::rehash(&mut bytes);
    assert_eq!(
        Model::from_bytes(&bytes).unwrap_err().to_string(),
        "bad magic \"LEIX\" (4c454958): expected \"LEMB\" (4c454d42); this is a lightembed search index (index.bin), not a model"
    );
}
