//! The page: language and model chooser and status, documents and indexing, search, playground —
//! one file per panel (`model`, `documents`, `search`, `playground`, `banners`), each with its own
//! slice of the state ([`St`]: `ModelSt`, `DocsSt`, `SearchSt`, `PlaySt`).
//! All state is in signals updated from worker events ([`handle`]); user actions send
//! [`Request`]s.
//!
//! The language (English / Türkçe, [`lightembed_app::shared::lang`]) decides which models are listed
//! (by their `model_id`), which bundled corpus "load corpus" indexes, and which IndexedDB database
//! holds the index (each language its own: switching never mixes the corpora, and switching back
//! restores the other index without embedding).
//!
//! Remote mode (`?serve=URL`, or the "Search server" setting in the model bar, kept in
//! `localStorage`): searches go to a `lightembed serve` ([`lightembed_app::shared::remote`]); the
//! worker embeds the query with the loaded model and the server's hits fill the same results
//! list. Documents can still be added and indexed here, but results come from the server until
//! the setting is removed (`docs/app.md`, "Remote mode").

use std::time::Duration;

use leptos::ev;
use leptos::prelude::*;
use lightembed_app::shared::lang::{self, Language, ENGLISH, LANG_KEY};
use lightembed_app::shared::library::FileRecord;
use lightembed_app::shared::protocol::{
    DocPassage, DocSummary, DocumentInput, Event, IndexState, ModelInfo, Point, Request,
    SearchMode, ShownHit, StorageKind, TokenOut,
};
use lightembed_app::shared::remote::{self, RemoteInfo};
use lightembed_app::shared::web::{fetch_text, now_ms, query_param, request_text, NoAnswer};
use lightembed_app::worker::chunk::Format;
use wasm_bindgen::JsCast;

use super::conn::{self, ConnEvent};
use super::files;

mod banners;
mod documents;
mod library;
mod model;
mod playground;
mod search;

use banners::{ErrorBanner, StorageBanner};
use documents::IndexPanel;
use library::{LibraryPanel, TextView};
use model::{ModelPanel, ModelStatus};
use playground::Playground;
use search::SearchPanel;

// The bundled corpora (written by `lightembed passages`, `scripts/make_corpus.sh` and
// `scripts/make_corpus_tr.sh`; copied by trunk) are each language's `corpus_url`
// ([`lightembed_app::shared::lang::LANGUAGES`]).
/// The model list (written at build time by `scripts/models_manifest.py`).
const MODELS_MANIFEST: &str = "models/manifest.json";
/// Fallback when the manifest is missing.
const DEFAULT_MODELS: [&str; 2] = [
    "models/lightembed-en-static.bin",
    "models/lightembed-en-2l.bin",
];
const SEARCH_DEBOUNCE_MS: u64 = 150;
const TOP_K: usize = 10;
const PCA_POINTS: usize = 1500;

/// A model the user can choose.
#[derive(Clone, Debug, PartialEq)]
struct ModelChoice {
    url: String,
    label: String,
    sha256: Option<String>,
    /// The language its `model_id` names (`None`: none; listed under every language).
    lang: Option<String>,
}

/// Indexing progress.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Prog {
    done: usize,
    total: usize,
    per_sec: f64,
    /// Engines embedding (the indexing worker and its helpers).
    workers: usize,
    /// Passages embedded by helper workers (known when the job ends).
    helped: usize,
}

/// Search timing shown under the results.
#[derive(Clone, Debug, PartialEq)]
struct Latency {
    query: String,
    total_ms: f64,
    embed_ms: f64,
    search_ms: f64,
}

/// Projection data of the PCA plot.
#[derive(Clone, Debug, PartialEq)]
struct Plot {
    points: Vec<Point>,
    query: Option<Point>,
    explained: f32,
}

/// The UI state, one `Copy` struct of signals per panel plus what the whole page shows.
#[derive(Clone, Copy)]
struct St {
    model: ModelSt,
    docs: DocsSt,
    search: SearchSt,
    play: PlaySt,
    lib: LibSt,
    remote: RemoteSt,
    /// Messages for the error banner, each with a number that keys its row (two equal messages
    /// are two rows), oldest first; the banner shows the last few (`banners::SHOWN_ERRORS`).
    errors: RwSignal<Vec<(u64, String)>>,
    crash: RwSignal<Option<String>>,
    restarts: RwSignal<usize>,
}

/// The model panel: the language, the models offered and chosen, the loaded model's status and figures.
#[derive(Clone, Copy)]
struct ModelSt {
    status: RwSignal<ModelStatus>,
    ready_ms: RwSignal<f64>,
    download: RwSignal<(u64, Option<u64>)>,
    info: RwSignal<Option<ModelInfo>>,
    model_error: RwSignal<Option<String>>,
    models: RwSignal<Vec<ModelChoice>>,
    selected: RwSignal<Option<String>>,
    lang: RwSignal<Language>,
    dims: RwSignal<Option<usize>>,
}

/// The documents panel: the index, its storage, indexing progress and a §8 mismatch.
#[derive(Clone, Copy)]
struct DocsSt {
    mismatch: RwSignal<Option<(String, usize)>>,
    storage: RwSignal<Option<(StorageKind, Option<String>)>>,
    index: RwSignal<IndexState>,
    progress: RwSignal<Option<Prog>>,
    indexing: RwSignal<bool>,
    /// Documents the worker has waiting behind the running job.
    queued: RwSignal<usize>,
    /// Documents sent since the worker was last idle (drops and pastes; 0 once all are done)
    /// and how many of them are done: the progress line's "document k of n".
    sent_docs: RwSignal<usize>,
    done_docs: RwSignal<usize>,
    /// Documents posted to the worker whose `IndexDone` has not come back: a drop posts more
    /// only while these are few ([`documents::AHEAD_DOCS`]), so the files of a big folder wait
    /// in the page, not in the worker's heap.
    in_flight: RwSignal<usize>,
    embed_count: RwSignal<u64>,
    /// The indexing worker's WebAssembly memory in bytes, from its last progress event (0:
    /// not known yet).
    heap_bytes: RwSignal<u64>,
    /// Of those, the bytes in use (the rest: free space inside the heap).
    heap_live: RwSignal<u64>,
    /// The "Indexed documents" list is open: its rows exist only then (at 6,000 documents,
    /// rebuilding them on every index update froze the page for seconds while a folder was
    /// indexed, `bench/RESULTS.md`, "The app at 100k passages").
    docs_open: RwSignal<bool>,
}

/// The search panel: the query, its ranking mode, results and timing.
#[derive(Clone, Copy)]
struct SearchSt {
    query: RwSignal<String>,
    mode: RwSignal<SearchMode>,
    results: RwSignal<Vec<ShownHit>>,
    /// Some passage holds a word of the query (the keyword side matched): when not, hybrid
    /// results are the closest by meaning alone and the page says so.
    keyword_match: RwSignal<bool>,
    latency: RwSignal<Option<Latency>>,
    search_id: RwSignal<u64>,
    search_sent: RwSignal<f64>,
}

/// What the last drop did: files sent new or changed, unchanged ones left alone, documents of a
/// re-dropped folder removed, and the files skipped with their reasons.
#[derive(Clone, Debug, Default, PartialEq)]
struct DropSummary {
    /// Sent to be indexed (new and changed).
    sent: usize,
    /// Of `sent`, the worker could not read (named in `skipped`).
    failed: usize,
    /// New documents indexed: `sent − changed − failed`.
    added: usize,
    changed: usize,
    unchanged: usize,
    removed: usize,
    /// `(name, reason)`, in the order they were found.
    skipped: Vec<(String, String)>,
}

/// The text view of a document: its passages, the one to scroll to.
#[derive(Clone, Debug, PartialEq)]
struct Viewer {
    doc_id: String,
    title: String,
    focus: String,
    /// `None` until the worker sends them.
    passages: Option<Vec<DocPassage>>,
}

/// The library: the original files kept, the last drop's summary, storage used, the text view.
#[derive(Clone, Copy)]
struct LibSt {
    files: RwSignal<Vec<FileRecord>>,
    summary: RwSignal<Option<DropSummary>>,
    /// The drop summary's folded list of skipped files is open (its rows exist only then).
    skipped_open: RwSignal<bool>,
    /// `navigator.storage.estimate()`: usage and quota in bytes.
    usage: RwSignal<Option<(u64, u64)>>,
    viewer: RwSignal<Option<Viewer>>,
    /// The URL the last "open" went to (`blob:…#page=N`): shown for the e2e test.
    opened: RwSignal<String>,
    /// Drops being read and sent (their originals may be stored before the index has them).
    adding: RwSignal<usize>,
    /// Cancels so far: a drop still sending its documents stops at a cancel.
    cancels: RwSignal<u64>,
}

/// Remote mode: the search server the page searches instead of its own index, what it said
/// about its collection, and the last remote search's failure or warnings.
#[derive(Clone, Copy)]
struct RemoteSt {
    /// The server's base URL ([`remote::normalize`]d); `None`: local search.
    url: RwSignal<Option<String>>,
    /// Its `GET /health`: the collection's model, dims and size (`None` until it answers).
    info: RwSignal<Option<RemoteInfo>>,
    /// Why `GET /health` failed, in words.
    health_error: RwSignal<Option<String>>,
    /// The last search's failure in words (shown in the results area).
    error: RwSignal<Option<String>>,
    /// The last answer's §8 warnings.
    warnings: RwSignal<Vec<String>>,
}

/// The playground: two texts' cosine, a text's tokens, the PCA plot.
#[derive(Clone, Copy)]
struct PlaySt {
    cosine: RwSignal<Option<(f32, usize)>>,
    tokens: RwSignal<Vec<TokenOut>>,
    plot: RwSignal<Option<Plot>>,
}

impl St {
    fn new() -> St {
        St {
            model: ModelSt {
                status: RwSignal::new(ModelStatus::Starting),
                ready_ms: RwSignal::new(0.0),
                download: RwSignal::new((0, None)),
                info: RwSignal::new(None),
                model_error: RwSignal::new(None),
                models: RwSignal::new(Vec::new()),
                selected: RwSignal::new(None),
                lang: RwSignal::new(ENGLISH),
                dims: RwSignal::new(None),
            },
            docs: DocsSt {
                mismatch: RwSignal::new(None),
                storage: RwSignal::new(None),
                index: RwSignal::new(IndexState::default()),
                progress: RwSignal::new(None),
                indexing: RwSignal::new(false),
                queued: RwSignal::new(0),
                sent_docs: RwSignal::new(0),
                done_docs: RwSignal::new(0),
                in_flight: RwSignal::new(0),
                embed_count: RwSignal::new(0),
                heap_bytes: RwSignal::new(0),
                heap_live: RwSignal::new(0),
                docs_open: RwSignal::new(false),
            },
            search: SearchSt {
                query: RwSignal::new(String::new()),
                mode: RwSignal::new(SearchMode::default()),
                results: RwSignal::new(Vec::new()),
                keyword_match: RwSignal::new(true),
                latency: RwSignal::new(None),
                search_id: RwSignal::new(0),
                search_sent: RwSignal::new(0.0),
            },
            play: PlaySt {
                cosine: RwSignal::new(None),
                tokens: RwSignal::new(Vec::new()),
                plot: RwSignal::new(None),
            },
            lib: LibSt {
                files: RwSignal::new(Vec::new()),
                summary: RwSignal::new(None),
                skipped_open: RwSignal::new(false),
                usage: RwSignal::new(None),
                viewer: RwSignal::new(None),
                opened: RwSignal::new(String::new()),
                adding: RwSignal::new(0),
                cancels: RwSignal::new(0),
            },
            remote: RemoteSt {
                url: RwSignal::new(None),
                info: RwSignal::new(None),
                health_error: RwSignal::new(None),
                error: RwSignal::new(None),
                warnings: RwSignal::new(Vec::new()),
            },
            errors: RwSignal::new(Vec::new()),
            crash: RwSignal::new(None),
            restarts: RwSignal::new(0),
        }
    }

    fn push_error(&self, message: String) {
        self.errors.update(|e| {
            if e.last().map(|(_, m)| m) != Some(&message) {
                let n = e.last().map_or(0, |(n, _)| n + 1);
                e.push((n, message));
            }
        });
    }

    /// `?NAME=N`, a whole number ≥ 1; a value that is not one is ignored with a message (it was
    /// ignored silently, so `?limit=-1` indexed the whole corpus without a word).
    fn count_param(&self, name: &str) -> Option<usize> {
        let raw = query_param(name)?;
        match raw.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                self.push_error(format!(
                    "Ignoring ?{name}={raw}: it must be a whole number of at least 1."
                ));
                None
            }
        }
    }

    /// Loads the selected model (or retries it).
    fn load_selected(&self) {
        let Some(url) = self.model.selected.get_untracked() else {
            return;
        };
        let sha256 = self.model.models.with_untracked(|m| {
            m.iter()
                .find(|c| c.url == url)
                .and_then(|c| c.sha256.clone())
        });
        self.model.status.set(ModelStatus::Loading);
        self.model.model_error.set(None);
        self.docs.mismatch.set(None);
        self.model.info.set(None);
        self.model.download.set((0, None));
        self.search.results.set(Vec::new());
        self.docs.indexing.set(false);
        self.docs.progress.set(None);
        conn::send(&Request::LoadModel {
            url,
            sha256,
            no_store: flag_param("nostore"),
            db_version: query_param("dbversion").and_then(|v| v.parse().ok()),
            lang: Some(self.model.lang.get_untracked().code.to_string()),
            workers: self.count_param("workers"),
        });
    }

    /// The model to load for language `code`: the one chosen for it before, else its first.
    fn pick_model(&self, code: &str) -> Option<String> {
        let remembered =
            local_storage().and_then(|s| s.get_item(&lang::model_key(code)).ok().flatten());
        self.model.models.with_untracked(|m| {
            lang::pick_model(
                m.iter().map(|c| (c.url.as_str(), c.lang.as_deref())),
                code,
                remembered.as_deref(),
            )
        })
    }

    /// Switches to language `l`: its model (and, in the worker, its database and index).
    fn switch_language(&self, l: Language) {
        if l == self.model.lang.get_untracked() {
            return;
        }
        if let Some(s) = local_storage() {
            let _ = s.set_item(LANG_KEY, l.code);
        }
        self.model.lang.set(l);
        // What is shown belongs to the other language until the worker restores this one's.
        self.docs.index.set(IndexState::default());
        self.search.query.set(String::new());
        self.search.latency.set(None);
        self.model.selected.set(self.pick_model(l.code));
        self.load_selected();
    }

    /// Sends the current query (debounced by the caller): to the worker's index, or in remote
    /// mode to the search server through the worker.
    fn search_now(&self) {
        let q = self.search.query.get_untracked();
        if let Some(serve) = self.remote.url.get_untracked() {
            if q.trim().is_empty() || self.model.status.get_untracked() != ModelStatus::Ready {
                self.search.results.set(Vec::new());
                self.search.latency.set(None);
                self.remote.error.set(None);
                return;
            }
            let id = self.search.search_id.get_untracked() + 1;
            self.search.search_id.set(id);
            self.search.search_sent.set(now_ms());
            conn::send(&Request::RemoteSearch {
                id,
                query: q,
                k: TOP_K,
                serve,
                dims: self
                    .remote
                    .info
                    .with_untracked(|i| i.as_ref().map(|i| i.dims)),
            });
            return;
        }
        if q.trim().is_empty()
            || self.model.status.get_untracked() != ModelStatus::Ready
            || self.docs.index.with_untracked(|i| i.count == 0)
        {
            self.search.results.set(Vec::new());
            self.search.latency.set(None);
            return;
        }
        let id = self.search.search_id.get_untracked() + 1;
        self.search.search_id.set(id);
        self.search.search_sent.set(now_ms());
        conn::send(&Request::Search {
            id,
            query: q,
            k: TOP_K,
            mode: self.search.mode.get_untracked(),
        });
    }

    /// Points the page at the search server `serve` (`None`: back to the local index): checks the
    /// address, remembers it (`store`), asks the server about its collection and searches again.
    /// A bad address is said in words and changes nothing.
    fn set_remote(&self, serve: Option<&str>, store: bool) {
        let base = match serve.map(remote::normalize).transpose() {
            Ok(b) => b,
            Err(e) => {
                self.push_error(e);
                return;
            }
        };
        if store {
            if let Some(s) = local_storage() {
                let _ = match &base {
                    Some(b) => s.set_item(remote::SERVE_KEY, b),
                    None => s.remove_item(remote::SERVE_KEY),
                };
            }
        }
        self.remote.url.set(base.clone());
        self.remote.info.set(None);
        self.remote.health_error.set(None);
        self.remote.error.set(None);
        self.remote.warnings.set(Vec::new());
        self.search.results.set(Vec::new());
        self.search.latency.set(None);
        let st = *self;
        match base {
            Some(base) => leptos::task::spawn_local(async move {
                let answer = request_text(
                    "GET",
                    &remote::health_url(&base),
                    None,
                    remote::REQUEST_TIMEOUT_MS,
                )
                .await;
                let origin = remote::origin(&base).to_string();
                let info = match answer {
                    Ok((status, text)) => remote::parse_health(&base, status, &text),
                    Err(NoAnswer::TimedOut) => Err(remote::RemoteError::TimedOut {
                        origin,
                        seconds: remote::REQUEST_TIMEOUT_MS / 1000,
                    }),
                    Err(NoAnswer::Unreachable(_)) => Err(remote::RemoteError::Unreachable {
                        origin,
                        page_origin: lightembed_app::shared::web::location_origin(),
                    }),
                };
                // A later change of server wins over this answer.
                if st.remote.url.get_untracked().as_deref() != Some(base.as_str()) {
                    return;
                }
                match info {
                    Ok(i) => st.remote.info.set(Some(i)),
                    Err(e) => st.remote.health_error.set(Some(e.to_string())),
                }
                st.search_now();
            }),
            None => self.search_now(),
        }
    }

    fn index_dims(&self) -> Option<usize> {
        self.model.dims.get_untracked()
    }
}

/// Applies one worker / connection event to the state.
fn handle(st: St, ev: ConnEvent) {
    match ev {
        ConnEvent::Crashed {
            reason,
            restarts,
            gave_up,
        } => {
            st.restarts.set(restarts);
            st.docs.indexing.set(false);
            // What the crashed worker held is gone (a waiting drop stops sending: the model is
            // not ready).
            st.docs.in_flight.set(0);
            st.docs.progress.set(None);
            st.model.status.set(if gave_up {
                ModelStatus::Error
            } else {
                ModelStatus::Restarting
            });
            st.crash.set(Some(if gave_up {
                format!("The worker crashed again ({reason}); it was restarted {restarts} times and is now stopped. Reload the page.")
            } else {
                format!("The worker crashed ({reason}) and was restarted; the model and index are being restored.")
            }));
        }
        ConnEvent::Worker(ev) => match ev {
            Event::Hello => {}
            Event::Storage { kind, message } => st.docs.storage.set(Some((kind, message))),
            Event::Download { loaded, total } => {
                if st.model.status.get_untracked() != ModelStatus::Ready {
                    st.model.status.set(ModelStatus::Downloading);
                }
                st.model.download.set((loaded, total));
            }
            Event::Verifying => st.model.status.set(ModelStatus::Verifying),
            Event::ModelReady { info } => {
                st.model.dims.update(|d| {
                    if !d.is_some_and(|d| info.valid_dims.contains(&d)) {
                        *d = Some(info.output_dim);
                    }
                });
                st.model.info.set(Some(info));
                st.model.model_error.set(None);
                st.model.ready_ms.set(now_ms());
                st.model.status.set(ModelStatus::Ready);
            }
            Event::ModelFailed { reason } => {
                st.model.status.set(ModelStatus::Error);
                st.model.info.set(None);
                st.model.model_error.set(Some(reason));
            }
            Event::Index { state } => {
                // The dims select follows the index when its dims change (a restore, a re-index,
                // another model's index), not on every update: a restored worker or a finished
                // drop sends the same dims again, and that must not undo a size the visitor has
                // just chosen to re-index at (the app e2e's Matryoshka step lost its button so).
                let (count, dims) = st.docs.index.with_untracked(|i| (i.count, i.dims));
                if state.count > 0 && (count == 0 || dims != state.dims) {
                    st.model.dims.set(Some(state.dims));
                }
                st.docs.index.set(state);
                st.docs.mismatch.set(None);
                st.search_now();
                // The stored originals' list and the storage estimate: once the worker is idle
                // (its last index update of a drop comes after `IndexDone`), not 4 times a
                // second while a drop of thousands of files is indexed.
                if !st.docs.indexing.get_untracked() && st.docs.queued.get_untracked() == 0 {
                    library::refresh(st);
                }
            }
            Event::IndexMismatch {
                message,
                stored_passages,
            } => st.docs.mismatch.set(Some((message, stored_passages))),
            Event::Progress {
                done,
                total,
                per_sec,
                embedded,
                workers,
                queued,
                heap_bytes,
                heap_live,
            } if st.model.status.get_untracked() == ModelStatus::Ready => {
                // (While another model loads, a progress event is the old job's, stopped by the
                // switch: it posts no `IndexDone`, so it must not mark a job running.)
                // A job runs until its `IndexDone` (which follows its last progress, after the
                // save): ending it here showed "done" with `helped` still 0 between the two.
                st.docs.indexing.set(true);
                st.docs.queued.set(queued);
                st.docs.progress.set(Some(Prog {
                    done,
                    total,
                    per_sec,
                    workers,
                    helped: 0,
                }));
                st.docs.embed_count.update(|c| *c += embedded as u64);
                st.docs.heap_bytes.set(heap_bytes);
                st.docs.heap_live.set(heap_live);
            }
            Event::IndexDone {
                done,
                total,
                per_sec,
                workers,
                helped,
                queued,
                ..
            } if st.model.status.get_untracked() == ModelStatus::Ready => {
                // (Like `Progress`: while another model loads, this is the old model's.)
                st.docs.indexing.set(queued > 0);
                st.docs.queued.set(queued);
                if queued == 0 {
                    st.docs.in_flight.set(0);
                } else {
                    st.docs.in_flight.update(|n| *n = n.saturating_sub(1));
                }
                if queued == 0 {
                    st.docs.sent_docs.set(0);
                    st.docs.done_docs.set(0);
                } else if st.docs.sent_docs.get_untracked() > 0 {
                    // One `IndexDone` per document sent (also for one with no text).
                    st.docs.done_docs.update(|n| *n += 1);
                }
                // total 0: a waiting document that gave no job (no text): only the queue moved.
                if total > 0 {
                    st.docs.progress.set(Some(Prog {
                        done,
                        total,
                        per_sec,
                        workers,
                        helped,
                    }));
                }
            }
            Event::Results {
                id,
                hits,
                keyword_match,
                embed_ms,
                search_ms,
            } => {
                if id == st.search.search_id.get_untracked()
                    && !st.search.query.get_untracked().trim().is_empty()
                {
                    let total_ms = now_ms() - st.search.search_sent.get_untracked();
                    st.search.keyword_match.set(keyword_match);
                    st.search.results.set(hits);
                    st.search.latency.set(Some(Latency {
                        query: st.search.query.get_untracked(),
                        total_ms,
                        embed_ms,
                        search_ms,
                    }));
                }
            }
            Event::RemoteResults {
                id,
                hits,
                warnings,
                embed_ms,
                request_ms,
            } => {
                if id == st.search.search_id.get_untracked()
                    && st.remote.url.with_untracked(Option::is_some)
                    && !st.search.query.get_untracked().trim().is_empty()
                {
                    let total_ms = now_ms() - st.search.search_sent.get_untracked();
                    st.remote.error.set(None);
                    st.remote.warnings.set(warnings);
                    st.search.keyword_match.set(true);
                    st.search.results.set(hits);
                    st.search.latency.set(Some(Latency {
                        query: st.search.query.get_untracked(),
                        total_ms,
                        embed_ms,
                        search_ms: request_ms,
                    }));
                }
            }
            Event::RemoteFailed { id, message } => {
                if id == st.search.search_id.get_untracked()
                    && st.remote.url.with_untracked(Option::is_some)
                {
                    st.search.results.set(Vec::new());
                    st.search.latency.set(None);
                    st.remote.warnings.set(Vec::new());
                    st.remote.error.set(Some(message));
                }
            }
            Event::Cosine { value, dims } => st.play.cosine.set(Some((value, dims))),
            Event::Tokens { tokens } => st.play.tokens.set(tokens),
            Event::Projection {
                points,
                query,
                explained,
            } => st.play.plot.set(Some(Plot {
                points,
                query,
                explained,
            })),
            Event::Skipped { name, reason, .. } => {
                st.push_error(format!("{name}: {reason}"));
                // Not indexed: its original is not kept either.
                library::forget(st, vec![lightembed_app::worker::chunk::user_doc_id(&name)]);
                st.lib.summary.update(|s| {
                    let s = s.get_or_insert_with(DropSummary::default);
                    s.skipped.push((name, reason));
                    s.failed += 1;
                    s.added = s.sent.saturating_sub(s.changed + s.failed);
                });
            }
            Event::DocText { doc_id, passages } => st.lib.viewer.update(|v| {
                if let Some(v) = v.as_mut().filter(|v| v.doc_id == doc_id) {
                    v.passages = Some(passages);
                }
            }),
            Event::Error { message } => st.push_error(message),
            // The old model's job, stopped by a model switch (see above).
            Event::Progress { .. } | Event::IndexDone { .. } => {}
            Event::Panic { .. } => {}
        },
    }
}

/// `"1 passage"`, `"3 passages"`: `n` and `noun`, plural unless `n` is 1.
fn count_of(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn fmt_bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.2} MiB", n as f64 / (1u64 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Reads `models/manifest.json` into the model list.
async fn load_model_list() -> Result<Vec<ModelChoice>, String> {
    let text = fetch_text(MODELS_MANIFEST).await?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{MODELS_MANIFEST} is not JSON: {e}"))?;
    let list = v
        .get("models")
        .and_then(|m| m.as_array())
        .ok_or_else(|| format!("{MODELS_MANIFEST} has no \"models\" list"))?;
    Ok(list
        .iter()
        .filter_map(|m| {
            let file = m.get("file")?.as_str()?;
            let id = m.get("model_id").and_then(|x| x.as_str()).unwrap_or(file);
            let version = m.get("version").and_then(|x| x.as_str()).unwrap_or("?");
            let size = m.get("size").and_then(|x| x.as_u64()).unwrap_or(0);
            // The manifest's `lang` (models_manifest.py), else read off the id the same way.
            let model_lang = match m.get("lang") {
                Some(l) => l.as_str().map(str::to_string),
                None => lang::model_lang(id).map(str::to_string),
            };
            Some(ModelChoice {
                url: format!("models/{file}"),
                label: format!(
                    "{} — {id} v{version}, {}",
                    file.trim_end_matches(".bin"),
                    fmt_bytes(size)
                ),
                sha256: m.get("sha256").and_then(|x| x.as_str()).map(str::to_string),
                lang: model_lang,
            })
        })
        .collect())
}

/// A switch in the query: present and not `0`, `false` or `no` (`?nostore`, `?nostore=1`; `?nostore=0`
/// used to switch storage off too).
fn flag_param(name: &str) -> bool {
    query_param(name).is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no"))
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let st = St::new();
    conn::start(move |ev| handle(st, ev));

    // Language: `?lang=CODE`, else the one chosen before, else English.
    let lang_param = query_param("lang").and_then(|c| lang::language(&c).copied());
    let wanted = lang_param
        .or_else(|| {
            local_storage()
                .and_then(|s| s.get_item(LANG_KEY).ok().flatten())
                .and_then(|c| lang::language(&c).copied())
        })
        .unwrap_or(ENGLISH);

    // Remote mode: `?serve=URL` (remembered, as the setting is), else the server set before.
    match query_param("serve").filter(|u| !u.trim().is_empty()) {
        Some(url) => st.set_remote(Some(&url), true),
        None => {
            if let Some(url) =
                local_storage().and_then(|s| s.get_item(remote::SERVE_KEY).ok().flatten())
            {
                st.set_remote(Some(&url), false);
            }
        }
    }

    // Model list: `?model=URL` forces one model (for every language); else the build's manifest.
    if let Some(url) = query_param("model").filter(|u| !u.trim().is_empty()) {
        st.model.models.set(vec![ModelChoice {
            label: url.clone(),
            url: url.clone(),
            sha256: None,
            lang: None,
        }]);
        st.model.lang.set(wanted);
        st.model.selected.set(Some(url));
        st.load_selected();
    } else {
        leptos::task::spawn_local(async move {
            let list = match load_model_list().await {
                Ok(l) if !l.is_empty() => l,
                Ok(_) | Err(_) => DEFAULT_MODELS
                    .iter()
                    .map(|u| ModelChoice {
                        url: u.to_string(),
                        label: u.trim_start_matches("models/").to_string(),
                        sha256: None,
                        lang: Some(ENGLISH.code.to_string()),
                    })
                    .collect(),
            };
            // A language without a model in this build falls back to the first that has one.
            let offered = lang::offered_languages(list.iter().map(|c| c.lang.as_deref()));
            let l = if offered.contains(&wanted) {
                wanted
            } else {
                offered[0]
            };
            st.model.models.set(list);
            st.model.lang.set(l);
            st.model.selected.set(st.pick_model(l.code));
            st.load_selected();
        });
    }

    view! {
        <header>
            <div class="top">
                <h1>"lightembed"</h1>
                <ThemeToggle />
            </div>
            <p class="sub">{move || if st.remote.url.with(Option::is_some) {
                // Remote mode: the queries leave the device (their text and vectors), nothing else.
                "Search a remote collection by meaning: each query is embedded in your browser and sent, with its vector, to the search server. Your own documents stay on this device."
            } else {
                "Search your documents by meaning — PDF, Word, OpenDocument, EPUB, HTML, Markdown, text — offline, in your browser. Nothing leaves this device."
            }}</p>
            <ModelPanel st=st />
        </header>
        <ErrorBanner st=st />
        <StorageBanner st=st />
        <main>
            <SearchPanel st=st />
            <IndexPanel st=st />
            <LibraryPanel st=st />
            <Playground st=st />
        </main>
        <TextView st=st />
        <footer>
            "Corpus: passages of " <em>{move || st.model.lang.get().corpus_work}</em> {move || format!(" ({}). ", st.model.lang.get().corpus_source)}
            "Worker restarts: " <span data-testid="worker-restarts">{move || st.restarts.get()}</span>
            // A test hook (the e2e crashes the worker to check recovery): only with `?debug`.
            {flag_param("debug").then(|| view! {
                " · " <button class="link" data-testid="crash" on:click=move |_| conn::send(&Request::Crash)>"crash the worker (test)"</button>
            })}
        </footer>
    }
}

/// The light / dark switch: the page follows the system's choice (`prefers-color-scheme`) until
/// this is used; the choice is remembered (`localStorage`) and applied before the page paints
/// (index.html sets `data-theme` on `<html>`).
#[component]
fn ThemeToggle() -> impl IntoView {
    const KEY: &str = "lightembed.theme";
    let root = || web_sys::window()?.document()?.document_element();
    let dark_now = move || {
        let set = root().and_then(|r| r.get_attribute("data-theme"));
        match set.as_deref() {
            Some("dark") => true,
            Some("light") => false,
            _ => web_sys::window()
                .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
                .is_some_and(|m| m.matches()),
        }
    };
    let dark = RwSignal::new(dark_now());
    // The system's choice changing (while the page follows it) changes the label too.
    if let Some(mq) =
        web_sys::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
    {
        let on_change =
            wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || dark.set(dark_now()));
        mq.set_onchange(Some(on_change.as_ref().unchecked_ref()));
        on_change.forget(); // one for the page's life
    }
    view! {
        <button class="theme" data-testid="theme-toggle" type="button"
            aria-label=move || if dark.get() { "Switch to the light theme" } else { "Switch to the dark theme" }
            on:click=move |_| {
                let next = !dark.get_untracked();
                if let Some(r) = root() {
                    let _ = r.set_attribute("data-theme", if next { "dark" } else { "light" });
                }
                if let Some(s) = local_storage() {
                    let _ = s.set_item(KEY, if next { "dark" } else { "light" });
                }
                dark.set(next);
            }>
            {move || if dark.get() { "☀ Light" } else { "☾ Dark" }}
        </button>
    }
}

/// `event.target` as a concrete element type.
fn event_target<T: JsCast>(ev: &ev::Event) -> T {
    ev.target().expect("event has a target").unchecked_into()
}
