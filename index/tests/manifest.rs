//! Spec §8: every manifest mismatch case with its exact message, and the cases that load.

mod common;

use common::{fields, model, small_index};
use lightembed_index::{
    read_manifest_prefix, CompatWarning, Index, IndexError, Manifest, ManifestFields, Metric,
    ModelIdentity, ModelVersion, Params, INDEX_VERSION,
};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

fn manifest(dims: usize) -> Manifest {
    Index::new(fields(dims), Params::default())
        .unwrap()
        .manifest()
        .clone()
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn manifest_records_the_model() {
    let index = small_index();
    let m = index.manifest();
    assert_eq!(m.index_version, INDEX_VERSION);
    assert_eq!(m.model_id, "lightembed-en");
    assert_eq!(m.model_version, ModelVersion::new(1, 2, 3));
    assert_eq!(m.model_version.to_string(), "1.2.3");
    assert_eq!(m.dims, 4);
    assert_eq!(m.count, 21);
    assert_eq!(m.metric, Metric::Cosine);
    assert_eq!(m.model_sha256, [0xAB; 32]);
    assert_eq!(read_manifest_prefix(&index.to_bytes()).unwrap(), *m);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn identical_model_is_compatible_without_warnings() {
    assert_eq!(
        manifest(256).check_compatible(&model((1, 2, 3), &[128, 256, 384])),
        Ok(vec![])
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn major_version_mismatch_message() {
    let err = manifest(384)
        .check_compatible(&model((2, 0, 0), &[384]))
        .unwrap_err();
    assert!(matches!(err, IndexError::ModelMajorMismatch { .. }));
    assert_eq!(
        err.to_string(),
        "Index was built with lightembed-en v1.2 but the loaded model is v2.0. Re-run `lightembed index`."
    );
    // an older model is just as incompatible
    let err = manifest(384)
        .check_compatible(&model((0, 9, 0), &[384]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Index was built with lightembed-en v1.2 but the loaded model is v0.9. Re-run `lightembed index`."
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn model_id_mismatch_message() {
    let other = ModelIdentity {
        model_id: "lightembed-tr".into(),
        ..model((1, 2, 3), &[384])
    };
    let err = manifest(384).check_compatible(&other).unwrap_err();
    assert!(matches!(err, IndexError::ModelIdMismatch { .. }));
    assert_eq!(
        err.to_string(),
        "Index was built with lightembed-en v1.2 but the loaded model is lightembed-tr v1.2. \
         Re-run `lightembed index`."
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn model_id_is_checked_before_version() {
    let other = ModelIdentity {
        model_id: "lightembed-tr".into(),
        ..model((3, 1, 0), &[64])
    };
    let err = manifest(384).check_compatible(&other).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Index was built with lightembed-en v1.2 but the loaded model is lightembed-tr v3.1. \
         Re-run `lightembed index`."
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn dims_mismatch_message() {
    let err = manifest(512)
        .check_compatible(&model((1, 2, 3), &[128, 256, 384]))
        .unwrap_err();
    assert!(matches!(err, IndexError::DimsMismatch { dims: 512, .. }));
    assert_eq!(
        err.to_string(),
        "Index was built with lightembed-en v1.2 at 512 dims but the loaded model produces \
         128, 256, 384 dims. Re-run `lightembed index`."
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn index_version_mismatch_message() {
    let mut m = manifest(384);
    m.index_version = 3;
    let err = m.check_compatible(&model((1, 2, 3), &[384])).unwrap_err();
    assert_eq!(
        err,
        IndexError::UnsupportedIndexVersion {
            found: 3,
            supported: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "Index was built with index format v3 but this lightembed reads index format v2. \
         Re-run `lightembed index`."
    );
    // the same error from the bytes themselves
    let mut bytes = small_index().to_bytes();
    bytes[4..6].copy_from_slice(&3u16.to_le_bytes());
    assert_eq!(Index::from_bytes(&bytes).unwrap_err(), err);
    assert_eq!(read_manifest_prefix(&bytes).unwrap_err(), err);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn minor_and_patch_differences_load_with_a_note() {
    let warnings = manifest(384)
        .check_compatible(&model((1, 5, 0), &[384]))
        .unwrap();
    assert_eq!(
        warnings,
        vec![CompatWarning::ModelVersionDiffers {
            index: ModelVersion::new(1, 2, 3),
            model: ModelVersion::new(1, 5, 0)
        }]
    );
    assert_eq!(
        warnings[0].to_string(),
        "note: index was built with model v1.2.3, the loaded model is v1.5.0 (same major version, the index stays valid)"
    );
    let warnings = manifest(384)
        .check_compatible(&model((1, 2, 9), &[384]))
        .unwrap();
    assert_eq!(warnings.len(), 1);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn different_model_sha256_same_major_is_a_warning() {
    let other = ModelIdentity {
        sha256: [0xCD; 32],
        ..model((1, 2, 3), &[384])
    };
    let warnings = manifest(384).check_compatible(&other).unwrap();
    assert_eq!(
        warnings,
        vec![CompatWarning::ModelSha256Differs {
            index: [0xAB; 32],
            model: [0xCD; 32]
        }]
    );
    assert!(warnings[0]
        .to_string()
        .starts_with("warning: index was built from a model file with SHA-256 abababababababab…"));
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn loaded_index_checks_like_a_new_one() {
    let loaded = Index::from_bytes(&small_index().to_bytes()).unwrap();
    assert_eq!(
        loaded
            .check_compatible(&model((1, 0, 0), &[4, 16]))
            .unwrap()
            .len(),
        1
    );
    assert!(loaded.check_compatible(&model((2, 2, 3), &[4])).is_err());
    assert!(loaded.check_compatible(&model((1, 2, 3), &[16])).is_err());
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn manifest_fields_from_model_identity() {
    let id = model((1, 2, 3), &[128, 384]);
    assert_eq!(
        id.manifest_fields(128).unwrap(),
        ManifestFields {
            dims: 128,
            ..fields(128)
        }
    );
    let err = id.manifest_fields(64).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid dims: 64 is not one of the model's dims {128, 384}"
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn invalid_manifest_fields_are_rejected() {
    let bad = |f: ManifestFields| Index::new(f, Params::default()).unwrap_err().to_string();
    assert_eq!(
        bad(ManifestFields {
            dims: 0,
            ..fields(1)
        }),
        "invalid dims: 0 is outside 1..=65535"
    );
    assert_eq!(
        bad(ManifestFields {
            model_id: String::new(),
            ..fields(8)
        }),
        "invalid model_id: \"\" must be 1..=16 bytes"
    );
    assert_eq!(
        bad(ManifestFields {
            model_id: "a-very-long-model-id".into(),
            ..fields(8)
        }),
        "invalid model_id: \"a-very-long-model-id\" must be 1..=16 bytes"
    );
    assert_eq!(
        bad(ManifestFields {
            model_id: "a\0b".into(),
            ..fields(8)
        }),
        "invalid model_id: \"a\\0b\" contains a NUL byte"
    );
}
