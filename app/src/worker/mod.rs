//! The worker's message loop: receives [`Request`]s, drives [`WorkerState`], fetch and [`Storage`],
//! and posts [`Event`]s. Started by the `worker` binary ([`start`]).
//!
//! Long jobs (downloading, indexing) are `async` tasks that yield to the event loop between
//! batches, so a [`Request::Cancel`] or a search is handled while indexing runs. A generation
//! counter, bumped by every [`Request::LoadModel`], stops jobs that belong to a replaced model:
//! an indexing request takes the generation current when it arrives, so a request sent before a
//! model (or language) switch never writes into the next model's index or database, even when its
//! job would only start after the switch.

pub mod chunk;
pub mod pool;
pub mod state;
pub mod storage;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use self::chunk::{corpus_doc_prefix, document_passages, user_doc_id, CorpusRecord};
use self::pool::Pool;
use self::state::{load_model, AttachError, WorkerError, WorkerState};
use self::storage::{Storage, DB_NAME};
use crate::shared::protocol::{Event, Passage, Request, SearchMode, StorageKind};
use crate::shared::web::{fetch_bytes, fetch_text, head_validator, now_ms, sleep_ms, yield_now};

/// Passages per batch without helpers: one forward pass, so progress and cancel stay prompt.
const BATCH: usize = crate::worker::state::FORWARD_BATCH;
/// Passages per batch handed to a helper worker (and embedded by the indexing worker itself when
/// it has helpers): large enough that a message's cost vanishes, small enough to balance.
const POOL_BATCH: usize = 16;
/// Embedding runs this long (ms) before the job yields to the event loop and reports progress.
const SLICE_MS: f64 = 40.0;
/// While more documents of a drop wait, finished ones are saved at most this often (ms), with
/// the index they are in; saving the whole index after each of 1,000 small files was three
/// quarters of the time (`bench/RESULTS.md`, "App: many files at once"). The last document of a
/// drop, a corpus and a re-index are saved as soon as they end.
const SAVE_EVERY_MS: f64 = 1000.0;
/// While more documents of a drop wait, the index state goes to the page at most this often
/// (ms): its document list grows with every document, and sending and rendering it after each of
/// 2,000 one-line files kept the page busy, so that a Cancel took effect 0.6 s late.
const INDEX_EVENT_MS: f64 = 250.0;
/// How long a model switch waits (ms) for a running job to stop before it saves what that
/// job and the jobs before it indexed with the old model.
const STOP_WAIT_MS: f64 = 5000.0;

/// Where events go instead of `postMessage` (tests).
pub type Sink = Rc<dyn Fn(&Event)>;

thread_local! {
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Routes events to `sink` instead of `postMessage` (`None`: back to `postMessage`). Lets the
/// browser tests drive a [`WorkerApp`] on the page's thread and read what it would post.
pub fn set_sink(sink: Option<Sink>) {
    SINK.with(|s| *s.borrow_mut() = sink);
}

/// Posts an event to the UI (as JSON text).
pub fn post(event: &Event) {
    if let Some(sink) = SINK.with(|s| s.borrow().clone()) {
        // Round-trip through JSON like the real channel does.
        let json = event.to_json();
        sink(&Event::from_json(&json).expect("events round-trip"));
        return;
    }
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(&JsValue::from_str(&event.to_json()));
}

/// Installs the panic hook and the message handler, then says hello. Called once by the
/// `worker` binary's `main`.
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        web_sys::console::error_1(&JsValue::from_str(&format!(
            "lightembed worker panicked: {message}"
        )));
        post(&Event::Panic { message });
    }));
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let app = WorkerApp::new(DB_NAME);
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let data = ev.data();
        if pool::helper_kind(&data).is_some() {
            // This worker is an indexing helper of another one (`pool`).
            return pool::handle_helper_message(&data);
        }
        let Some(text) = data.as_string() else {
            post(&Event::Error {
                message: "worker received a non-text message".into(),
            });
            return;
        };
        WorkerApp::handle_json(&app, &text);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&Event::Hello);
}

/// The worker's state and request handling. One per worker; tests create their own with a
/// private database name.
#[derive(Default)]
pub struct WorkerApp {
    db_name: String,
    state: RefCell<WorkerState>,
    storage: RefCell<Option<Rc<Storage>>>,
    /// The database `storage` was opened for ([`crate::shared::lang::db_name`]).
    storage_name: RefCell<String>,
    /// Bumped by every model load; jobs compare it to stop when superseded.
    generation: Cell<u64>,
    cancel: Cell<bool>,
    /// Documents dispatched and waiting for the job before them (files dropped together).
    queued: Cell<usize>,
    /// Bumped by [`Request::Cancel`] and "delete all": a waiting document dispatched before the
    /// bump is dropped instead of indexed.
    cancel_epoch: Cell<u64>,
    /// Bumped by "delete all": a job that was running keeps nothing it embedded before it.
    clears: Cell<u64>,
    busy: Cell<bool>,
    /// Passages indexed in this session (for re-indexing when storage is memory-only).
    session_passages: RefCell<HashMap<String, Passage>>,
    /// The last index bytes when storage is memory-only (restored after a model switch).
    mem_index: RefCell<Option<Vec<u8>>>,
    /// The loaded model's verified bytes, SHA-256 and URL, for starting helper workers.
    model_source: RefCell<Option<ModelSource>>,
    /// Helper workers that embed for indexing jobs (started by the first job of a model).
    pool: RefCell<Option<Rc<Pool>>>,
    /// `LoadModel`'s `workers`: engines allowed per indexing job (`None`: one per core).
    max_workers: Cell<Option<usize>>,
    /// Finished jobs' writes not saved yet ([`SAVE_EVERY_MS`]).
    pending: RefCell<PendingWrites>,
    /// When the index was last saved ([`now_ms`]).
    last_save: Cell<f64>,
    /// When the index state was last posted ([`INDEX_EVENT_MS`]).
    last_index_event: Cell<f64>,
    /// The model and index a model load took out of `state`, until that load (or a later one)
    /// has saved the pending writes with this index.
    retired: RefCell<Option<WorkerState>>,
}

/// Storage writes of finished indexing jobs, not saved yet: the last write of each passage id
/// wins (`Some`: put, `None`: delete), so a document indexed and then deleted is not put back.
#[derive(Default)]
struct PendingWrites {
    by_id: HashMap<String, Option<Passage>>,
    /// The index changed since it was last saved.
    index: bool,
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

    /// Handles one message (JSON text of a [`Request`]); results are [`post`]ed.
    pub fn handle_json(this: &Rc<WorkerApp>, text: &str) {
        match Request::from_json(text) {
            Ok(req) => WorkerApp::dispatch(this, req),
            Err(message) => post(&Event::Error { message }),
        }
    }

    fn dispatch(this: &Rc<WorkerApp>, req: Request) {
        let me = this.clone();
        match req {
            Request::LoadModel {
                url,
                sha256,
                no_store,
                db_version,
                lang,
                workers,
            } => {
                me.generation.set(me.generation.get() + 1);
                me.max_workers.set(workers);
                me.cancel.set(true);
                me.drop_queued("Another model was loaded");
                me.stop_pool();
                *me.model_source.borrow_mut() = None;
                wasm_bindgen_futures::spawn_local(async move {
                    me.load_model(url, sha256, no_store, db_version, lang).await
                });
            }
            Request::IndexCorpus { url, limit, dims } => {
                let generation = me.generation.get();
                wasm_bindgen_futures::spawn_local(async move {
                    me.index_corpus(url, limit, dims, generation).await
                });
            }
            Request::IndexDocument {
                name,
                content,
                format,
                dims,
            } => {
                // One document is a drop of one: the same queue, cancel and generation rules.
                let docs = vec![crate::shared::protocol::DocumentInput {
                    name,
                    content,
                    format,
                }];
                WorkerApp::dispatch(this, Request::IndexDocuments { docs, dims });
            }
            Request::IndexDocuments { docs, dims } => {
                let generation = me.generation.get();
                let epoch = me.cancel_epoch.get();
                me.queued.set(me.queued.get() + docs.len());
                wasm_bindgen_futures::spawn_local(async move {
                    for d in docs {
                        // Cancel, searches and a model switch get in between two documents
                        // (one-line files are indexed without a yield of their own).
                        yield_now().await;
                        // Each waits for the job before it (also one sent by an earlier
                        // message); the check and the job's start run without a yield between.
                        while me.busy.get() {
                            sleep_ms(20).await;
                        }
                        if me.cancel_epoch.get() != epoch {
                            break; // cancelled (or "delete all"): the rest were dropped
                        }
                        me.queued.set(me.queued.get() - 1);
                        me.clone()
                            .index_document(d.name, d.content, d.format, dims, generation)
                            .await;
                    }
                    // What the drop's last documents indexed, if not saved yet.
                    if !me.busy.get() && me.generation.get() == generation {
                        me.flush().await;
                    }
                });
            }
            Request::IndexPassages { passages, dims } => {
                let generation = me.generation.get();
                wasm_bindgen_futures::spawn_local(async move {
                    me.index_job(passages, dims, false, None, generation).await
                });
            }
            Request::Reindex { dims } => {
                let generation = me.generation.get();
                wasm_bindgen_futures::spawn_local(
                    async move { me.reindex(dims, generation).await },
                );
            }
            Request::Cancel => {
                me.cancel.set(true);
                me.drop_queued("Cancelled");
                // A helper's forward pass cannot be interrupted: stop the helpers themselves.
                me.stop_pool();
            }
            Request::Search { id, query, k, mode } => me.search(id, &query, k, mode),
            Request::DeleteDoc { doc_id } => {
                wasm_bindgen_futures::spawn_local(async move { me.delete_doc(doc_id).await });
            }
            Request::ClearIndex => {
                wasm_bindgen_futures::spawn_local(async move { me.clear_index().await });
            }
            Request::Cosine { a, b, dims } => match me.state.borrow().cosine(&a, &b, dims) {
                Ok((value, dims)) => post(&Event::Cosine { value, dims }),
                Err(message) => post(&Event::Error {
                    message: message.to_string(),
                }),
            },
            Request::Tokenize { text } => match me.state.borrow().tokenize(&text) {
                Ok(tokens) => post(&Event::Tokens { tokens }),
                Err(message) => post(&Event::Error {
                    message: message.to_string(),
                }),
            },
            Request::Project { query, max_points } => {
                match me.state.borrow().project(query.as_deref(), max_points) {
                    Ok((points, query, explained)) => post(&Event::Projection {
                        points,
                        query,
                        explained,
                    }),
                    Err(message) => post(&Event::Error {
                        message: message.to_string(),
                    }),
                }
            }
            Request::Crash => panic!("crash requested by the UI (test hook)"),
        }
    }

    /// Terminates the helper workers (the next indexing job starts new ones).
    fn stop_pool(&self) {
        if let Some(p) = self.pool.borrow_mut().take() {
            p.terminate();
        }
    }

    /// The helper pool for a job, started on first use for the loaded model; `None` on a
    /// one-core machine, outside a dedicated worker, and for a static model: its embedding is a
    /// table lookup and a mean, so inserting into the graph is what takes the time, and that
    /// stays on this worker (measured: 4,874 passages/s alone, 4,650 with a helper;
    /// `bench/RESULTS.md`).
    fn pool_for_job(&self) -> Option<Rc<Pool>> {
        if self
            .state
            .borrow()
            .model()
            .is_none_or(|m| m.header().is_static())
        {
            return None;
        }
        if let Some(p) = self.pool.borrow().as_ref() {
            if p.size() > 0 {
                return Some(p.clone());
            }
        }
        let wanted = match self.max_workers.get() {
            Some(n) => Pool::wanted().min(n.saturating_sub(1)),
            None => Pool::wanted(),
        };
        let source = self.model_source.borrow();
        let src = source.as_ref()?;
        if wanted == 0 {
            return None;
        }
        let pool = Rc::new(Pool::start(wanted, &src.bytes, src.digest, &src.url));
        *self.pool.borrow_mut() = Some(pool.clone());
        (pool.size() > 0).then_some(pool)
    }

    fn storage(&self) -> Rc<Storage> {
        self.storage
            .borrow()
            .clone()
            .unwrap_or_else(|| Rc::new(Storage::memory("storage not opened yet")))
    }

    /// Opens the storage of language `lang` ([`crate::shared::lang::db_name`]) unless it is open. Another
    /// language's database is closed first, and what this session kept in memory for it (its
    /// passages, a memory-only index) is dropped: it must not be re-indexed into this language.
    async fn open_storage(
        self: &Rc<Self>,
        no_store: bool,
        db_version: Option<u32>,
        lang: Option<&str>,
    ) {
        let name = crate::shared::lang::db_name(&self.db_name, lang);
        if self.storage.borrow().is_some() {
            if *self.storage_name.borrow() == name {
                return;
            }
            if let Some(old) = self.storage.borrow_mut().take() {
                old.close();
            }
            self.session_passages.borrow_mut().clear();
            *self.mem_index.borrow_mut() = None;
        }
        *self.storage_name.borrow_mut() = name.clone();
        let s = if no_store {
            Storage::memory("IndexedDB is disabled (?nostore).")
        } else {
            let me = Rc::downgrade(self);
            let version = db_version.unwrap_or(crate::worker::storage::DB_VERSION);
            let opened = name.clone();
            Storage::open(&name, version, move || {
                // (Only while this database is still the one in use.)
                if let Some(me) = me
                    .upgrade()
                    .filter(|me| *me.storage_name.borrow() == opened)
                {
                    let s = Storage::memory(crate::worker::storage::NEWER_IN_OTHER_TAB);
                    post(&storage_event(&s));
                    *me.storage.borrow_mut() = Some(Rc::new(s));
                }
            })
            .await
        };
        if *self.storage_name.borrow() != name || self.storage.borrow().is_some() {
            // While this opened, a later load asked for another language's database, or opened
            // this one itself: that one is in use.
            s.close();
            return;
        }
        post(&storage_event(&s));
        *self.storage.borrow_mut() = Some(Rc::new(s));
    }

    /// A write failed: switch to memory-only and say so.
    fn degrade(&self, reason: String) {
        // The reason only: the banner says once what follows from it (working in memory).
        let message = format!("Saving to IndexedDB failed ({reason}).");
        let s = Storage::memory(message);
        post(&storage_event(&s));
        *self.storage.borrow_mut() = Some(Rc::new(s));
    }

    async fn load_model(
        self: Rc<Self>,
        url: String,
        sha256: Option<String>,
        no_store: bool,
        db_version: Option<u32>,
        lang: Option<String>,
    ) {
        let generation = self.generation.get();
        // The old model and index leave the state at once: a request of this generation finds
        // no model until this one is loaded, never the old one.
        let old = std::mem::take(&mut *self.state.borrow_mut());
        if old.model().is_some() {
            *self.retired.borrow_mut() = Some(old);
        }
        // The running job stops at its next batch (the generation moved; it does not touch the
        // state after that); what it and the jobs before it indexed is saved with the old index,
        // into the old model's database, before that database may be closed. Of two loads in a
        // row, whichever comes here first saves (the writes and the index they belong to are
        // taken together); the other finds nothing left to save.
        let t0 = now_ms();
        while self.busy.get() && now_ms() - t0 < STOP_WAIT_MS {
            sleep_ms(20).await;
        }
        let retired = self.retired.borrow_mut().take();
        if let Some(old) = retired {
            self.flush_with(|| old.index_bytes()).await;
        }
        if self.generation.get() != generation {
            // Superseded while saving: the next load opens its own database.
            return;
        }
        self.open_storage(no_store, db_version, lang.as_deref())
            .await;
        if self.generation.get() != generation {
            // Superseded while the database opened (the next load opens its own).
            return;
        }
        let storage = self.storage();
        post(&Event::Download {
            loaded: 0,
            total: None,
        });

        let validator = match &sha256 {
            Some(s) => Some(format!("sha256={s}")),
            None => head_validator(&url).await,
        };
        let mut cached = None;
        if let Some(v) = &validator {
            match storage.get_model(&url).await {
                Ok(Some((stored, bytes))) if &stored == v => cached = Some(bytes),
                Ok(_) => {}
                Err(e) => post(&Event::Error {
                    message: format!("Reading the model cache failed: {e}"),
                }),
            }
        }
        let from_cache = cached.is_some();
        let bytes = match cached {
            Some(b) => b,
            None => {
                let mut last = 0.0;
                let r = fetch_bytes(&url, |loaded, total| {
                    let t = now_ms();
                    if t - last > 50.0 || total == Some(loaded) {
                        last = t;
                        post(&Event::Download { loaded, total });
                    }
                })
                .await;
                match r {
                    Ok(b) => b,
                    Err(reason) => {
                        if self.generation.get() == generation {
                            post(&Event::ModelFailed { reason });
                        }
                        return;
                    }
                }
            }
        };
        if self.generation.get() != generation {
            return;
        }
        post(&Event::Download {
            loaded: bytes.len() as u64,
            total: Some(bytes.len() as u64),
        });
        post(&Event::Verifying);
        sleep_ms(0).await;
        let t0 = now_ms();
        let digest = if bytes.len() > 32 {
            platform_sha256(&bytes[..bytes.len() - 32]).await
        } else {
            None
        };
        let (model, mut info) = match load_model(&bytes, &url, digest) {
            Ok(x) => x,
            Err(e) => {
                if from_cache {
                    // A damaged cache entry: drop it; the retry downloads afresh.
                    let _ = storage.delete_model(&url).await;
                }
                post(&Event::ModelFailed {
                    reason: format!("The model file failed verification: {e}"),
                });
                return;
            }
        };
        info.verify_ms = now_ms() - t0;
        info.from_cache = from_cache;
        if let Some(expected) = &sha256 {
            if !expected.eq_ignore_ascii_case(&info.sha256) {
                post(&Event::Error {
                    message: format!(
                        "models/manifest.json lists SHA-256 {expected} for {url} but the file is {} (rebuild the app to refresh the manifest)",
                        info.sha256
                    ),
                });
            }
        }
        if self.generation.get() != generation {
            return;
        }
        self.state.borrow_mut().set_model(model, info.clone());
        let bytes = Rc::new(bytes);
        *self.model_source.borrow_mut() = Some(ModelSource {
            bytes: bytes.clone(),
            // Verified: the file's SHA-256 trailer is the digest of what precedes it (§7), so
            // helpers need not hash the bytes again.
            digest: bytes[bytes.len().saturating_sub(32)..].try_into().ok(),
            url: url.clone(),
        });
        post(&Event::ModelReady { info });
        self.restore_index().await;
        // Cache the verified bytes last: the user should not wait for this write.
        if !from_cache && storage.is_persistent() {
            if let Some(v) = &validator {
                if let Err(e) = storage.put_model(&url, v, &bytes).await {
                    post(&Event::Error {
                        message: format!("The model could not be cached in IndexedDB ({e}); it will be downloaded again next time."),
                    });
                }
            }
        }
    }

    async fn restore_index(&self) {
        let storage = self.storage();
        let t0 = now_ms();
        let bytes = if storage.is_persistent() {
            match storage.get_index().await {
                Ok(b) => b,
                Err(e) => {
                    post(&Event::Error {
                        message: format!("Reading the stored index failed: {e}"),
                    });
                    None
                }
            }
        } else {
            self.mem_index.borrow().clone()
        };
        let Some(bytes) = bytes else {
            self.post_index_state();
            return;
        };
        let attached = self.state.borrow_mut().attach_index(&bytes);
        match attached {
            Ok(notes) => {
                let mut state = self.state.borrow().state();
                state.notes = notes;
                state.restored = true;
                state.restore_ms = now_ms() - t0;
                post(&Event::Index { state });
            }
            Err(AttachError::Mismatch(message)) => {
                let stored_passages = if storage.is_persistent() {
                    storage.count_passages().await.unwrap_or(0)
                } else {
                    self.session_passages.borrow().len()
                };
                if stored_passages == 0 {
                    // Nothing a re-index could bring back (e.g. a job cancelled before it kept
                    // anything): the other model's empty index is dropped, not offered.
                    if storage.is_persistent() {
                        if let Err(e) = storage.clear_index().await {
                            post(&Event::Error {
                                message: format!("Clearing IndexedDB failed: {e}"),
                            });
                        }
                    }
                    *self.mem_index.borrow_mut() = None;
                    self.post_index_state();
                    return;
                }
                self.post_index_state();
                post(&Event::IndexMismatch {
                    message,
                    stored_passages,
                });
            }
            Err(AttachError::Corrupt(reason)) => {
                post(&Event::Error { message: format!("The stored index is damaged and was ignored ({reason}). Re-index to rebuild it.") });
                self.post_index_state();
            }
        }
    }

    /// Fetches a bundled corpus and indexes its first `limit` passages (those not indexed yet),
    /// as documents `{corpus file stem}/{page}` ([`crate::worker::chunk::corpus_doc_prefix`]).
    async fn index_corpus(
        self: Rc<Self>,
        url: String,
        limit: Option<usize>,
        dims: Option<usize>,
        generation: u64,
    ) {
        let text = match fetch_text(&url).await {
            Ok(t) => t,
            Err(message) => {
                post(&Event::Error {
                    message: format!("Could not fetch the corpus: {message}"),
                });
                return;
            }
        };
        let prefix = corpus_doc_prefix(&url);
        let mut passages = Vec::new();
        for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            if limit.is_some_and(|l| passages.len() >= l) {
                break;
            }
            match serde_json::from_str::<CorpusRecord>(line) {
                Ok(r) => passages.push(r.into_passage_in(&prefix)),
                Err(e) => {
                    post(&Event::Error {
                        message: format!("corpus line {} is not a passage: {e}", n + 1),
                    });
                    return;
                }
            }
        }
        // Passages already indexed are not embedded again.
        let fresh: Vec<Passage> = {
            let state = self.state.borrow();
            passages
                .into_iter()
                .filter(|p| !state.index().is_some_and(|i| i.contains(&p.id)))
                .collect()
        };
        self.index_job(fresh, dims, false, None, generation).await;
    }

    /// Cuts a user document with the loaded model's tokenizer, exactly as `lightembed index`
    /// does, and indexes it as a new version of that document (see [`WorkerApp::index_job`]).
    /// A document that gave no job still moves the queue: an empty `IndexDone` tells the page
    /// how many documents still wait (its progress bar is left as it was).
    fn post_no_job(&self) {
        if self.queued.get() == 0 {
            // The drop is over: the page gets the state the last documents left.
            self.post_index_state();
        }
        post(&Event::IndexDone {
            done: 0,
            total: 0,
            cancelled: false,
            seconds: 0.0,
            per_sec: 0.0,
            workers: 1,
            helped: 0,
            queued: self.queued.get(),
        });
    }

    /// Drops the documents waiting to be indexed (they return when their turn comes) and says so
    /// once: `what` is the action, e.g. "Cancelled".
    fn drop_queued(&self, what: &str) {
        self.cancel_epoch.set(self.cancel_epoch.get() + 1);
        let n = self.queued.replace(0);
        if n > 0 {
            post(&Event::Error {
                message: format!(
                    "{what}: {n} document{} waiting to be indexed {} not added.",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "was" } else { "were" }
                ),
            });
            if !self.busy.get() {
                // Between two documents: no job will end to tell the page the queue is empty.
                self.post_no_job();
            }
        }
    }

    async fn index_document(
        self: Rc<Self>,
        name: String,
        content: String,
        format: crate::worker::chunk::Format,
        dims: Option<usize>,
        generation: u64,
    ) {
        if self.generation.get() != generation {
            return; // sent for the model before this one
        }
        let passages = match self.state.borrow().model() {
            Some(model) => document_passages(&name, &content, format, model),
            None => {
                post(&Event::Error {
                    message: format!("{name}: no model is loaded"),
                });
                self.post_no_job();
                return;
            }
        };
        if passages.is_empty() {
            post(&Event::Error {
                message: format!("{name}: no text found"),
            });
            self.post_no_job();
            return;
        }
        let doc_id = user_doc_id(&name);
        self.index_job(passages, dims, false, Some(doc_id), generation)
            .await
    }

    async fn reindex(self: Rc<Self>, dims: Option<usize>, generation: u64) {
        if self.busy.get() {
            post(&Event::Error {
                message: "Indexing is already running; cancel it first.".into(),
            });
            return;
        }
        // Stored passages are read below: deletions not saved yet must not come back.
        self.flush().await;
        let storage = self.storage();
        let mut by_id: HashMap<String, Passage> = self.session_passages.borrow().clone();
        match storage.all_passages().await {
            Ok(ps) => by_id.extend(ps.into_iter().map(|p| (p.id.clone(), p))),
            Err(e) => post(&Event::Error {
                message: format!("Reading stored passages failed: {e}"),
            }),
        }
        let mut passages: Vec<Passage> = by_id.into_values().collect();
        passages.sort_by(|a, b| a.id.cmp(&b.id));
        self.index_job(passages, dims, true, None, generation).await;
    }

    /// Embeds and inserts `passages`, reporting progress, then persists passages + index.
    /// `fresh`: start a new index (re-index) instead of adding to the current one. `replaces`:
    /// the passages are a new version of this document — its passages that are not among them
    /// are deleted first (index, session and storage), so an edited, shorter document leaves no
    /// stale passages behind, also after a reload. `generation`: the model generation the
    /// request was sent for; a job whose model (or language) was replaced since does nothing.
    async fn index_job(
        self: Rc<Self>,
        passages: Vec<Passage>,
        dims: Option<usize>,
        fresh: bool,
        replaces: Option<String>,
        generation: u64,
    ) {
        if self.generation.get() != generation {
            // Sent for the model before this one (another language's corpus, a document meant
            // for that index): nothing of it belongs in this model's index or database.
            return;
        }
        if self.busy.get() {
            post(&Event::Error {
                message: "Indexing is already running; cancel it first.".into(),
            });
            return;
        }
        let clears = self.clears.get();
        let prepared = {
            let mut state = self.state.borrow_mut();
            if fresh {
                state.new_index(dims)
            } else {
                state.ensure_index(dims)
            }
        };
        if let Err(message) = prepared {
            post(&Event::Error {
                message: message.to_string(),
            });
            return;
        }
        let stale = match &replaces {
            Some(doc_id) => self.state.borrow_mut().delete_stale(doc_id, &passages),
            None => Vec::new(),
        };
        {
            let mut session = self.session_passages.borrow_mut();
            for id in &stale {
                session.remove(id);
            }
        }
        self.busy.set(true);
        self.cancel.set(false);
        let total = passages.len();
        let t0 = now_ms();
        let mut done = 0usize;
        let mut reported = 0usize;
        let mut slice_start = now_ms();
        let mut cancelled = false;
        let pool = if passages.len() > POOL_BATCH {
            self.pool_for_job()
        } else {
            None
        };
        let workers = Cell::new(1 + pool.as_ref().map_or(0, |p| p.size()));
        post(&Event::Progress {
            done: 0,
            total,
            per_sec: 0.0,
            embedded: 0,
            workers: workers.get(),
            queued: self.queued.get(),
        });
        let post_progress = |done: usize, reported: usize| {
            let secs = (now_ms() - t0) / 1000.0;
            post(&Event::Progress {
                done,
                total,
                per_sec: rate(done, secs),
                embedded: done - reported,
                workers: workers.get(),
                queued: self.queued.get(),
            });
        };
        let dims = self.state.borrow().dims().unwrap_or(0);
        let batches: Vec<&[Passage]> = passages
            .chunks(if pool.is_some() { POOL_BATCH } else { BATCH })
            .collect();
        // Batches go out in order to whoever is free — a helper with room, else this worker —
        // and their vectors are inserted strictly in passage order, so the index and the
        // progress count are those of a single worker.
        let mut next_send = 0usize;
        let mut next_insert = 0usize;
        let mut mine: HashMap<usize, Vec<Vec<f32>>> = HashMap::new();
        let mut failure = None;
        let mut helped = 0usize;
        while next_insert < batches.len() {
            if self.cancel.get() || self.generation.get() != generation {
                cancelled = true;
                break;
            }
            // 1. Insert every batch that is ready, in order.
            while let Some((vectors, from_helper)) =
                mine.remove(&next_insert).map(|v| (v, false)).or_else(|| {
                    let flat = pool.as_ref()?.take(next_insert as u64)?;
                    Some((
                        flat.chunks(dims.max(1)).map(<[f32]>::to_vec).collect(),
                        true,
                    ))
                })
            {
                let chunk = batches[next_insert];
                let result = {
                    let mut state = self.state.borrow_mut();
                    if vectors.len() == chunk.len() {
                        chunk
                            .iter()
                            .zip(&vectors)
                            .try_for_each(|(p, v)| state.insert(p, v))
                    } else {
                        Err(WorkerError::Helper(format!(
                            "{} vectors for {} passages",
                            vectors.len(),
                            chunk.len()
                        )))
                    }
                };
                if let Err(e) = result {
                    failure = Some(e);
                    break;
                }
                let mut session = self.session_passages.borrow_mut();
                for p in chunk {
                    session.insert(p.id.clone(), p.clone());
                }
                done += chunk.len();
                if from_helper {
                    helped += chunk.len();
                }
                next_insert += 1;
            }
            if failure.is_some() || next_insert == batches.len() {
                break;
            }
            // 2. Keep every helper busy.
            if let Some(p) = &pool {
                while next_send < batches.len() {
                    let Some(h) = p.idle() else { break };
                    let texts: Vec<String> =
                        batches[next_send].iter().map(Passage::embed_text).collect();
                    p.send(h, next_send as u64, &texts, dims);
                    next_send += 1;
                }
                workers.set(1 + p.size());
            }
            // 3. Embed here: a batch a failed helper held, else the next unassigned one; when
            //    everything left is with the helpers, wait for one of them.
            let lost = pool
                .as_ref()
                .and_then(|p| p.take_lost())
                .map(|s| s as usize);
            let local = lost.or_else(|| {
                (next_send < batches.len()).then(|| {
                    next_send += 1;
                    next_send - 1
                })
            });
            match local {
                Some(b) => match self.state.borrow().embed_passages(batches[b]) {
                    Ok(vs) => {
                        mine.insert(b, vs);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                },
                None => match &pool {
                    Some(p) => p.next_message().await,
                    None => break,
                },
            }
            if now_ms() - slice_start >= SLICE_MS {
                post_progress(done, reported);
                reported = done;
                yield_now().await;
                slice_start = now_ms();
            }
        }
        if let Some(message) = failure {
            post(&Event::Error {
                message: format!("Indexing failed: {message}"),
            });
            cancelled = true;
        }
        if cancelled {
            // Helpers may hold batches of this job: stop them (new ones start with the next).
            self.stop_pool();
        }
        if done > reported {
            post_progress(done, reported);
        }
        self.busy.set(false);
        if self.generation.get() != generation {
            // The model changed under this job: what it inserted stays in the old model's index
            // and is saved with it (the next model's load saves before it switches), as a
            // cancel keeps it; nothing is posted, the page shows the next model.
            if self.clears.get() == clears {
                self.queue_writes(&passages[..done], &stale);
            }
            return;
        }
        let seconds = (now_ms() - t0) / 1000.0;
        let more_waiting = replaces.is_some() && self.queued.get() > 0;
        // "Delete all" while this job ran: what it embedded before is gone with the rest, and
        // must not be written back to storage (a reload or "reindex" would bring it back).
        if self.clears.get() == clears {
            self.queue_writes(&passages[..done], &stale);
            if !more_waiting || now_ms() - self.last_save.get() >= SAVE_EVERY_MS {
                // Saved before "done" is shown: a reload at that moment finds all of it.
                self.flush().await;
                if self.generation.get() != generation {
                    return; // a model switch came while saving: the page shows the next model
                }
            }
        }
        let cleared = self.clears.get() != clears;
        post(&Event::IndexDone {
            done: if cleared { 0 } else { done },
            total,
            cancelled: cancelled || cleared,
            seconds,
            per_sec: rate(done, seconds),
            workers: workers.get(),
            helped,
            queued: self.queued.get(),
        });
        // (Again: a Cancel during the save may have emptied the queue.)
        let more_waiting = replaces.is_some() && self.queued.get() > 0;
        if !more_waiting || now_ms() - self.last_index_event.get() >= INDEX_EVENT_MS {
            self.post_index_state();
        }
    }

    /// Posts the index state (count, dims, documents).
    fn post_index_state(&self) {
        self.last_index_event.set(now_ms());
        post(&Event::Index {
            state: self.state.borrow().state(),
        });
    }

    /// Records a finished job's writes for the next [`WorkerApp::flush`].
    fn queue_writes(&self, put: &[Passage], delete: &[String]) {
        let mut pending = self.pending.borrow_mut();
        for id in delete {
            pending.by_id.insert(id.clone(), None);
        }
        for p in put {
            pending.by_id.insert(p.id.clone(), Some(p.clone()));
        }
        pending.index = true;
    }

    /// Saves the pending writes with the index as it is now, in one transaction (nothing when
    /// nothing is pending).
    async fn flush(&self) {
        if self.retired.borrow().is_some() {
            // A model load is under way: what is pending belongs to the index it took out of
            // the state, and that load saves it with that index (here the state has none).
            return;
        }
        self.flush_with(|| self.state.borrow().index_bytes()).await;
    }

    /// [`WorkerApp::flush`] with the bytes of the index the writes belong to (`index_bytes` is
    /// only called when something is pending).
    async fn flush_with(&self, index: impl FnOnce() -> Option<Vec<u8>>) {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        if !pending.index {
            return;
        }
        let mut put = Vec::new();
        let mut delete = Vec::new();
        for (id, p) in pending.by_id {
            match p {
                Some(p) => put.push(p),
                None => delete.push(id),
            }
        }
        let bytes = index();
        self.last_save.set(now_ms());
        self.persist(&put, &delete, bytes).await;
    }

    async fn persist(&self, put: &[Passage], delete: &[String], index: Option<Vec<u8>>) {
        let storage = self.storage();
        if storage.is_persistent() {
            if let Err(e) = storage.save(put, delete, index.as_deref()).await {
                self.degrade(e);
                *self.mem_index.borrow_mut() = index;
            }
        } else {
            *self.mem_index.borrow_mut() = index;
        }
    }

    fn search(&self, id: u64, query: &str, k: usize, mode: SearchMode) {
        let state = self.state.borrow();
        let t0 = now_ms();
        // Keyword mode ranks by BM25 alone: nothing to embed.
        let v = if mode == SearchMode::Keyword {
            None
        } else {
            match state.embed_query(query) {
                Ok(v) => Some(v),
                Err(message) => {
                    post(&Event::Error {
                        message: message.to_string(),
                    });
                    return;
                }
            }
        };
        let t1 = now_ms();
        match state.search(v.as_deref(), query, k, mode) {
            Ok(hits) => post(&Event::Results {
                id,
                hits,
                keyword_match: state.keyword_matches(query),
                embed_ms: t1 - t0,
                search_ms: now_ms() - t1,
            }),
            Err(message) => post(&Event::Error {
                message: message.to_string(),
            }),
        }
    }

    async fn delete_doc(self: Rc<Self>, doc_id: String) {
        if self.busy.get() {
            post(&Event::Error {
                message: "Wait for indexing to finish (or cancel it) before deleting.".into(),
            });
            return;
        }
        let ids = self.state.borrow_mut().delete_doc(&doc_id);
        {
            let mut session = self.session_passages.borrow_mut();
            for id in &ids {
                session.remove(id);
            }
        }
        self.post_index_state();
        self.queue_writes(&[], &ids);
        self.flush().await;
    }

    async fn clear_index(self: Rc<Self>) {
        if self.busy.get() {
            self.cancel.set(true);
        }
        self.drop_queued("Deleted all");
        self.clears.set(self.clears.get() + 1);
        // Writes of documents finished before: deleted with the rest, never saved.
        *self.pending.borrow_mut() = PendingWrites::default();
        self.state.borrow_mut().drop_index();
        self.session_passages.borrow_mut().clear();
        *self.mem_index.borrow_mut() = None;
        self.post_index_state();
        if let Err(e) = self.storage().clear_index().await {
            post(&Event::Error {
                message: format!("Clearing IndexedDB failed: {e}"),
            });
        }
    }
}

fn rate(n: usize, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn storage_event(s: &Storage) -> Event {
    if s.is_persistent() {
        Event::Storage {
            kind: StorageKind::Persistent,
            message: None,
        }
    } else {
        Event::Storage {
            kind: StorageKind::MemoryOnly,
            message: s.unavailable_reason().map(str::to_string),
        }
    }
}

/// SHA-256 of `data` by the platform's WebCrypto (`crypto.subtle.digest`): a few milliseconds for
/// a 4.7 MB model where the wasm `sha2` takes hundreds (bench/RESULTS.md). `None` where WebCrypto
/// is missing (`crypto.subtle` exists only in secure contexts: HTTPS and localhost) or fails; the
/// engine then hashes the bytes itself.
async fn platform_sha256(data: &[u8]) -> Option<[u8; 32]> {
    let scope: web_sys::WorkerGlobalScope = js_sys::global().dyn_into().ok()?;
    let crypto = scope.crypto().ok()?;
    let subtle = crypto.subtle();
    if subtle.is_undefined() {
        return None;
    }
    let promise = subtle.digest_with_str_and_u8_array("SHA-256", data).ok()?;
    let buf = wasm_bindgen_futures::JsFuture::from(promise).await.ok()?;
    js_sys::Uint8Array::new(&buf).to_vec().try_into().ok()
}
