//! Persistence in IndexedDB (crate `idb`), used by the worker.
//!
//! A database ([`DB_NAME`], version [`DB_VERSION`]) with three object stores:
//!
//! | store | key | value |
//! |---|---|---|
//! | `models` | model URL | `{ validator: string, bytes: Uint8Array }` — the verified `.bin` |
//! | `passages` | passage id | JSON text of a [`Passage`]: `doc_id` and ingestion's passage fields (what a re-index embeds) |
//! | `index` | `"current"` | `Uint8Array`: `Index::to_bytes()` (manifest first, spec §8) |
//! | `index` | `"sections"` | JSON text: passage id → `[page title, heading]` ([`SavedIndex::sections`]) |
//!
//! Passages and the index (bytes and sections) are written in **one** transaction, so a reload
//! never sees an index without its passages or the other way round.
//!
//! Version 2 ([`DB_VERSION`]) stores ingestion's passage shape and the index's page titles and
//! headings apart. A database of version 1 (the app before it) is upgraded in place: its stores
//! stay, its passages (page title in `title`, heading apart) read as this version's without loss
//! ([`stored_passage`]), and its index, titled `Page › Heading` and without sections, is offered
//! for a rebuild from those passages instead of being read
//! ([`crate::worker::state::OLD_APP_INDEX`]). Opening version 2 closes a version-1 tab's
//! connection ([`NEWER_IN_OTHER_TAB`]), and that older build cannot reopen it, so the two shapes
//! are never written side by side.
//!
//! Each language of the app has its own database of this shape ([`crate::shared::lang::db_name`]:
//! `DB_NAME` for English, `DB_NAME-tr` for Turkish); the worker has one open at a time.
//!
//! When IndexedDB is missing, blocked by another tab, or refuses to open, [`Storage::open`]
//! returns a memory-only storage with the reason; writes that fail later (e.g. quota) return
//! an error the worker reports, and the app keeps working in memory.

use std::future::IntoFuture;

use idb::{Database, Factory, ObjectStoreParams, TransactionMode};
use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use crate::shared::protocol::Passage;
use crate::shared::web::{js_error, sleep_ms};
use crate::worker::state::{SavedIndex, WorkerState};

/// The pieces in which a save moves the index's bytes out of the worker's heap (bytes).
pub const SAVE_CHUNK_BYTES: usize = 4 << 20;

/// An index ready to store: its bytes already in JavaScript memory, and its sections
/// ([`SavedIndex`]'s two parts).
pub struct JsSavedIndex {
    /// `Index::to_bytes()`, as one `Uint8Array`.
    pub bytes: Uint8Array,
    /// As [`SavedIndex::sections`].
    pub sections: Option<String>,
}

impl JsSavedIndex {
    /// The index of `state` written into JavaScript memory in pieces of [`SAVE_CHUNK_BYTES`]
    /// and joined there, so the worker's heap never holds the serialised index beside the
    /// index (at 100k passages that second copy, and the holes it left in a heap that never
    /// shrinks, ran the worker out of its 4 GiB). `None` when there is no index.
    pub fn of(state: &WorkerState) -> Option<JsSavedIndex> {
        let mut pieces: Vec<Uint8Array> = Vec::new();
        let mut total = 0u32;
        let wrote = state.write_index(SAVE_CHUNK_BYTES, &mut |piece| {
            total += piece.len() as u32;
            pieces.push(Uint8Array::from(piece));
        });
        if !wrote {
            return None;
        }
        let bytes = Uint8Array::new_with_length(total);
        let mut at = 0u32;
        for piece in pieces {
            bytes.set(&piece, at);
            at += piece.length();
        }
        Some(JsSavedIndex {
            bytes,
            sections: Some(state.sections_json()),
        })
    }

    /// Copies a [`SavedIndex`] into JavaScript memory.
    pub fn from_saved(saved: &SavedIndex) -> JsSavedIndex {
        JsSavedIndex {
            bytes: Uint8Array::from(&saved.bytes[..]),
            sections: saved.sections.clone(),
        }
    }

    /// Copies the bytes back into the worker's heap (the memory-only storage keeps them there).
    pub fn to_saved(&self) -> SavedIndex {
        SavedIndex {
            bytes: self.bytes.to_vec(),
            sections: self.sections.clone(),
        }
    }
}

/// IndexedDB database name used by the app.
pub const DB_NAME: &str = "lightembed";
/// Schema version (bump with a migration in `on_upgrade_needed`, or a reading of the older data):
/// 2 since passages are stored in ingestion's shape and the index keeps page titles apart (see
/// the module's notes on version 1).
pub const DB_VERSION: u32 = 2;
const MODELS: &str = "models";
const PASSAGES: &str = "passages";
const INDEX: &str = "index";
const INDEX_KEY: &str = "current";
const SECTIONS_KEY: &str = "sections";
/// How long opening may stay blocked (another tab holding an old version open) before giving up.
const OPEN_TIMEOUT_MS: i32 = 4000;
/// How long an open that is not blocked, only slow, may take before the app works in memory.
const OPEN_SLOW_MS: i32 = 60_000;

/// Shown when another tab opened a newer schema: this tab closed its connection (so the other tab
/// could upgrade) and keeps working in memory.
pub const NEWER_IN_OTHER_TAB: &str =
    "A newer version of this app is open in another tab, so this tab closed its database to let \
it upgrade: reload this tab to use the newer version.";

/// The app's storage: IndexedDB when available, else nothing (the worker keeps state in memory).
pub struct Storage {
    db: Option<Database>,
    reason: Option<String>,
}

fn err(e: idb::Error) -> String {
    // The DOMException name (QuotaExceededError, InvalidStateError, …) is the useful part.
    let s = e.to_string();
    if s.contains("QuotaExceeded") {
        format!("storage quota exceeded ({s})")
    } else {
        s
    }
}

impl Storage {
    /// Opens (creating or upgrading) database `name` at schema `version` ([`DB_VERSION`]). Never
    /// fails: on any error the result is memory-only and [`Storage::unavailable_reason`] says why.
    ///
    /// When another tab later opens a newer version, this connection is closed at once (so that
    /// tab's upgrade is not blocked) and `on_newer` runs: the caller switches to memory-only and
    /// tells the user ([`NEWER_IN_OTHER_TAB`]). A blocked open (another tab holds an older
    /// version and does not close it) gives up after `OPEN_TIMEOUT_MS` with a message saying to
    /// close that tab and reload; reloading once it is closed opens the database with its data.
    pub async fn open(name: &str, version: u32, on_newer: impl FnOnce() + 'static) -> Storage {
        match Self::try_open(name, version, on_newer).await {
            Ok(db) => Storage {
                db: Some(db),
                reason: None,
            },
            Err(reason) => Storage::memory(reason),
        }
    }

    /// Storage that persists nothing, with the reason shown to the user.
    pub fn memory(reason: impl Into<String>) -> Storage {
        Storage {
            db: None,
            reason: Some(reason.into()),
        }
    }

    async fn try_open(
        name: &str,
        version: u32,
        on_newer: impl FnOnce() + 'static,
    ) -> Result<Database, String> {
        let factory = Factory::new().map_err(|e| {
            format!(
                "IndexedDB is not available in this browser context ({})",
                err(e)
            )
        })?;
        let mut req = factory
            .open(name, Some(version))
            .map_err(|e| format!("IndexedDB refused to open the database ({})", err(e)))?;
        req.on_upgrade_needed(|event| {
            use idb::Event as _;
            let Ok(req) = event.target() else { return };
            let Ok(db) = req.database() else { return };
            let names = db.store_names();
            for store in [MODELS, PASSAGES, INDEX] {
                if !names.iter().any(|n| n == store) {
                    let _ = db.create_object_store(store, ObjectStoreParams::new());
                }
            }
        });
        let blocked = std::rc::Rc::new(std::cell::Cell::new(false));
        let b2 = blocked.clone();
        req.on_blocked(move |_| b2.set(true));
        let mut open = std::pin::pin!(req.into_future());
        // A blocked open gives up after OPEN_TIMEOUT_MS; one that is only slow (a busy machine:
        // seen at 4 s with a folder being read and indexed on two cores) is given longer.
        let mut waited = 0;
        let opened = loop {
            let timeout = std::pin::pin!(sleep_ms(OPEN_TIMEOUT_MS));
            match futures::future::select(open.as_mut(), timeout).await {
                futures::future::Either::Left((result, _)) => break Some(result),
                futures::future::Either::Right(_) => {
                    waited += OPEN_TIMEOUT_MS;
                    if blocked.get() || waited >= OPEN_SLOW_MS {
                        break None;
                    }
                }
            }
        };
        match opened {
            Some(Ok(db)) => {
                // `versionchange`: another tab asks for a newer schema. Close now (an open
                // connection would block its upgrade) and let the caller switch to memory.
                let js: JsValue = db.into();
                let raw: web_sys::IdbDatabase = js.clone().unchecked_into();
                let closing = raw.clone();
                let handler = wasm_bindgen::closure::Closure::once(move |_e: web_sys::Event| {
                    closing.close();
                    on_newer();
                });
                raw.set_onversionchange(Some(handler.as_ref().unchecked_ref()));
                handler.forget(); // lives as long as the connection
                Database::try_from(js)
                    .map_err(|e| format!("IndexedDB could not be opened ({})", err(e)))
            }
            Some(Err(e)) => {
                let e = err(e);
                Err(if e.contains("VersionError") {
                    // The stored schema is newer than this build's: another tab of a newer
                    // deployment upgraded it.
                    format!("a newer version of this app has upgraded the stored data ({e}); reload this tab to use it")
                } else {
                    format!("IndexedDB could not be opened ({e})")
                })
            }
            None => Err(if blocked.get() {
                "IndexedDB is blocked by another tab of this app holding an older version open; close it and reload".to_string()
            } else {
                format!("IndexedDB did not open within {} s", OPEN_SLOW_MS / 1000)
            }),
        }
    }

    /// `true` when IndexedDB is open.
    pub fn is_persistent(&self) -> bool {
        self.db.is_some()
    }

    /// Why storage is memory-only, if it is.
    pub fn unavailable_reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Switches to memory-only after a failed write (e.g. quota), keeping the reason.
    pub fn degrade(&mut self, reason: impl Into<String>) {
        if let Some(db) = self.db.take() {
            db.close();
        }
        self.reason = Some(reason.into());
    }

    /// Closes the database connection (the worker switches to another language's database);
    /// writes still pending finish first. Memory-only storage has nothing to close.
    pub fn close(&self) {
        if let Some(db) = &self.db {
            db.close();
        }
    }

    fn db(&self) -> Result<&Database, String> {
        self.db.as_ref().ok_or_else(|| {
            self.reason
                .clone()
                .unwrap_or_else(|| "storage unavailable".into())
        })
    }

    /// The cached model bytes for `url` and their validator, if any.
    ///
    /// # Errors
    /// IndexedDB errors.
    pub async fn get_model(&self, url: &str) -> Result<Option<(String, Vec<u8>)>, String> {
        let Ok(db) = self.db() else { return Ok(None) };
        let tx = db
            .transaction(&[MODELS], TransactionMode::ReadOnly)
            .map_err(err)?;
        let store = tx.object_store(MODELS).map_err(err)?;
        let value = store
            .get(JsValue::from_str(url))
            .map_err(err)?
            .await
            .map_err(err)?;
        let Some(value) = value else { return Ok(None) };
        let validator = Reflect::get(&value, &"validator".into())
            .ok()
            .and_then(|v| v.as_string());
        let bytes = Reflect::get(&value, &"bytes".into())
            .ok()
            .filter(|b| b.is_instance_of::<Uint8Array>());
        match (validator, bytes) {
            (Some(v), Some(b)) => Ok(Some((v, Uint8Array::new(&b).to_vec()))),
            _ => Ok(None),
        }
    }

    /// Caches verified model bytes for `url` under `validator`.
    ///
    /// # Errors
    /// IndexedDB errors (quota!).
    pub async fn put_model(&self, url: &str, validator: &str, bytes: &[u8]) -> Result<(), String> {
        let db = self.db()?;
        let obj = Object::new();
        let set = |k: &str, v: &JsValue| {
            Reflect::set(&obj, &k.into(), v)
                .map(|_| ())
                .map_err(|e| js_error(&e))
        };
        set("validator", &JsValue::from_str(validator))?;
        set("bytes", &Uint8Array::from(bytes).into())?;
        let tx = db
            .transaction(&[MODELS], TransactionMode::ReadWrite)
            .map_err(err)?;
        let store = tx.object_store(MODELS).map_err(err)?;
        store
            .put(&obj, Some(&JsValue::from_str(url)))
            .map_err(err)?
            .await
            .map_err(err)?;
        commit(tx).await
    }

    /// Removes the cached model for `url`.
    ///
    /// # Errors
    /// IndexedDB errors.
    pub async fn delete_model(&self, url: &str) -> Result<(), String> {
        let Ok(db) = self.db() else { return Ok(()) };
        let tx = db
            .transaction(&[MODELS], TransactionMode::ReadWrite)
            .map_err(err)?;
        let store = tx.object_store(MODELS).map_err(err)?;
        store
            .delete(JsValue::from_str(url))
            .map_err(err)?
            .await
            .map_err(err)?;
        commit(tx).await
    }

    /// The stored index, if any: its bytes and its sections (`None` in a database written by the
    /// app before version 2).
    ///
    /// # Errors
    /// IndexedDB errors.
    pub async fn get_index(&self) -> Result<Option<SavedIndex>, String> {
        let Ok(db) = self.db() else { return Ok(None) };
        let tx = db
            .transaction(&[INDEX], TransactionMode::ReadOnly)
            .map_err(err)?;
        let store = tx.object_store(INDEX).map_err(err)?;
        let bytes = store
            .get(JsValue::from_str(INDEX_KEY))
            .map_err(err)?
            .await
            .map_err(err)?;
        let sections = store
            .get(JsValue::from_str(SECTIONS_KEY))
            .map_err(err)?
            .await
            .map_err(err)?;
        Ok(bytes
            .filter(|v| v.is_instance_of::<Uint8Array>())
            .map(|v| SavedIndex {
                bytes: Uint8Array::new(&v).to_vec(),
                sections: sections.and_then(|s| s.as_string()),
            }))
    }

    /// In one transaction: stores `put` passages, deletes the `delete` passage ids, and replaces
    /// the index, bytes and sections (`None`: removes the stored index).
    ///
    /// # Errors
    /// IndexedDB errors (quota!); nothing is written then.
    pub async fn save(
        &self,
        put: &[Passage],
        delete: &[String],
        index: Option<&SavedIndex>,
    ) -> Result<(), String> {
        let js = index.map(JsSavedIndex::from_saved);
        self.save_js(put, delete, js.as_ref()).await
    }

    /// [`Storage::save`] with the index's bytes already in JavaScript memory
    /// ([`JsSavedIndex::of`]).
    ///
    /// # Errors
    /// IndexedDB errors (quota!); nothing is written then.
    pub async fn save_js(
        &self,
        put: &[Passage],
        delete: &[String],
        index: Option<&JsSavedIndex>,
    ) -> Result<(), String> {
        let db = self.db()?;
        let tx = db
            .transaction(&[PASSAGES, INDEX], TransactionMode::ReadWrite)
            .map_err(err)?;
        let ps = tx.object_store(PASSAGES).map_err(err)?;
        for p in put {
            let json = serde_json::to_string(p).map_err(|e| e.to_string())?;
            // Requests in one transaction complete in order; awaiting only the last is enough,
            // the transaction's completion covers them all.
            ps.put(&JsValue::from_str(&json), Some(&JsValue::from_str(p.id())))
                .map_err(err)?;
        }
        for id in delete {
            ps.delete(JsValue::from_str(id)).map_err(err)?;
        }
        let ix = tx.object_store(INDEX).map_err(err)?;
        match index {
            Some(saved) => {
                ix.put(&saved.bytes, Some(&JsValue::from_str(INDEX_KEY)))
                    .map_err(err)?;
                match &saved.sections {
                    Some(json) => {
                        ix.put(
                            &JsValue::from_str(json),
                            Some(&JsValue::from_str(SECTIONS_KEY)),
                        )
                        .map_err(err)?;
                    }
                    None => {
                        ix.delete(JsValue::from_str(SECTIONS_KEY)).map_err(err)?;
                    }
                }
            }
            None => {
                ix.delete(JsValue::from_str(INDEX_KEY)).map_err(err)?;
                ix.delete(JsValue::from_str(SECTIONS_KEY)).map_err(err)?;
            }
        }
        commit(tx).await
    }

    /// Every stored passage (in key order); passages stored by the app before version 2 are read
    /// as this version's ([`stored_passage`]).
    ///
    /// # Errors
    /// IndexedDB errors or a stored record that is not a passage.
    pub async fn all_passages(&self) -> Result<Vec<Passage>, String> {
        let Ok(db) = self.db() else {
            return Ok(Vec::new());
        };
        let tx = db
            .transaction(&[PASSAGES], TransactionMode::ReadOnly)
            .map_err(err)?;
        let store = tx.object_store(PASSAGES).map_err(err)?;
        let values = store.get_all(None, None).map_err(err)?.await.map_err(err)?;
        values
            .into_iter()
            .map(|v| {
                let s = v.as_string().ok_or("stored passage is not text")?;
                stored_passage(&s)
            })
            .collect()
    }

    /// The stored passages of document `doc_id` (ids `{doc_id}#…`), in key order.
    ///
    /// # Errors
    /// IndexedDB errors or a stored record that is not a passage.
    pub async fn passages_of(&self, doc_id: &str) -> Result<Vec<Passage>, String> {
        let Ok(db) = self.db() else {
            return Ok(Vec::new());
        };
        let tx = db
            .transaction(&[PASSAGES], TransactionMode::ReadOnly)
            .map_err(err)?;
        let store = tx.object_store(PASSAGES).map_err(err)?;
        // Every id that starts with `{doc_id}#`: `#` is followed by `$` (U+0024) in key order.
        let range = idb::KeyRange::bound(
            &JsValue::from_str(&format!("{doc_id}#")),
            &JsValue::from_str(&format!("{doc_id}$")),
            Some(false),
            Some(true),
        )
        .map_err(err)?;
        let values = store
            .get_all(Some(idb::Query::KeyRange(range)), None)
            .map_err(err)?
            .await
            .map_err(err)?;
        values
            .into_iter()
            .map(|v| {
                let s = v.as_string().ok_or("stored passage is not text")?;
                stored_passage(&s)
            })
            .collect()
    }

    /// Number of stored passages.
    ///
    /// # Errors
    /// IndexedDB errors.
    pub async fn count_passages(&self) -> Result<usize, String> {
        let Ok(db) = self.db() else { return Ok(0) };
        let tx = db
            .transaction(&[PASSAGES], TransactionMode::ReadOnly)
            .map_err(err)?;
        let store = tx.object_store(PASSAGES).map_err(err)?;
        Ok(store.count(None).map_err(err)?.await.map_err(err)? as usize)
    }

    /// Deletes every passage and the index (models stay cached).
    ///
    /// # Errors
    /// IndexedDB errors.
    pub async fn clear_index(&self) -> Result<(), String> {
        let Ok(db) = self.db() else { return Ok(()) };
        let tx = db
            .transaction(&[PASSAGES, INDEX], TransactionMode::ReadWrite)
            .map_err(err)?;
        tx.object_store(PASSAGES)
            .map_err(err)?
            .clear()
            .map_err(err)?;
        tx.object_store(INDEX).map_err(err)?.clear().map_err(err)?;
        commit(tx).await
    }
}

/// A passage as the app stored it before version 2: the page title in `title`, the heading apart,
/// no display title or embedded text.
#[derive(serde::Deserialize)]
struct PassageV1 {
    id: String,
    doc_id: String,
    title: String,
    #[serde(default)]
    heading: String,
    #[serde(default)]
    url: String,
    text: String,
}

/// Reads the JSON of a stored passage: this version's shape, or the shape the app stored before
/// version 2, which becomes this version's without loss (its `title` was the page title; the
/// display title and embedded text follow from ingestion's rules, `lightembed_ingest::Passage::new`).
///
/// # Errors
/// `stored passage is damaged: …` for JSON of neither shape.
pub fn stored_passage(json: &str) -> Result<Passage, String> {
    serde_json::from_str::<Passage>(json).or_else(|e| {
        let v1: PassageV1 =
            serde_json::from_str(json).map_err(|_| format!("stored passage is damaged: {e}"))?;
        Ok(Passage::new(
            v1.doc_id,
            lightembed_ingest::Passage::new(v1.id, v1.title, v1.heading, v1.url, v1.text),
        ))
    })
}

async fn commit(tx: idb::Transaction) -> Result<(), String> {
    match tx.await.map_err(err)? {
        idb::TransactionResult::Committed => Ok(()),
        idb::TransactionResult::Aborted => {
            Err("the IndexedDB transaction was aborted (quota or a blocked database)".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What IndexedDB keeps of a passage is one flat JSON object, `doc_id` and ingestion's
    /// fields, read back as it was; a passage the app stored before version 2 (page title in
    /// `title`) reads as this version's, titled by ingestion's rule with the page title and
    /// heading apart — a page title holding `›` or `—` included; anything else is damage.
    #[test]
    fn stored_passages_read_in_this_and_the_first_shape() {
        let p = Passage::new(
            "rust-book/ch04.html",
            lightembed_ingest::Passage::new(
                "rust-book/ch04.html#heap:1",
                "Ownership › Basics — The Book",
                "The Heap",
                "https://doc.rust-lang.org/book/ch04.html#heap",
                "Data lives here.",
            ),
        );
        let json = serde_json::to_string(&p).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "doc_id",
                "embed_text",
                "heading",
                "id",
                "page_title",
                "text",
                "title",
                "url"
            ]
        );
        assert_eq!(v["title"], "The Heap — Ownership › Basics — The Book");
        assert_eq!(stored_passage(&json).unwrap(), p);

        let v1 = r#"{"id":"rust-book/ch04.html#heap:1","doc_id":"rust-book/ch04.html","title":"Ownership › Basics — The Book","heading":"The Heap","url":"https://doc.rust-lang.org/book/ch04.html#heap","text":"Data lives here."}"#;
        assert_eq!(stored_passage(v1).unwrap(), p);
        let bare = stored_passage(
            r#"{"id":"user/a.txt#1","doc_id":"user/a.txt","title":"a.txt","text":"Hi."}"#,
        )
        .unwrap();
        assert_eq!(
            (
                bare.passage.title.as_str(),
                bare.passage.page_title.as_str(),
                bare.passage.heading.as_str(),
                bare.embed_text()
            ),
            ("a.txt", "a.txt", "", "Hi.")
        );
        let e = stored_passage(r#"{"id":"x","text":"no document"}"#).unwrap_err();
        assert!(e.starts_with("stored passage is damaged: "), "{e}");
    }
}
