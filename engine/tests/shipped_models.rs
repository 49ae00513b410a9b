//! End-to-end parity of the shipped models (`public/models/*.bin`): the Rust engine's vectors equal
//! the trained student's eval-mode vectors (PyTorch, `train/ship.py`) on a committed sample of
//! held-out sentences (`tests/fixtures/e2e/*.json`): ids exactly, mean cosine ≥ 0.999.
//! Native only (the model files are MBs; the wasm build is covered by the golden fixtures).
#![cfg(not(target_arch = "wasm32"))]

use lightembed::Model;
use serde_json::Value;

fn check(model_bytes: &[u8], expected: &str) {
    let fx: Value = serde_json::from_str(expected).unwrap();
    let model = Model::from_bytes(model_bytes).expect("shipped model loads");
    let dims = fx["dims"].as_u64().unwrap() as usize;
    let min_mean = fx["min_mean_cosine"].as_f64().unwrap();
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 32);
    let (mut sum, mut worst) = (0.0f64, 1.0f64);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(model.tokenize(text), ids, "ids differ for {text:?}");
        let want: Vec<f64> = case["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let got = model.embed(text, dims).unwrap();
        let dot: f64 = got.iter().zip(&want).map(|(a, b)| *a as f64 * b).sum();
        let nw: f64 = want.iter().map(|b| b * b).sum::<f64>().sqrt();
        let cos = dot / nw; // `got` is unit-norm
        sum += cos;
        worst = worst.min(cos);
    }
    let mean = sum / cases.len() as f64;
    println!(
        "{}: mean cosine {mean:.7}, min {worst:.7} over {} sentences",
        fx["model"],
        cases.len()
    );
    assert!(mean >= min_mean, "mean cosine {mean} < {min_mean}");
}

#[test]
fn static_model_matches_trained_student() {
    check(
        include_bytes!("../../public/models/lightembed-en-static.bin"),
        include_str!("../../tests/fixtures/e2e/lightembed-en-static.json"),
    );
}

#[test]
fn two_layer_model_matches_trained_student() {
    check(
        include_bytes!("../../public/models/lightembed-en-2l.bin"),
        include_str!("../../tests/fixtures/e2e/lightembed-en-2l.json"),
    );
}
