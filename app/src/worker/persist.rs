//! Storage: the open database (or memory), finished jobs' writes saved with the index they
//! belong to, a failed write degrading to memory, and the two requests that delete (one
//! document, everything).

use std::rc::Rc;

use super::dispatch::post;
use super::storage::{JsSavedIndex, Storage};
use super::WorkerApp;
use crate::shared::protocol::{DocPassage, Event, Passage, StorageKind};
use crate::shared::web::now_ms;

impl WorkerApp {
    /// The open storage (memory until a model load has opened its database).
    pub(super) fn storage(&self) -> Rc<Storage> {
        self.storage
            .borrow()
            .clone()
            .unwrap_or_else(|| Rc::new(Storage::memory("storage not opened yet")))
    }

    /// A write failed: switch to memory-only and say so.
    fn degrade(&self, reason: String) {
        // The reason only: the banner says once what follows from it (working in memory).
        let message = format!("Saving to IndexedDB failed ({reason}).");
        let s = Storage::memory(message);
        post(&storage_event(&s));
        *self.storage.borrow_mut() = Some(Rc::new(s));
    }

    /// Posts the index state (count, dims, documents).
    pub(super) fn post_index_state(&self) {
        self.jobs.borrow_mut().index_event_posted(now_ms());
        post(&Event::Index {
            state: self.state.borrow().state(),
        });
    }

    /// Saves the pending writes with the index as it is now, in one transaction (nothing when
    /// nothing is pending).
    pub(super) async fn flush(&self) {
        if self.retired.borrow().is_some() {
            // A model load is under way: what is pending belongs to the index it took out of
            // the state, and that load saves it with that index (here the state has none).
            return;
        }
        self.flush_with(|| JsSavedIndex::of(&self.state.borrow()))
            .await;
    }

    /// [`WorkerApp::flush`] with the saved form of the index the writes belong to (`index` is
    /// only called when something is pending).
    ///
    /// The session keeps its own copy of a passage only until it is stored: after a save to
    /// IndexedDB the saved passages are read from there (a re-index, the text view), and the
    /// copies are dropped; with memory-only storage they stay, and a save that fails brings
    /// them back from the database before the app goes on in memory.
    pub(super) async fn flush_with(&self, index: impl FnOnce() -> Option<JsSavedIndex>) {
        let started = now_ms();
        let Some(writes) = self.jobs.borrow_mut().take_writes(started) else {
            return;
        };
        let bytes = index();
        let storage = self.storage();
        if storage.is_persistent() {
            match storage
                .save_js(&writes.put, &writes.delete, bytes.as_ref())
                .await
            {
                Ok(()) => {
                    let mut session = self.session_passages.borrow_mut();
                    for p in &writes.put {
                        session.remove(p.id());
                    }
                }
                Err(e) => {
                    // From now on the app works in memory: what earlier saves stored (their
                    // session copies are gone) is read back while the database still reads,
                    // so a re-index in this session loses nothing.
                    let stored = storage.all_passages().await.unwrap_or_default();
                    self.degrade(e);
                    let mut session = self.session_passages.borrow_mut();
                    for p in stored.into_iter().chain(writes.put.iter().cloned()) {
                        session.insert(p.id().to_string(), p);
                    }
                    *self.mem_index.borrow_mut() = bytes.map(|b| b.to_saved());
                }
            }
        } else {
            *self.mem_index.borrow_mut() = bytes.map(|b| b.to_saved());
        }
        self.jobs.borrow_mut().save_took(now_ms() - started);
    }

    /// Deletes one document (refused while a job runs) and saves the deletion.
    pub(super) async fn delete_doc(self: Rc<Self>, doc_id: String) {
        let deleted = self
            .jobs
            .borrow_mut()
            .delete_one(|| self.state.borrow_mut().delete_doc(&doc_id));
        let Ok(ids) = deleted else {
            post(&Event::Error {
                message: "Wait for indexing to finish (or cancel it) before deleting.".into(),
            });
            return;
        };
        {
            let mut session = self.session_passages.borrow_mut();
            for id in &ids {
                session.remove(id);
            }
        }
        // Saved first, then told: the page's count never shows a deletion a reload could undo.
        self.flush().await;
        self.post_index_state();
    }

    /// "Delete all": stops the running job (it keeps nothing), drops the waiting documents and
    /// the unsaved writes, empties the index and clears the database.
    pub(super) async fn clear_index(self: Rc<Self>) {
        let dropped = self.jobs.borrow_mut().clear_all();
        self.report_dropped("Deleted all", dropped);
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

impl WorkerApp {
    /// Posts the passages of document `doc_id` in their order in the index (the text view):
    /// texts from this session's passages, else from storage.
    pub(super) async fn doc_text(self: Rc<Self>, doc_id: String) {
        let ids = self.state.borrow().passage_ids_of(&doc_id);
        let mut by_id: std::collections::HashMap<String, Passage> = {
            let session = self.session_passages.borrow();
            ids.iter()
                .filter_map(|id| session.get(id).map(|p| (id.clone(), p.clone())))
                .collect()
        };
        if by_id.len() < ids.len() {
            match self.storage().passages_of(&doc_id).await {
                Ok(ps) => by_id.extend(ps.into_iter().map(|p| (p.id().to_string(), p))),
                Err(e) => post(&Event::Error {
                    message: format!("Reading the document's passages failed: {e}"),
                }),
            }
        }
        let passages = ids
            .iter()
            .filter_map(|id| by_id.remove(id))
            .map(|p| DocPassage {
                id: p.id().to_string(),
                heading: p.passage.heading,
                text: p.passage.text,
                page: p.passage.page,
            })
            .collect();
        post(&Event::DocText { doc_id, passages });
    }
}

/// The [`Event::Storage`] that describes `s`.
pub(super) fn storage_event(s: &Storage) -> Event {
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
