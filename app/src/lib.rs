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
//! Modules, by where they run (the folders say it: `page/`, `worker/`, `shared/`):
//!
//! | runs in | module | role |
//! |---|---|---|
//! | page | `page/` (binary `lightembed-app`, `src/main.rs`) | the Leptos UI, `page/ui/` one file per panel; `page/conn.rs` (the worker connection) |
//! | worker | [`worker`] (binary `worker` calls [`worker::start`]) | the message loop: requests, fetch, storage, timing |
//! | worker | [`worker::state`] | the worker's state and every computation on it: model, index, §8 check, search — pure Rust, unit-tested natively |
//! | worker | [`worker::chunk`] | pasted / dropped documents and the bundled corpora → passages ([`lightembed_ingest`], the CLI's pipeline) |
//! | worker | [`worker::storage`] | IndexedDB (models, passages, index bytes) with in-memory fallback |
//! | worker | [`worker::pool`] | helper workers that embed for indexing jobs |
//! | shared | [`shared::protocol`] | the messages between page and worker (serde JSON strings) |
//! | shared | [`shared::lang`] | the app's languages (English, Türkçe): a model's language from its id, each language's corpus and database |
//! | shared | [`shared::pca`] | the 2-D projection of the playground |
//! | shared | [`shared::remote`] | remote mode (`?serve=`): a `lightembed serve`'s address, request body and answers, read as untrusted data |
//! | shared | [`shared::web`] | fetch with progress, timers and other browser glue |

pub mod shared;
pub mod worker;
