//! The page: language and model chooser and status, documents and indexing, search, playground.
//! All state is in signals updated from worker events ([`handle`]); user actions send
//! [`Request`]s.
//!
//! The language (English / Türkçe, [`lightembed_app::lang`]) decides which models are listed
//! (by their `model_id`), which bundled corpus "load corpus" indexes, and which IndexedDB database
//! holds the index (each language its own: switching never mixes the corpora, and switching back
//! restores the other index without embedding).

use std::time::Duration;

use leptos::ev;
use leptos::prelude::*;
use lightembed_app::chunk::Format;
use lightembed_app::lang::{self, Language, ENGLISH, LANG_KEY};
use lightembed_app::protocol::{
    DocSummary, Event, IndexState, ModelInfo, Point, Request, SearchMode, ShownHit, StorageKind,
    TokenOut,
};
use lightembed_app::web::{fetch_text, now_ms, query_param};
use wasm_bindgen::JsCast;

use crate::conn::{self, ConnEvent};

// The bundled corpora (written by `lightembed passages`, `scripts/make_corpus.sh` and
// `scripts/make_corpus_tr.sh`; copied by trunk) are each language's `corpus_url`
// ([`lightembed_app::lang::LANGUAGES`]).
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

/// Every piece of UI state (all signals are `Copy`).
#[derive(Clone, Copy)]
struct St {
    status: RwSignal<String>,
    ready_ms: RwSignal<f64>,
    download: RwSignal<(u64, Option<u64>)>,
    info: RwSignal<Option<ModelInfo>>,
    model_error: RwSignal<Option<String>>,
    mismatch: RwSignal<Option<(String, usize)>>,
    errors: RwSignal<Vec<String>>,
    crash: RwSignal<Option<String>>,
    restarts: RwSignal<usize>,
    storage: RwSignal<Option<(StorageKind, Option<String>)>>,
    index: RwSignal<IndexState>,
    progress: RwSignal<Option<Prog>>,
    indexing: RwSignal<bool>,
    embed_count: RwSignal<u64>,
    query: RwSignal<String>,
    mode: RwSignal<SearchMode>,
    results: RwSignal<Vec<ShownHit>>,
    latency: RwSignal<Option<Latency>>,
    search_id: RwSignal<u64>,
    search_sent: RwSignal<f64>,
    models: RwSignal<Vec<ModelChoice>>,
    selected: RwSignal<Option<String>>,
    lang: RwSignal<Language>,
    dims: RwSignal<Option<usize>>,
    cosine: RwSignal<Option<(f32, usize)>>,
    tokens: RwSignal<Vec<TokenOut>>,
    plot: RwSignal<Option<Plot>>,
}

impl St {
    fn new() -> St {
        St {
            status: RwSignal::new("starting".into()),
            ready_ms: RwSignal::new(0.0),
            download: RwSignal::new((0, None)),
            info: RwSignal::new(None),
            model_error: RwSignal::new(None),
            mismatch: RwSignal::new(None),
            errors: RwSignal::new(Vec::new()),
            crash: RwSignal::new(None),
            restarts: RwSignal::new(0),
            storage: RwSignal::new(None),
            index: RwSignal::new(IndexState::default()),
            progress: RwSignal::new(None),
            indexing: RwSignal::new(false),
            embed_count: RwSignal::new(0),
            query: RwSignal::new(String::new()),
            mode: RwSignal::new(SearchMode::default()),
            results: RwSignal::new(Vec::new()),
            latency: RwSignal::new(None),
            search_id: RwSignal::new(0),
            search_sent: RwSignal::new(0.0),
            models: RwSignal::new(Vec::new()),
            selected: RwSignal::new(None),
            lang: RwSignal::new(ENGLISH),
            dims: RwSignal::new(None),
            cosine: RwSignal::new(None),
            tokens: RwSignal::new(Vec::new()),
            plot: RwSignal::new(None),
        }
    }

    fn push_error(&self, message: String) {
        self.errors.update(|e| {
            if e.last() != Some(&message) {
                e.push(message);
            }
            if e.len() > 4 {
                e.remove(0);
            }
        });
    }

    /// Loads the selected model (or retries it).
    fn load_selected(&self) {
        let Some(url) = self.selected.get_untracked() else {
            return;
        };
        let sha256 = self.models.with_untracked(|m| {
            m.iter()
                .find(|c| c.url == url)
                .and_then(|c| c.sha256.clone())
        });
        self.status.set("loading".into());
        self.model_error.set(None);
        self.mismatch.set(None);
        self.info.set(None);
        self.download.set((0, None));
        self.results.set(Vec::new());
        self.indexing.set(false);
        self.progress.set(None);
        conn::send(&Request::LoadModel {
            url,
            sha256,
            no_store: query_param("nostore").is_some(),
            db_version: query_param("dbversion").and_then(|v| v.parse().ok()),
            lang: Some(self.lang.get_untracked().code.to_string()),
        });
    }

    /// The model to load for language `code`: the one chosen for it before, else its first.
    fn pick_model(&self, code: &str) -> Option<String> {
        let remembered =
            local_storage().and_then(|s| s.get_item(&lang::model_key(code)).ok().flatten());
        self.models.with_untracked(|m| {
            lang::pick_model(
                m.iter().map(|c| (c.url.as_str(), c.lang.as_deref())),
                code,
                remembered.as_deref(),
            )
        })
    }

    /// Switches to language `l`: its model (and, in the worker, its database and index).
    fn switch_language(&self, l: Language) {
        if l == self.lang.get_untracked() {
            return;
        }
        if let Some(s) = local_storage() {
            let _ = s.set_item(LANG_KEY, l.code);
        }
        self.lang.set(l);
        // What is shown belongs to the other language until the worker restores this one's.
        self.index.set(IndexState::default());
        self.query.set(String::new());
        self.latency.set(None);
        self.selected.set(self.pick_model(l.code));
        self.load_selected();
    }

    /// Sends the current query (debounced by the caller).
    fn search_now(&self) {
        let q = self.query.get_untracked();
        if q.trim().is_empty()
            || self.status.get_untracked() != "ready"
            || self.index.with_untracked(|i| i.count == 0)
        {
            self.results.set(Vec::new());
            self.latency.set(None);
            return;
        }
        let id = self.search_id.get_untracked() + 1;
        self.search_id.set(id);
        self.search_sent.set(now_ms());
        conn::send(&Request::Search {
            id,
            query: q,
            k: TOP_K,
            mode: self.mode.get_untracked(),
        });
    }

    fn index_dims(&self) -> Option<usize> {
        self.dims.get_untracked()
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
            st.indexing.set(false);
            st.progress.set(None);
            st.status.set(if gave_up {
                "error".into()
            } else {
                "restarting".into()
            });
            st.crash.set(Some(if gave_up {
                format!("The worker crashed again ({reason}); it was restarted {restarts} times and is now stopped. Reload the page.")
            } else {
                format!("The worker crashed ({reason}) and was restarted; the model and index are being restored.")
            }));
        }
        ConnEvent::Worker(ev) => match ev {
            Event::Hello => {}
            Event::Storage { kind, message } => st.storage.set(Some((kind, message))),
            Event::Download { loaded, total } => {
                if st.status.get_untracked() != "ready" {
                    st.status.set("downloading".into());
                }
                st.download.set((loaded, total));
            }
            Event::Verifying => st.status.set("verifying".into()),
            Event::ModelReady { info } => {
                st.dims.update(|d| {
                    if !d.is_some_and(|d| info.valid_dims.contains(&d)) {
                        *d = Some(info.output_dim);
                    }
                });
                st.info.set(Some(info));
                st.model_error.set(None);
                st.ready_ms.set(now_ms());
                st.status.set("ready".into());
            }
            Event::ModelFailed { reason } => {
                st.status.set("error".into());
                st.info.set(None);
                st.model_error.set(Some(reason));
            }
            Event::Index { state } => {
                if state.count > 0 {
                    st.dims.set(Some(state.dims));
                }
                st.index.set(state);
                st.mismatch.set(None);
                st.search_now();
            }
            Event::IndexMismatch {
                message,
                stored_passages,
            } => st.mismatch.set(Some((message, stored_passages))),
            Event::Progress {
                done,
                total,
                per_sec,
                embedded,
            } => {
                st.indexing.set(done < total);
                st.progress.set(Some(Prog {
                    done,
                    total,
                    per_sec,
                }));
                st.embed_count.update(|c| *c += embedded as u64);
            }
            Event::IndexDone {
                done,
                total,
                per_sec,
                ..
            } => {
                st.indexing.set(false);
                st.progress.set(Some(Prog {
                    done,
                    total,
                    per_sec,
                }));
            }
            Event::Results {
                id,
                hits,
                embed_ms,
                search_ms,
            } => {
                if id == st.search_id.get_untracked() && !st.query.get_untracked().trim().is_empty()
                {
                    let total_ms = now_ms() - st.search_sent.get_untracked();
                    st.results.set(hits);
                    st.latency.set(Some(Latency {
                        query: st.query.get_untracked(),
                        total_ms,
                        embed_ms,
                        search_ms,
                    }));
                }
            }
            Event::Cosine { value, dims } => st.cosine.set(Some((value, dims))),
            Event::Tokens { tokens } => st.tokens.set(tokens),
            Event::Projection {
                points,
                query,
                explained,
            } => st.plot.set(Some(Plot {
                points,
                query,
                explained,
            })),
            Event::Error { message } => st.push_error(message),
            Event::Panic { .. } => {}
        },
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

    // Model list: `?model=URL` forces one model (for every language); else the build's manifest.
    if let Some(url) = query_param("model") {
        st.models.set(vec![ModelChoice {
            label: url.clone(),
            url: url.clone(),
            sha256: None,
            lang: None,
        }]);
        st.lang.set(wanted);
        st.selected.set(Some(url));
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
            st.models.set(list);
            st.lang.set(l);
            st.selected.set(st.pick_model(l.code));
            st.load_selected();
        });
    }

    view! {
        <header>
            <h1>"lightembed"</h1>
            <p class="sub">"Semantic search that runs entirely in your browser: a tiny embedding model, an HNSW index and IndexedDB, in a Web Worker."</p>
        </header>
        <ErrorBanner st=st />
        <StorageBanner st=st />
        <main>
            <ModelPanel st=st />
            <IndexPanel st=st />
            <SearchPanel st=st />
            <Playground st=st />
        </main>
        <footer>
            "Corpus: passages of " <em>{move || st.lang.get().corpus_work}</em> {move || format!(" ({}). ", st.lang.get().corpus_source)}
            "Worker restarts: " <span data-testid="worker-restarts">{move || st.restarts.get()}</span>
            " · " <button class="link" data-testid="crash" on:click=move |_| conn::send(&Request::Crash)>"crash the worker (test)"</button>
        </footer>
    }
}

/// A file's bytes → its text, as the CLI reads files (`ingest::decode`): the charset detected by
/// [`ingest::charset_label`] (UTF-8; else the charset an HTML page declares; else windows-1252),
/// decoded with the browser's `TextDecoder`, so `encoding_rs` stays out of the wasm. The warning,
/// as `decode` words it, when windows-1252 was guessed or a declared charset could not decode
/// some bytes (U+FFFD in their place). A label the browser does not know is skipped (the next
/// `<meta>` counts, else the windows-1252 guess).
fn decode_file(
    bytes: &js_sys::Uint8Array,
    format: Format,
) -> Result<(String, Option<String>), String> {
    use lightembed_index::ingest::{self, Charset};
    use web_sys::{TextDecoder, TextDecoderOptions};
    let js_err = |e: wasm_bindgen::JsValue| lightembed_app::web::js_error(&e);
    let raw = bytes.to_vec();
    // A UTF-8 byte-order mark is dropped whatever the charset (as `decode` does).
    let bom = if raw.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let body = bytes.subarray(bom, bytes.length());
    let known = |label: &str| TextDecoder::new_with_label(label).is_ok();
    match ingest::charset_label(&raw, format, known) {
        // Valid UTF-8 (checked): nothing is replaced.
        Charset::Utf8 => {
            return Ok((
                String::from_utf8_lossy(&raw[bom as usize..]).into_owned(),
                None,
            ))
        }
        Charset::Declared(label) => {
            let strict = TextDecoderOptions::new();
            strict.set_fatal(true);
            if let Ok(d) = TextDecoder::new_with_label_and_options(&label, &strict) {
                return match d.decode_with_js_u8_array(&body) {
                    Ok(text) => Ok((text, None)),
                    Err(_) => {
                        let text = TextDecoder::new_with_label(&label)
                            .and_then(|d| d.decode_with_js_u8_array(&body))
                            .map_err(js_err)?;
                        let warning =
                            format!("not valid {}; undecodable bytes replaced", d.encoding());
                        Ok((text, Some(warning)))
                    }
                };
            }
        }
        Charset::Fallback => {}
    }
    let text = TextDecoder::new_with_label("windows-1252")
        .and_then(|d| d.decode_with_js_u8_array(&body))
        .map_err(js_err)?;
    Ok((text, Some(ingest::FALLBACK_WARNING.to_string())))
}

#[component]
fn ErrorBanner(st: St) -> impl IntoView {
    let visible = move || {
        st.model_error.with(Option::is_some)
            || st.mismatch.with(Option::is_some)
            || st.errors.with(|e| !e.is_empty())
            || st.crash.with(Option::is_some)
    };
    view! {
        <Show when=visible>
            <div class="banner error" data-testid="error" role="alert">
                <Show when=move || st.errors.with(|e| !e.is_empty()) || st.crash.with(Option::is_some)>
                    <button class="dismiss" on:click=move |_| { st.errors.set(Vec::new()); st.crash.set(None); }>"Dismiss"</button>
                </Show>
                {move || st.model_error.get().map(|reason| view! {
                    <div class="msg">
                        <strong>"Model not loaded. "</strong>
                        <span data-testid="model-error">{reason}</span>
                        " "
                        <button data-testid="retry" on:click=move |_| st.load_selected()>"Retry"</button>
                    </div>
                })}
                {move || st.mismatch.get().map(|(message, stored)| view! {
                    <div class="msg">
                        <span data-testid="mismatch">{message}</span>
                        " "
                        <button data-testid="reindex" on:click=move |_| {
                            st.mismatch.set(None);
                            conn::send(&Request::Reindex { dims: st.index_dims() });
                        }>{format!("Re-index {stored} passages with this model")}</button>
                    </div>
                })}
                {move || st.crash.get().map(|m| view! {
                    <div class="msg"><span data-testid="crash-notice">{m}</span></div>
                })}
                <For each=move || st.errors.get() key=|e| e.clone() let:e>
                    <div class="msg">{e}</div>
                </For>
            </div>
        </Show>
    }
}

#[component]
fn StorageBanner(st: St) -> impl IntoView {
    view! {
        {move || match st.storage.get() {
            Some((StorageKind::MemoryOnly, reason)) => Some(view! {
                <div class="banner warn" data-testid="storage-warning" role="status">
                    <strong>"Storage unavailable: "</strong>
                    {reason.unwrap_or_default()}
                    " The app works in memory; nothing will survive a reload."
                </div>
            }),
            _ => None,
        }}
    }
}

#[component]
fn ModelPanel(st: St) -> impl IntoView {
    let on_change = move |ev: ev::Event| {
        let url = event_target_value(&ev);
        if let Some(s) = local_storage() {
            let _ = s.set_item(&lang::model_key(st.lang.get_untracked().code), &url);
        }
        st.selected.set(Some(url));
        st.load_selected();
    };
    let on_lang = move |ev: ev::Event| {
        if let Some(l) = lang::language(&event_target_value(&ev)) {
            st.switch_language(*l);
        }
    };
    // The chosen language's models (and those that name no language).
    let listed = move || {
        let code = st.lang.get().code;
        st.models
            .get()
            .into_iter()
            .filter(|c| lang::offered_under(c.lang.as_deref(), code))
            .collect::<Vec<_>>()
    };
    view! {
        <section class="panel">
            <h2>"Model"</h2>
            <label>
                "Language: "
                <select data-testid="lang-select" on:change=on_lang>
                    {move || {
                        let cur = st.lang.get();
                        st.models.with(|m| lang::offered_languages(m.iter().map(|c| c.lang.as_deref())))
                            .into_iter()
                            .map(|l| view! { <option value=l.code selected=l == cur>{l.name}</option> })
                            .collect_view()
                    }}
                </select>
            </label>
            " "
            <label>
                "Model: "
                <select data-testid="model-select" on:change=on_change>
                    <For each=listed key=|c| c.url.clone() let:c>
                        <option value=c.url.clone() selected=move || st.selected.get().as_deref() == Some(c.url.as_str())>{c.label.clone()}</option>
                    </For>
                </select>
            </label>
            " Status: " <strong data-testid="model-status" data-ready-ms=move || format!("{:.1}", st.ready_ms.get()) class=move || format!("status {}", st.status.get())>{move || st.status.get()}</strong>
            <div data-testid="download-progress" class="progress">
                {move || {
                    let (loaded, total) = st.download.get();
                    let cached = st.info.with(|i| i.as_ref().is_some_and(|i| i.from_cache));
                    let max = total.unwrap_or(loaded.max(1));
                    let text = if cached {
                        format!("{} from the IndexedDB cache (no download)", fmt_bytes(loaded))
                    } else {
                        match total {
                            Some(t) => format!("{} of {} ({:.0} %)", fmt_bytes(loaded), fmt_bytes(t), 100.0 * loaded as f64 / t.max(1) as f64),
                            None => format!("{} of ?", fmt_bytes(loaded)),
                        }
                    };
                    view! { <progress max=max.to_string() value=loaded.to_string()></progress> <span>{text}</span> }
                }}
            </div>
            {move || st.info.get().map(|i| view! { <ModelInfoTable info=i /> })}
        </section>
    }
}

#[component]
fn ModelInfoTable(info: ModelInfo) -> impl IntoView {
    let dims = lightembed::format::dims_list(&info.valid_dims, ", ");
    let arch = if info.n_layers == 0 {
        format!("static (d_model {})", info.d_model)
    } else {
        format!(
            "{} layers, d_model {}, weights {}",
            info.n_layers, info.d_model, info.weight_quant
        )
    };
    let meta = info.metadata.clone().map(|m| {
        serde_json::from_str::<serde_json::Value>(&m)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or(m)
    });
    view! {
        <table class="info" data-testid="model-info" data-verify-ms=format!("{:.1}", info.verify_ms)>
            <tr><th>"model_id"</th><td data-testid="model-id">{info.model_id.clone()}</td></tr>
            <tr><th>"version"</th><td data-testid="model-version">{info.version.clone()}</td></tr>
            <tr><th>"format"</th><td>{format!("v{}", info.format_version)}</td></tr>
            <tr><th>"architecture"</th><td>{arch}</td></tr>
            <tr><th>"embeddings"</th><td>{format!("{} ({} tokens, max_seq_len {}, {})", info.embedding_quant, info.vocab_size, info.max_seq_len, if info.lower_case { "uncased" } else { "cased" })}</td></tr>
            <tr><th>"dims"</th><td>{format!("{} (valid: {dims})", info.output_dim)}</td></tr>
            <tr><th>"size"</th><td>{format!("{} ({} bytes)", fmt_bytes(info.size_bytes), info.size_bytes)}</td></tr>
            <tr><th>"SHA-256"</th><td class="mono">{info.sha256.clone()}</td></tr>
            <tr><th>"verified"</th><td>{format!("{:.1} ms, {}", info.verify_ms, if info.from_cache { "from the IndexedDB cache" } else { "downloaded" })}{if info.has_fingerprint { ", fingerprinted" } else { "" }}</td></tr>
            {meta.map(|m| view! { <tr><th>"metadata"</th><td><pre>{m}</pre></td></tr> })}
        </table>
    }
}

#[component]
fn IndexPanel(st: St) -> impl IntoView {
    let ready = move || st.status.get() == "ready";
    let limit = query_param("limit").and_then(|l| l.parse::<usize>().ok());
    let title = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    let drag = RwSignal::new(false);

    let index_corpus = move |_| {
        conn::send(&Request::IndexCorpus {
            url: st.lang.get_untracked().corpus_url.into(),
            limit,
            dims: st.index_dims(),
        });
        st.indexing.set(true);
    };
    let add_text = move |_| {
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        let name = title.get_untracked();
        let name = if name.trim().is_empty() {
            format!("pasted-{}", js_sys::Date::now() as u64)
        } else {
            name
        };
        // The worker cuts it (with the model's tokenizer, as the CLI does); its progress events
        // set `indexing`.
        conn::send(&Request::IndexDocument {
            name,
            content: body,
            format: Format::Text,
            dims: st.index_dims(),
        });
        text.set(String::new());
        title.set(String::new());
    };
    let on_files = move |files: web_sys::FileList| {
        if st.status.get_untracked() != "ready" || st.mismatch.with_untracked(Option::is_some) {
            st.push_error(
                "Files can be added once a model is ready and the index matches it.".into(),
            );
            return;
        }
        for i in 0..files.length() {
            let Some(file) = files.get(i) else { continue };
            leptos::task::spawn_local(async move {
                let name = file.name();
                let format = Format::from_name(&name);
                // The bytes, read by their charset as the CLI reads files.
                let read = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
                    .await
                    .map_err(|e| lightembed_app::web::js_error(&e))
                    .and_then(|buf| decode_file(&js_sys::Uint8Array::new(&buf), format));
                match read {
                    Ok((content, warning)) => {
                        // Cut in the worker (it answers "no text found" for an empty file).
                        conn::send(&Request::IndexDocument {
                            format,
                            name: name.clone(),
                            content,
                            dims: st.index_dims(),
                        });
                        if let Some(w) = warning {
                            st.push_error(format!("{name}: {w}"));
                        }
                    }
                    Err(e) => st.push_error(format!("{name}: {e}")),
                }
            });
        }
    };
    let on_drop = move |ev: ev::DragEvent| {
        ev.prevent_default();
        drag.set(false);
        if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
            on_files(files);
        }
    };
    let on_pick = move |ev: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            on_files(files);
        }
        input.set_value("");
    };
    let dims_changed = move |ev: ev::Event| {
        if let Ok(d) = event_target_value(&ev).parse::<usize>() {
            st.dims.set(Some(d));
        }
    };

    view! {
        <section class="panel">
            <h2>"Documents"</h2>
            <div class="row">
                <button data-testid="load-corpus" on:click=index_corpus disabled=move || !ready() || st.indexing.get() || st.mismatch.with(Option::is_some)>
                    {move || {
                        let corpus = st.lang.get().corpus_name;
                        match limit { Some(l) => format!("Index {corpus} (first {l} passages)"), None => format!("Index {corpus}") }
                    }}
                </button>
                <button data-testid="cancel" on:click=move |_| conn::send(&Request::Cancel) disabled=move || !st.indexing.get()>"Cancel"</button>
                <label>
                    " Index dims: "
                    <select data-testid="dims" on:change=dims_changed>
                        {move || {
                            let valid = st.info.with(|i| i.as_ref().map(|i| i.valid_dims.clone()).unwrap_or_default());
                            let cur = st.dims.get();
                            valid.into_iter().map(|d| view! { <option value=d.to_string() selected=cur == Some(d)>{d.to_string()}</option> }).collect_view()
                        }}
                    </select>
                </label>
                {move || {
                    let idx = st.index.get();
                    let want = st.dims.get();
                    (idx.count > 0 && want.is_some_and(|w| w != idx.dims)).then(|| view! {
                        <button data-testid="reindex-dims" disabled=move || st.indexing.get() on:click=move |_| {
                            st.indexing.set(true);
                            conn::send(&Request::Reindex { dims: st.dims.get_untracked() });
                        }>
                            {format!("Re-index at {} dims", want.unwrap_or(0))}
                        </button>
                    })
                }}
            </div>
            <div data-testid="index-progress" class="progress"
                data-per-sec=move || st.progress.get().map(|p| format!("{:.2}", p.per_sec)).unwrap_or_default()
                data-done=move || (!st.indexing.get() && st.progress.get().is_some()).to_string()>
                {move || st.progress.get().map(|p| view! {
                    <progress max=p.total.max(1).to_string() value=p.done.to_string()></progress>
                    <span>{format!("{} / {} passages · {:.1} passages/s{}", p.done, p.total, p.per_sec, if st.indexing.get() { "" } else { " · done" })}</span>
                })}
            </div>
            <p>
                "Indexed passages: " <strong data-testid="doc-count" data-restore-ms=move || format!("{:.1}", st.index.get().restore_ms)>{move || st.index.get().count}</strong>
                " · embedded since page load: " <span data-testid="embed-count">{move || st.embed_count.get()}</span>
                {move || {
                    let i = st.index.get();
                    (i.count > 0).then(|| format!(" · {} dims, built with {}{}", i.dims, i.built_with,
                        if i.restored { format!(" · restored from IndexedDB in {:.0} ms", i.restore_ms) } else { String::new() }))
                }}
                " · storage: "
                <span data-testid="storage-status">{move || match st.storage.get() {
                    Some((StorageKind::Persistent, _)) => "IndexedDB".to_string(),
                    Some((StorageKind::MemoryOnly, _)) => "memory only".to_string(),
                    None => "…".to_string(),
                }}</span>
            </p>
            {move || {
                let notes = st.index.get().notes;
                (!notes.is_empty()).then(|| view! {
                    <div class="banner warn" data-testid="index-notes">
                        {notes.into_iter().map(|n| view! { <div>{n}</div> }).collect_view()}
                        " Vectors of different model files only compare if the models share an embedding space. "
                        <button data-testid="reindex-note" disabled=move || st.indexing.get()
                            on:click=move |_| conn::send(&Request::Reindex { dims: st.dims.get_untracked() })>
                            "Re-index with this model"
                        </button>
                    </div>
                })
            }}
            <details>
                <summary>"Add your own documents"</summary>
                <div
                    class=move || if drag.get() { "drop active" } else { "drop" }
                    data-testid="drop-zone"
                    on:dragover=move |ev: ev::DragEvent| { ev.prevent_default(); drag.set(true); }
                    on:dragleave=move |_| drag.set(false)
                    on:drop=on_drop
                >
                    "Drop .txt, .md or .html files here, or "
                    <input type="file" data-testid="file-input" multiple accept=".txt,.md,.markdown,.html,.htm" on:change=on_pick disabled=move || !ready() || st.mismatch.with(Option::is_some) />
                </div>
                <input type="text" placeholder="Title" prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev)) />
                <textarea data-testid="paste" rows="4" placeholder="…or paste text" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                <button data-testid="add-text" on:click=add_text disabled=move || !ready() || st.indexing.get() || st.mismatch.with(Option::is_some)>"Add document"</button>
            </details>
            <details>
                <summary>{move || format!("Indexed documents ({})", st.index.get().docs.len())}</summary>
                <ul class="docs">
                    <For each=move || st.index.get().docs key=|d: &DocSummary| (d.doc_id.clone(), d.passages) let:d>
                        <li data-testid="doc">
                            <span>{d.title.clone()}</span> <small>{format!(" {} · {} passages ", d.doc_id, d.passages)}</small>
                            <button data-testid="delete-doc" on:click={
                                let id = d.doc_id.clone();
                                move |_| conn::send(&Request::DeleteDoc { doc_id: id.clone() })
                            } disabled=move || st.indexing.get()>"Delete"</button>
                        </li>
                    </For>
                </ul>
                <button on:click=move |_| conn::send(&Request::ClearIndex) disabled=move || st.index.get().count == 0>"Delete all"</button>
            </details>
        </section>
    }
}

#[component]
fn SearchPanel(st: St) -> impl IntoView {
    let on_input = move |ev: ev::Event| {
        st.query.set(event_target_value(&ev));
        let token = st.search_id.get_untracked() + 1;
        // Debounce: only the last keystroke within the window searches.
        st.search_id.set(token);
        set_timeout(
            move || {
                if st.search_id.get_untracked() == token {
                    st.search_now();
                }
            },
            Duration::from_millis(SEARCH_DEBOUNCE_MS),
        );
    };
    view! {
        <section class="panel">
            <h2>"Search"</h2>
            <input
                type="search"
                data-testid="query"
                class="query"
                placeholder=move || if st.index.get().count == 0 { "Index some documents first…" } else { st.lang.get().ask }
                prop:value=move || st.query.get()
                on:input=on_input
                disabled=move || st.status.get() != "ready"
            />
            <label class="mode">"Rank by "
                <select data-testid="search-mode"
                    on:change=move |ev| {
                        st.mode.set(match event_target_value(&ev).as_str() {
                            "vector" => SearchMode::Vector,
                            "keyword" => SearchMode::Keyword,
                            _ => SearchMode::Hybrid,
                        });
                        st.search_now();
                    }>
                    <option value="hybrid" selected>"meaning + keywords (hybrid)"</option>
                    <option value="vector">"meaning only (vector)"</option>
                    <option value="keyword">"keywords only (BM25)"</option>
                </select>
            </label>
            <p class="latency" data-testid="latency"
                data-query=move || st.latency.get().map(|l| l.query).unwrap_or_default()
                data-total-ms=move || st.latency.get().map(|l| format!("{:.3}", l.total_ms)).unwrap_or_default()
                data-embed-ms=move || st.latency.get().map(|l| format!("{:.3}", l.embed_ms)).unwrap_or_default()
                data-search-ms=move || st.latency.get().map(|l| format!("{:.3}", l.search_ms)).unwrap_or_default()>
                {move || st.latency.get().map(|l| format!(
                    "{} results in {:.1} ms (embed {:.1} ms + search {:.2} ms in the worker)",
                    st.results.get().len(), l.total_ms, l.embed_ms, l.search_ms
                ))}
            </p>
            <ol class="results">
                <For each=move || st.results.get() key=result_key let:h>
                    <li data-testid="result" data-score=format!("{:.4}", h.score) data-id=h.id.clone()>
                        <div class="title">
                            {if h.url.is_empty() {
                                view! { <span>{h.title.clone()}</span> }.into_any()
                            } else {
                                view! { <a href=h.url.clone() target="_blank" rel="noopener">{h.title.clone()}</a> }.into_any()
                            }}
                            <span class="score">{format!("{:.3}", h.score)}</span>
                        </div>
                        <div class="snippet" data-testid="snippet">{marked(&h.snippet, &h.highlights)}</div>
                    </li>
                </For>
            </ol>
        </section>
    }
}

/// A result row's identity for `<For>`: the passage *and* what the row shows. Keying by the
/// passage id alone would keep a row rendered for an earlier query (its score and marks) when
/// the same passage comes back for a new one.
fn result_key(h: &ShownHit) -> (String, u32, String, Vec<(usize, usize)>) {
    (
        h.id.clone(),
        h.score.to_bits(),
        h.snippet.clone(),
        h.highlights.clone(),
    )
}

/// The snippet as text nodes, the query's words inside `<mark>` elements. Document text is
/// never parsed as HTML: each piece is a Leptos text node. Ranges that are out of order, out of
/// bounds or off a character boundary are ignored.
fn marked(text: &str, highlights: &[(usize, usize)]) -> Vec<AnyView> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(a, b) in highlights {
        if a < at
            || b <= a
            || b > text.len()
            || !text.is_char_boundary(a)
            || !text.is_char_boundary(b)
        {
            continue;
        }
        if a > at {
            out.push(text[at..a].to_string().into_any());
        }
        out.push(view! { <mark>{text[a..b].to_string()}</mark> }.into_any());
        at = b;
    }
    if at < text.len() {
        out.push(text[at..].to_string().into_any());
    }
    out
}

#[component]
fn Playground(st: St) -> impl IntoView {
    let a = RwSignal::new("How do I read a file in Rust?".to_string());
    let b = RwSignal::new("Reading the contents of a file with std::fs".to_string());
    let tok = RwSignal::new("Ownership rules: each value has an owner.".to_string());
    let ready = move || st.status.get() == "ready";
    view! {
        <section class="panel">
            <h2>"Playground"</h2>
            <div class="grid2">
                <div>
                    <h3>"Cosine similarity"</h3>
                    <textarea rows="2" prop:value=move || a.get() on:input=move |ev| a.set(event_target_value(&ev))></textarea>
                    <textarea rows="2" prop:value=move || b.get() on:input=move |ev| b.set(event_target_value(&ev))></textarea>
                    <button data-testid="cosine-run" disabled=move || !ready() on:click=move |_| conn::send(&Request::Cosine { a: a.get_untracked(), b: b.get_untracked(), dims: None })>"Compare"</button>
                    <span data-testid="cosine">{move || st.cosine.get().map(|(v, d)| format!(" cosine = {v:.4} at {d} dims"))}</span>
                </div>
                <div>
                    <h3>"Tokenizer"</h3>
                    <textarea rows="2" prop:value=move || tok.get() on:input=move |ev| tok.set(event_target_value(&ev))></textarea>
                    <button data-testid="tokenize-run" disabled=move || !ready() on:click=move |_| conn::send(&Request::Tokenize { text: tok.get_untracked() })>"Tokenize"</button>
                    <div class="tokens" data-testid="tokens">
                        {move || st.tokens.get().into_iter().map(|t| view! {
                            <span class="tok" title=t.id.to_string()>{t.token}<sub>{t.id}</sub></span>
                        }).collect_view()}
                    </div>
                </div>
            </div>
            <h3>"Passages in 2-D (PCA)"</h3>
            <p>
            <button data-testid="pca-run" disabled=move || !ready() || st.index.get().count < 2 on:click=move |_| {
                let q = st.query.get_untracked();
                conn::send(&Request::Project { query: (!q.trim().is_empty()).then_some(q), max_points: PCA_POINTS });
            }>"Plot the index (and the current query)"</button>
            </p>
            {move || st.plot.get().map(|p| view! { <PcaPlot plot=p /> })}
        </section>
    }
}

#[component]
fn PcaPlot(plot: Plot) -> impl IntoView {
    const W: f32 = 640.0;
    const H: f32 = 400.0;
    const PAD: f32 = 12.0;
    let all: Vec<&Point> = plot.points.iter().chain(plot.query.iter()).collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
    for p in &all {
        x0 = x0.min(p.x);
        x1 = x1.max(p.x);
        y0 = y0.min(p.y);
        y1 = y1.max(p.y);
    }
    let sx = move |x: f32| PAD + (x - x0) / (x1 - x0).max(1e-6) * (W - 2.0 * PAD);
    let sy = move |y: f32| H - PAD - (y - y0) / (y1 - y0).max(1e-6) * (H - 2.0 * PAD);
    let dots = plot
        .points
        .iter()
        .map(|p| {
            view! { <circle cx=format!("{:.1}", sx(p.x)) cy=format!("{:.1}", sy(p.y)) r="2.5" class="pt"><title>{p.label.clone()}</title></circle> }
        })
        .collect_view();
    let q = plot.query.as_ref().map(|q| {
        let (cx, cy) = (sx(q.x), sy(q.y));
        // Keep the label inside the plot: right of the dot, or left of it near the right edge.
        let (label_x, anchor) = if cx > W * 0.55 { (cx - 10.0, "end") } else { (cx + 10.0, "start") };
        view! {
            <circle cx=format!("{cx:.1}") cy=format!("{cy:.1}") r="7" class="qpt"><title>{q.label.clone()}</title></circle>
            <text
                x=format!("{:.1}", label_x)
                y=format!("{:.1}", cy + 4.0)
                text-anchor=anchor
                class="qlabel"
            >
                {q.label.clone()}
            </text>
        }
    });
    view! {
        <svg data-testid="pca" viewBox=format!("0 0 {W} {H}") width="100%" style="max-width:640px">
            <rect x="0" y="0" width=W.to_string() height=H.to_string() class="plotbg"></rect>
            {dots}
            {q}
        </svg>
        <p class="note">{format!("{} passages; the two components explain {:.0} % of the variance.", plot.points.len(), plot.explained * 100.0)}</p>
    }
}

/// `event.target` as a concrete element type.
fn event_target<T: JsCast>(ev: &ev::Event) -> T {
    ev.target().expect("event has a target").unchecked_into()
}
