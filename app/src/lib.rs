//! `lightembed-app`: the browser app — a Leptos single-page UI on the main thread and a Web
//! Worker that owns the engine ([`lightembed::Model`]), the HNSW index
//! ([`lightembed_index::Index`]) and storage (IndexedDB).
//!
//! Data flow (see `docs/architecture.md`):
//!
//! ```text
//! UI (main thread) ──Request (JSON)──► worker: fetch model (progress) → verify (Model::from_bytes)
//!                                         → cache bytes in IndexedDB → restore index → §8 check
//!                  ◄──Event (JSON)───  progress, model info, index state, results, errors
//! ```
//!
//! Modules, by where they run:
//!
//! | runs in | module | role |
//! |---|---|---|
//! | page | `src/main.rs` → `ui/` (binary `lightembed-app`) | the Leptos UI, one file per panel; `conn` (the worker connection) |
//! | worker | [`worker`] (binary `worker` calls [`worker::start`]) | the message loop: fetch, storage, timing |
//! | worker | [`worker_state`] | the worker's state and every computation on it: model, index, §8 check, search — pure Rust, unit-tested natively |
//! | worker | [`chunk`] | pasted / dropped documents and the bundled corpora → passages ([`lightembed_index::ingest`], the CLI's pipeline) |
//! | worker | [`storage`] | IndexedDB (models, passages, index bytes) with in-memory fallback |
//! | shared | [`protocol`] | the messages between page and worker (serde JSON strings) |
//! | shared | [`lang`] | the app's languages (English, Türkçe): a model's language from its id, each language's corpus and database |
//! | shared | [`pca`] | the 2-D projection of the playground |
//! | shared | [`web`] | fetch with progress, timers and other browser glue |

pub mod chunk;
pub mod lang;
pub mod pca;
pub mod protocol;
pub mod storage;
pub mod web;
pub mod worker;
pub mod worker_state;
