//! The original files of a person's documents, kept in the page's own IndexedDB database (one
//! per language, beside the worker's index database: `lightembed-files`, `lightembed-files-tr`):
//! a result opens the stored PDF at its page in the browser's viewer, the library shows their
//! size, and export/import moves them to another browser ([`lightembed_app::shared::library`]).
//!
//! | store | key | value |
//! |---|---|---|
//! | `meta` | document id | JSON text of a [`FileRecord`] |
//! | `bytes` | document id | `Uint8Array`: the file as dropped |
//!
//! Both are written in one transaction. Also here: what a drop holds (folders walked, a small
//! JS function: a `DataTransfer`'s entries must be taken while the drop event runs), SHA-256
//! (the browser's `crypto.subtle`), the storage estimate and a download.

use idb::{Database, Factory, ObjectStoreParams, TransactionMode};
use js_sys::{Array, Promise, Reflect, Uint8Array};
use lightembed_app::shared::lang;
use lightembed_app::shared::library::FileRecord;
use lightembed_app::shared::web::js_error;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

const DB_BASE: &str = "lightembed-files";
const DB_VERSION: u32 = 1;
const META: &str = "meta";
const BYTES: &str = "bytes";

#[wasm_bindgen(inline_js = r#"
// The files of a drop as [{file, path, folder}] (path: inside its folder, 'docs/a/b.pdf';
// folder: it came from a dropped folder), or [{error, path, folder}] for an entry that could not
// be read. The entries are taken now, while the drop event runs (later the list is empty).
export function droppedFiles(dt) {
  const items = dt.items ? [...dt.items] : [];
  const entries = items.map((i) => (i.kind === 'file' && i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  const loose = dt.files ? [...dt.files] : [];
  return (async () => {
    if (!entries.some((e) => e)) return loose.map((f) => ({ file: f, path: f.name, folder: false }));
    const out = [];
    const fileOf = (e) => new Promise((res, rej) => e.file(res, rej));
    const children = async (dir) => {
      const r = dir.createReader();
      const all = [];
      for (;;) {
        const batch = await new Promise((res, rej) => r.readEntries(res, rej));
        if (!batch.length) return all;
        all.push(...batch);
      }
    };
    const walk = async (e, folder) => {
      const path = e.fullPath.replace(/^\//, '');
      if (e.isFile) {
        try { out.push({ file: await fileOf(e), path, folder }); } catch (err) { out.push({ error: String(err), path, folder }); }
      } else if (e.isDirectory) {
        for (const c of await children(e)) await walk(c, true);
      }
    };
    for (const e of entries) if (e) await walk(e, e.isDirectory);
    return out;
  })();
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = droppedFiles)]
    fn dropped_files_js(dt: &web_sys::DataTransfer) -> Promise;
}

/// One file of a drop or a pick.
pub struct Incoming {
    /// The file (`None`: it could not be read, `error` says why).
    pub file: Option<web_sys::File>,
    /// Its name, or its path inside the dropped folder.
    pub path: String,
    /// It came from a folder (only the formats the app reads are taken).
    pub folder: bool,
    /// Why it could not be read.
    pub error: Option<String>,
}

fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

/// Starts reading what a drop holds (call it while the drop event runs): folders walked.
pub fn dropped(dt: &web_sys::DataTransfer) -> impl std::future::Future<Output = Vec<Incoming>> {
    let promise = dropped_files_js(dt);
    async move {
        let Ok(list) = JsFuture::from(promise).await else {
            return Vec::new();
        };
        Array::from(&list)
            .iter()
            .map(|v| Incoming {
                file: get(&v, "file").dyn_into::<web_sys::File>().ok(),
                path: get(&v, "path").as_string().unwrap_or_default(),
                folder: get(&v, "folder").as_bool().unwrap_or(false),
                error: get(&v, "error").as_string(),
            })
            .collect()
    }
}

/// The files of a file input: a folder picked (`webkitdirectory`) gives each its path.
pub fn picked(files: &web_sys::FileList) -> Vec<Incoming> {
    (0..files.length())
        .filter_map(|i| files.get(i))
        .map(|f| {
            let rel = get(&f, "webkitRelativePath")
                .as_string()
                .unwrap_or_default();
            let folder = !rel.is_empty();
            Incoming {
                path: if folder { rel } else { f.name() },
                file: Some(f),
                folder,
                error: None,
            }
        })
        .collect()
}

/// SHA-256 of `bytes` as lower-case hex (`crypto.subtle`).
pub async fn sha256_hex(bytes: &Uint8Array) -> Result<String, String> {
    let crypto = web_sys::window()
        .ok_or("no window")?
        .crypto()
        .map_err(|e| js_error(&e))?;
    let p = crypto
        .subtle()
        .digest_with_str_and_buffer_source("SHA-256", bytes)
        .map_err(|e| js_error(&e))?;
    let digest = JsFuture::from(p).await.map_err(|e| js_error(&e))?;
    Ok(Uint8Array::new(&digest)
        .to_vec()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// `(usage, quota)` in bytes from `navigator.storage.estimate()`, when the browser has it.
pub async fn storage_estimate() -> Option<(u64, u64)> {
    let storage = web_sys::window()?.navigator().storage();
    let est = JsFuture::from(storage.estimate().ok()?).await.ok()?;
    Some((
        get(&est, "usage").as_f64()? as u64,
        get(&est, "quota").as_f64()? as u64,
    ))
}

/// Offers `bytes` as a download named `name`.
pub fn download(name: &str, bytes: &[u8], mime: &str) -> Result<(), String> {
    let url = blob_url(bytes, mime)?;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(|e| js_error(&e))?
        .unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    revoke_later(url);
    Ok(())
}

/// A `blob:` URL of `bytes` with type `mime`.
pub fn blob_url(bytes: &[u8], mime: &str) -> Result<String, String> {
    let parts = Array::of1(&Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts)
        .map_err(|e| js_error(&e))?;
    web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| js_error(&e))
}

/// Revokes a `blob:` URL after a minute (the tab or download opened from it has it by then).
pub fn revoke_later(url: String) {
    leptos::prelude::set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(60),
    );
}

thread_local! {
    static OPEN: std::cell::RefCell<Option<(String, std::rc::Rc<FileStore>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The file store of language `code`, opened on first use (the last one is kept open).
///
/// # Errors
/// IndexedDB is unavailable (the app then keeps no originals: results cannot be opened).
pub async fn store(code: &str) -> Result<std::rc::Rc<FileStore>, String> {
    if let Some(s) = OPEN.with(|o| {
        o.borrow()
            .as_ref()
            .filter(|(c, _)| c == code)
            .map(|(_, s)| s.clone())
    }) {
        return Ok(s);
    }
    let s = std::rc::Rc::new(FileStore::open(code).await?);
    OPEN.with(|o| *o.borrow_mut() = Some((code.to_string(), s.clone())));
    Ok(s)
}

/// The original files of one language's documents.
pub struct FileStore {
    db: Database,
}

fn err(e: idb::Error) -> String {
    e.to_string()
}

impl FileStore {
    /// Opens (creating) the store of language `code`. Errors: IndexedDB is unavailable.
    pub async fn open(code: &str) -> Result<FileStore, String> {
        let factory = Factory::new().map_err(err)?;
        let mut req = factory
            .open(&lang::db_name(DB_BASE, Some(code)), Some(DB_VERSION))
            .map_err(err)?;
        req.on_upgrade_needed(|event| {
            use idb::Event as _;
            let Ok(req) = event.target() else { return };
            let Ok(db) = req.database() else { return };
            let names = db.store_names();
            for store in [META, BYTES] {
                if !names.iter().any(|n| n == store) {
                    let _ = db.create_object_store(store, ObjectStoreParams::new());
                }
            }
        });
        let db = req.await.map_err(err)?;
        Ok(FileStore { db })
    }

    /// Every record (no bytes read).
    pub async fn list(&self) -> Result<Vec<FileRecord>, String> {
        let tx = self
            .db
            .transaction(&[META], TransactionMode::ReadOnly)
            .map_err(err)?;
        let store = tx.object_store(META).map_err(err)?;
        let values = store.get_all(None, None).map_err(err)?.await.map_err(err)?;
        Ok(values
            .into_iter()
            .filter_map(|v| v.as_string())
            .filter_map(|s| serde_json::from_str(&s).ok())
            .collect())
    }

    /// Stores a file (replacing the document's earlier version).
    pub async fn put(&self, rec: &FileRecord, bytes: &Uint8Array) -> Result<(), String> {
        let tx = self
            .db
            .transaction(&[META, BYTES], TransactionMode::ReadWrite)
            .map_err(err)?;
        let key = JsValue::from_str(&rec.doc_id);
        let json = serde_json::to_string(rec).map_err(|e| e.to_string())?;
        tx.object_store(META)
            .map_err(err)?
            .put(&JsValue::from_str(&json), Some(&key))
            .map_err(err)?;
        tx.object_store(BYTES)
            .map_err(err)?
            .put(bytes, Some(&key))
            .map_err(err)?;
        commit(tx).await
    }

    /// The record and bytes of document `doc_id`, if stored.
    pub async fn get(&self, doc_id: &str) -> Result<Option<(FileRecord, Vec<u8>)>, String> {
        let tx = self
            .db
            .transaction(&[META, BYTES], TransactionMode::ReadOnly)
            .map_err(err)?;
        let key = JsValue::from_str(doc_id);
        let meta = tx
            .object_store(META)
            .map_err(err)?
            .get(key.clone())
            .map_err(err)?
            .await
            .map_err(err)?;
        let bytes = tx
            .object_store(BYTES)
            .map_err(err)?
            .get(key)
            .map_err(err)?
            .await
            .map_err(err)?;
        let rec = meta
            .and_then(|m| m.as_string())
            .and_then(|s| serde_json::from_str::<FileRecord>(&s).ok());
        Ok(match (rec, bytes) {
            (Some(r), Some(b)) => Some((r, Uint8Array::new(&b).to_vec())),
            _ => None,
        })
    }

    /// Forgets documents `doc_ids`.
    pub async fn delete(&self, doc_ids: &[String]) -> Result<(), String> {
        let tx = self
            .db
            .transaction(&[META, BYTES], TransactionMode::ReadWrite)
            .map_err(err)?;
        for id in doc_ids {
            let key = JsValue::from_str(id);
            tx.object_store(META)
                .map_err(err)?
                .delete(key.clone())
                .map_err(err)?;
            tx.object_store(BYTES)
                .map_err(err)?
                .delete(key)
                .map_err(err)?;
        }
        commit(tx).await
    }

    /// Forgets every file.
    pub async fn clear(&self) -> Result<(), String> {
        let tx = self
            .db
            .transaction(&[META, BYTES], TransactionMode::ReadWrite)
            .map_err(err)?;
        tx.object_store(META).map_err(err)?.clear().map_err(err)?;
        tx.object_store(BYTES).map_err(err)?.clear().map_err(err)?;
        commit(tx).await
    }
}

async fn commit(tx: idb::Transaction) -> Result<(), String> {
    match tx.await.map_err(err)? {
        idb::TransactionResult::Committed => Ok(()),
        idb::TransactionResult::Aborted => {
            Err("the IndexedDB transaction was aborted (storage full?)".into())
        }
    }
}
