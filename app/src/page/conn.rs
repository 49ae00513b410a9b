//! The UI's connection to the worker: spawning, the startup handshake (requests are queued until
//! the worker says [`Event::Hello`]), and crash recovery — when the worker panics or throws, it
//! is terminated, a new one is started, the last model load is replayed (the model comes from the
//! IndexedDB cache and the index is restored, so nothing is re-embedded) and the UI is told.

use std::cell::RefCell;
use std::rc::Rc;

use lightembed_app::shared::protocol::{Event, Request};
use lightembed_app::shared::web::now_ms;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker};

/// The worker script trunk emits for `data-bin="worker" data-loader-shim` (SIMD128 kernels).
const WORKER_URL: &str = "./worker_loader.js";

/// The worker script to start: `window.lightembedWorker` when index.html set it (the relaxed-SIMD
/// build, `./worker_relaxed_loader.js`, where the browser validates relaxed SIMD and the URL has
/// no `relaxed=0`), else [`WORKER_URL`].
fn worker_url() -> String {
    js_sys::Reflect::get(&js_sys::global(), &"lightembedWorker".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| WORKER_URL.to_string())
}

/// More restarts than this within [`RESTART_WINDOW_MS`] and the UI stops restarting.
const MAX_RESTARTS: usize = 3;
const RESTART_WINDOW_MS: f64 = 20_000.0;

/// What the connection reports to the UI.
pub enum ConnEvent {
    /// A message from the worker.
    Worker(Event),
    /// The worker crashed and was restarted (`gave_up`: too many crashes, not restarted).
    Crashed {
        /// Why (panic message or error event text).
        reason: String,
        /// Restarts so far.
        restarts: usize,
        /// `true` when the UI stopped restarting.
        gave_up: bool,
    },
}

type Handler = Rc<dyn Fn(ConnEvent)>;

struct Conn {
    worker: Option<Worker>,
    generation: u64,
    ready: bool,
    /// Messages waiting for the worker's hello: JSON text, or `{json, buffers}` objects.
    queue: Vec<JsValue>,
    last_load: Option<String>,
    handler: Handler,
    restarts: Vec<f64>,
    _closures: Vec<Closure<dyn FnMut(JsValue)>>,
}

thread_local! {
    static CONN: RefCell<Option<Conn>> = const { RefCell::new(None) };
}

/// Starts the worker; `handler` receives every event. Call once.
pub fn start(handler: impl Fn(ConnEvent) + 'static) {
    CONN.with(|c| {
        *c.borrow_mut() = Some(Conn {
            worker: None,
            generation: 0,
            ready: false,
            queue: Vec::new(),
            last_load: None,
            handler: Rc::new(handler),
            restarts: Vec::new(),
            _closures: Vec::new(),
        });
    });
    spawn();
}

/// Sends a request (queued until the worker is up). A `LoadModel` is remembered and replayed
/// after a crash.
pub fn send(req: &Request) {
    let json = req.to_json();
    if matches!(req, Request::LoadModel { .. }) {
        CONN.with(|c| {
            if let Some(conn) = c.borrow_mut().as_mut() {
                conn.last_load = Some(json.clone());
            }
        });
    }
    post_or_queue(JsValue::from_str(&json), None);
}

/// Sends a request with file bytes ([`DocumentInput::buffer`] numbers `buffers`): one
/// `{json, buffers}` object, the buffers transferred (not copied) to the worker.
///
/// [`DocumentInput::buffer`]: lightembed_app::shared::protocol::DocumentInput::buffer
pub fn send_with_buffers(req: &Request, buffers: Vec<js_sys::ArrayBuffer>) {
    use lightembed_app::shared::protocol::{BUFFERS_KEY, JSON_KEY};
    let msg = js_sys::Object::new();
    let list: js_sys::Array = buffers.into_iter().map(JsValue::from).collect();
    let _ = js_sys::Reflect::set(&msg, &JSON_KEY.into(), &JsValue::from_str(&req.to_json()));
    let _ = js_sys::Reflect::set(&msg, &BUFFERS_KEY.into(), &list);
    post_or_queue(msg.into(), Some(list));
}

fn post_or_queue(msg: JsValue, transfer: Option<js_sys::Array>) {
    CONN.with(|c| {
        let mut c = c.borrow_mut();
        let Some(conn) = c.as_mut() else { return };
        match (&conn.worker, conn.ready) {
            (Some(w), true) => {
                let _ = match &transfer {
                    Some(t) => w.post_message_with_transfer(&msg, t),
                    None => w.post_message(&msg),
                };
            }
            _ => conn.queue.push(msg),
        }
    });
}

fn spawn() {
    let result = Worker::new(&worker_url());
    let worker = match result {
        Ok(w) => w,
        Err(e) => {
            let handler = CONN.with(|c| c.borrow().as_ref().map(|c| c.handler.clone()));
            if let Some(h) = handler {
                h(ConnEvent::Worker(Event::Error {
                    message: format!(
                        "The worker could not be started: {}",
                        lightembed_app::shared::web::js_error(&e)
                    ),
                }));
            }
            return;
        }
    };
    let generation = CONN.with(|c| {
        let mut c = c.borrow_mut();
        let conn = c.as_mut().expect("started");
        conn.generation += 1;
        conn.generation
    });

    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
        let ev: MessageEvent = ev.unchecked_into();
        let Some(text) = ev.data().as_string() else {
            return;
        };
        let event = match Event::from_json(&text) {
            Ok(e) => e,
            Err(message) => Event::Error { message },
        };
        on_event(generation, event);
    });
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
        let reason = ev
            .dyn_ref::<ErrorEvent>()
            .map(|e| e.message())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "the worker script failed".to_string());
        if let Some(e) = ev.dyn_ref::<web_sys::Event>() {
            e.prevent_default();
        }
        crashed(generation, reason);
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    CONN.with(|c| {
        let mut c = c.borrow_mut();
        let conn = c.as_mut().expect("started");
        conn.worker = Some(worker);
        conn.ready = false;
        // The old worker's handlers may be running right now (a crash is reported from inside
        // them) or have events queued: never drop them, leak them (a few bytes per crash).
        for old in std::mem::replace(&mut conn._closures, vec![on_message, on_error]) {
            old.forget();
        }
    });
}

fn on_event(generation: u64, event: Event) {
    let handler = CONN.with(|c| {
        let mut c = c.borrow_mut();
        let conn = c.as_mut()?;
        if conn.generation != generation {
            return None; // from a worker that was replaced
        }
        if matches!(event, Event::Hello) {
            conn.ready = true;
            if let Some(w) = &conn.worker {
                // (A queued `{json, buffers}` object is cloned, not transferred: it waited.)
                for msg in conn.queue.drain(..) {
                    let _ = w.post_message(&msg);
                }
            }
        }
        Some(conn.handler.clone())
    });
    let Some(handler) = handler else { return };
    if let Event::Panic { message } = &event {
        let reason = format!("panic: {message}");
        handler(ConnEvent::Worker(event.clone()));
        crashed(generation, reason);
        return;
    }
    handler(ConnEvent::Worker(event));
}

fn crashed(generation: u64, reason: String) {
    let outcome = CONN.with(|c| {
        let mut c = c.borrow_mut();
        let conn = c.as_mut()?;
        if conn.generation != generation {
            return None; // already handled (a panic is followed by an error event)
        }
        if let Some(w) = conn.worker.take() {
            w.set_onmessage(None);
            w.set_onerror(None);
            w.terminate();
        }
        conn.generation += 1; // ignore anything else from the dead worker
        conn.ready = false;
        conn.queue.clear();
        let now = now_ms();
        conn.restarts.retain(|&t| now - t < RESTART_WINDOW_MS);
        conn.restarts.push(now);
        let gave_up = conn.restarts.len() > MAX_RESTARTS;
        if !gave_up {
            if let Some(load) = conn.last_load.clone() {
                conn.queue.push(JsValue::from_str(&load));
            }
        }
        Some((conn.handler.clone(), conn.restarts.len(), gave_up))
    });
    let Some((handler, restarts, gave_up)) = outcome else {
        return;
    };
    handler(ConnEvent::Crashed {
        reason,
        restarts,
        gave_up,
    });
    if !gave_up {
        spawn();
    }
}
