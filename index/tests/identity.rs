//! `ModelIdentity::from(&lightembed::Model)`: a real fixture model's identity, and an index built
//! from it passes the §8 check against the same model and fails against another model id.

use lightembed_index::{Document, Index, ModelIdentity, Params};
use sha2::Digest;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const TERN_2L: &[u8] = include_bytes!("../../tests/fixtures/models/tern_2l_cased.bin");
const STATIC_INT4: &[u8] = include_bytes!("../../tests/fixtures/models/static_int4_cased.bin");

use lightembed::format::to_hex as hex;

#[test]
fn identity_of_a_fixture_model() {
    let model = lightembed::Model::from_bytes(TERN_2L).unwrap();
    let id = ModelIdentity::from(&model);
    assert_eq!(id.model_id, "tern-2l");
    assert_eq!(id.version, lightembed_index::ModelVersion::new(1, 0, 0));
    assert_eq!(id.valid_dims, vec![4, 8, 12]);
    // The model's SHA-256 is its trailer: SHA-256 of every byte before it (spec §3), i.e.
    // `head -c -32 tern_2l_cased.bin | sha256sum`.
    assert_eq!(
        hex(&id.sha256),
        "aa597999be55fd229cf5ee3727a2692fb66d2a53277c24527352f5b64a934d38"
    );
    let digest = sha2::Sha256::digest(&TERN_2L[..TERN_2L.len() - 32]);
    assert_eq!(&id.sha256[..], &digest[..]);
}

#[test]
fn index_from_model_identity_checks_against_models() {
    let model = lightembed::Model::from_bytes(TERN_2L).unwrap();
    let id = ModelIdentity::from(&model);
    let mut index = Index::new(id.manifest_fields(8).unwrap(), Params::default()).unwrap();
    let v = model.embed("hello world", 8).unwrap();
    index
        .insert(Document::new("a", "A", "/a", "hello world"), &v)
        .unwrap();
    let loaded = Index::from_bytes(&index.to_bytes()).unwrap();
    assert_eq!(loaded.check_compatible(&id).unwrap(), vec![]);
    let hits = loaded.search(&v, 1).unwrap();
    assert_eq!(hits[0].id, "a");
    assert!((hits[0].score - 1.0).abs() < 1e-6);

    let other = ModelIdentity::from(&lightembed::Model::from_bytes(STATIC_INT4).unwrap());
    let err = loaded.check_compatible(&other).unwrap_err().to_string();
    assert!(
        err.starts_with("Index was built with tern-2l v1.0 but the loaded model is "),
        "{err}"
    );
    assert!(err.ends_with("Re-run `lightembed index`."), "{err}");
    // dims 8 is not among the model's dims either way: manifest_fields refuses it up front
    assert!(id.manifest_fields(5).is_err());
}
