//! Messages in and out: [`start`] installs the handler, [`WorkerApp::handle_json`] parses a
//! [`Request`] and [`WorkerApp::dispatch`] hands it to its concern; [`post`] sends [`Event`]s
//! (or to a test's [`Sink`]).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use super::pool;
use super::storage::DB_NAME;
use super::WorkerApp;
use crate::shared::protocol::{DocumentInput, Event, Request, BUFFERS_KEY, JSON_KEY};

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
        if let Some(kind) = pool::helper_kind(&data) {
            // This worker is a reader (`extract`) or an indexing helper (`pool`) of another one.
            if super::extract::is_read_request(&kind) {
                return super::extract::handle_reader_message(&data);
            }
            return pool::handle_helper_message(&data);
        }
        WorkerApp::handle_value(&app, &data);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&Event::Hello);
}

impl WorkerApp {
    /// Handles one message from the page: JSON text of a [`Request`], or a `{json, buffers}`
    /// object whose documents' bytes are the transferred buffers
    /// ([`crate::shared::protocol::BUFFERS_KEY`]); results are [`post`]ed.
    pub fn handle_value(this: &Rc<WorkerApp>, data: &JsValue) {
        if let Some(text) = data.as_string() {
            return WorkerApp::handle_json(this, &text);
        }
        let json = js_sys::Reflect::get(data, &JsValue::from_str(JSON_KEY))
            .ok()
            .and_then(|j| j.as_string());
        let Some(json) = json else {
            post(&Event::Error {
                message: "worker received a message that is not a request".into(),
            });
            return;
        };
        let buffers: Vec<js_sys::Uint8Array> =
            js_sys::Reflect::get(data, &JsValue::from_str(BUFFERS_KEY))
                .map(|b| js_sys::Array::from(&b))
                .map(|a| a.iter().map(|b| js_sys::Uint8Array::new(&b)).collect())
                .unwrap_or_default();
        match Request::from_json(&json) {
            Ok(Request::IndexDocuments { mut docs, dims }) => {
                for d in &mut docs {
                    d.bytes = d.buffer.and_then(|i| buffers.get(i)).map(|b| b.to_vec());
                }
                WorkerApp::dispatch(this, Request::IndexDocuments { docs, dims });
            }
            Ok(req) => WorkerApp::dispatch(this, req),
            Err(message) => post(&Event::Error { message }),
        }
    }

    /// Handles one message (JSON text of a [`Request`]); results are [`post`]ed.
    pub fn handle_json(this: &Rc<WorkerApp>, text: &str) {
        match Request::from_json(text) {
            Ok(req) => WorkerApp::dispatch(this, req),
            Err(message) => post(&Event::Error { message }),
        }
    }

    /// Hands a request to its concern: model load ([`super::model_load`]), the document queue
    /// ([`super::queue`]), indexing jobs ([`super::index_job`]), deletion ([`super::persist`]),
    /// queries ([`super::queries`], remote searches among them). Long requests run as tasks; the job rules are
    /// [`super::jobs::JobState`]'s.
    pub(crate) fn dispatch(this: &Rc<WorkerApp>, req: Request) {
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
                let dropped = me.jobs.borrow_mut().model_switch();
                me.max_workers.set(workers);
                me.report_dropped("Another model was loaded", dropped);
                me.stop_pool();
                *me.model_source.borrow_mut() = None;
                wasm_bindgen_futures::spawn_local(async move {
                    me.load_model(url, sha256, no_store, db_version, lang).await
                });
            }
            Request::IndexCorpus { url, limit, dims } => {
                let generation = me.jobs.borrow().generation();
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
                let docs = vec![DocumentInput::text(name, content, format)];
                WorkerApp::dispatch(this, Request::IndexDocuments { docs, dims });
            }
            Request::IndexDocuments { docs, dims } => {
                let ticket = me.jobs.borrow_mut().enqueue(docs.len());
                wasm_bindgen_futures::spawn_local(async move {
                    me.index_documents(docs, dims, ticket).await
                });
            }
            Request::IndexPassages { passages, dims } => {
                let generation = me.jobs.borrow().generation();
                wasm_bindgen_futures::spawn_local(async move {
                    me.index_job(passages, dims, false, None, generation).await
                });
            }
            Request::Reindex { dims } => {
                let generation = me.jobs.borrow().generation();
                wasm_bindgen_futures::spawn_local(
                    async move { me.reindex(dims, generation).await },
                );
            }
            Request::Cancel => {
                let dropped = me.jobs.borrow_mut().cancel();
                me.report_dropped("Cancelled", dropped);
                // A helper's forward pass cannot be interrupted: stop the helpers themselves.
                me.stop_pool();
            }
            Request::Search { id, query, k, mode } => me.search(id, &query, k, mode),
            Request::RemoteSearch {
                id,
                query,
                k,
                serve,
                dims,
            } => {
                wasm_bindgen_futures::spawn_local(async move {
                    me.remote_search(id, query, k, serve, dims).await
                });
            }
            Request::DeleteDoc { doc_id } => {
                wasm_bindgen_futures::spawn_local(async move { me.delete_doc(doc_id).await });
            }
            Request::ClearIndex => {
                wasm_bindgen_futures::spawn_local(async move { me.clear_index().await });
            }
            Request::Cosine { a, b, dims } => me.cosine(&a, &b, dims),
            Request::Tokenize { text } => me.tokenize(&text),
            Request::Project { query, max_points } => me.project(query.as_deref(), max_points),
            Request::DocText { doc_id } => {
                wasm_bindgen_futures::spawn_local(async move { me.doc_text(doc_id).await });
            }
            Request::Crash => panic!("crash requested by the UI (test hook)"),
        }
    }
}
