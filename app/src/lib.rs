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
//! Modules:
//! - [`protocol`]: the messages between the UI and the worker (serde JSON strings);
//! - [`core`]: the worker's state and every computation on it — pure Rust, unit-tested natively;
//! - [`chunk`]: pasted / dropped documents and the bundled corpora → passages (in the worker, with
//!   the CLI's pipeline [`lightembed_index::ingest`]);
//! - [`lang`]: the app's languages (English, Türkçe): a model's language from its id, each
//!   language's bundled corpus and IndexedDB database;
//! - [`pca`]: the 2-D projection of the playground;
//! - [`storage`]: IndexedDB (models, passages, index bytes) with in-memory fallback;
//! - [`web`]: fetch with progress, timers and other browser glue;
//! - [`worker`]: the worker's message loop (the `worker` binary only calls [`worker::start`]).
//!
//! The UI itself lives in the `lightembed-app` binary (`src/main.rs`).

pub mod chunk;
pub mod core;
pub mod lang;
pub mod pca;
pub mod protocol;
pub mod storage;
pub mod web;
pub mod worker;
