//! Writer ↔ loader: build → `from_bytes` → same header, sections and values; write → read →
//! write byte-identical; section order and unknown sections; plus edge cases of the embedding
//! API (empty text, truncation, invalid dims, batches) and "never panics" on corrupted input.

mod common;

use common::{all_specs, builder, max_abs_diff, Rng, Spec};
use lightembed::writer::{self, RawSection};
use lightembed::{
    normalize, EmbedError, EmbeddingQuant, LoadError, Model, ModelBuilder, SectionType, WeightQuant,
};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn write_read_write_is_byte_identical() {
    for spec in all_specs() {
        let b = builder(&spec);
        let bytes = b.build().unwrap();
        let m = Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
        let back = ModelBuilder::from_model(&m);
        let mut expected = b.clone();
        expected.header = b.sections().unwrap().0;
        expected.section_order = back.section_order.clone();
        assert_eq!(back, expected, "{spec:?}: values differ after a round trip");
        assert_eq!(
            back.build().unwrap(),
            bytes,
            "{spec:?}: bytes differ after a round trip"
        );
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn header_sections_and_identity_survive_loading() {
    let spec = Spec::transformer(EmbeddingQuant::Int4, true);
    let bytes = builder(&spec).build().unwrap();
    let m = Model::from_bytes(&bytes).unwrap();
    let h = m.header();
    assert_eq!(h.format_version, 1);
    assert_eq!(h.embedding_quant, EmbeddingQuant::Int4);
    assert_eq!(h.weight_quant, WeightQuant::Ternary);
    assert_eq!(h.vocab_size as usize, common::VOCAB.len());
    assert_eq!(
        (h.d_model, h.n_layers, h.n_heads, h.ffn_dim, h.output_dim),
        (32, 2, 4, 64, 24)
    );
    assert_eq!(h.matryoshka(), &[6, 12]);
    assert_eq!(m.valid_dims(), &[6, 12, 24]);
    assert!(h.flags.do_lower_case() && h.flags.strip_accents() && !h.flags.has_fingerprint());
    assert_eq!(m.model_id(), "test-model");
    assert_eq!(h.model_version().to_string(), "1.2.3");
    assert_eq!(h.license_id, 7);
    assert_eq!(m.metadata(), Some("{\"test\":true}"));
    assert_eq!(m.file_size(), bytes.len() as u64);
    assert_eq!(&m.sha256()[..], &bytes[bytes.len() - 32..]);
    assert_eq!(m.sha256_hex().len(), 64);
    assert_eq!(h.to_bytes()[..], bytes[..64]);

    let types: Vec<SectionType> = m
        .sections()
        .entries
        .iter()
        .map(|e| e.section_type)
        .collect();
    // the writer's order is the type-number order
    assert_eq!(types, SectionType::KNOWN);
    for e in &m.sections().entries {
        assert_eq!(e.offset % 8, 0);
        assert!(e.end().unwrap() <= bytes.len() as u64 - 32);
    }
    let emb = m.sections().find(SectionType::EmbeddingWeights).unwrap();
    assert_eq!(emb.length, (common::VOCAB.len() * 32 / 2) as u64);
    assert_eq!(
        m.sections().find(SectionType::Projection).unwrap().length,
        (24 * 32 + 24) * 4
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn section_order_and_unknown_sections_do_not_change_the_model() {
    for spec in [
        Spec::static_model(EmbeddingQuant::Ternary),
        Spec::transformer(EmbeddingQuant::Int8, true),
    ] {
        let canonical = Model::from_bytes(&builder(&spec).build().unwrap()).unwrap();
        let mut b = builder(&spec);
        b.section_order = Some(vec![200, 7, 6, 5, 8, 4, 3, 2, 1]);
        b.extra_sections = vec![
            (200, b"future data".to_vec()),
            (0, vec![1, 2, 3]),
            (9, Vec::new()),
            (200, vec![9; 17]),
        ];
        let bytes = b.build().unwrap();
        let m = Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            m.sections().entries.len(),
            canonical.sections().entries.len() + 4
        );
        assert_eq!(
            m.sections().entries[0].section_type,
            SectionType::Unknown(200)
        );
        assert_eq!(
            m.sections().entries[1].section_type,
            SectionType::Unknown(200)
        );
        assert_eq!(
            m.sections().entries[2].section_type,
            SectionType::Projection
        );
        for text in ["hello world", "", "the cat sat on the mat."] {
            for &d in canonical.valid_dims() {
                assert_eq!(m.embed(text, d).unwrap(), canonical.embed(text, d).unwrap());
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn raw_assemble_reproduces_the_builder_and_rehash_repairs_edits() {
    let b = builder(&Spec::transformer(EmbeddingQuant::Fp32, false));
    let (h, sections) = b.sections().unwrap();
    let bytes = writer::assemble(&h.to_bytes(), &sections, None, true);
    assert_eq!(bytes, b.build().unwrap());
    let mut edited = bytes.clone();
    edited[44] = 9; // version_major
    assert!(matches!(
        Model::from_bytes(&edited),
        Err(LoadError::HashMismatch { .. })
    ));
    writer::rehash(&mut edited);
    assert_eq!(
        Model::from_bytes(&edited).unwrap().header().version_major,
        9
    );
    // A gap between sections is fine (lengths exclude padding).
    let mut gapped = sections.clone();
    gapped[2].gap = 16;
    assert!(Model::from_bytes(&writer::assemble(&h.to_bytes(), &gapped, None, true)).is_ok());
    let unhashed = writer::assemble(&h.to_bytes(), &sections, None, false);
    assert!(matches!(
        Model::from_bytes(&unhashed),
        Err(LoadError::HashMismatch { .. })
    ));
    let _ = RawSection::new(SectionType::Metadata, Vec::new());
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn empty_text_embeds_cls_sep() {
    for spec in all_specs() {
        let m = Model::from_bytes(&builder(&spec).build().unwrap()).unwrap();
        assert_eq!(m.tokenize(""), vec![2, 3]);
        for &d in m.valid_dims() {
            let v = m.embed("", d).unwrap();
            assert_eq!(v.len(), d);
            assert_eq!(v, m.embed_ids(&[2, 3], d).unwrap());
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{spec:?} dims {d}: norm {norm}");
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn invalid_dims_error_names_the_valid_set() {
    let m = Model::from_bytes(
        &builder(&Spec::static_model(EmbeddingQuant::Fp32))
            .build()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(m.valid_dims(), &[3, 6, 12]);
    for bad in [0usize, 4, 13, 24] {
        let e = m.embed("hello", bad).unwrap_err();
        assert_eq!(
            e,
            EmbedError::InvalidDims {
                dims: bad,
                valid: vec![3, 6, 12]
            }
        );
        assert_eq!(
            e.to_string(),
            format!("invalid dims {bad}: this model's valid dims are 3, 6, 12")
        );
        assert!(m.embed_batch(&["a", "b"], bad).is_err());
        assert!(m.embed_ids(&[2, 3], bad).is_err());
    }
    assert_eq!(
        m.embed_ids(&[2, 999], 12).unwrap_err().to_string(),
        format!(
            "token id 999 is out of range: ids must be < vocab_size {}",
            common::VOCAB.len()
        )
    );
    assert_eq!(m.embed_ids(&[], 12).unwrap_err(), EmbedError::EmptyInput);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn matryoshka_truncates_then_normalises() {
    let m = Model::from_bytes(
        &builder(&Spec::transformer(EmbeddingQuant::Ternary, true))
            .build()
            .unwrap(),
    )
    .unwrap();
    let ids = m.tokenize("the cat sat on the mat.");
    let full = m.project_ids(&ids).unwrap();
    assert_eq!(full.len(), 24);
    for &d in m.valid_dims() {
        let v = m.embed("the cat sat on the mat.", d).unwrap();
        assert_eq!(v, normalize(&full[..d]));
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn long_text_is_truncated_keeping_cls_and_sep() {
    let m = Model::from_bytes(
        &builder(&Spec::transformer(EmbeddingQuant::Int8, true))
            .build()
            .unwrap(),
    )
    .unwrap();
    let text = "hello world ".repeat(40);
    let ids = m.tokenize(&text);
    assert_eq!(ids.len(), 16);
    assert_eq!((ids[0], ids[15]), (2, 3));
    assert!(m.embed(&text, 24).unwrap().iter().all(|x| x.is_finite()));
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn batch_equals_single_bit_for_bit() {
    let texts = [
        "",
        "hello world",
        "the cat sat on the mat.",
        "playing dogs running fast!",
        "merhaba dünyaler",
        "x",
    ];
    for spec in all_specs() {
        let m = Model::from_bytes(&builder(&spec).build().unwrap()).unwrap();
        for &d in m.valid_dims() {
            let batch = m.embed_batch(&texts, d).unwrap();
            assert_eq!(batch.len(), texts.len());
            for (t, v) in texts.iter().zip(&batch) {
                assert_eq!(v, &m.embed(t, d).unwrap(), "{spec:?} {t:?}");
            }
        }
        assert!(m
            .embed_batch(&[], *m.valid_dims().last().unwrap())
            .unwrap()
            .is_empty());
        // A batch of > 512 token rows: the FFN runs in row chunks, one boundary inside a text.
        let many: Vec<String> = (0..150)
            .map(|i| format!("{} the cat {i} sat", texts[i % texts.len()]))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let d = *m.valid_dims().last().unwrap();
        for (t, v) in many.iter().zip(m.embed_batch(&many, d).unwrap()) {
            assert_eq!(v, m.embed(t, d).unwrap(), "{spec:?} {t:?}");
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn embeddings_respond_to_the_input() {
    let m = Model::from_bytes(
        &builder(&Spec::transformer(EmbeddingQuant::Fp32, true))
            .build()
            .unwrap(),
    )
    .unwrap();
    let a = m.embed("hello world", 24).unwrap();
    let b = m.embed("the cat sat on the mat.", 24).unwrap();
    assert!(max_abs_diff(&a, &b) > 1e-3);
    // No positional encoding and mean pooling: word order does not matter (§6.1).
    let c = m.embed("world hello", 24).unwrap();
    assert!(max_abs_diff(&a, &c) < 1e-6);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn static_model_ignores_weight_quant_n_heads_and_ffn_dim() {
    let mut b = builder(&Spec::static_model(EmbeddingQuant::Int8));
    b.header.weight_quant = WeightQuant::Unknown(77);
    b.header.n_heads = 3;
    b.header.ffn_dim = 5;
    let bytes = b.build().unwrap();
    let m = Model::from_bytes(&bytes).unwrap();
    assert_eq!(m.header().weight_quant, WeightQuant::Unknown(77));
    assert_eq!(ModelBuilder::from_model(&m).build().unwrap(), bytes);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn matryoshka_dim_equal_to_output_dim_is_not_repeated() {
    let mut b = builder(&Spec::static_model(EmbeddingQuant::Fp32));
    b.header.n_matryoshka = 3;
    b.header.matryoshka_dims[2] = 12;
    let m = Model::from_bytes(&b.build().unwrap()).unwrap();
    assert_eq!(m.valid_dims(), &[3, 6, 12]);
    b.header.n_matryoshka = 0;
    b.header.matryoshka_dims = [0; 8];
    let m = Model::from_bytes(&b.build().unwrap()).unwrap();
    assert_eq!(m.valid_dims(), &[12]);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn corrupted_files_never_panic() {
    let mut rng = Rng::new(99);
    for spec in [
        Spec::static_model(EmbeddingQuant::Int4),
        Spec::transformer(EmbeddingQuant::Ternary, true),
    ] {
        let bytes = builder(&spec).build().unwrap();
        // Every truncation (with and without a recomputed hash).
        for len in (0..bytes.len()).step_by(7) {
            let mut t = bytes[..len].to_vec();
            assert!(Model::from_bytes(&t).is_err());
            writer::rehash(&mut t);
            assert!(Model::from_bytes(&t).is_err());
        }
        // Random byte edits, rehashed so they reach the structural checks.
        for _ in 0..1500 {
            let mut t = bytes.clone();
            for _ in 0..1 + rng.below(4) {
                let i = if rng.below(2) == 0 {
                    rng.below(64 + 2 + 20 * 9)
                } else {
                    rng.below(t.len() - 32)
                };
                t[i] = rng.next_u64() as u8;
            }
            writer::rehash(&mut t);
            if let Ok(m) = Model::from_bytes(&t) {
                let d = *m.valid_dims().last().unwrap();
                let _ = m.embed("hello world", d);
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn overflowing_forward_pass_is_an_error_not_a_vector() {
    // Finite weights of absurd magnitude load (every stored value is finite) but overflow f32
    // in the forward pass: clarification F.8.
    for (scale, what) in [
        (1e30f32, "projection overflows to inf"),
        (1e20, "norm overflows"),
    ] {
        let mut b = builder(&Spec::static_model(EmbeddingQuant::Fp32));
        for w in b.projection_weight.iter_mut() {
            *w *= scale;
        }
        let m = Model::from_bytes(&b.build().unwrap()).unwrap();
        for &d in m.valid_dims() {
            let e = m.embed("hello world", d).unwrap_err();
            assert_eq!(e, EmbedError::NonFinite, "{what}, dims {d}");
            assert_eq!(
                e.to_string(),
                "the forward pass overflowed: the embedding is not finite (the model's weights are numerically broken)"
            );
            assert_eq!(
                m.embed_batch(&["a", "hello"], d).unwrap_err(),
                EmbedError::NonFinite
            );
        }
    }
}

/// `writer::set_model_version` / `set_model_id`: a valid model under another identity, the
/// vectors unchanged; bad ids are refused and leave the file as it was.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn identity_setters_keep_the_model_valid() {
    let spec = Spec::transformer(EmbeddingQuant::Int8, false);
    let bytes = builder(&spec).build().unwrap();
    let before = Model::from_bytes(&bytes).unwrap();
    let mut b = bytes.clone();
    writer::set_model_version(&mut b, lightembed::ModelVersion::new(7, 1, 300));
    writer::set_model_id(&mut b, "lightembed-tr-0l").unwrap();
    let m = Model::from_bytes(&b).unwrap();
    assert_eq!(m.header().model_version().to_string(), "7.1.300");
    assert_eq!(m.model_id(), "lightembed-tr-0l");
    let dims = m.header().output_dim as usize;
    assert_eq!(
        m.embed("same weights", dims).unwrap(),
        before.embed("same weights", dims).unwrap()
    );
    let kept = b.clone();
    for bad in ["", "seventeen-bytes-x", "a\0b"] {
        let e = writer::set_model_id(&mut b, bad).unwrap_err();
        assert!(e.to_string().contains("1..=16 bytes"), "{bad:?}: {e}");
        assert_eq!(b, kept);
    }
    assert!(writer::set_model_id(&mut [0u8; 10], "x").is_err());
}
