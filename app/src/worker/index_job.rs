//! Indexing jobs: the bundled corpus, a re-index and a document's passages are embedded (here
//! and by the helper pool) and inserted in passage order, with progress, cancel and the job rules
//! of [`super::jobs::JobState`].

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use super::chunk::{corpus_doc_prefix, CorpusRecord};
use super::dispatch::post;
use super::jobs::{JobEnd, Refusal};
use super::pool::Pool;
use super::state::WorkerError;
use super::WorkerApp;
use crate::shared::protocol::{Event, Passage};
use crate::shared::web::{fetch_text, heap_bytes, now_ms, yield_now};

/// Passages per batch without helpers: one forward pass, so progress and cancel stay prompt.
const BATCH: usize = crate::worker::state::FORWARD_BATCH;
/// Passages per batch handed to a helper worker (and embedded by the indexing worker itself when
/// it has helpers): large enough that a message's cost vanishes, small enough to balance.
const POOL_BATCH: usize = 16;
/// Embedding runs this long (ms) before the job yields to the event loop and reports progress.
const SLICE_MS: f64 = 40.0;

impl WorkerApp {
    /// Terminates the helper workers (the next indexing job starts new ones).
    pub(super) fn stop_pool(&self) {
        if let Some(p) = self.pool.borrow_mut().take() {
            p.terminate();
        }
    }

    /// The helper pool for a job, started on first use for the loaded model; `None` on a
    /// one-core machine, outside a dedicated worker, and for a static model: its embedding is a
    /// table lookup and a mean, so inserting into the graph is what takes the time, and that
    /// stays on this worker (measured: 4,874 passages/s alone, 4,650 with a helper;
    /// `bench/RESULTS.md`).
    fn pool_for_job(&self) -> Option<Rc<Pool>> {
        if self
            .state
            .borrow()
            .model()
            .is_none_or(|m| m.header().is_static())
        {
            return None;
        }
        if let Some(p) = self.pool.borrow().as_ref() {
            if p.size() > 0 {
                return Some(p.clone());
            }
        }
        let wanted = match self.max_workers.get() {
            Some(n) => Pool::wanted().min(n.saturating_sub(1)),
            None => Pool::wanted(),
        };
        let source = self.model_source.borrow();
        let src = source.as_ref()?;
        if wanted == 0 {
            return None;
        }
        let pool = Rc::new(Pool::start(wanted, &src.bytes, src.digest, &src.url));
        *self.pool.borrow_mut() = Some(pool.clone());
        (pool.size() > 0).then_some(pool)
    }

    /// Fetches a bundled corpus and indexes its first `limit` passages (those not indexed yet),
    /// as documents `{corpus file stem}/{page}` ([`crate::worker::chunk::corpus_doc_prefix`]).
    pub(super) async fn index_corpus(
        self: Rc<Self>,
        url: String,
        limit: Option<usize>,
        dims: Option<usize>,
        generation: u64,
    ) {
        let text = match fetch_text(&url).await {
            Ok(t) => t,
            Err(message) => {
                post(&Event::Error {
                    message: format!("Could not fetch the corpus: {message}"),
                });
                return;
            }
        };
        let prefix = corpus_doc_prefix(&url);
        let mut passages = Vec::new();
        for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            if limit.is_some_and(|l| passages.len() >= l) {
                break;
            }
            match serde_json::from_str::<CorpusRecord>(line) {
                Ok(r) => passages.push(r.into_passage_in(&prefix)),
                Err(e) => {
                    post(&Event::Error {
                        message: format!("corpus line {} is not a passage: {e}", n + 1),
                    });
                    return;
                }
            }
        }
        // Passages already indexed are not embedded again.
        let fresh: Vec<Passage> = {
            let state = self.state.borrow();
            passages
                .into_iter()
                .filter(|p| !state.index().is_some_and(|i| i.contains(p.id())))
                .collect()
        };
        self.index_job(fresh, dims, false, None, generation).await;
    }

    /// Re-embeds every passage of this session and of storage into a new index (after a model
    /// change made the stored index unusable).
    pub(super) async fn reindex(self: Rc<Self>, dims: Option<usize>, generation: u64) {
        if self.jobs.borrow().busy() {
            post(&Event::Error {
                message: "Indexing is already running; cancel it first.".into(),
            });
            return;
        }
        // Stored passages are read below: deletions not saved yet must not come back.
        self.flush().await;
        let storage = self.storage();
        let mut by_id: HashMap<String, Passage> = self.session_passages.borrow().clone();
        match storage.all_passages().await {
            Ok(ps) => by_id.extend(ps.into_iter().map(|p| (p.id().to_string(), p))),
            Err(e) => post(&Event::Error {
                message: format!("Reading stored passages failed: {e}"),
            }),
        }
        let mut passages: Vec<Passage> = by_id.into_values().collect();
        passages.sort_by(|a, b| a.id().cmp(b.id()));
        self.index_job(passages, dims, true, None, generation).await;
    }

    /// Embeds and inserts `passages`, reporting progress, then persists passages + index.
    /// `fresh`: start a new index (re-index) instead of adding to the current one. `replaces`:
    /// the passages are a new version of this document — its passages that are not among them
    /// are deleted first (index, session and storage), so an edited, shorter document leaves no
    /// stale passages behind, also after a reload. `generation`: the model generation the
    /// request was sent for; a job whose model (or language) was replaced since does nothing.
    pub(super) async fn index_job(
        self: Rc<Self>,
        passages: Vec<Passage>,
        dims: Option<usize>,
        fresh: bool,
        replaces: Option<String>,
        generation: u64,
    ) {
        match self.jobs.borrow().admit(generation) {
            Ok(()) => {}
            // Sent for the model before this one (another language's corpus, a document meant
            // for that index): nothing of it belongs in this model's index or database.
            Err(Refusal::Superseded) => return,
            Err(Refusal::Busy) => {
                post(&Event::Error {
                    message: "Indexing is already running; cancel it first.".into(),
                });
                return;
            }
        }
        let prepared = {
            let mut state = self.state.borrow_mut();
            if fresh {
                state.new_index(dims)
            } else {
                state.ensure_index(dims)
            }
        };
        if let Err(message) = prepared {
            post(&Event::Error {
                message: message.to_string(),
            });
            return;
        }
        let stale = match &replaces {
            Some(doc_id) => self.state.borrow_mut().delete_stale(doc_id, &passages),
            None => Vec::new(),
        };
        {
            let mut session = self.session_passages.borrow_mut();
            for id in &stale {
                session.remove(id);
            }
        }
        let job = self.jobs.borrow_mut().start(generation);
        let total = passages.len();
        let t0 = now_ms();
        let mut done = 0usize;
        let mut reported = 0usize;
        let mut slice_start = now_ms();
        let mut cancelled = false;
        let pool = if passages.len() > POOL_BATCH {
            self.pool_for_job()
        } else {
            None
        };
        let workers = Cell::new(1 + pool.as_ref().map_or(0, |p| p.size()));
        let post_progress = |done: usize, reported: usize| {
            let secs = (now_ms() - t0) / 1000.0;
            post(&Event::Progress {
                done,
                total,
                per_sec: rate(done, secs),
                embedded: done - reported,
                workers: workers.get(),
                queued: self.jobs.borrow().queued(),
                heap_bytes: heap_bytes(),
                heap_live: crate::shared::alloc::live_bytes() as u64,
            });
        };
        post_progress(0, 0);
        let dims = self.state.borrow().dims().unwrap_or(0);
        let batches: Vec<&[Passage]> = passages
            .chunks(if pool.is_some() { POOL_BATCH } else { BATCH })
            .collect();
        // Batches go out in order to whoever is free — a helper with room, else this worker —
        // and their vectors are inserted strictly in passage order, so the index and the
        // progress count are those of a single worker.
        let mut next_send = 0usize;
        let mut next_insert = 0usize;
        let mut mine: HashMap<usize, Vec<Vec<f32>>> = HashMap::new();
        let mut failure = None;
        let mut helped = 0usize;
        while next_insert < batches.len() {
            if self.jobs.borrow().should_stop(job) {
                cancelled = true;
                break;
            }
            // 1. Insert every batch that is ready, in order.
            while let Some((vectors, from_helper)) =
                mine.remove(&next_insert).map(|v| (v, false)).or_else(|| {
                    let flat = pool.as_ref()?.take(next_insert as u64)?;
                    Some((
                        flat.chunks(dims.max(1)).map(<[f32]>::to_vec).collect(),
                        true,
                    ))
                })
            {
                let chunk = batches[next_insert];
                let result = {
                    let mut state = self.state.borrow_mut();
                    if vectors.len() == chunk.len() {
                        chunk
                            .iter()
                            .zip(&vectors)
                            .try_for_each(|(p, v)| state.insert(p, v))
                    } else {
                        Err(WorkerError::Helper(format!(
                            "{} vectors for {} passages",
                            vectors.len(),
                            chunk.len()
                        )))
                    }
                };
                if let Err(e) = result {
                    failure = Some(e);
                    break;
                }
                let mut session = self.session_passages.borrow_mut();
                for p in chunk {
                    session.insert(p.id().to_string(), p.clone());
                }
                done += chunk.len();
                if from_helper {
                    helped += chunk.len();
                }
                next_insert += 1;
            }
            if failure.is_some() || next_insert == batches.len() {
                break;
            }
            // 2. Keep every helper busy.
            if let Some(p) = &pool {
                while next_send < batches.len() {
                    let Some(h) = p.idle() else { break };
                    let texts: Vec<String> = batches[next_send]
                        .iter()
                        .map(|p| p.embed_text().to_string())
                        .collect();
                    p.send(h, next_send as u64, &texts, dims);
                    next_send += 1;
                }
                workers.set(1 + p.size());
            }
            // 3. Embed here: a batch a failed helper held, else the next unassigned one; when
            //    everything left is with the helpers, wait for one of them.
            let lost = pool
                .as_ref()
                .and_then(|p| p.take_lost())
                .map(|s| s as usize);
            let local = lost.or_else(|| {
                (next_send < batches.len()).then(|| {
                    next_send += 1;
                    next_send - 1
                })
            });
            match local {
                Some(b) => match self.state.borrow().embed_passages(batches[b]) {
                    Ok(vs) => {
                        mine.insert(b, vs);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                },
                None => match &pool {
                    Some(p) => p.next_message().await,
                    None => break,
                },
            }
            if now_ms() - slice_start >= SLICE_MS {
                post_progress(done, reported);
                reported = done;
                yield_now().await;
                slice_start = now_ms();
            }
        }
        if let Some(message) = failure {
            post(&Event::Error {
                message: format!("Indexing failed: {message}"),
            });
            cancelled = true;
        }
        if cancelled {
            // Helpers may hold batches of this job: stop them (new ones start with the next).
            self.stop_pool();
        }
        if done > reported {
            post_progress(done, reported);
        }
        let end = self
            .jobs
            .borrow_mut()
            .finish(job, &passages[..done], &stale);
        let seconds = (now_ms() - t0) / 1000.0;
        match end {
            // The model changed under this job: what it inserted stays in the old model's index
            // and is saved with it (the next model's load saves before it switches), as a
            // cancel keeps it; nothing is posted, the page shows the next model.
            JobEnd::Superseded => return,
            // "Delete all" while this job ran: what it embedded before is gone with the rest,
            // and is not written back to storage (a reload or "reindex" would bring it back).
            JobEnd::Cleared => {}
            JobEnd::Kept => {
                let more_waiting = replaces.is_some() && self.jobs.borrow().queued() > 0;
                if self.jobs.borrow().save_due(more_waiting, now_ms()) {
                    // Saved before "done" is shown: a reload at that moment finds all of it.
                    self.flush().await;
                    if !self.jobs.borrow().is_current(generation) {
                        return; // a model switch came while saving: the page shows the next model
                    }
                }
            }
        }
        let cleared = self.jobs.borrow().cleared_since(job);
        post(&Event::IndexDone {
            done: if cleared { 0 } else { done },
            total,
            cancelled: cancelled || cleared,
            seconds,
            per_sec: rate(done, seconds),
            workers: workers.get(),
            helped,
            queued: self.jobs.borrow().queued(),
        });
        // (Again: a Cancel during the save may have emptied the queue.)
        let more_waiting = replaces.is_some() && self.jobs.borrow().queued() > 0;
        if self.jobs.borrow().index_event_due(more_waiting, now_ms()) {
            self.post_index_state();
        }
    }
}

fn rate(n: usize, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}
