//! Golden fixtures: for every `tests/fixtures/models/NAME.json` (from `reference/make_fixtures.py`,
//! computed by the normative `reference/forward.py`), the engine loads `NAME.bin`, produces the
//! token ids exactly, and every embedding at every valid `dims` within max |diff| ≤ 1e-4.
//! Compiled in by `engine/build.rs`, so this also runs as wasm32 under Node.

mod common;

use std::collections::BTreeMap;

use common::{max_abs_diff, MODEL_FIXTURES};
use lightembed::{Model, ModelBuilder};
use serde::Deserialize;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

const TOLERANCE: f32 = 1e-4;

#[derive(Deserialize)]
struct Fixture {
    file: String,
    description: String,
    valid_dims: Vec<usize>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    embeddings: BTreeMap<String, Vec<f32>>,
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn golden_fixtures_match_the_reference() {
    assert!(
        !MODEL_FIXTURES.is_empty(),
        "no fixtures compiled in: run reference/make_fixtures.py"
    );
    let mut failures = Vec::new();
    let mut worst_overall = (0f32, String::new());
    for &(name, bytes, json) in MODEL_FIXTURES {
        let fx: Fixture = serde_json::from_str(json).unwrap_or_else(|e| panic!("{name}.json: {e}"));
        assert_eq!(fx.file, format!("{name}.bin"));
        let model = match Model::from_bytes(bytes) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: rejected: {e}"));
                continue;
            }
        };
        if model.valid_dims() != fx.valid_dims.as_slice() {
            failures.push(format!(
                "{name}: valid_dims {:?}, expected {:?}",
                model.valid_dims(),
                fx.valid_dims
            ));
        }
        let mut worst = 0f32;
        let mut n_vectors = 0;
        for case in &fx.cases {
            let ids = model.tokenize(&case.text);
            if ids != case.ids {
                failures.push(format!(
                    "{name}: {:?}: ids {:?}, expected {:?}",
                    case.text, ids, case.ids
                ));
            }
            for (dims, want) in &case.embeddings {
                let dims: usize = dims.parse().expect("dims key");
                let got = match model.embed(&case.text, dims) {
                    Ok(v) => v,
                    Err(e) => {
                        failures.push(format!("{name}: {:?} dims {dims}: {e}", case.text));
                        continue;
                    }
                };
                if got.len() != want.len() {
                    failures.push(format!(
                        "{name}: {:?} dims {dims}: length {}",
                        case.text,
                        got.len()
                    ));
                    continue;
                }
                let diff = max_abs_diff(&got, want);
                n_vectors += 1;
                if diff > worst {
                    worst = diff;
                }
                if diff > worst_overall.0 {
                    worst_overall = (diff, format!("{name} {:?} dims {dims}", case.text));
                }
                if diff.is_nan() || diff > TOLERANCE {
                    failures.push(format!(
                        "{name}: {:?} dims {dims}: max |diff| {diff:e} > {TOLERANCE:e}",
                        case.text
                    ));
                }
            }
        }
        report!(
            "{name}: {} cases, {n_vectors} vectors, worst |diff| {worst:.3e} — {}",
            fx.cases.len(),
            fx.description
        );
    }
    report!(
        "worst |diff| over all fixtures: {:.3e} ({})",
        worst_overall.0,
        worst_overall.1
    );
    assert!(
        failures.is_empty(),
        "{} fixture failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn golden_fixtures_batch_equals_single() {
    for &(name, bytes, json) in MODEL_FIXTURES {
        let fx: Fixture = serde_json::from_str(json).unwrap();
        let model = Model::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let texts: Vec<&str> = fx.cases.iter().map(|c| c.text.as_str()).collect();
        for &dims in model.valid_dims() {
            let batch = model.embed_batch(&texts, dims).unwrap();
            for (t, v) in texts.iter().zip(&batch) {
                assert_eq!(
                    v,
                    &model.embed(t, dims).unwrap(),
                    "{name}: {t:?} dims {dims}"
                );
            }
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn golden_fixtures_rewrite_byte_identical() {
    // The reference packer and the Rust writer share one layout, so re-writing a fixture from
    // its loaded values reproduces it exactly (fixtures with unknown sections excepted: the
    // engine skips those and cannot re-emit them).
    for &(name, bytes, _) in MODEL_FIXTURES {
        let model = Model::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        if model
            .sections()
            .entries
            .iter()
            .any(|e| !e.section_type.is_known())
        {
            continue;
        }
        let rebuilt = ModelBuilder::from_model(&model).build().unwrap();
        assert!(
            rebuilt == bytes,
            "{name}: re-written file differs from the fixture"
        );
    }
}
