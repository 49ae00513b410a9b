//! The worker's job rules in one type: which indexing job runs, which requests may start one,
//! what a cancel, a model switch or "delete all" does to the running job and to the documents
//! waiting behind it, and which finished writes are saved when. Pure Rust (no JS, no clock: the
//! caller passes the time), so every rule is a method with its unit test, run natively.
//!
//! The message loop ([`crate::worker`]) holds one [`JobState`] and asks it before and after each
//! step; the steps themselves (embedding, storage, events) stay in the loop. Only one job runs at
//! a time; jobs yield between batches, so requests arrive while one runs and change these flags.

use std::collections::HashMap;

use crate::shared::protocol::Passage;

/// While more documents of a drop wait, finished ones are saved at most this often (ms), with
/// the index they are in; saving the whole index after each of 1,000 small files was three
/// quarters of the time (`bench/RESULTS.md`, "App: many files at once"). The last document of a
/// drop, a corpus and a re-index are saved as soon as they end.
pub const SAVE_EVERY_MS: f64 = 1000.0;

/// While more documents of a drop wait, the time between two saves is also at least this many
/// times what the last save took: a save writes the whole index, so its cost grows with the
/// library, and at 100k passages saving once a second took most of the worker's time
/// (`bench/RESULTS.md`, "The app at 100k passages"). Saving then takes at most a tenth of the
/// time, and a tab closed mid-drop loses at most the documents finished since the last save.
pub const SAVE_COST_RATIO: f64 = 10.0;

/// While more documents of a drop wait, the index state goes to the page at most this often
/// (ms): its document list grows with every document, and sending and rendering it after each of
/// 2,000 one-line files kept the page busy, so that a Cancel took effect 0.6 s late.
pub const INDEX_EVENT_MS: f64 = 250.0;

/// The job flags of one worker and their transitions.
#[derive(Debug, Default)]
pub struct JobState {
    /// Bumped by every model load: requests and jobs of an older generation stop or never start.
    generation: u64,
    /// The running job stops at its next batch (set by cancel, model switch, "delete all").
    cancel: bool,
    /// A job is running (between [`JobState::start`] and [`JobState::finish`]).
    busy: bool,
    /// Documents dispatched and waiting for the job before them (files dropped together).
    queued: usize,
    /// A document holds the turn: it is being read (a PDF in the reader worker, an EPUB
    /// unzipped) or indexed, from [`JobState::take_turn`] to [`JobState::end_turn`]. Every
    /// message of a drop waits in its own task; without this, a second document could start its
    /// job while the first was still being read, and the first was then refused as "already
    /// running" and lost.
    turn_held: bool,
    /// Bumped whenever the waiting documents are dropped: a document of a drop enqueued before
    /// the bump is not indexed when its turn comes.
    cancel_epoch: u64,
    /// Bumped by "delete all": a job that was running keeps nothing it embedded before it.
    clears: u64,
    /// Finished jobs' writes not saved yet.
    pending: PendingWrites,
    /// When the index was last saved (ms, the caller's clock).
    last_save: f64,
    /// How long the last save took (ms): serialising the index and the storage transaction.
    last_save_cost: f64,
    /// When the index state was last posted to the page (ms, the caller's clock).
    last_index_event: f64,
}

/// Storage writes of finished indexing jobs, not saved yet: the last write of each passage id
/// wins (`Some`: put, `None`: delete), so a document indexed and then deleted is not put back.
#[derive(Debug, Default)]
struct PendingWrites {
    by_id: HashMap<String, Option<Passage>>,
    /// The index changed since it was last saved.
    index: bool,
}

/// The writes to save in one transaction, with the index as it is now ([`JobState::take_writes`]).
#[derive(Debug, Default, PartialEq)]
pub struct Writes {
    /// Passages to put (new or replaced).
    pub put: Vec<Passage>,
    /// Passage ids to delete.
    pub delete: Vec<String>,
}

/// What an `IndexDocuments` message holds from its arrival: the model generation it was sent for
/// and the queue epoch its documents wait in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropTicket {
    /// The model generation current when the documents arrived.
    pub generation: u64,
    epoch: u64,
}

/// A running job, from [`JobState::start`] to [`JobState::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The model generation the job's request was sent for.
    pub generation: u64,
    /// "Delete all" count when the job started.
    clears: u64,
}

/// Why a job may not start ([`JobState::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The request was sent for the model before this one: it does nothing, silently.
    Superseded,
    /// Another job runs: the page is told to cancel it first.
    Busy,
}

/// Waiting documents a cancel, a model switch or "delete all" dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// How many documents were waiting (0: nothing to say).
    pub documents: usize,
    /// No job was running: none will end to tell the page that the queue is empty.
    pub between_jobs: bool,
}

/// How a job ended ([`JobState::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    /// The model changed under the job: what it inserted stays in the old model's index and its
    /// writes are kept for that index's save (unless "delete all" came too); nothing is posted.
    Superseded,
    /// "Delete all" came while it ran: nothing it embedded is kept; the page is told it ended
    /// with nothing done.
    Cleared,
    /// Done or cancelled: its writes are kept for the next save.
    Kept,
}

impl JobState {
    /// The current model generation (an indexing request takes it when it arrives).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// True while `generation` is the current model's.
    pub fn is_current(&self, generation: u64) -> bool {
        self.generation == generation
    }

    /// True while a job runs.
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Documents waiting for the job before them.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// A model load (or language switch): the generation moves, so the running job stops at its
    /// next batch and requests sent before never start; the waiting documents are dropped. What
    /// the stopped job indexed is kept ([`JobState::finish`] → [`JobEnd::Superseded`]).
    pub fn model_switch(&mut self) -> Dropped {
        self.generation += 1;
        self.cancel = true;
        self.drop_queue()
    }

    /// Cancel: the running job stops at its next batch and keeps what it did; the waiting
    /// documents are dropped.
    pub fn cancel(&mut self) -> Dropped {
        self.cancel = true;
        self.drop_queue()
    }

    /// "Delete all": the running job stops and keeps nothing, the waiting documents are dropped,
    /// and the writes of jobs finished before are forgotten (they are deleted with the rest).
    pub fn clear_all(&mut self) -> Dropped {
        if self.busy {
            self.cancel = true;
        }
        let dropped = self.drop_queue();
        self.clears += 1;
        self.pending = PendingWrites::default();
        dropped
    }

    fn drop_queue(&mut self) -> Dropped {
        self.cancel_epoch += 1;
        Dropped {
            documents: std::mem::take(&mut self.queued),
            between_jobs: !self.busy,
        }
    }

    /// `documents` files dropped together arrive: they wait, each for the job before it.
    pub fn enqueue(&mut self, documents: usize) -> DropTicket {
        self.queued += documents;
        DropTicket {
            generation: self.generation,
            epoch: self.cancel_epoch,
        }
    }

    /// True when a waiting document may take its turn: no job runs and no document is being
    /// read or indexed.
    pub fn turn_free(&self) -> bool {
        !self.busy && !self.turn_held
    }

    /// The next document of a drop gets its turn (call when [`JobState::turn_free`]): `false`
    /// when the drop was dropped since it arrived (the document and the rest of its drop are not
    /// indexed). On `true` the document holds the turn until [`JobState::end_turn`].
    pub fn take_turn(&mut self, ticket: DropTicket) -> bool {
        if self.cancel_epoch != ticket.epoch {
            return false;
        }
        self.queued -= 1;
        self.turn_held = true;
        true
    }

    /// The document that took the turn is indexed (or gave no job): the next may go.
    pub fn end_turn(&mut self) {
        self.turn_held = false;
    }

    /// After a drop's last document: true when what it left unsaved is to be saved now (no job
    /// runs — a running one saves itself — and the model is still the one it was sent for).
    pub fn drop_ended(&self, ticket: DropTicket) -> bool {
        !self.busy && self.generation == ticket.generation
    }

    /// Whether a job of a request sent for `generation` may start now.
    ///
    /// # Errors
    /// [`Refusal::Superseded`] for a request of an older model, [`Refusal::Busy`] while a job
    /// runs.
    pub fn admit(&self, generation: u64) -> Result<(), Refusal> {
        if self.generation != generation {
            Err(Refusal::Superseded)
        } else if self.busy {
            Err(Refusal::Busy)
        } else {
            Ok(())
        }
    }

    /// A job starts (after [`JobState::admit`]): a cancel that came before it does not stop it.
    pub fn start(&mut self, generation: u64) -> Job {
        self.busy = true;
        self.cancel = false;
        Job {
            generation,
            clears: self.clears,
        }
    }

    /// True when `job` is to stop at this batch (cancelled, or its model replaced).
    pub fn should_stop(&self, job: Job) -> bool {
        self.cancel || self.generation != job.generation
    }

    /// True when "delete all" came since `job` started.
    pub fn cleared_since(&self, job: Job) -> bool {
        self.clears != job.clears
    }

    /// `job` ended having inserted `put` and deleted `delete` (stale passages of a replaced
    /// document): no job runs any more, and its writes are kept for the next save unless "delete
    /// all" came while it ran.
    pub fn finish(&mut self, job: Job, put: &[Passage], delete: &[String]) -> JobEnd {
        self.busy = false;
        let cleared = self.cleared_since(job);
        if !cleared {
            self.queue_writes(put, delete);
        }
        if self.generation != job.generation {
            JobEnd::Superseded
        } else if cleared {
            JobEnd::Cleared
        } else {
            JobEnd::Kept
        }
    }

    /// Deletes one document: `delete` (which removes it from the index and returns its passage
    /// ids) runs only when no job runs, and the ids are kept as deletions for the next save.
    ///
    /// # Errors
    /// [`Refusal::Busy`] while a job runs (`delete` is not called).
    pub fn delete_one(
        &mut self,
        delete: impl FnOnce() -> Vec<String>,
    ) -> Result<Vec<String>, Refusal> {
        if self.busy {
            return Err(Refusal::Busy);
        }
        let ids = delete();
        self.queue_writes(&[], &ids);
        Ok(ids)
    }

    fn queue_writes(&mut self, put: &[Passage], delete: &[String]) {
        for id in delete {
            self.pending.by_id.insert(id.clone(), None);
        }
        for p in put {
            self.pending
                .by_id
                .insert(p.id().to_string(), Some(p.clone()));
        }
        self.pending.index = true;
    }

    /// After a job: true when its writes are to be saved now — always at the end of a drop (no
    /// `more_waiting`), else when [`JobState::save_interval`] has passed since the last save.
    pub fn save_due(&self, more_waiting: bool, now: f64) -> bool {
        !more_waiting || now - self.last_save >= self.save_interval()
    }

    /// The least time between two saves while documents wait (ms): [`SAVE_EVERY_MS`], or
    /// [`SAVE_COST_RATIO`] times the last save's cost when that is longer.
    pub fn save_interval(&self) -> f64 {
        SAVE_EVERY_MS.max(SAVE_COST_RATIO * self.last_save_cost)
    }

    /// The save that [`JobState::take_writes`] started took `ms` (serialising the index and
    /// writing it); later saves wait in proportion ([`JobState::save_interval`]).
    pub fn save_took(&mut self, ms: f64) {
        self.last_save_cost = ms.max(0.0);
    }

    /// The writes to save now, with the index, taken out (`None`: nothing changed since the last
    /// save); `now` becomes the last save's time.
    pub fn take_writes(&mut self, now: f64) -> Option<Writes> {
        let pending = std::mem::take(&mut self.pending);
        if !pending.index {
            return None;
        }
        let mut writes = Writes::default();
        for (id, p) in pending.by_id {
            match p {
                Some(p) => writes.put.push(p),
                None => writes.delete.push(id),
            }
        }
        self.last_save = now;
        Some(writes)
    }

    /// After a job: true when the index state is to go to the page now — always at the end of a
    /// drop, else at most every [`INDEX_EVENT_MS`].
    pub fn index_event_due(&self, more_waiting: bool, now: f64) -> bool {
        !more_waiting || now - self.last_index_event >= INDEX_EVENT_MS
    }

    /// The index state was posted at `now`.
    pub fn index_event_posted(&mut self, now: f64) {
        self.last_index_event = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(id: &str) -> Passage {
        Passage::new(
            id.split('#').next().unwrap(),
            lightembed_ingest::Passage::new(id, "Doc", "", "", format!("text of {id}")),
        )
    }

    fn put_ids(w: &Writes) -> Vec<&str> {
        let mut ids: Vec<&str> = w.put.iter().map(Passage::id).collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn a_model_switch_stops_the_job_drops_the_queue_and_keeps_what_it_indexed() {
        let mut jobs = JobState::default();
        let g = jobs.generation();
        jobs.admit(g).unwrap();
        let job = jobs.start(g);
        jobs.enqueue(3);
        assert!(!jobs.should_stop(job));

        let dropped = jobs.model_switch();
        assert_eq!(
            dropped,
            Dropped {
                documents: 3,
                between_jobs: false
            }
        );
        assert_eq!(jobs.queued(), 0);
        assert!(jobs.should_stop(job));
        assert!(!jobs.is_current(g));

        let done = [passage("user/a#1"), passage("user/a#2")];
        assert_eq!(jobs.finish(job, &done, &[]), JobEnd::Superseded);
        assert!(!jobs.busy());
        let w = jobs
            .take_writes(10.0)
            .expect("the stopped job's writes are kept");
        assert_eq!(put_ids(&w), ["user/a#1", "user/a#2"]);
    }

    #[test]
    fn a_request_sent_before_a_model_switch_never_starts() {
        let mut jobs = JobState::default();
        let before = jobs.generation();
        jobs.model_switch();
        assert_eq!(jobs.admit(before), Err(Refusal::Superseded));
        assert_eq!(jobs.admit(jobs.generation()), Ok(()));
    }

    #[test]
    fn cancel_stops_the_job_which_keeps_what_it_did() {
        let mut jobs = JobState::default();
        let job = jobs.start(jobs.generation());
        let dropped = jobs.cancel();
        assert_eq!(dropped.documents, 0);
        assert!(!dropped.between_jobs);
        assert!(jobs.should_stop(job));
        assert_eq!(jobs.finish(job, &[passage("d#1")], &[]), JobEnd::Kept);
        assert_eq!(put_ids(&jobs.take_writes(0.0).unwrap()), ["d#1"]);
    }

    #[test]
    fn a_cancel_before_a_job_does_not_stop_the_next_one() {
        let mut jobs = JobState::default();
        jobs.cancel();
        let job = jobs.start(jobs.generation());
        assert!(!jobs.should_stop(job));
    }

    #[test]
    fn a_second_job_is_refused_while_one_runs() {
        let mut jobs = JobState::default();
        let g = jobs.generation();
        let job = jobs.start(g);
        assert_eq!(jobs.admit(g), Err(Refusal::Busy));
        jobs.finish(job, &[], &[]);
        assert_eq!(jobs.admit(g), Ok(()));
    }

    #[test]
    fn delete_all_while_a_job_runs_keeps_nothing_of_it_or_of_jobs_before() {
        let mut jobs = JobState::default();
        let g = jobs.generation();
        let first = jobs.start(g);
        assert_eq!(jobs.finish(first, &[passage("a#1")], &[]), JobEnd::Kept);
        let second = jobs.start(g);
        jobs.enqueue(2);

        let dropped = jobs.clear_all();
        assert_eq!(dropped.documents, 2);
        assert!(!dropped.between_jobs);
        assert!(jobs.should_stop(second));
        assert!(jobs.cleared_since(second));
        assert_eq!(jobs.finish(second, &[passage("b#1")], &[]), JobEnd::Cleared);
        assert_eq!(jobs.take_writes(0.0), None, "nothing is written back");
    }

    #[test]
    fn delete_all_between_jobs_drops_the_queue_and_leaves_the_next_job_running() {
        let mut jobs = JobState::default();
        jobs.enqueue(1);
        let dropped = jobs.clear_all();
        assert_eq!(
            dropped,
            Dropped {
                documents: 1,
                between_jobs: true
            }
        );
        let job = jobs.start(jobs.generation());
        assert!(!jobs.should_stop(job));
        assert!(!jobs.cleared_since(job));
    }

    #[test]
    fn a_model_switch_and_delete_all_during_one_job_keep_nothing() {
        let mut jobs = JobState::default();
        let job = jobs.start(jobs.generation());
        jobs.clear_all();
        jobs.model_switch();
        assert_eq!(jobs.finish(job, &[passage("a#1")], &[]), JobEnd::Superseded);
        assert_eq!(jobs.take_writes(0.0), None);
    }

    #[test]
    fn delete_one_waits_for_no_job_and_its_deletion_wins_over_an_earlier_put() {
        let mut jobs = JobState::default();
        let job = jobs.start(jobs.generation());
        let mut called = false;
        assert_eq!(
            jobs.delete_one(|| {
                called = true;
                vec!["a#1".into()]
            }),
            Err(Refusal::Busy)
        );
        assert!(!called, "the index is not touched while a job runs");
        jobs.finish(job, &[passage("a#1"), passage("b#1")], &[]);

        let ids = jobs.delete_one(|| vec!["a#1".into()]).unwrap();
        assert_eq!(ids, ["a#1"]);
        let w = jobs.take_writes(0.0).unwrap();
        assert_eq!(put_ids(&w), ["b#1"]);
        assert_eq!(w.delete, ["a#1"]);
    }

    #[test]
    fn a_replaced_documents_stale_passages_are_deleted_and_its_new_ones_put() {
        let mut jobs = JobState::default();
        let job = jobs.start(jobs.generation());
        jobs.finish(job, &[passage("a#1")], &["a#2".into(), "a#3".into()]);
        let mut w = jobs.take_writes(0.0).unwrap();
        w.delete.sort();
        assert_eq!(put_ids(&w), ["a#1"]);
        assert_eq!(w.delete, ["a#2", "a#3"]);
    }

    #[test]
    fn waiting_documents_take_turns_until_their_drop_is_dropped() {
        let mut jobs = JobState::default();
        let ticket = jobs.enqueue(3);
        assert_eq!(jobs.queued(), 3);
        assert!(jobs.take_turn(ticket));
        assert_eq!(jobs.queued(), 2);
        let dropped = jobs.cancel();
        assert_eq!(dropped.documents, 2);
        assert!(dropped.between_jobs);
        assert!(
            !jobs.take_turn(ticket),
            "the rest of the drop is not indexed"
        );
        assert_eq!(jobs.queued(), 0);

        // A drop that arrives after the cancel is indexed.
        jobs.end_turn();
        let later = jobs.enqueue(1);
        assert!(jobs.take_turn(later));
        assert_eq!(jobs.queued(), 0);
    }

    #[test]
    fn a_document_being_read_holds_the_turn_until_it_is_indexed() {
        // Two messages of one folder drop, each waiting in its own task.
        let mut jobs = JobState::default();
        let first = jobs.enqueue(1);
        let second = jobs.enqueue(1);
        assert!(jobs.turn_free());
        assert!(jobs.take_turn(first));
        // The first document is in the PDF reader: no job runs yet, but the turn is held, so
        // the second does not start a job that would refuse the first's as "already running".
        assert!(!jobs.busy());
        assert!(!jobs.turn_free());
        assert_eq!(jobs.admit(first.generation), Ok(()));
        let job = jobs.start(first.generation);
        jobs.finish(job, &[], &[]);
        assert!(
            !jobs.turn_free(),
            "held until the document's task ends its turn"
        );
        jobs.end_turn();
        assert!(jobs.turn_free());
        assert!(jobs.take_turn(second));
        assert_eq!(jobs.queued(), 0);
    }

    #[test]
    fn a_drop_saves_at_its_end_unless_a_job_runs_or_the_model_changed() {
        let mut jobs = JobState::default();
        let ticket = jobs.enqueue(1);
        assert!(jobs.drop_ended(ticket));
        let job = jobs.start(ticket.generation);
        assert!(!jobs.drop_ended(ticket), "the running job saves itself");
        jobs.finish(job, &[], &[]);
        jobs.model_switch();
        assert!(!jobs.drop_ended(ticket), "the next model's load saves it");
    }

    #[test]
    fn writes_are_saved_at_the_end_of_a_drop_else_at_most_once_a_second() {
        let mut jobs = JobState::default();
        let job = jobs.start(0);
        jobs.finish(job, &[passage("a#1")], &[]);
        assert!(jobs.take_writes(5000.0).is_some());
        assert!(jobs.save_due(false, 5000.0), "the drop's last document");
        assert!(!jobs.save_due(true, 5000.0 + SAVE_EVERY_MS - 1.0));
        assert!(jobs.save_due(true, 5000.0 + SAVE_EVERY_MS));
    }

    #[test]
    fn a_costly_save_spaces_the_next_ones_while_documents_wait() {
        let mut jobs = JobState::default();
        let job = jobs.start(0);
        jobs.finish(job, &[passage("a#1")], &[]);
        assert!(jobs.take_writes(5000.0).is_some());
        // A cheap save keeps the one-second floor.
        jobs.save_took(40.0);
        assert_eq!(jobs.save_interval(), SAVE_EVERY_MS);
        // A 700 ms save (a big index): the next one 7 s after the last one started.
        jobs.save_took(700.0);
        assert_eq!(jobs.save_interval(), 7000.0);
        assert!(!jobs.save_due(true, 5000.0 + 6999.0));
        assert!(jobs.save_due(true, 5000.0 + 7000.0));
        assert!(
            jobs.save_due(false, 5001.0),
            "the drop's last document is saved at once"
        );
    }

    #[test]
    fn nothing_pending_is_no_save_and_keeps_the_last_save_time() {
        let mut jobs = JobState::default();
        let job = jobs.start(0);
        jobs.finish(job, &[], &[]);
        assert_eq!(
            jobs.take_writes(2000.0),
            Some(Writes::default()),
            "an empty job still changed the index (it may have been created)"
        );
        assert_eq!(jobs.take_writes(9000.0), None);
        assert!(!jobs.save_due(true, 2000.0 + SAVE_EVERY_MS - 1.0));
    }

    #[test]
    fn the_index_state_goes_to_the_page_at_the_end_of_a_drop_else_every_250_ms() {
        let mut jobs = JobState::default();
        jobs.index_event_posted(1000.0);
        assert!(jobs.index_event_due(false, 1000.0));
        assert!(!jobs.index_event_due(true, 1000.0 + INDEX_EVENT_MS - 1.0));
        assert!(jobs.index_event_due(true, 1000.0 + INDEX_EVENT_MS));
    }
}
