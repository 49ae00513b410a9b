//! Documents dropped together: each waits for the job before it, a cancel drops those still
//! waiting, and each becomes one indexing job of its passages ([`WorkerApp::index_job`]).

use std::rc::Rc;

use super::chunk::{document_passages, sections_passages, user_doc_id};
use super::dispatch::post;
use super::jobs::{DropTicket, Dropped};
use super::WorkerApp;
use crate::shared::protocol::{DocumentInput, Event};
use crate::shared::web::{sleep_ms, yield_now};

impl WorkerApp {
    /// Indexes the documents of one drop in order, each when the job before it has ended
    /// (also one sent by an earlier message), until a cancel drops the rest; then saves what the
    /// drop's last documents left unsaved.
    pub(super) async fn index_documents(
        self: Rc<Self>,
        docs: Vec<DocumentInput>,
        dims: Option<usize>,
        ticket: DropTicket,
    ) {
        for d in docs {
            // Cancel, searches and a model switch get in between two documents (one-line
            // files are indexed without a yield of their own).
            yield_now().await;
            // The check and the turn's taking run without a yield between; the turn is held
            // while the document is read and indexed.
            while !self.jobs.borrow().turn_free() {
                sleep_ms(20).await;
            }
            if !self.jobs.borrow_mut().take_turn(ticket) {
                break; // cancelled (or "delete all"): the rest were dropped
            }
            self.clone()
                .index_document(d, dims, ticket.generation)
                .await;
            self.jobs.borrow_mut().end_turn();
        }
        if self.jobs.borrow().drop_ended(ticket) {
            self.flush().await;
            // The reader's memory is not kept between drops.
            if let Some(r) = self.reader.borrow_mut().take() {
                r.terminate();
            }
        }
    }

    /// Tells the page that a document gave no job, so the queue still moves: an empty
    /// `IndexDone` says how many documents still wait (its progress bar is left as it was).
    fn post_no_job(&self) {
        let queued = self.jobs.borrow().queued();
        if queued == 0 {
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
            queued,
        });
    }

    /// Says once that documents waiting to be indexed were dropped (they return when their turn
    /// comes): `what` is the action, e.g. "Cancelled".
    pub(super) fn report_dropped(&self, what: &str, dropped: Dropped) {
        let n = dropped.documents;
        if n > 0 {
            post(&Event::Error {
                message: format!(
                    "{what}: {n} document{} waiting to be indexed {} not added.",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "was" } else { "were" }
                ),
            });
            if dropped.between_jobs {
                // Between two documents: no job will end to tell the page the queue is empty.
                self.post_no_job();
            }
        }
    }

    /// Says that document `name` of a drop was not indexed and why; the drop goes on.
    fn post_skipped(&self, name: &str, reason: String, rule: &str) {
        post(&Event::Skipped {
            name: name.to_string(),
            reason,
            rule: rule.to_string(),
        });
        self.post_no_job();
    }

    /// Cuts a user document with the loaded model's tokenizer, exactly as `lightembed index`
    /// does, and indexes it as a new version of that document (see [`WorkerApp::index_job`]).
    /// A binary document (PDF, Word, OpenDocument, EPUB) is read from its bytes by a reader
    /// worker first ([`super::extract`]); one that cannot be read is named with its reason.
    async fn index_document(
        self: Rc<Self>,
        doc: DocumentInput,
        dims: Option<usize>,
        generation: u64,
    ) {
        if !self.jobs.borrow().is_current(generation) {
            return; // sent for the model before this one
        }
        let DocumentInput {
            name,
            content,
            format,
            bytes,
            ..
        } = doc;
        if self.state.borrow().model().is_none() {
            post(&Event::Error {
                message: format!("{name}: no model is loaded"),
            });
            self.post_no_job();
            return;
        }
        let passages = if format.is_binary() {
            let Some(bytes) = bytes else {
                self.post_skipped(&name, "its bytes did not arrive".into(), "broken");
                return;
            };
            let read = super::extract::read_document(&self.reader, &bytes, format).await;
            if !self.jobs.borrow().is_current(generation) {
                return; // the model changed while the file was read
            }
            match read {
                Ok(((title, sections, warning), lost)) => {
                    let pages = |ps: &[u32]| {
                        let list: Vec<String> = ps.iter().map(u32::to_string).collect();
                        if ps.len() == 1 {
                            format!("page {}", list[0])
                        } else {
                            format!("{} pages ({})", ps.len(), list.join(", "))
                        }
                    };
                    if !lost.crashed.is_empty() {
                        post(&Event::Error {
                            message: format!(
                                "{name}: the PDF reader failed on {} (fonts it cannot decode); those pages are left out",
                                pages(&lost.crashed)
                            ),
                        });
                    }
                    if !lost.silent.is_empty() {
                        post(&Event::Error {
                            message: format!(
                                "{name}: the PDF reader took over {} s on {} and was stopped; {} left out, the rest is indexed",
                                super::extract::SILENCE_MS / 1000,
                                pages(&lost.silent),
                                if lost.silent.len() == 1 { "that page is" } else { "those pages are" }
                            ),
                        });
                    }
                    if let Some(w) = warning {
                        post(&Event::Error {
                            message: format!("{name}: {w}"),
                        });
                    }
                    match self.state.borrow().model() {
                        Some(model) => sections_passages(&name, title, sections, model),
                        None => Vec::new(),
                    }
                }
                Err(e) => {
                    self.post_skipped(&name, e.message, &e.rule);
                    return;
                }
            }
        } else {
            match self.state.borrow().model() {
                Some(model) => document_passages(&name, &content, format, model),
                None => Vec::new(),
            }
        };
        if passages.is_empty() {
            self.post_skipped(&name, "no text found".into(), "empty");
            return;
        }
        let doc_id = user_doc_id(&name);
        self.index_job(passages, dims, false, Some(doc_id), generation)
            .await
    }
}
