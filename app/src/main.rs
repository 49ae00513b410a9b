//! The lightembed app's UI: a Leptos CSR page that talks to the worker (`src/bin/worker.rs`)
//! through [`lightembed_app::shared::protocol`] messages. The UI never runs the engine; it shows state.
//!
//! Test hooks (`data-testid`): `lang-select`, `model-select`, `model-status`, `download-progress`,
//! `load-corpus`, `index-progress`, `doc-count`, `embed-count`, `query`, `result` (with
//! `data-score`), `error`, `reindex`, `retry`, `cancel`, `storage-status`, `worker-restarts`;
//! documents: `drop-zone`, `file-input`, `folder-input`, `drop-summary` (with `data-added`,
//! `data-changed`, `data-unchanged`, `data-removed`, `data-skipped`), `skipped` (one per file,
//! `data-name`), `open` and `page` (`data-page`) in a result, `opened` (the last URL opened),
//! `doc-view` (the text view), `storage-used`, `export`, `import-input`, `delete-all`; the page:
//! `theme-toggle`, `model-details`, `playground`.
//! URL parameters: `?model=URL` (force a model, for every language), `?lang=CODE` (start in this
//! language, `en` or `tr`, without remembering it), `?limit=N` (index the first N corpus
//! passages), `?nostore` (memory only).
//! Without WebAssembly SIMD, index.html shows `no-simd` and the UI is not mounted.

#[cfg(target_arch = "wasm32")]
mod page;

#[cfg(target_arch = "wasm32")]
fn main() {
    // index.html's SIMD check failed: it shows its message; don't start a UI (and worker) that
    // cannot run. (Without SIMD this wasm normally fails to compile before getting here.)
    let no_simd = js_sys::Reflect::get(&js_sys::global(), &"lightembedNoSimd".into())
        .map(|v| v.is_truthy())
        .unwrap_or(false);
    if no_simd {
        return;
    }
    leptos::mount::mount_to_body(page::ui::App);
}

/// Natively there is no UI: the app runs in the browser.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "lightembed-app runs in the browser: scripts/run.sh builds it with trunk and serves it"
    );
}
