//! The storage checks of `storage.rs`, inside a dedicated worker (where the app's worker uses
//! IndexedDB).
#![cfg(target_arch = "wasm32")]

mod common;

use common::storage_cases;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
async fn models_are_cached_by_url_and_validator() {
    storage_cases::models_are_cached_by_url_and_validator().await;
}

#[wasm_bindgen_test]
async fn passages_and_index_are_saved_together_and_survive_reopening() {
    storage_cases::passages_and_index_are_saved_together_and_survive_reopening().await;
}

#[wasm_bindgen_test]
async fn a_database_of_the_first_version_is_read_in_this_shape() {
    storage_cases::a_database_of_the_first_version_is_read_in_this_shape().await;
}
