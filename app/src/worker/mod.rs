//! The worker: receives [`Request`](crate::shared::protocol::Request)s, drives [`WorkerState`],
//! fetch and [`Storage`], and posts [`Event`](crate::shared::protocol::Event)s. Started by the
//! `worker` binary ([`start`]).
//!
//! Long jobs (downloading, indexing) are `async` tasks that yield to the event loop between
//! batches, so a cancel or a search is handled while indexing runs. Which job runs, what a
//! cancel, a model switch or "delete all" does to it and to the documents waiting behind it, and
//! when finished writes are saved are the rules of one type, [`jobs::JobState`] (pure Rust,
//! unit-tested natively); the loop asks it before and after each step. A model load moves its
//! generation: an indexing request takes the generation current when it arrives, so a request
//! sent before a model (or language) switch never writes into the next model's index or
//! database, even when its job would only start after the switch.
//!
//! The loop, by concern: `dispatch` (messages in and out), `model_load` (fetch, verify, cache,
//! restore the index), `queue` (documents dropped together), `index_job` (embedding and
//! inserting, with the helper [`pool`]), `persist` (saves, deletion), `queries` (search and the
//! playground). Under them: [`jobs`], [`state`] (model, index, search), [`chunk`] (documents →
//! passages), [`storage`] (IndexedDB).

pub mod chunk;
mod dispatch;
pub mod extract;
mod index_job;
pub mod jobs;
mod model_load;
mod persist;
pub mod pool;
mod queries;
mod queue;
pub mod state;
pub mod storage;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

pub use dispatch::{post, set_sink, start, Sink};

use self::jobs::JobState;
use self::pool::Pool;
use self::state::WorkerState;
use self::storage::Storage;
use crate::shared::protocol::Passage;

/// The worker's state and request handling. One per worker; tests create their own with a
/// private database name.
#[derive(Default)]
pub struct WorkerApp {
    db_name: String,
    state: RefCell<WorkerState>,
    storage: RefCell<Option<Rc<Storage>>>,
    /// The database `storage` was opened for ([`crate::shared::lang::db_name`]).
    storage_name: RefCell<String>,
    /// The job flags (generation, cancel, queue, "delete all", pending writes) and their rules.
    jobs: RefCell<JobState>,
    /// Passages indexed in this session (for re-indexing when storage is memory-only).
    session_passages: RefCell<HashMap<String, Passage>>,
    /// The last saved index when storage is memory-only (restored after a model switch).
    mem_index: RefCell<Option<state::SavedIndex>>,
    /// The loaded model's verified bytes, SHA-256 and URL, for starting helper workers.
    model_source: RefCell<Option<ModelSource>>,
    /// Helper workers that embed for indexing jobs (started by the first job of a model).
    pool: RefCell<Option<Rc<Pool>>>,
    /// The worker that reads binary documents ([`extract`]), kept while a drop is indexed.
    reader: RefCell<Option<Rc<extract::Reader>>>,
    /// `LoadModel`'s `workers`: engines allowed per indexing job (`None`: one per core).
    max_workers: Cell<Option<usize>>,
    /// The model and index a model load took out of `state`, until that load (or a later one)
    /// has saved the pending writes with this index.
    retired: RefCell<Option<WorkerState>>,
}

/// What a helper worker needs to load the model the indexing worker has loaded.
struct ModelSource {
    bytes: Rc<Vec<u8>>,
    digest: Option<[u8; 32]>,
    url: String,
}

impl WorkerApp {
    /// A worker state that stores into IndexedDB database `db_name`.
    pub fn new(db_name: &str) -> Rc<WorkerApp> {
        Rc::new(WorkerApp {
            db_name: db_name.to_string(),
            ..Default::default()
        })
    }
}
