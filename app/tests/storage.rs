//! IndexedDB storage in headless Chromium (on the page's thread; `storage_in_worker.rs` runs the
//! same checks inside a dedicated worker, where the app uses it).
//!
//! `CHROMEDRIVER=/usr/bin/chromedriver cargo test -p lightembed-app --target wasm32-unknown-unknown`
#![cfg(target_arch = "wasm32")]

mod common;

use common::storage_cases;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn models_are_cached_by_url_and_validator() {
    storage_cases::models_are_cached_by_url_and_validator().await;
}

#[wasm_bindgen_test]
async fn passages_and_index_are_saved_together_and_survive_reopening() {
    storage_cases::passages_and_index_are_saved_together_and_survive_reopening().await;
}

#[wasm_bindgen_test]
async fn memory_storage_reports_why() {
    storage_cases::memory_storage_reports_why().await;
}

#[wasm_bindgen_test]
async fn a_newer_version_closes_this_connection_and_keeps_the_data() {
    storage_cases::a_newer_version_closes_this_connection_and_keeps_the_data().await;
}

#[wasm_bindgen_test]
async fn a_database_of_the_first_version_is_read_in_this_shape() {
    storage_cases::a_database_of_the_first_version_is_read_in_this_shape().await;
}
