//! Documents dropped together: each waits for the job before it, a cancel drops those still
//! waiting, and each becomes one indexing job of its passages ([`WorkerApp::index_job`]).

use std::rc::Rc;

use super::chunk::{document_passages, user_doc_id, Format};
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
            // The check and the job's start run without a yield between.
            while self.jobs.borrow().busy() {
                sleep_ms(20).await;
            }
            if !self.jobs.borrow_mut().take_turn(ticket) {
                break; // cancelled (or "delete all"): the rest were dropped
            }
            self.clone()
                .index_document(d.name, d.content, d.format, dims, ticket.generation)
                .await;
        }
        if self.jobs.borrow().drop_ended(ticket) {
            self.flush().await;
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

    /// Cuts a user document with the loaded model's tokenizer, exactly as `lightembed index`
    /// does, and indexes it as a new version of that document (see [`WorkerApp::index_job`]).
    async fn index_document(
        self: Rc<Self>,
        name: String,
        content: String,
        format: Format,
        dims: Option<usize>,
        generation: u64,
    ) {
        if !self.jobs.borrow().is_current(generation) {
            return; // sent for the model before this one
        }
        let passages = match self.state.borrow().model() {
            Some(model) => document_passages(&name, &content, format, model),
            None => {
                post(&Event::Error {
                    message: format!("{name}: no model is loaded"),
                });
                self.post_no_job();
                return;
            }
        };
        if passages.is_empty() {
            post(&Event::Error {
                message: format!("{name}: no text found"),
            });
            self.post_no_job();
            return;
        }
        let doc_id = user_doc_id(&name);
        self.index_job(passages, dims, false, Some(doc_id), generation)
            .await
    }
}
