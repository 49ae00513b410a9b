//! Inputs found by fuzzing, kept as regression tests (`tests/fixtures/regression/`).

use lightembed::{EmbedError, Model};

/// `fuzz/fuzz_targets/from_bytes.rs` found a file whose stored floats are all finite (so it loads)
/// but whose projection is large enough to overflow f32: the engine must return
/// `EmbedError::NonFinite`, never a NaN vector (clarification F.8).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn overflowing_forward_pass_is_an_error_not_nan() {
    let bytes = include_bytes!("../../tests/fixtures/regression/fuzz_overflow_nan.bin");
    let model = Model::from_bytes(bytes).expect("all stored floats are finite, so it loads");
    for &d in model.valid_dims() {
        let err = model
            .embed("fuzzing the engine, ünïcödé 漢字 [CLS]", d)
            .unwrap_err();
        assert_eq!(err, EmbedError::NonFinite);
        assert_eq!(
            err.to_string(),
            "the forward pass overflowed: the embedding is not finite (the model's weights are numerically broken)"
        );
        let batch = model
            .embed_batch(&["fuzzing the engine, ünïcödé 漢字 [CLS]"], d)
            .unwrap_err();
        assert_eq!(batch, EmbedError::NonFinite);
    }
}
