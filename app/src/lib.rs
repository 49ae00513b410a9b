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
//! | page | `page/ui/` (binary `lightembed-app`, `src/main.rs`) | the Leptos UI, one file per panel; `page/conn.rs` (the worker connection) |
//! | worker | [`worker`] (`worker/message_loop.rs`; binary `worker` calls [`worker::start`]) | the message loop: fetch, storage, timing |
//! | worker | [`worker_state`] (`worker/state.rs`) | the worker's state and every computation on it: model, index, §8 check, search — pure Rust, unit-tested natively |
//! | worker | [`chunk`] (`worker/chunk.rs`) | pasted / dropped documents and the bundled corpora → passages ([`lightembed_ingest`], the CLI's pipeline) |
//! | worker | [`storage`] (`worker/storage.rs`) | IndexedDB (models, passages, index bytes) with in-memory fallback |
//! | shared | [`protocol`] (`shared/`) | the messages between page and worker (serde JSON strings) |
//! | shared | [`lang`] (`shared/`) | the app's languages (English, Türkçe): a model's language from its id, each language's corpus and database |
//! | shared | [`pca`] (`shared/`) | the 2-D projection of the playground |
//! | shared | [`web`] (`shared/`) | fetch with progress, timers and other browser glue |

// The folders show where a module runs: `page/` (the UI binary, `src/main.rs`), `worker/`,
// `shared/`; module paths stay flat (`lightembed_app::chunk`, …).
#[path = "worker/chunk.rs"]
pub mod chunk;
#[path = "shared/lang.rs"]
pub mod lang;
#[path = "shared/pca.rs"]
pub mod pca;
#[path = "worker/pool.rs"]
pub mod pool;
#[path = "shared/protocol.rs"]
pub mod protocol;
#[path = "worker/storage.rs"]
pub mod storage;
#[path = "shared/web.rs"]
pub mod web;
#[path = "worker/message_loop.rs"]
pub mod worker;
#[path = "worker/state.rs"]
pub mod worker_state;
