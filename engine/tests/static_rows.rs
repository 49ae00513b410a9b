//! The static path's per-token row cache (clarification F.9): it holds only the tokens seen,
//! filling it never changes an embedding (single, batch, eager fill, threads: the same bits),
//! and transformer models have none.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use lightembed::Model;

const STATIC: &[u8] = include_bytes!("../../public/models/lightembed-en-static.bin");
const TWO_LAYER: &[u8] = include_bytes!("../../public/models/lightembed-en-2l.bin");

const TEXTS: [&str; 4] = [
    "How do I borrow a value mutably?",
    "Ownership rules: each value has one owner.",
    "ownership and borrowing",
    "Café crème, naïve façade",
];

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn cache_holds_only_the_tokens_seen() {
    let model = Model::from_bytes(STATIC).unwrap();
    assert_eq!(model.static_rows_cached(), 0, "nothing computed at load");
    let mut seen = BTreeSet::new();
    for text in TEXTS {
        model.embed(text, 256).unwrap();
        seen.extend(model.tokenize(text));
        assert_eq!(model.static_rows_cached(), seen.len(), "after {text:?}");
    }
    // [CLS] and [SEP] are shared by every text: 4 texts, fewer distinct ids than tokens.
    let total: usize = TEXTS.iter().map(|t| model.tokenize(t).len()).sum();
    assert!(seen.len() < total);
}

#[test]
fn filling_the_cache_never_changes_an_embedding() {
    let cold = Model::from_bytes(STATIC).unwrap();
    for dims in cold.valid_dims().to_vec() {
        let fresh = Model::from_bytes(STATIC).unwrap();
        let batch = fresh.embed_batch(&TEXTS, dims).unwrap();
        for (text, b) in TEXTS.iter().zip(&batch) {
            let single = Model::from_bytes(STATIC)
                .unwrap()
                .embed(text, dims)
                .unwrap();
            assert_eq!(
                bits(&single),
                bits(b),
                "batch vs single, dims {dims}, {text:?}"
            );
            assert_eq!(
                bits(&cold.embed(text, dims).unwrap()),
                bits(b),
                "a warm cache, dims {dims}"
            );
        }
    }
    let eager = Model::from_bytes(STATIC).unwrap();
    eager.prepare_static_rows();
    assert_eq!(
        eager.static_rows_cached(),
        eager.header().vocab_size as usize
    );
    for text in TEXTS {
        assert_eq!(
            bits(&eager.embed(text, 384).unwrap()),
            bits(&cold.embed(text, 384).unwrap())
        );
    }
}

#[test]
fn threads_share_one_cache_and_get_the_same_bits() {
    let model = Model::from_bytes(STATIC).unwrap();
    let want: Vec<Vec<u32>> = TEXTS
        .iter()
        .map(|t| bits(&Model::from_bytes(STATIC).unwrap().embed(t, 128).unwrap()))
        .collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for (t, w) in TEXTS.iter().zip(&want) {
                    assert_eq!(&bits(&model.embed(t, 128).unwrap()), w);
                }
            });
        }
    });
    let distinct: BTreeSet<u32> = TEXTS.iter().flat_map(|t| model.tokenize(t)).collect();
    assert_eq!(model.static_rows_cached(), distinct.len());
}

#[test]
fn transformer_models_have_no_row_cache() {
    let model = Model::from_bytes(TWO_LAYER).unwrap();
    model.embed("ownership and borrowing", 128).unwrap();
    model.prepare_static_rows();
    assert_eq!(model.static_rows_cached(), 0);
}
