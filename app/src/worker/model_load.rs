//! Loading a model: the old model's work saved first, its database switched, the bytes fetched
//! (or read from the cache) and verified, then the stored index restored and checked (§8).

use std::rc::Rc;

use wasm_bindgen::JsCast;

use super::dispatch::post;
use super::persist::storage_event;
use super::state::{load_model, AttachError};
use super::storage::{JsSavedIndex, Storage};
use super::{ModelSource, WorkerApp};
use crate::shared::protocol::Event;
use crate::shared::web::{fetch_bytes, head_validator, now_ms, sleep_ms};

/// How long a model switch waits (ms) for a running job to stop before it saves what that
/// job and the jobs before it indexed with the old model.
const STOP_WAIT_MS: f64 = 5000.0;

impl WorkerApp {
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

    /// Loads the model at `url` (the request's fields; see [`crate::shared::protocol::Request::LoadModel`]):
    /// saves the old model's work, opens `lang`'s database, fetches or reads the cached bytes,
    /// verifies them, then restores the stored index.
    pub(super) async fn load_model(
        self: Rc<Self>,
        url: String,
        sha256: Option<String>,
        no_store: bool,
        db_version: Option<u32>,
        lang: Option<String>,
    ) {
        let generation = self.jobs.borrow().generation();
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
        while self.jobs.borrow().busy() && now_ms() - t0 < STOP_WAIT_MS {
            sleep_ms(20).await;
        }
        let retired = self.retired.borrow_mut().take();
        if let Some(old) = retired {
            self.flush_with(|| JsSavedIndex::of(&old)).await;
        }
        if !self.jobs.borrow().is_current(generation) {
            // Superseded while saving: the next load opens its own database.
            return;
        }
        self.open_storage(no_store, db_version, lang.as_deref())
            .await;
        if !self.jobs.borrow().is_current(generation) {
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
                        if self.jobs.borrow().is_current(generation) {
                            post(&Event::ModelFailed { reason });
                        }
                        return;
                    }
                }
            }
        };
        if !self.jobs.borrow().is_current(generation) {
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
        if !self.jobs.borrow().is_current(generation) {
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

    /// Attaches the stored index (IndexedDB, or the memory copy) to the loaded model, or says
    /// why it cannot be (another model's index: re-index offered; damaged: ignored).
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
        let Some(saved) = bytes else {
            self.post_index_state();
            return;
        };
        let attached = self.state.borrow_mut().attach_index(&saved);
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
