//! Binary documents (PDF, Word, OpenDocument, EPUB) are read in a worker of their own: the
//! *reader*.
//!
//! Why: on wasm32 a panic cannot be caught — it aborts the wasm instance — and `pdf-extract`
//! panics on some fonts it cannot decode (natively [`lightembed_ingest::pdf_sections`] catches
//! that per page and leaves the page out). Read in the indexing worker, one such PDF would kill
//! the worker, its index in memory and the rest of the drop. Read in the reader, only the reader
//! dies: the indexing worker sees it go ([`Reader::read`]), starts a new one, and
//!
//! * for a PDF, reads it again with the page it died on left out (the reader says which page it
//!   is on before each, [`lightembed_ingest::pdf_sections_skipping`]) — the pages left out are
//!   the ones the CLI leaves out, so the passages stay the CLI's;
//! * for anything else, or after [`MAX_RESTARTS`] pages, names the file with a reason and goes on.
//!
//! The reader is the same worker script as the indexing worker (like the helpers of
//! [`super::pool`]): its first message, [`READ`], makes it read. Messages between the two are
//! plain JS objects (the bytes copied by structured clone); the sections come back as JSON text.
//! Outside a dedicated worker (the browser tests run the worker's code on the page) documents
//! are read in place.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use js_sys::{Array, Object, Reflect, Uint8Array};
use lightembed_ingest::{DocumentError, Format, Section};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, Worker};

use crate::shared::web::sleep_ms;

/// The message key of the reader protocol (value: the message kind); the pool's key, so the
/// worker's message handler routes both the same way ([`super::pool::helper_kind`]).
const KIND: &str = "lightembedHelper";
/// Indexing worker → reader: read `bytes` as `format`, leaving out the PDF pages in `skip`.
pub const READ: &str = "read";
/// Reader → indexing worker: about to read page `page`.
const PAGE: &str = "page";
/// Reader → indexing worker: `json` holds `[title, sections, warning]`.
const DONE: &str = "read-done";
/// Reader → indexing worker: the document cannot be read (`message`, `rule`).
const FAILED: &str = "read-failed";
/// A PDF whose reader dies on more pages than this is given up (each death costs a restart and a
/// new parse of the whole file).
pub const MAX_RESTARTS: usize = 64;
/// A reader that says nothing for this long (no page started, no answer) is stopped and the
/// document named as too slow to read.
pub const SILENCE_MS: i32 = 120_000;

/// What a reader gives for a document: ingestion's `document_sections` result.
pub type Read = (Option<String>, Vec<Section>, Option<String>);

/// Why a document was not read: ingestion's error, or the reader died or went silent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The words shown next to the file's name.
    pub message: String,
    /// A stable name ([`DocumentError::rule`], or `reader-crashed`, `reader-silent`).
    pub rule: String,
}

impl From<DocumentError> for ReadError {
    fn from(e: DocumentError) -> ReadError {
        ReadError {
            message: e.to_string(),
            rule: e.rule().to_string(),
        }
    }
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

/// Reads `bytes` as `format` here, leaving out the PDF pages in `skip` (`on_page` before each
/// page read): the reader's work, also what runs in place outside a dedicated worker.
pub fn read_here(
    bytes: &[u8],
    format: Format,
    skip: &[u32],
    on_page: &mut dyn FnMut(u32),
) -> Result<Read, DocumentError> {
    match format {
        Format::Pdf => lightembed_ingest::pdf_sections_skipping(bytes, skip, on_page)
            .map(|(t, s)| (t, s, None)),
        _ => lightembed_ingest::document_sections(bytes, format),
    }
}

/// Handles a reader-protocol message in the reader worker (see the module docs).
pub fn handle_reader_message(data: &JsValue) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let bytes = Uint8Array::new(&get(data, "bytes")).to_vec();
    let format: Option<Format> = get(data, "format")
        .as_string()
        .and_then(|f| serde_json::from_str(&f).ok());
    let skip: Vec<u32> = Array::from(&get(data, "skip"))
        .iter()
        .filter_map(|v| v.as_f64())
        .map(|v| v as u32)
        .collect();
    let Some(format) = format else {
        let _ = scope.post_message(&message(
            FAILED,
            &[
                ("message", "the reader was sent no format".into()),
                ("rule", "broken".into()),
            ],
        ));
        return;
    };
    let mut on_page = |n: u32| {
        let _ = scope.post_message(&message(PAGE, &[("page", JsValue::from(n))]));
    };
    let reply = match read_here(&bytes, format, &skip, &mut on_page) {
        Ok((title, sections, warning)) => {
            match serde_json::to_string(&(title, sections, warning)) {
                Ok(json) => message(DONE, &[("json", JsValue::from_str(&json))]),
                Err(e) => message(
                    FAILED,
                    &[
                        ("message", JsValue::from_str(&e.to_string())),
                        ("rule", "broken".into()),
                    ],
                ),
            }
        }
        Err(e) => message(
            FAILED,
            &[
                ("message", JsValue::from_str(&e.to_string())),
                ("rule", JsValue::from_str(e.rule())),
            ],
        ),
    };
    let _ = scope.post_message(&reply);
}

/// `true` for a message of the reader protocol sent to a reader.
pub fn is_read_request(kind: &str) -> bool {
    kind == READ
}

/// What the indexing worker hears from its reader.
#[derive(Default)]
struct Inbox {
    /// The page the reader said it started last.
    page: Option<u32>,
    /// The answer: the JSON of the sections, or the error.
    answer: Option<Result<String, ReadError>>,
    /// The reader died (a panic, a trap, its script failed).
    died: bool,
    /// The reader said hello: its message handler is installed (a message posted before would
    /// be lost).
    hello: bool,
    waiter: Option<oneshot::Sender<()>>,
}

impl Inbox {
    fn wake(&mut self) {
        if let Some(w) = self.waiter.take() {
            let _ = w.send(());
        }
    }
}

/// One reader worker, kept for the documents after it while it lives.
pub struct Reader {
    worker: Worker,
    inbox: Rc<RefCell<Inbox>>,
    _closures: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl Reader {
    /// Starts a reader (the indexing worker's own script); `None` when it cannot be started.
    fn start() -> Option<Reader> {
        let worker = Worker::new(&super::pool::worker_url()).ok()?;
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let i1 = inbox.clone();
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let data = get(&ev, "data");
            let mut inbox = i1.borrow_mut();
            if let Some(text) = data.as_string() {
                // The worker's own events (JSON text): its hello, or its panic hook's last word.
                if text.contains("\"Panic\"") {
                    inbox.died = true;
                    inbox.wake();
                } else if text.contains("\"Hello\"") {
                    inbox.hello = true;
                    inbox.wake();
                }
                return;
            }
            match get(&data, KIND).as_string().as_deref() {
                Some(PAGE) => inbox.page = get(&data, "page").as_f64().map(|p| p as u32),
                Some(DONE) => {
                    inbox.answer = Some(Ok(get(&data, "json").as_string().unwrap_or_default()))
                }
                Some(FAILED) => {
                    inbox.answer = Some(Err(ReadError {
                        message: get(&data, "message").as_string().unwrap_or_default(),
                        rule: get(&data, "rule").as_string().unwrap_or_default(),
                    }))
                }
                _ => return,
            }
            inbox.wake();
        });
        let i2 = inbox.clone();
        let on_error = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            // Not the page's error: this worker handles it (the reader is replaced).
            if let Ok(e) = ev.clone().dyn_into::<web_sys::Event>() {
                e.prevent_default();
            }
            let mut inbox = i2.borrow_mut();
            inbox.died = true;
            inbox.wake();
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Some(Reader {
            worker,
            inbox,
            _closures: vec![on_message, on_error],
        })
    }

    /// Stops the reader. Its Rust handlers go first: an event already queued for it must not
    /// find the closures about to be dropped. The `error` that follows a panic's message still
    /// needs a handler that calls `preventDefault`: an error left unhandled here goes on to the
    /// page as this worker's own, and the page would restart it.
    pub fn terminate(&self) {
        self.worker.set_onmessage(None);
        let swallow = js_sys::Function::new_with_args("e", "e.preventDefault();");
        self.worker.set_onerror(Some(&swallow));
        self.worker.terminate();
    }

    /// One attempt: `Ok(Ok(read))`, `Ok(Err(ingestion's error))`, or `Err(Some(page))` / `Err(None)`
    /// when the reader died (on that page / before any) — `Err` also when it went silent, with
    /// `silent` set.
    async fn attempt(
        &self,
        bytes: &Uint8Array,
        format: Format,
        skip: &[u32],
    ) -> Result<Result<Read, ReadError>, (Option<u32>, bool)> {
        {
            let mut inbox = self.inbox.borrow_mut();
            inbox.page = None;
            inbox.answer = None;
        }
        // A new reader takes a moment to start its wasm: wait for its hello.
        loop {
            let (tx, rx) = oneshot::channel();
            {
                let mut inbox = self.inbox.borrow_mut();
                if inbox.died {
                    return Err((None, false));
                }
                if inbox.hello {
                    break;
                }
                inbox.waiter = Some(tx);
            }
            let timeout = std::pin::pin!(sleep_ms(SILENCE_MS));
            if let futures::future::Either::Right(_) = futures::future::select(rx, timeout).await {
                return Err((None, true));
            }
        }
        let skip_js: Array = skip.iter().map(|&p| JsValue::from(p)).collect();
        let format_json = serde_json::to_string(&format).unwrap_or_default();
        let msg = message(
            READ,
            &[
                ("bytes", bytes.clone().into()),
                ("format", JsValue::from_str(&format_json)),
                ("skip", skip_js.into()),
            ],
        );
        if self.worker.post_message(&msg).is_err() {
            return Err((None, false));
        }
        loop {
            let (tx, rx) = oneshot::channel();
            {
                let mut inbox = self.inbox.borrow_mut();
                if inbox.died {
                    return Err((inbox.page, false));
                }
                if let Some(answer) = inbox.answer.take() {
                    return Ok(answer.and_then(|json| {
                        serde_json::from_str::<Read>(&json).map_err(|e| ReadError {
                            message: format!("the reader's answer did not parse ({e})"),
                            rule: "broken".into(),
                        })
                    }));
                }
                inbox.waiter = Some(tx);
            }
            let page_before = self.inbox.borrow().page;
            let timeout = std::pin::pin!(sleep_ms(SILENCE_MS));
            match futures::future::select(rx, timeout).await {
                futures::future::Either::Left(_) => {}
                futures::future::Either::Right(_) => {
                    // Still on the same page after the whole wait: stuck.
                    let inbox = self.inbox.borrow();
                    if inbox.page == page_before && inbox.answer.is_none() && !inbox.died {
                        return Err((inbox.page, true));
                    }
                }
            }
        }
    }
}

/// Reads a binary document in a reader worker (`slot` keeps the reader between documents;
/// a dead one is replaced), or in place outside a dedicated worker. See the module docs.
///
/// PDF pages a reading left out, by why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LostPages {
    /// The reader died on them (fonts it cannot decode; the CLI leaves the same pages out).
    pub crashed: Vec<u32>,
    /// The reader said nothing for [`SILENCE_MS`] on each (stuck, or starved of CPU on a busy
    /// machine): the rest of the document is read without them rather than given up.
    pub silent: Vec<u32>,
}

/// Returns the sections and the PDF pages left out ([`LostPages`]).
///
/// # Errors
/// [`ReadError`]: ingestion's reason, or the reader died on every try, or went silent before
/// it started a page (or on a document that is not a PDF).
pub async fn read_document(
    slot: &RefCell<Option<Rc<Reader>>>,
    bytes: &[u8],
    format: Format,
) -> Result<(Read, LostPages), ReadError> {
    if js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .is_err()
    {
        return read_here(bytes, format, &[], &mut |_| {})
            .map(|r| (r, LostPages::default()))
            .map_err(ReadError::from);
    }
    let js_bytes = Uint8Array::from(bytes);
    let mut skip: Vec<u32> = Vec::new();
    let mut silent_pages: Vec<u32> = Vec::new();
    let lost = |skip: Vec<u32>, silent: Vec<u32>| LostPages {
        crashed: skip.into_iter().filter(|p| !silent.contains(p)).collect(),
        silent,
    };
    loop {
        let reader = match slot.borrow().clone() {
            Some(r) => Some(r),
            None => Reader::start().map(Rc::new),
        };
        let Some(reader) = reader else {
            // No worker could be started (never seen): read here, as the tests do.
            return read_here(bytes, format, &skip, &mut |_| {})
                .map(|r| (r, lost(skip, silent_pages)))
                .map_err(ReadError::from);
        };
        *slot.borrow_mut() = Some(reader.clone());
        match reader.attempt(&js_bytes, format, &skip).await {
            Ok(result) => return result.map(|r| (r, lost(skip, silent_pages))),
            Err((page, silent)) => {
                reader.terminate();
                *slot.borrow_mut() = None;
                if let (true, Some(p), Format::Pdf) = (silent, page, format) {
                    if skip.len() < MAX_RESTARTS {
                        // One page that never finishes: the others are read without it.
                        skip.push(p);
                        silent_pages.push(p);
                        continue;
                    }
                }
                if silent {
                    return Err(ReadError {
                        message: format!(
                            "the reader stopped answering{} for {} s; not read",
                            page.map(|p| format!(" on page {p}")).unwrap_or_default(),
                            SILENCE_MS / 1000
                        ),
                        rule: "reader-silent".into(),
                    });
                }
                match page {
                    Some(p) if format == Format::Pdf && skip.len() < MAX_RESTARTS => skip.push(p),
                    _ => {
                        return Err(ReadError {
                            message: format!(
                                "the {} reader failed on this file{}",
                                if format == Format::Pdf {
                                    "PDF"
                                } else {
                                    "document"
                                },
                                if skip.is_empty() {
                                    String::new()
                                } else {
                                    format!(" (on {} pages)", skip.len() + 1)
                                }
                            ),
                            rule: "reader-crashed".into(),
                        })
                    }
                }
            }
        }
    }
}
