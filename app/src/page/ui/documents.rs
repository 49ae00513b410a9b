//! Adding documents: files and folders dropped or picked (PDF, Word, OpenDocument and EPUB sent
//! as bytes to the worker, which reads them; text formats decoded here by their charset),
//! pasted text, indexing progress and what the last drop did (added, changed, unchanged,
//! removed, skipped and why). The originals are kept ([`crate::page::files`]); a re-dropped
//! folder sends only what changed and removes what is gone
//! ([`lightembed_app::shared::library::plan_drop`]).

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

/// A drop sends its documents in messages of at most this many bytes (or [`SEND_DOCS`]
/// documents), so a large folder is never held in memory whole.
const SEND_BYTES: usize = 32 << 20;
const SEND_DOCS: usize = 64;
/// A drop posts another message only while fewer than this many of its documents are with the
/// worker (waiting there, or being indexed): the rest wait in the page. Everything the worker
/// holds is in its wasm32 heap, which never shrinks and stops at 4 GiB; posting a whole
/// 11,000-file folder at once put all of its text there.
pub(super) const AHEAD_DOCS: usize = 2 * SEND_DOCS;

/// Up to this many skipped files are listed under the drop summary as they are; more are
/// counted by reason and listed only when that list is opened.
const SKIPPED_INLINE: usize = 20;

/// The skipped files' rows: the name (isolated, as text) and the reason.
fn skipped_rows(skipped: Vec<(String, String)>) -> impl IntoView {
    view! {
        <ul class="skipped">
            {skipped.into_iter().map(|(name, reason)| {
                let key = name.clone();
                view! { <li data-testid="skipped" data-name=key><bdi>{name}</bdi>": "{reason}</li> }
            }).collect_view()}
        </ul>
    }
}

/// "4,821 skipped: 4,790 not a format the app reads, 31 …" — the counts by reason, most first.
fn skipped_reasons(skipped: &[(String, String)]) -> String {
    let mut by: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (_, reason) in skipped {
        *by.entry(reason.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = by.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = counts
        .iter()
        .take(4)
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect();
    let rest: usize = counts.iter().skip(4).map(|(_, n)| n).sum();
    format!(
        "{} skipped: {}{}",
        skipped.len(),
        shown.join(" · "),
        if rest > 0 {
            format!(" · {rest} for other reasons")
        } else {
            String::new()
        }
    )
}

/// The accept list of the file picker: every format the app reads.
const ACCEPT: &str = ".pdf,.docx,.odt,.epub,.txt,.md,.markdown,.html,.htm";

/// Documents gathered for one message to the worker: binary ones as transferred buffers.
#[derive(Default)]
struct Batch {
    docs: Vec<DocumentInput>,
    buffers: Vec<js_sys::ArrayBuffer>,
    bytes: usize,
}

impl Batch {
    /// Sends the batch (its documents were counted in `sent_docs` when the drop was planned).
    fn send(&mut self, st: St) {
        if self.docs.is_empty() {
            return;
        }
        st.docs.in_flight.update(|n| *n += self.docs.len());
        let req = Request::IndexDocuments {
            docs: std::mem::take(&mut self.docs),
            dims: st.index_dims(),
        };
        let buffers = std::mem::take(&mut self.buffers);
        if buffers.is_empty() {
            conn::send(&req);
        } else {
            conn::send_with_buffers(&req, buffers);
        }
        self.bytes = 0;
    }
}

/// Reads, plans and sends one drop (or pick, or import): see the module docs.
pub(super) async fn add_files(st: St, incoming: Vec<files::Incoming>) {
    if st.model.status.get_untracked() != ModelStatus::Ready
        || st.docs.mismatch.with_untracked(Option::is_some)
    {
        st.push_error("Files can be added once a model is ready and the index matches it.".into());
        return;
    }
    st.lib.adding.update(|n| *n += 1);
    add_files_counted(st, incoming).await;
    st.lib.adding.update(|n| *n = n.saturating_sub(1));
}

async fn add_files_counted(st: St, incoming: Vec<files::Incoming>) {
    use lightembed_app::shared::library::{folder_format, plan_drop, FileRecord};
    // The model the files were dropped on: reading them takes a while, and they must not go to
    // a model (or language) chosen in between.
    let dropped_on = loaded_sha256(st);
    let code = st.model.lang.get_untracked().code;
    let keep = !flag_param("nostore");
    let store = if keep {
        files::store(code)
            .await
            .map_err(|e| {
                st.push_error(format!(
                    "The original files cannot be kept ({e}): results will open as text."
                ))
            })
            .ok()
    } else {
        None
    };
    let mut summary = DropSummary::default();
    // 1. Which files are documents, their bytes' SHA-256.
    let mut taken: Vec<(String, Format, web_sys::File)> = Vec::new();
    // Only a dropped or picked folder removes what it no longer holds (an imported library,
    // whose names may hold folders too, adds and updates only).
    let any_folder = incoming.iter().any(|f| f.folder);
    // A folder's `NAME.txt` beside `NAME.html` is that page's source (the CLI's default rule).
    let sources = {
        use lightembed_app::shared::library::sources_beside_pages;
        let folder_paths: Vec<&str> = incoming
            .iter()
            .map(|f| if f.folder { f.path.as_str() } else { "" })
            .collect();
        sources_beside_pages(&folder_paths)
    };
    for (i, f) in incoming.into_iter().enumerate() {
        let Some(file) = f.file else {
            summary.skipped.push((
                f.path,
                f.error.unwrap_or_else(|| "could not be read".into()),
            ));
            continue;
        };
        let format = if f.folder {
            if sources.contains(&i) {
                summary
                    .skipped
                    .push((f.path, lightembed_app::shared::library::PAGE_SOURCE.into()));
                continue;
            }
            match folder_format(&f.path) {
                Ok(format) => format,
                Err(reason) => {
                    summary.skipped.push((f.path, reason));
                    continue;
                }
            }
        } else {
            Format::from_name(&f.path)
        };
        taken.push((f.path, format, file));
    }
    let mut hashed: Vec<(String, String)> = Vec::with_capacity(taken.len());
    let mut buffers: Vec<Option<js_sys::Uint8Array>> = Vec::with_capacity(taken.len());
    for (path, _, file) in &taken {
        let read = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await;
        let bytes = match read {
            Ok(buf) => js_sys::Uint8Array::new(&buf),
            Err(e) => {
                summary
                    .skipped
                    .push((path.clone(), lightembed_app::shared::web::js_error(&e)));
                hashed.push((path.clone(), String::new()));
                buffers.push(None);
                continue;
            }
        };
        let sha = files::sha256_hex(&bytes).await.unwrap_or_default();
        hashed.push((path.clone(), sha));
        buffers.push(Some(bytes));
    }
    // 2. What changed since the last drop of these files (and folders).
    let stored = match &store {
        Some(s) => s.list().await.unwrap_or_default(),
        None => Vec::new(),
    };
    let indexed: std::collections::HashSet<String> = st
        .docs
        .index
        .with_untracked(|i| i.docs.iter().map(|d| d.doc_id.clone()).collect());
    let mut plan = plan_drop(&hashed, &stored, &indexed);
    if !any_folder {
        plan.removed.clear();
    }
    summary.unchanged = plan.unchanged;
    summary.changed = plan.changed;
    if st.model.status.get_untracked() != ModelStatus::Ready || loaded_sha256(st) != dropped_on {
        st.push_error(format!(
            "{} not added: the model changed while they were read. Add them again.",
            count_of(plan.send.len(), "file")
        ));
        return;
    }
    // 3. Removed: documents of a re-dropped folder that it no longer holds.
    for doc_id in &plan.removed {
        conn::send(&Request::DeleteDoc {
            doc_id: doc_id.clone(),
        });
    }
    if let Some(s) = &store {
        if !plan.removed.is_empty() {
            if let Err(e) = s.delete(&plan.removed).await {
                st.push_error(format!("Forgetting removed files failed: {e}"));
            }
        }
    }
    summary.removed = plan.removed.len();
    // Shown before anything is sent: the worker's "skipped" events add to it as they come.
    let page_skipped = summary.skipped.clone();
    st.lib.summary.set(Some(summary));
    // 4. Kept and sent, in messages of bounded size. The progress line counts the whole drop
    // ("document k of n"); a cancel stops the sending too (the worker drops what it holds).
    let cancels = st.lib.cancels.get_untracked();
    st.docs.sent_docs.update(|n| *n += plan.send.len());
    let mut batch = Batch::default();
    let mut added = 0usize;
    let mut left = plan.send.len();
    for i in plan.send {
        if st.lib.cancels.get_untracked() != cancels {
            // Not sent: out of the drop's count, and their originals are not kept.
            st.docs.sent_docs.update(|n| *n = n.saturating_sub(left));
            batch = Batch::default();
            break;
        }
        left -= 1;
        let (path, format, _) = &taken[i];
        let Some(bytes) = buffers[i].take() else {
            st.docs.sent_docs.update(|n| *n = n.saturating_sub(1));
            continue;
        };
        if let Some(s) = &store {
            let rec = FileRecord::new(path, hashed[i].1.clone(), bytes.length() as u64);
            if let Err(e) = s.put(&rec, &bytes).await {
                st.push_error(format!("{path}: the original could not be kept ({e})"));
            }
        }
        let size = bytes.length() as usize;
        if format.is_binary() {
            batch.docs.push(DocumentInput {
                buffer: Some(batch.buffers.len()),
                ..DocumentInput::text(path.clone(), String::new(), *format)
            });
            // A copy of its own, transferred (the stored bytes stay with the store's write).
            batch.buffers.push(bytes.slice(0, bytes.length()).buffer());
        } else {
            match decode_file(&bytes, *format) {
                Ok((content, warning)) => {
                    if let Some(w) = warning {
                        st.push_error(format!("{path}: {w}"));
                    }
                    batch
                        .docs
                        .push(DocumentInput::text(path.clone(), content, *format));
                }
                Err(e) => {
                    st.push_error(format!("{path}: {e}"));
                    st.docs.sent_docs.update(|n| *n = n.saturating_sub(1));
                    st.lib.summary.update(|s| {
                        if let Some(s) = s {
                            s.skipped.push((path.clone(), e));
                        }
                    });
                    continue;
                }
            }
        }
        added += 1;
        batch.bytes += size;
        if batch.bytes >= SEND_BYTES || batch.docs.len() >= SEND_DOCS {
            // Room at the worker first (a cancel, a crash or a model switch ends the wait; the
            // checks above and below then stop the drop).
            while st.docs.in_flight.get_untracked() >= AHEAD_DOCS
                && st.lib.cancels.get_untracked() == cancels
                && st.model.status.get_untracked() == ModelStatus::Ready
            {
                lightembed_app::shared::web::sleep_ms(50).await;
            }
            if st.lib.cancels.get_untracked() != cancels {
                added -= batch.docs.len();
                batch = Batch::default();
                continue; // the check at the top ends the drop
            }
            if st.model.status.get_untracked() != ModelStatus::Ready
                || loaded_sha256(st) != dropped_on
            {
                let unsent = left + batch.docs.len();
                st.push_error(format!(
                    "{} not added: the model changed or the worker restarted while they were sent. Add them again.",
                    count_of(unsent, "file")
                ));
                st.docs.sent_docs.update(|n| *n = n.saturating_sub(unsent));
                added -= batch.docs.len();
                batch = Batch::default();
                break;
            }
            batch.send(st);
        }
    }
    batch.send(st);
    // Unreadable files the page found are named in the banner too (the worker's are named as
    // they are read, and added to the summary).
    for (name, reason) in &page_skipped {
        // What a folder is expected to hold besides documents is counted, not shouted.
        if !lightembed_app::shared::library::is_expected_skip(reason) {
            st.push_error(format!("{name}: {reason}"));
        }
    }
    st.lib.summary.update(|s| {
        if let Some(s) = s {
            s.sent = added;
            s.added = added.saturating_sub(s.changed + s.failed);
        }
    });
    library::refresh(st);
}

#[component]
pub(super) fn IndexPanel(st: St) -> impl IntoView {
    let ready = move || st.model.status.get() == ModelStatus::Ready;
    let title = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    let drag = RwSignal::new(false);

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
    let on_drop = move |ev: ev::DragEvent| {
        ev.prevent_default();
        drag.set(false);
        if let Some(dt) = ev.data_transfer() {
            // Taken now: the drop's entries are gone once this handler returns.
            let reading = files::dropped(&dt);
            leptos::task::spawn_local(async move { add_files(st, reading.await).await });
        }
    };
    let on_pick = move |ev: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(list) = input.files() {
            let incoming = files::picked(&list);
            leptos::task::spawn_local(async move { add_files(st, incoming).await });
        }
        input.set_value("");
    };
    let blocked = move || !ready() || st.docs.mismatch.with(Option::is_some);
    // `webkitdirectory` (a folder picker; every browser has it under this name) is not an
    // attribute the view macro knows: set on the element.
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = folder_input.get() {
            let _ = el.set_attribute("webkitdirectory", "");
        }
    });

    view! {
        <section class="panel add">
            <h2>"Add documents"</h2>
            // Remote mode: what is added here is indexed here, but searches go to the server.
            {move || st.remote.url.get().map(|url| view! {
                <p class="remote-note" data-testid="remote-note">
                    "Searching a remote collection (" <bdi class="mono">{url}</bdi>
                    "): results come from the search server. Documents added here are indexed on this device and searched once the server is removed."
                </p>
            })}
            <div
                class=move || if drag.get() { "drop active" } else { "drop" }
                data-testid="drop-zone"
                on:dragover=move |ev: ev::DragEvent| { ev.prevent_default(); drag.set(true); }
                on:dragleave=move |_| drag.set(false)
                on:drop=on_drop
            >
                <p class="drop-hint">"Drop files or a folder here: PDF, Word (.docx), OpenDocument (.odt), EPUB, HTML, Markdown or text."</p>
                <div class="row">
                    <label class="pick">"Choose files"
                        <input type="file" data-testid="file-input" multiple accept=ACCEPT on:change=on_pick disabled=blocked />
                    </label>
                    <label class="pick">"Choose a folder"
                        <input type="file" data-testid="folder-input" node_ref=folder_input on:change=on_pick disabled=blocked />
                    </label>
                </div>
            </div>
            <div data-testid="index-progress" class="progress"
                data-per-sec=move || st.docs.progress.get().map(|p| format!("{:.2}", p.per_sec)).unwrap_or_default()
                data-workers=move || st.docs.progress.get().map(|p| p.workers.to_string()).unwrap_or_default()
                data-helped=move || st.docs.progress.get().map(|p| p.helped.to_string()).unwrap_or_default()
                data-heap-bytes=move || st.docs.heap_bytes.get().to_string()
                data-heap-live=move || st.docs.heap_live.get().to_string()
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
            <button data-testid="cancel" on:click=move |_| { st.lib.cancels.update(|n| *n += 1); conn::send(&Request::Cancel) }
                hidden=move || !st.docs.indexing.get() disabled=move || !st.docs.indexing.get()>"Cancel indexing"</button>
            {move || st.lib.summary.get().map(|s| {
                let n_skipped = s.skipped.len();
                let line = format!("Last drop: {} new · {} changed · {} unchanged · {} removed · {} skipped",
                    s.added, s.changed, s.unchanged, s.removed, n_skipped);
                view! {
                    <div class="summary" data-testid="drop-summary"
                        data-added=s.added data-changed=s.changed data-unchanged=s.unchanged
                        data-removed=s.removed data-skipped=n_skipped>
                        {line}
                        {(n_skipped > 0 && n_skipped <= SKIPPED_INLINE).then(|| skipped_rows(s.skipped.clone()))}
                        {(n_skipped > SKIPPED_INLINE).then(|| {
                            let rows = s.skipped.clone();
                            view! {
                                // Folded away, its rows built only while open: a folder of
                                // 11,000 files skipped 4,800 (images, sources), and rebuilding
                                // that list on each worker event froze the page for 2.9 s.
                                <details prop:open=move || st.lib.skipped_open.get_untracked() on:toggle=move |ev: leptos::ev::Event| {
                                    let d: web_sys::Element = event_target(&ev);
                                    st.lib.skipped_open.set(d.has_attribute("open"));
                                }>
                                    <summary data-testid="skipped-reasons">{skipped_reasons(&s.skipped)}</summary>
                                    {move || st.lib.skipped_open.get().then(|| skipped_rows(rows.clone()))}
                                </details>
                            }
                        })}
                    </div>
                }
            })}
            <details>
                <summary>"Paste text instead"</summary>
                <input type="text" placeholder="Title" prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev)) />
                <textarea data-testid="paste" rows="4" placeholder="Paste or type text" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                <button data-testid="add-text" on:click=add_text title="Paste or type some text first"
                    disabled=move || !ready() || st.docs.indexing.get() || st.docs.mismatch.with(Option::is_some) || text.with(|t| t.trim().is_empty())>"Add document"</button>
            </details>
        </section>
    }
}
