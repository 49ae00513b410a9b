//! Helpers shared by the browser tests (kept in `common/mod.rs` so it is not a test target).
#![allow(dead_code)]

pub mod storage_cases;

use std::cell::RefCell;
use std::rc::Rc;

use lightembed_app::shared::protocol::{Event, IndexState, Passage};
use lightembed_app::shared::web::{now_ms, sleep_ms};
use wasm_bindgen::JsValue;

/// A valid static fixture model (fp32, uncased) from the reference packer.
pub const MODEL: &[u8] = include_bytes!("../../../tests/fixtures/models/static_fp32_uncased.bin");

/// A database name no other test (or earlier run) uses.
pub fn unique_db(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}",
        js_sys::Date::now() as u64,
        (js_sys::Math::random() * 1e9) as u64
    )
}

/// A `blob:` URL serving `bytes` (fetch works on it like on a served file).
pub fn blob_url(bytes: &[u8]) -> String {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes).into());
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).expect("blob");
    web_sys::Url::create_object_url_with_blob(&blob).expect("object url")
}

/// SHA-256 (hex) of a model file: its trailing 32 bytes.
pub fn sha_hex(model: &[u8]) -> String {
    model[model.len() - 32..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The model with header byte 44 (`version_major`) set to `major` and the trailer re-hashed.
pub fn with_major(model: &[u8], major: u8) -> Vec<u8> {
    let mut b = model.to_vec();
    let v = lightembed::Model::from_bytes(model)
        .unwrap()
        .header()
        .model_version();
    lightembed::writer::set_model_version(&mut b, lightembed::ModelVersion { major, ..v });
    b
}

/// The model with header `model_id` (bytes 48..64, NUL-padded) set to `id` and the trailer
/// re-hashed: the same vectors under another identity (e.g. one that names a language).
pub fn with_model_id(model: &[u8], id: &str) -> Vec<u8> {
    let mut b = model.to_vec();
    lightembed::writer::set_model_id(&mut b, id).unwrap();
    b
}

/// Passage `id` of document `doc`: page `page`, under `heading`, at `url`, made as ingestion
/// makes passages (`lightembed_ingest::Passage::new`: its title and embedded text follow).
pub fn passage(doc: &str, id: &str, page: &str, heading: &str, url: &str, text: &str) -> Passage {
    Passage::new(
        doc,
        lightembed_ingest::Passage::new(id, page, heading, url, text),
    )
}

/// `p` with another text (its embedded text following).
pub fn with_text(p: &Passage, text: &str) -> Passage {
    let i = &p.passage;
    passage(&p.doc_id, &i.id, &i.page_title, &i.heading, &i.url, text)
}

/// `n` passages over 3 documents.
pub fn passages(n: usize) -> Vec<Passage> {
    (0..n)
        .map(|i| {
            passage(
                &format!("doc{}", i % 3),
                &format!("doc{}#{i}", i % 3),
                &format!("Document {}", i % 3),
                "",
                &format!("https://example.invalid/{i}"),
                &format!(
                    "passage {i} the quick brown fox {} jumps over the lazy dog",
                    "hello world ".repeat(i % 7)
                ),
            )
        })
        .collect()
}

/// Events the worker posted, in order.
#[derive(Clone, Default)]
pub struct Events(pub Rc<RefCell<Vec<Event>>>);

impl Events {
    /// Routes the worker's `post` into this log.
    pub fn install() -> Events {
        let log = Events::default();
        let l2 = log.clone();
        lightembed_app::worker::set_sink(Some(Rc::new(move |e: &Event| {
            l2.0.borrow_mut().push(e.clone())
        })));
        log
    }

    /// Forgets everything logged so far.
    pub fn clear(&self) {
        self.0.borrow_mut().clear();
    }

    /// A snapshot.
    pub fn all(&self) -> Vec<Event> {
        self.0.borrow().clone()
    }

    /// Waits (≤ 20 s) for an [`Event::Index`] whose state matches `pred` and returns the state.
    pub async fn index_state<F: Fn(&IndexState) -> bool>(&self, what: &str, pred: F) -> IndexState {
        match self
            .wait(what, |e| matches!(e, Event::Index { state } if pred(state)))
            .await
        {
            Event::Index { state } => state,
            _ => unreachable!(),
        }
    }

    /// Waits for `ModelReady`, then for the index state that follows it matching `pred` (a model
    /// load's restored or empty index).
    pub async fn ready_state<F: Fn(&IndexState) -> bool>(&self, what: &str, pred: F) -> IndexState {
        self.wait(what, |e| matches!(e, Event::ModelReady { .. }))
            .await;
        self.index_state(what, pred).await
    }

    /// Waits (≤ 20 s) for an event matching `pred` and returns it.
    pub async fn wait<F: Fn(&Event) -> bool>(&self, what: &str, pred: F) -> Event {
        let t0 = now_ms();
        loop {
            if let Some(e) = self.0.borrow().iter().find(|e| pred(e)) {
                return e.clone();
            }
            if now_ms() - t0 > 20_000.0 {
                panic!("timed out waiting for {what}; got {:?}", self.0.borrow());
            }
            sleep_ms(10).await;
        }
    }
}

/// Logs to the browser console (visible with `--nocapture`-like runner output).
pub fn log(s: &str) {
    web_sys::console::log_1(&JsValue::from_str(s));
}

/// Writes database `name` as the app did before storage version 2 (IndexedDB version 1, the
/// stores `models`, `passages`, `index`): `passages` as stored JSON texts (keyed by their `id`)
/// and, when given, the index bytes under `"current"` with no sections beside them.
pub async fn write_v1_database(name: &str, passages: &[&str], index: Option<&[u8]>) {
    use idb::{Factory, ObjectStoreParams, TransactionMode};
    let factory = Factory::new().unwrap();
    let mut req = factory.open(name, Some(1)).unwrap();
    req.on_upgrade_needed(|event| {
        use idb::Event as _;
        let db = event.target().unwrap().database().unwrap();
        for store in ["models", "passages", "index"] {
            db.create_object_store(store, ObjectStoreParams::new())
                .unwrap();
        }
    });
    let db = req.await.unwrap();
    let tx = db
        .transaction(&["passages", "index"], TransactionMode::ReadWrite)
        .unwrap();
    let ps = tx.object_store("passages").unwrap();
    for json in passages {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let id = v["id"].as_str().unwrap();
        ps.put(&JsValue::from_str(json), Some(&JsValue::from_str(id)))
            .unwrap();
    }
    if let Some(bytes) = index {
        tx.object_store("index")
            .unwrap()
            .put(
                &js_sys::Uint8Array::from(bytes).into(),
                Some(&JsValue::from_str("current")),
            )
            .unwrap();
    }
    assert!(matches!(
        tx.await.unwrap(),
        idb::TransactionResult::Committed
    ));
    db.close();
}
