//! Indexing on every core (issue 15 item 6): helper workers that embed batches of passages for the
//! indexing worker, which keeps the only index, inserts the vectors in passage order and reports
//! exact progress.
//!
//! The helpers are more instances of the same worker script (the indexing worker's own URL,
//! `worker_loader.js` or the relaxed-SIMD `worker_relaxed_loader.js`, started by the indexing
//! worker itself, so a sub-path deployment needs nothing more). A helper is told that it
//! is one by its first message, [`HELPER_INIT`], which carries the verified model bytes and their
//! SHA-256 (no second hash); it then answers [`HELPER_EMBED`] requests with one `Float32Array` of
//! `n × dims` floats. Messages between the workers are plain JS objects (structured clone, the
//! vectors' buffer transferred); only the UI channel speaks JSON.
//!
//! Pool size: `navigator.hardwareConcurrency − 1` helpers, at most [`MAX_HELPERS`], so that with
//! the indexing worker (which embeds too whenever it has nothing to insert) every core runs one
//! engine. A helper that fails (its script, its model load, a panic) is dropped and its batches are
//! embedded by the indexing worker; cancelling a job terminates the helpers (a running forward pass
//! cannot be interrupted otherwise) and the next job starts new ones.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use futures::channel::oneshot;
use js_sys::{Array, Float32Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, Worker};

use crate::shared::protocol::Event;
use crate::worker::state::{embed_texts, load_model};

/// Helpers beyond this many do not pay for their memory (a model and an engine each).
pub const MAX_HELPERS: usize = 3;
/// Batches a helper holds at once: one running, one queued, so it never waits for the indexer.
const IN_FLIGHT: usize = 2;
/// The message key that marks a helper-protocol message (value: the message kind).
const KIND: &str = "lightembedHelper";
/// Indexer → helper: become a helper for this model (`bytes`, `digest`, `url`).
pub const HELPER_INIT: &str = "init";
/// Indexer → helper: embed `texts` at `dims` (`seq` names the batch).
pub const HELPER_EMBED: &str = "embed";
const HELPER_READY: &str = "ready";
const HELPER_EMBEDDED: &str = "embedded";
const HELPER_FAILED: &str = "failed";
/// The helpers' script: the indexing worker's own (`self.location`), so helpers run the same
/// build (SIMD128 or relaxed SIMD) as the worker that started them.
pub(crate) fn worker_url() -> String {
    let location = get(&js_sys::global(), "location");
    get(&location, "href")
        .as_string()
        .unwrap_or_else(|| "./worker_loader.js".to_string())
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn message(kind: &str, fields: &[(&str, JsValue)]) -> Object {
    let obj = Object::new();
    let _ = Reflect::set(&obj, &JsValue::from_str(KIND), &JsValue::from_str(kind));
    for (k, v) in fields {
        let _ = Reflect::set(&obj, &JsValue::from_str(k), v);
    }
    obj
}

/// The helper-protocol kind of a message, if it is one.
pub fn helper_kind(data: &JsValue) -> Option<String> {
    if !data.is_object() {
        return None;
    }
    get(data, KIND).as_string()
}

// ---------------------------------------------------------------------------------------------
// The helper side.

thread_local! {
    static HELPER_MODEL: RefCell<Option<lightembed::Model>> = const { RefCell::new(None) };
}

fn reply(msg: &Object, transfer: Option<&JsValue>) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = match transfer {
        Some(buf) => scope.post_message_with_transfer(msg, &Array::of1(buf)),
        None => scope.post_message(msg),
    };
}

/// Handles a helper-protocol message in a helper worker.
pub fn handle_helper_message(data: &JsValue) {
    match helper_kind(data).as_deref() {
        Some(HELPER_INIT) => {
            let bytes = Uint8Array::new(&get(data, "bytes")).to_vec();
            let digest: Option<[u8; 32]> = get(data, "digest")
                .dyn_into::<Uint8Array>()
                .ok()
                .and_then(|d| d.to_vec().try_into().ok());
            let url = get(data, "url").as_string().unwrap_or_default();
            match load_model(&bytes, &url, digest) {
                Ok((model, _)) => {
                    HELPER_MODEL.with(|m| *m.borrow_mut() = Some(model));
                    reply(&message(HELPER_READY, &[]), None);
                }
                Err(e) => reply(
                    &message(
                        HELPER_FAILED,
                        &[("message", JsValue::from_str(&e.to_string()))],
                    ),
                    None,
                ),
            }
        }
        Some(HELPER_EMBED) => {
            let seq = get(data, "seq");
            let dims = get(data, "dims").as_f64().unwrap_or(0.0) as usize;
            let texts: Vec<String> = Array::from(&get(data, "texts"))
                .iter()
                .map(|t| t.as_string().unwrap_or_default())
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let result = HELPER_MODEL.with(|m| match m.borrow().as_ref() {
                None => Err("the helper has no model".to_string()),
                Some(model) => embed_texts(model, &refs, dims).map_err(|e| e.to_string()),
            });
            match result {
                Ok(vectors) => {
                    let arr = Float32Array::from(&vectors.concat()[..]);
                    let buf = arr.buffer();
                    reply(
                        &message(HELPER_EMBEDDED, &[("seq", seq), ("vectors", arr.into())]),
                        Some(&buf.into()),
                    );
                }
                Err(e) => reply(
                    &message(
                        HELPER_FAILED,
                        &[("seq", seq), ("message", JsValue::from_str(&e))],
                    ),
                    None,
                ),
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// The indexing worker's side.

struct Helper {
    worker: Worker,
    ready: Cell<bool>,
    alive: Cell<bool>,
    in_flight: RefCell<HashSet<u64>>,
    _closures: Vec<Closure<dyn FnMut(JsValue)>>,
}

#[derive(Default)]
struct Inbox {
    /// Vectors by batch `seq`, flattened.
    done: HashMap<u64, Vec<f32>>,
    /// Batches whose helper failed: the indexing worker embeds them itself.
    lost: Vec<u64>,
    /// Woken by any helper message.
    waiter: Option<oneshot::Sender<()>>,
}

/// The helper workers of one model (see the module docs).
pub struct Pool {
    helpers: Vec<Rc<Helper>>,
    inbox: Rc<RefCell<Inbox>>,
}

impl Pool {
    /// How many helpers this machine gets: `hardwareConcurrency − 1`, at most [`MAX_HELPERS`];
    /// 0 outside a dedicated worker (e.g. the browser tests, which run the worker's code on the
    /// page).
    pub fn wanted() -> usize {
        let Ok(scope) = js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>() else {
            return 0;
        };
        let cores = scope.navigator().hardware_concurrency() as usize;
        cores.saturating_sub(1).min(MAX_HELPERS)
    }

    /// Starts `n` helpers for the model `bytes` (already verified; `digest` spares them the
    /// hash). Helpers that cannot start are left out (an empty pool is valid).
    pub fn start(n: usize, bytes: &[u8], digest: Option<[u8; 32]>, url: &str) -> Pool {
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let mut helpers = Vec::new();
        let worker_url = worker_url();
        for _ in 0..n {
            let Ok(worker) = Worker::new(&worker_url) else {
                continue;
            };
            let helper = Rc::new_cyclic(|weak: &std::rc::Weak<Helper>| {
                let (w1, w2) = (weak.clone(), weak.clone());
                let (i1, i2) = (inbox.clone(), inbox.clone());
                let on_message = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
                    let data = ev.unchecked_into::<MessageEvent>().data();
                    if let Some(h) = w1.upgrade() {
                        on_helper_message(&h, &i1, &data);
                    }
                });
                let on_error = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
                    if let Ok(e) = ev.dyn_into::<web_sys::Event>() {
                        e.prevent_default();
                    }
                    if let Some(h) = w2.upgrade() {
                        fail(&h, &i2);
                    }
                });
                worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
                worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
                Helper {
                    worker: worker.clone(),
                    ready: Cell::new(false),
                    alive: Cell::new(true),
                    in_flight: RefCell::new(HashSet::new()),
                    _closures: vec![on_message, on_error],
                }
            });
            let init = message(
                HELPER_INIT,
                &[
                    ("bytes", Uint8Array::from(bytes).into()),
                    (
                        "digest",
                        digest.map_or(JsValue::UNDEFINED, |d| Uint8Array::from(&d[..]).into()),
                    ),
                    ("url", JsValue::from_str(url)),
                ],
            );
            if worker.post_message(&init).is_ok() {
                helpers.push(helper);
            } else {
                worker.terminate();
            }
        }
        Pool { helpers, inbox }
    }

    /// Helpers started (ready or still loading).
    pub fn size(&self) -> usize {
        self.helpers.iter().filter(|h| h.alive.get()).count()
    }

    /// A ready helper with room for another batch.
    pub fn idle(&self) -> Option<usize> {
        self.helpers
            .iter()
            .position(|h| h.alive.get() && h.ready.get() && h.in_flight.borrow().len() < IN_FLIGHT)
    }

    /// Sends batch `seq` to helper `i`.
    pub fn send(&self, i: usize, seq: u64, texts: &[String], dims: usize) {
        let h = &self.helpers[i];
        let arr = Array::new();
        for t in texts {
            arr.push(&JsValue::from_str(t));
        }
        let msg = message(
            HELPER_EMBED,
            &[
                ("seq", JsValue::from_f64(seq as f64)),
                ("dims", JsValue::from_f64(dims as f64)),
                ("texts", arr.into()),
            ],
        );
        h.in_flight.borrow_mut().insert(seq);
        if h.worker.post_message(&msg).is_err() {
            fail(h, &self.inbox);
        }
    }

    /// The vectors of batch `seq`, if a helper has returned them.
    pub fn take(&self, seq: u64) -> Option<Vec<f32>> {
        self.inbox.borrow_mut().done.remove(&seq)
    }

    /// A batch whose helper failed, to embed locally.
    pub fn take_lost(&self) -> Option<u64> {
        self.inbox.borrow_mut().lost.pop()
    }

    /// Whether any helper holds a batch.
    pub fn busy(&self) -> bool {
        self.helpers
            .iter()
            .any(|h| h.alive.get() && !h.in_flight.borrow().is_empty())
    }

    /// Whether a helper is still loading its model (a batch may soon go to it).
    pub fn starting(&self) -> bool {
        self.helpers.iter().any(|h| h.alive.get() && !h.ready.get())
    }

    /// Resolves at the next helper message (a result, a failure, a helper ready).
    pub async fn next_message(&self) {
        let (tx, rx) = oneshot::channel();
        self.inbox.borrow_mut().waiter = Some(tx);
        let _ = rx.await;
    }

    /// Stops every helper now (cancel, model switch, job end is not one: they are kept).
    pub fn terminate(&self) {
        for h in &self.helpers {
            h.alive.set(false);
            h.worker.terminate();
        }
        self.inbox.borrow_mut().done.clear();
        // A job waiting in `next_message` for the helpers' last batches would otherwise wait
        // forever (no terminated helper answers): wake it to see its cancel.
        wake(&self.inbox);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.terminate();
    }
}

fn wake(inbox: &RefCell<Inbox>) {
    if let Some(tx) = inbox.borrow_mut().waiter.take() {
        let _ = tx.send(());
    }
}

/// A helper is gone: its batches go back to the indexing worker.
fn fail(h: &Helper, inbox: &RefCell<Inbox>) {
    if !h.alive.replace(false) {
        return;
    }
    h.worker.terminate();
    let lost: Vec<u64> = h.in_flight.borrow_mut().drain().collect();
    inbox.borrow_mut().lost.extend(lost);
    wake(inbox);
}

fn on_helper_message(h: &Helper, inbox: &RefCell<Inbox>, data: &JsValue) {
    if !h.alive.get() {
        return;
    }
    match helper_kind(data).as_deref() {
        Some(HELPER_READY) => h.ready.set(true),
        Some(HELPER_EMBEDDED) => {
            let seq = get(data, "seq").as_f64().unwrap_or(-1.0) as u64;
            if h.in_flight.borrow_mut().remove(&seq) {
                let v = Float32Array::new(&get(data, "vectors")).to_vec();
                inbox.borrow_mut().done.insert(seq, v);
            }
        }
        Some(HELPER_FAILED) => {
            let reason = get(data, "message").as_string().unwrap_or_default();
            web_sys::console::warn_1(&JsValue::from_str(&format!(
                "lightembed: an indexing helper failed ({reason}); its passages are embedded by the indexing worker"
            )));
            fail(h, inbox);
        }
        _ => {
            // The helper's own UI-channel events (JSON text): `Hello` is expected; a panic report
            // means the helper is gone.
            if let Some(text) = data.as_string() {
                if let Ok(Event::Panic { .. }) = Event::from_json(&text) {
                    fail(h, inbox);
                }
            }
            return wake(inbox);
        }
    }
    wake(inbox);
}
