//! The model panel: language and model choice, the load status ([`ModelStatus`]), the model's
//! figures, and the search server of remote mode ([`RemotePicker`]).

use super::*;

/// Where the model stands, as the page shows it: `Display` gives the `data-testid="model-status"`
/// texts the e2e test waits for (`starting`, `loading`, `downloading`, `verifying`, `ready`,
/// `restarting`, `error`), also the status element's CSS class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ModelStatus {
    /// Before the model list has arrived.
    Starting,
    /// A model load was requested.
    Loading,
    /// Its bytes are arriving (a progress bar shows how many).
    Downloading,
    /// Its SHA-256 and load rules are being checked.
    Verifying,
    /// Loaded and checked: the page can index and search.
    Ready,
    /// The worker crashed and is being restarted.
    Restarting,
    /// The model could not be loaded (or the worker gave up restarting).
    Error,
}

impl std::fmt::Display for ModelStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ModelStatus::Starting => "starting",
            ModelStatus::Loading => "loading",
            ModelStatus::Downloading => "downloading",
            ModelStatus::Verifying => "verifying",
            ModelStatus::Ready => "ready",
            ModelStatus::Restarting => "restarting",
            ModelStatus::Error => "error",
        })
    }
}

#[component]
pub(super) fn ModelPanel(st: St) -> impl IntoView {
    let on_change = move |ev: ev::Event| {
        let url = event_target_value(&ev);
        if let Some(s) = local_storage() {
            let _ = s.set_item(&lang::model_key(st.model.lang.get_untracked().code), &url);
        }
        st.model.selected.set(Some(url));
        st.load_selected();
    };
    let on_lang = move |ev: ev::Event| {
        if let Some(l) = lang::language(&event_target_value(&ev)) {
            st.switch_language(*l);
        }
    };
    // The chosen language's models (and those that name no language).
    let listed = move || {
        let code = st.model.lang.get().code;
        st.model
            .models
            .get()
            .into_iter()
            .filter(|c| lang::offered_under(c.lang.as_deref(), code))
            .collect::<Vec<_>>()
    };
    // One line under the title: language, model, status. The model's figures (SHA-256, kernels,
    // metadata) are folded away, one click from the pickers; the download bar shows only while a
    // model is on its way.
    view! {
        <section class="modelbar" data-testid="model-bar">
            <label>
                "Language "
                <select data-testid="lang-select" on:change=on_lang>
                    {move || {
                        let cur = st.model.lang.get();
                        st.model.models.with(|m| lang::offered_languages(m.iter().map(|c| c.lang.as_deref())))
                            .into_iter()
                            .map(|l| view! { <option value=l.code selected=l == cur>{l.name}</option> })
                            .collect_view()
                    }}
                </select>
            </label>
            <label>
                "Model "
                <select data-testid="model-select" on:change=on_change>
                    <For each=listed key=|c| c.url.clone() let:c>
                        <option value=c.url.clone() selected=move || st.model.selected.get().as_deref() == Some(c.url.as_str())>{c.label.clone()}</option>
                    </For>
                </select>
            </label>
            <span class="statusline">"Status: " <strong data-testid="model-status" data-ready-ms=move || format!("{:.1}", st.model.ready_ms.get()) class=move || format!("status {}", st.model.status.get())>{move || st.model.status.get().to_string()}</strong></span>
            <div data-testid="download-progress" class="progress" hidden=move || st.model.status.get() == ModelStatus::Ready>
                {move || {
                    let (loaded, total) = st.model.download.get();
                    let cached = st.model.info.with(|i| i.as_ref().is_some_and(|i| i.from_cache));
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
            <RemotePicker st=st />
            <details class="model-details" data-testid="model-details">
                <summary>"Model details"</summary>
                {move || st.model.info.get().map(|i| view! { <ModelInfoTable info=i /> })}
            </details>
        </section>
    }
}

#[component]
pub(super) fn ModelInfoTable(info: ModelInfo) -> impl IntoView {
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
            <tr><th>"kernels"</th><td data-testid="model-kernel">{kernel_label(&info.kernel)}</td></tr>
            <tr><th>"verified"</th><td>{format!("{:.1} ms, {}", info.verify_ms, if info.from_cache { "from the IndexedDB cache" } else { "downloaded" })}{if info.has_fingerprint { ", fingerprinted" } else { "" }}</td></tr>
            // Folded: the JSON would push the search box below the first screen.
            {meta.map(|m| view! { <tr><th>"metadata"</th><td><details><summary>"training, teacher, evaluation (JSON)"</summary><pre>{m}</pre></details></td></tr> })}
        </table>
    }
}

/// The "kernels" row: which engine kernels the worker runs (`ModelInfo::kernel`, `Backend::name`;
/// empty — the field's serde default — reads as the SIMD128 build every worker has).
fn kernel_label(kernel: &str) -> String {
    match kernel {
        "relaxed-simd" => "WebAssembly relaxed SIMD".to_string(),
        "" => "WebAssembly SIMD128".to_string(),
        other => format!("WebAssembly {other}"),
    }
}

/// The search server setting (remote mode): an address field and "Use" while the page searches
/// its own index; the server, what it holds, and "Remove" while it searches a server. The
/// address is remembered (`localStorage`, [`lightembed_app::shared::remote::SERVE_KEY`]);
/// removing it also drops `?serve=` from the address bar, so a reload stays local.
#[component]
pub(super) fn RemotePicker(st: St) -> impl IntoView {
    let draft = RwSignal::new(String::new());
    let use_it = move || {
        let url = draft.get_untracked();
        if !url.trim().is_empty() {
            st.set_remote(Some(&url), true);
        }
    };
    let remove = move |_| {
        st.set_remote(None, true);
        drop_serve_param();
    };
    view! {
        <div class="remote" data-testid="remote">
            {move || match st.remote.url.get() {
                Some(url) => view! {
                    <span data-testid="remote-status">
                        "Searching the remote collection at " <bdi class="mono" data-testid="remote-url">{url}</bdi>
                        <span data-testid="remote-info">{move || match (st.remote.info.get(), st.remote.health_error.get()) {
                            (Some(i), _) => format!(": {} embedded by {} v{} at {} dims.", count_of(i.count as usize, "passage"), i.model_id, i.model_version, i.dims),
                            (None, Some(e)) => format!(" ({e})"),
                            (None, None) => " (asking the server…)".to_string(),
                        }}</span>
                    </span>
                    " "
                    <button type="button" data-testid="remote-remove" on:click=remove
                        title="Search the documents indexed on this device again">"Remove"</button>
                }.into_any(),
                None => view! {
                    <label>
                        "Search server "
                        <input type="url" data-testid="remote-input" placeholder="https://… (lightembed serve)"
                            prop:value=move || draft.get()
                            on:input=move |ev| draft.set(event_target_value(&ev))
                            on:keydown=move |ev: ev::KeyboardEvent| if ev.key() == "Enter" { use_it() } />
                    </label>
                    <button type="button" data-testid="remote-use" on:click=move |_| use_it()
                        title="Search a collection served by `lightembed serve` instead of this device's index">"Use"</button>
                }.into_any(),
            }}
        </div>
    }
}

/// Removes `?serve=` from the address bar (`history.replaceState`, no reload).
fn drop_serve_param() {
    let Some(w) = web_sys::window() else { return };
    let Ok(href) = w.location().href() else {
        return;
    };
    let Ok(url) = web_sys::Url::new(&href) else {
        return;
    };
    if url.search_params().get("serve").is_none() {
        return;
    }
    url.search_params().delete("serve");
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url.href()));
    }
}
