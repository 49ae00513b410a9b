//! The documents panel: the bundled corpus, dropped or pasted files, indexing progress, the stored
//! index and its §8 mismatch.

use super::*;

/// A file's bytes → its text, as the CLI reads files (`ingest::decode`): the charset detected by
/// [`ingest::charset_label`] (UTF-8; else the charset an HTML page declares; else windows-1252),
/// decoded with the browser's `TextDecoder`, so `encoding_rs` stays out of the wasm. The warning,
/// as `decode` words it, when windows-1252 was guessed or a declared charset could not decode
/// some bytes (U+FFFD in their place). A label the browser does not know is skipped (the next
/// `<meta>` counts, else the windows-1252 guess). A UTF-16 byte-order mark decides; a binary file
/// ([`ingest::looks_binary`]) is an error, as the CLI skips it.
pub(super) fn decode_file(
    bytes: &js_sys::Uint8Array,
    format: Format,
) -> Result<(String, Option<String>), String> {
    use lightembed_ingest::{self as ingest, Charset};
    use web_sys::TextDecoder;
    let js_err = |e: wasm_bindgen::JsValue| lightembed_app::shared::web::js_error(&e);
    let raw = bytes.to_vec();
    if ingest::looks_binary(&raw) {
        return Err("a binary file (a NUL byte in its first 8 KiB); not added".into());
    }
    // A UTF-16 byte-order mark decides (as `decode` does, and browsers).
    if let Some(label) = ingest::utf16_bom(&raw) {
        if let Some(decoded) = decode_as(label, &bytes.subarray(2, bytes.length())) {
            return decoded;
        }
    }
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
            if let Some(decoded) = decode_as(&label, &body) {
                return decoded;
            }
        }
        Charset::Fallback => {}
    }
    let text = TextDecoder::new_with_label("windows-1252")
        .and_then(|d| d.decode_with_js_u8_array(&body))
        .map_err(js_err)?;
    Ok((text, Some(ingest::FALLBACK_WARNING.to_string())))
}

/// `body` decoded by the browser's decoder for `label`: strictly, else with U+FFFD for the bytes
/// it cannot decode and the warning `not valid <encoding>; undecodable bytes replaced`. None when
/// the browser has no decoder of that label.
fn decode_as(
    label: &str,
    body: &js_sys::Uint8Array,
) -> Option<Result<(String, Option<String>), String>> {
    use web_sys::{TextDecoder, TextDecoderOptions};
    let strict = TextDecoderOptions::new();
    strict.set_fatal(true);
    let d = TextDecoder::new_with_label_and_options(label, &strict).ok()?;
    Some(match d.decode_with_js_u8_array(body) {
        Ok(text) => Ok((text, None)),
        Err(_) => TextDecoder::new_with_label(label)
            .and_then(|lossy| lossy.decode_with_js_u8_array(body))
            .map(|text| {
                let warning = format!("not valid {}; undecodable bytes replaced", d.encoding());
                (text, Some(warning))
            })
            .map_err(|e| lightembed_app::shared::web::js_error(&e)),
    })
}

/// The SHA-256 of the loaded model (`None` while none is).
fn loaded_sha256(st: St) -> Option<String> {
    st.model
        .info
        .with_untracked(|i| i.as_ref().map(|i| i.sha256.clone()))
}

#[component]
pub(super) fn IndexPanel(st: St) -> impl IntoView {
    let ready = move || st.model.status.get() == ModelStatus::Ready;
    let limit = st.count_param("limit");
    let title = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    let drag = RwSignal::new(false);

    let index_corpus = move |_| {
        conn::send(&Request::IndexCorpus {
            url: st.model.lang.get_untracked().corpus_url.into(),
            limit,
            dims: st.index_dims(),
        });
        st.docs.indexing.set(true);
    };
    let add_text = move |_| {
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        let name = title.get_untracked();
        let name = if name.trim().is_empty() {
            let time = js_sys::Date::new_0().to_locale_time_string("en-GB");
            lightembed_app::worker::chunk::pasted_name(&body, &time.as_string().unwrap_or_default())
        } else {
            name
        };
        // The worker cuts it (with the model's tokenizer, as the CLI does); its progress events
        // set `indexing`.
        st.docs.sent_docs.update(|n| *n += 1);
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
        if st.model.status.get_untracked() != ModelStatus::Ready
            || st.docs.mismatch.with_untracked(Option::is_some)
        {
            st.push_error(
                "Files can be added once a model is ready and the index matches it.".into(),
            );
            return;
        }
        // All files are read first, then sent in one message: the worker indexes them one after
        // another, the progress bar counts the ones waiting, and Cancel drops them (sent as one
        // message each, a Cancel waited behind all of them in the worker's message queue).
        let files: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
        // The model the files were dropped on: reading them takes a while (a second for 1,500),
        // and they must not go to a model (or language) chosen in between.
        let dropped_on = loaded_sha256(st);
        leptos::task::spawn_local(async move {
            let mut docs = Vec::with_capacity(files.len());
            for file in files {
                let name = file.name();
                let format = Format::from_name(&name);
                // The worker's ingestion reads these from bytes, but the page sends text only
                // (issue 33: sending the bytes is the UI's next step).
                if format.is_binary() {
                    st.push_error(format!(
                        "{name}: PDF, Word, OpenDocument and EPUB files are not read by the app \
                         yet; `lightembed index` reads them."
                    ));
                    continue;
                }
                // The bytes, read by their charset as the CLI reads files.
                let read = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
                    .await
                    .map_err(|e| lightembed_app::shared::web::js_error(&e))
                    .and_then(|buf| decode_file(&js_sys::Uint8Array::new(&buf), format));
                match read {
                    Ok((content, warning)) => {
                        if let Some(w) = warning {
                            st.push_error(format!("{name}: {w}"));
                        }
                        // Cut in the worker (it answers "no text found" for an empty file).
                        docs.push(DocumentInput {
                            format,
                            name,
                            content,
                        });
                    }
                    Err(e) => st.push_error(format!("{name}: {e}")),
                }
            }
            if !docs.is_empty()
                && (st.model.status.get_untracked() != ModelStatus::Ready
                    || loaded_sha256(st) != dropped_on)
            {
                st.push_error(format!(
                    "{} not added: the model changed while {} read. Add {} again.",
                    count_of(docs.len(), "file"),
                    if docs.len() == 1 {
                        "it was"
                    } else {
                        "they were"
                    },
                    if docs.len() == 1 { "it" } else { "them" },
                ));
                return;
            }
            if !docs.is_empty() {
                st.docs.sent_docs.update(|n| *n += docs.len());
                conn::send(&Request::IndexDocuments {
                    docs,
                    dims: st.index_dims(),
                });
            }
        });
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
            st.model.dims.set(Some(d));
        }
    };

    view! {
        <section class="panel">
            <h2>"Documents"</h2>
            <div class="row">
                <button data-testid="load-corpus" on:click=index_corpus disabled=move || !ready() || st.docs.indexing.get() || st.docs.mismatch.with(Option::is_some)>
                    {move || {
                        let corpus = st.model.lang.get().corpus_name;
                        match limit { Some(l) => format!("Index {corpus} (first {l} passages)"), None => format!("Index {corpus}") }
                    }}
                </button>
                <button data-testid="cancel" on:click=move |_| conn::send(&Request::Cancel) disabled=move || !st.docs.indexing.get()>"Cancel"</button>
                <label>
                    " Index dims: "
                    <select data-testid="dims" on:change=dims_changed>
                        {move || {
                            let valid = st.model.info.with(|i| i.as_ref().map(|i| i.valid_dims.clone()).unwrap_or_default());
                            let cur = st.model.dims.get();
                            valid.into_iter().map(|d| view! { <option value=d.to_string() selected=cur == Some(d)>{d.to_string()}</option> }).collect_view()
                        }}
                    </select>
                </label>
                {move || {
                    let idx = st.docs.index.get();
                    let want = st.model.dims.get();
                    (idx.count > 0 && want.is_some_and(|w| w != idx.dims)).then(|| view! {
                        <button data-testid="reindex-dims" disabled=move || st.docs.indexing.get() on:click=move |_| {
                            st.docs.indexing.set(true);
                            conn::send(&Request::Reindex { dims: st.model.dims.get_untracked() });
                        }>
                            {format!("Re-index at {} dims", want.unwrap_or(0))}
                        </button>
                    })
                }}
            </div>
            <div data-testid="index-progress" class="progress"
                data-per-sec=move || st.docs.progress.get().map(|p| format!("{:.2}", p.per_sec)).unwrap_or_default()
                data-workers=move || st.docs.progress.get().map(|p| p.workers.to_string()).unwrap_or_default()
                data-helped=move || st.docs.progress.get().map(|p| p.helped.to_string()).unwrap_or_default()
                data-done=move || (!st.docs.indexing.get() && st.docs.progress.get().is_some()).to_string()>
                {move || st.docs.progress.get().map(|p| view! {
                    <progress max=p.total.max(1).to_string() value=p.done.to_string()></progress>
                    <span>{format!(
                        "{}{} / {} passages · {:.1} passages/s{}{}{}",
                        // Several documents: which one this is (the bar is per document).
                        match (st.docs.indexing.get(), st.docs.sent_docs.get()) {
                            (true, n) if n > 1 => format!("document {} of {n} · ", (st.docs.done_docs.get() + 1).min(n)),
                            _ => String::new(),
                        },
                        p.done,
                        p.total,
                        p.per_sec,
                        if p.workers > 1 { format!(" · {} workers", p.workers) } else { String::new() },
                        match st.docs.queued.get() {
                            0 => String::new(),
                            1 => " · 1 more document waiting".to_string(),
                            n => format!(" · {n} more documents waiting"),
                        },
                        if st.docs.indexing.get() { "" } else { " · done" },
                    )}</span>
                })}
            </div>
            <p>
                "Indexed passages: " <strong data-testid="doc-count" data-restore-ms=move || format!("{:.1}", st.docs.index.get().restore_ms)>{move || st.docs.index.get().count}</strong>
                " · embedded since page load: " <span data-testid="embed-count">{move || st.docs.embed_count.get()}</span>
                {move || {
                    let i = st.docs.index.get();
                    (i.count > 0).then(|| format!(" · {} dims, built with {}{}", i.dims, i.built_with,
                        if i.restored { format!(" · restored from IndexedDB in {:.0} ms", i.restore_ms) } else { String::new() }))
                }}
                " · storage: "
                <span data-testid="storage-status">{move || match st.docs.storage.get() {
                    Some((StorageKind::Persistent, _)) => "IndexedDB".to_string(),
                    Some((StorageKind::MemoryOnly, _)) => "memory only".to_string(),
                    None => "…".to_string(),
                }}</span>
            </p>
            {move || {
                let notes = st.docs.index.get().notes;
                (!notes.is_empty()).then(|| view! {
                    <div class="banner warn" data-testid="index-notes">
                        {notes.into_iter().map(|n| view! { <div>{n}</div> }).collect_view()}
                        " Vectors of different model files only compare if the models share an embedding space. "
                        <button data-testid="reindex-note" disabled=move || st.docs.indexing.get()
                            on:click=move |_| conn::send(&Request::Reindex { dims: st.model.dims.get_untracked() })>
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
                    <input type="file" data-testid="file-input" multiple accept=".txt,.md,.markdown,.html,.htm" on:change=on_pick disabled=move || !ready() || st.docs.mismatch.with(Option::is_some) />
                </div>
                <input type="text" placeholder="Title" prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev)) />
                <textarea data-testid="paste" rows="4" placeholder="…or paste text" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                <button data-testid="add-text" on:click=add_text title="Paste or type some text first"
                    disabled=move || !ready() || st.docs.indexing.get() || st.docs.mismatch.with(Option::is_some) || text.with(|t| t.trim().is_empty())>"Add document"</button>
            </details>
            <details>
                <summary>{move || format!("Indexed documents ({})", st.docs.index.get().docs.len())}</summary>
                // One `disabled` on the fieldset disables every row's button while indexing: a
                // subscription per row made each start/end of a job cost O(rows²) in the reactive
                // graph (seconds of frozen page at ~900 documents).
                <fieldset class="docs" disabled=move || st.docs.indexing.get()>
                    <ul class="docs">
                        <For each=move || st.docs.index.get().docs key=|d: &DocSummary| (d.doc_id.clone(), d.title.clone(), d.passages) let:d>
                            <li data-testid="doc">
                                <bdi>{d.title.clone()}</bdi> <small>{format!(" {} · {} ", d.doc_id, count_of(d.passages, "passage"))}</small>
                                <button data-testid="delete-doc" on:click={
                                    let id = d.doc_id.clone();
                                    move |_| conn::send(&Request::DeleteDoc { doc_id: id.clone() })
                                }>"Delete"</button>
                            </li>
                        </For>
                    </ul>
                </fieldset>
                <button on:click=move |_| conn::send(&Request::ClearIndex) disabled=move || st.docs.index.get().count == 0>"Delete all"</button>
            </details>
        </section>
    }
}
