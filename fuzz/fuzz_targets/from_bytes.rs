//! Fuzz `Model::from_bytes` over arbitrary bytes: it must return `Ok` or `Err`, never panic,
//! never allocate unbounded memory. Each input is tried twice: as is, and with its trailing
//! SHA-256 recomputed — otherwise nearly every mutation stops at the hash check and the header,
//! section-table and section parsers behind it would go unexplored. When a mutated file happens
//! to load, tokenizing and embedding at every valid dims must work too.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

fn exercise(bytes: &[u8]) {
    if let Ok(model) = lightembed::Model::from_bytes(bytes) {
        let dims: Vec<usize> = model.valid_dims().to_vec();
        assert!(!dims.is_empty(), "a loaded model offers output_dim");
        for d in dims {
            match model.embed("fuzzing the engine, ünïcödé 漢字 [CLS]", d) {
                Ok(v) => {
                    assert_eq!(v.len(), d);
                    assert!(v.iter().all(|x| x.is_finite()), "non-finite vector returned as Ok");
                }
                // Finite-but-absurd weights can overflow f32 (clarification F.8).
                Err(lightembed::EmbedError::NonFinite) => {}
                Err(e) => panic!("valid dims {d} failed: {e}"),
            }
        }
        assert!(model.embed("", usize::MAX).is_err());
    }
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    if data.len() >= 32 {
        let mut fixed = data.to_vec();
        let body = fixed.len() - 32;
        let hash = Sha256::digest(&fixed[..body]);
        fixed[body..].copy_from_slice(&hash);
        exercise(&fixed);
    }
});
