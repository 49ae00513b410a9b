//! The library: the index (the bundled corpus, dims, re-index), the documents with their stored
//! originals (open, delete), the storage used, export and import of the whole library as one
//! file; and the text view a result of a non-PDF document opens, scrolled to its passage.

use lightembed_app::shared::library::{export_zip, import_zip};

use super::*;

/// Reads the stored files' records and the storage estimate again (after an index change).
/// When nothing is being added or indexed, originals whose document the index does not hold
/// (a drop cancelled, the worker restarted under it) are forgotten.
pub(super) fn refresh(st: St) {
    let code = st.model.lang.get_untracked().code;
    leptos::task::spawn_local(async move {
        if !flag_param("nostore") {
            if let Ok(store) = files::store(code).await {
                if let Ok(mut list) = store.list().await {
                    let settled = st.lib.adding.get_untracked() == 0
                        && !st.docs.indexing.get_untracked()
                        && st.docs.queued.get_untracked() == 0
                        && st.docs.sent_docs.get_untracked() == 0
                        && st.model.status.get_untracked() == ModelStatus::Ready
                        && st.docs.mismatch.with_untracked(Option::is_none);
                    if settled {
                        let indexed: std::collections::HashSet<String> = st
                            .docs
                            .index
                            .with_untracked(|i| i.docs.iter().map(|d| d.doc_id.clone()).collect());
                        let orphans: Vec<String> = list
                            .iter()
                            .filter(|r| !indexed.contains(&r.doc_id))
                            .map(|r| r.doc_id.clone())
                            .collect();
                        if !orphans.is_empty() && store.delete(&orphans).await.is_ok() {
                            list.retain(|r| indexed.contains(&r.doc_id));
                        }
                    }
                    st.lib.files.set(list);
                }
            }
        }
        st.lib.usage.set(files::storage_estimate().await);
    });
}

/// Opens a result of a person's own document: a PDF (its original kept) in the browser's viewer
/// at `#page=N`, from a `blob:` URL of the stored file; anything else (or a PDF whose original
/// was not kept) in the text view, scrolled to the passage.
pub(super) fn open_passage(st: St, passage_id: String, title: String, page: Option<u32>) {
    let doc_id = lightembed_app::shared::protocol::doc_id_of(&passage_id).to_string();
    let code = st.model.lang.get_untracked().code;
    // Opened now, while the click's user activation lasts; pointed at the file once it is read.
    let is_pdf = st.lib.files.with_untracked(|f| {
        f.iter()
            .any(|r| r.doc_id == doc_id && r.format == Format::Pdf)
    });
    let tab = if is_pdf {
        web_sys::window().and_then(|w| w.open_with_url_and_target("", "_blank").ok().flatten())
    } else {
        None
    };
    leptos::task::spawn_local(async move {
        let stored = match files::store(code).await {
            Ok(s) => s.get(&doc_id).await.ok().flatten(),
            Err(_) => None,
        };
        if let Some((rec, bytes)) = stored.filter(|(r, _)| r.format == Format::Pdf) {
            match files::blob_url(&bytes, "application/pdf") {
                Ok(url) => {
                    let full = match page {
                        Some(n) => format!("{url}#page={n}"),
                        None => url.clone(),
                    };
                    st.lib.opened.set(full.clone());
                    let shown = match &tab {
                        Some(t) => t.location().set_href(&full).is_ok(),
                        None => web_sys::window()
                            .and_then(|w| {
                                w.open_with_url_and_target(&full, "_blank").ok().flatten()
                            })
                            .is_some(),
                    };
                    if !shown {
                        st.push_error(format!(
                            "{}: the browser did not open a new tab (pop-ups blocked?)",
                            rec.name
                        ));
                    }
                    files::revoke_later(url);
                    return;
                }
                Err(e) => st.push_error(format!("{}: cannot be opened ({e})", rec.name)),
            }
        }
        if let Some(t) = tab {
            let _ = t.close();
        }
        st.lib.viewer.set(Some(Viewer {
            doc_id: doc_id.clone(),
            title,
            focus: passage_id,
            passages: None,
        }));
        conn::send(&Request::DocText { doc_id });
    });
}

/// Forgets the stored originals of `doc_ids` (after their deletion from the index).
pub(super) fn forget(st: St, doc_ids: Vec<String>) {
    let code = st.model.lang.get_untracked().code;
    leptos::task::spawn_local(async move {
        if let Ok(s) = files::store(code).await {
            if let Err(e) = s.delete(&doc_ids).await {
                st.push_error(format!("Forgetting the original failed: {e}"));
            }
        }
        refresh(st);
    });
}

/// Export: every stored original and the manifest, one zip file, downloaded.
async fn export(st: St) {
    let lang = st.model.lang.get_untracked().code;
    let store = match files::store(lang).await {
        Ok(s) => s,
        Err(e) => return st.push_error(format!("Export failed: {e}")),
    };
    let records = store.list().await.unwrap_or_default();
    let mut files_out = Vec::with_capacity(records.len());
    for r in records {
        if let Ok(Some(f)) = store.get(&r.doc_id).await {
            files_out.push(f);
        }
    }
    match export_zip(lang, &files_out)
        .and_then(|z| files::download("lightembed-library.zip", &z, "application/zip"))
    {
        Ok(()) => {}
        Err(e) => st.push_error(format!("Export failed: {e}")),
    }
}

/// Import: a library file's originals go through the same path as a drop (indexed again with
/// this model; unchanged ones are left alone).
async fn import(st: St, file: web_sys::File) {
    let buf = match wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
        Ok(b) => js_sys::Uint8Array::new(&b).to_vec(),
        Err(e) => {
            return st.push_error(format!(
                "{}: {}",
                file.name(),
                lightembed_app::shared::web::js_error(&e)
            ))
        }
    };
    let sha256 = |b: &[u8]| {
        use sha2::Digest;
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    let (_, entries) = match import_zip(&buf, sha256) {
        Ok(r) => r,
        Err(e) => return st.push_error(format!("{}: {e}", file.name())),
    };
    let mut incoming = Vec::with_capacity(entries.len());
    for (rec, bytes) in entries {
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&bytes[..]));
        match web_sys::File::new_with_u8_array_sequence(&parts, &rec.name) {
            Ok(f) => incoming.push(files::Incoming {
                file: Some(f),
                path: rec.name,
                folder: false,
                error: None,
            }),
            Err(e) => st.push_error(format!(
                "{}: {}",
                rec.name,
                lightembed_app::shared::web::js_error(&e)
            )),
        }
    }
    documents::add_files(st, incoming).await;
}

#[component]
pub(super) fn LibraryPanel(st: St) -> impl IntoView {
    let ready = move || st.model.status.get() == ModelStatus::Ready;
    let limit = st.count_param("limit");
    let index_corpus = move |_| {
        conn::send(&Request::IndexCorpus {
            url: st.model.lang.get_untracked().corpus_url.into(),
            limit,
            dims: st.index_dims(),
        });
        st.docs.indexing.set(true);
    };
    let dims_changed = move |ev: ev::Event| {
        if let Ok(d) = event_target_value(&ev).parse::<usize>() {
            st.model.dims.set(Some(d));
        }
    };
    let on_import = move |ev: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(f) = input.files().and_then(|l| l.get(0)) {
            leptos::task::spawn_local(async move { import(st, f).await });
        }
        input.set_value("");
    };
    let stored_bytes = move || st.lib.files.with(|f| f.iter().map(|r| r.size).sum::<u64>());
    view! {
        <section class="panel library">
            <h2>"Library"</h2>
            <p>
                "Indexed passages: " <strong data-testid="doc-count" data-restore-ms=move || st.docs.index.with(|i| format!("{:.1}", i.restore_ms))>{move || st.docs.index.with(|i| i.count)}</strong>
                {move || format!(" in {}", count_of(st.docs.index.with(|i| i.docs.len()), "document"))}
                " · embedded since page load: " <span data-testid="embed-count">{move || st.docs.embed_count.get()}</span>
                {move || st.docs.index.with(|i| {
                    (i.count > 0).then(|| format!(" · {} dims, built with {}{}", i.dims, i.built_with,
                        if i.restored { format!(" · restored from IndexedDB in {:.0} ms", i.restore_ms) } else { String::new() }))
                })}
            </p>
            <p data-testid="storage-used" data-originals=move || stored_bytes().to_string()
                data-usage=move || st.lib.usage.get().map(|u| u.0.to_string()).unwrap_or_default()>
                "Storage: "
                <span data-testid="storage-status">{move || match st.docs.storage.get() {
                    Some((StorageKind::Persistent, _)) => "IndexedDB".to_string(),
                    Some((StorageKind::MemoryOnly, _)) => "memory only".to_string(),
                    None => "…".to_string(),
                }}</span>
                {move || format!(" · originals kept: {} ({})", count_of(st.lib.files.with(Vec::len), "file"), fmt_bytes(stored_bytes()))}
                {move || st.lib.usage.get().map(|(used, quota)| format!(" · this site uses {} of {} available", fmt_bytes(used), fmt_bytes(quota)))}
            </p>
            {move || {
                let notes = st.docs.index.with(|i| i.notes.clone());
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
            <details on:toggle=move |ev: ev::Event| {
                let d: web_sys::Element = event_target(&ev);
                st.docs.docs_open.set(d.has_attribute("open"));
            }>
                <summary>{move || format!("Indexed documents ({})", st.docs.index.with(|i| i.docs.len()))}</summary>
                // One `disabled` on the fieldset disables every row's button while indexing: a
                // subscription per row made each start/end of a job cost O(rows²) in the reactive
                // graph (seconds of frozen page at ~900 documents).
                <fieldset class="docs" disabled=move || st.docs.indexing.get()>
                    <ul class="docs">
                        <For each=move || if st.docs.docs_open.get() { st.docs.index.with(|i| i.docs.clone()) } else { Vec::new() } key=|d: &DocSummary| (d.doc_id.clone(), d.title.clone(), d.passages) let:d>
                            <li data-testid="doc">
                                <bdi>{d.title.clone()}</bdi> <small>{format!(" {} · {} ", d.doc_id, count_of(d.passages, "passage"))}</small>
                                <button data-testid="delete-doc" on:click={
                                    let id = d.doc_id.clone();
                                    move |_| {
                                        conn::send(&Request::DeleteDoc { doc_id: id.clone() });
                                        if id.starts_with("user/") {
                                            forget(st, vec![id.clone()]);
                                        }
                                    }
                                }>"Delete"</button>
                            </li>
                        </For>
                    </ul>
                </fieldset>
                <button data-testid="delete-all" on:click=move |_| {
                    conn::send(&Request::ClearIndex);
                    let code = st.model.lang.get_untracked().code;
                    leptos::task::spawn_local(async move {
                        if let Ok(s) = files::store(code).await {
                            let _ = s.clear().await;
                        }
                        st.lib.summary.set(None);
                        refresh(st);
                    });
                } disabled=move || st.docs.index.with(|i| i.count == 0)>"Delete all"</button>
            </details>
            <div class="row">
                <button data-testid="export" on:click=move |_| leptos::task::spawn_local(async move { export(st).await })
                    disabled=move || st.lib.files.with(Vec::is_empty)>"Export library (.zip)"</button>
                <label class="pick">"Import a library"
                    <input type="file" data-testid="import-input" accept=".zip" on:change=on_import disabled=move || !ready() />
                </label>
            </div>
            <div class="row corpus">
                <button data-testid="load-corpus" on:click=index_corpus disabled=move || !ready() || st.docs.indexing.get() || st.docs.mismatch.with(Option::is_some)>
                    {move || {
                        let corpus = st.model.lang.get().corpus_name;
                        match limit { Some(l) => format!("Index {corpus} (first {l} passages)"), None => format!("Index {corpus}") }
                    }}
                </button>
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
                    let (count, dims) = st.docs.index.with(|i| (i.count, i.dims));
                    let want = st.model.dims.get();
                    (count > 0 && want.is_some_and(|w| w != dims)).then(|| view! {
                        <button data-testid="reindex-dims" disabled=move || st.docs.indexing.get() on:click=move |_| {
                            st.docs.indexing.set(true);
                            conn::send(&Request::Reindex { dims: st.model.dims.get_untracked() });
                        }>
                            {format!("Re-index at {} dims", want.unwrap_or(0))}
                        </button>
                    })
                }}
            </div>
        </section>
    }
}

/// The text view of a document (a result of a format other than PDF): its passages as text,
/// the result's passage marked and scrolled to.
#[component]
pub(super) fn TextView(st: St) -> impl IntoView {
    // Scroll to the marked passage once the passages are shown.
    Effect::new(move |_| {
        let ready = st
            .lib
            .viewer
            .with(|v| v.as_ref().map(|v| (v.focus.clone(), v.passages.is_some())));
        if let Some((focus, true)) = ready {
            request_animation_frame(move || {
                let el = web_sys::window().and_then(|w| w.document()).and_then(|d| {
                    d.query_selector("[data-testid=\"doc-view\"] .hit")
                        .ok()
                        .flatten()
                });
                if let Some(el) = el {
                    let opts = web_sys::ScrollIntoViewOptions::new();
                    opts.set_block(web_sys::ScrollLogicalPosition::Center);
                    el.scroll_into_view_with_scroll_into_view_options(&opts);
                }
                let _ = focus;
            });
        }
    });
    move || {
        st.lib.viewer.get().map(|v| {
            let focus = v.focus.clone();
            view! {
                <div class="viewer" data-testid="doc-view" data-doc=v.doc_id.clone() data-focus=v.focus.clone() role="dialog" aria-label=v.title.clone()>
                    <div class="viewer-head">
                        <strong><bdi>{v.title.clone()}</bdi></strong>
                        <button data-testid="doc-view-close" on:click=move |_| st.lib.viewer.set(None)>"Close"</button>
                    </div>
                    <div class="viewer-body">
                        {match v.passages {
                            None => view! { <p class="note">"Loading…"</p> }.into_any(),
                            Some(ps) if ps.is_empty() => view! { <p class="note">"This document's text is not stored."</p> }.into_any(),
                            Some(ps) => {
                                let mut last_heading = String::new();
                                ps.into_iter().map(|p| {
                                    let heading = (p.heading != last_heading && !p.heading.is_empty()).then(|| p.heading.clone());
                                    last_heading = p.heading.clone();
                                    let hit = p.id == focus;
                                    view! {
                                        {heading.map(|h| view! { <h3>{h}</h3> })}
                                        <p class=if hit { "passage hit" } else { "passage" } data-id=p.id.clone()>
                                            {p.page.map(|n| view! { <small class="page">{format!("p. {n} ")}</small> })}
                                            {p.text}
                                        </p>
                                    }
                                }).collect_view().into_any()
                            }
                        }}
                    </div>
                </div>
            }
        })
    }
}
