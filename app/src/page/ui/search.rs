//! The search panel: the query box, ranking mode, results with the query's words marked (as text).
//! In remote mode the results are the search server's, in the same list, and its failures are
//! said in words where the results would be.

use super::*;

#[component]
pub(super) fn SearchPanel(st: St) -> impl IntoView {
    let on_input = move |ev: ev::Event| {
        st.search.query.set(event_target_value(&ev));
        let token = st.search.search_id.get_untracked() + 1;
        // Debounce: only the last keystroke within the window searches.
        st.search.search_id.set(token);
        set_timeout(
            move || {
                if st.search.search_id.get_untracked() == token {
                    st.search_now();
                }
            },
            Duration::from_millis(SEARCH_DEBOUNCE_MS),
        );
    };
    view! {
        <section class="panel search">
            <h2>"Search"</h2>
            <span hidden data-testid="opened">{move || st.lib.opened.get()}</span>
            <input
                type="search"
                data-testid="query"
                class="query"
                placeholder=move || if st.remote.url.with(Option::is_some) { "Search the remote collection…" } else if st.docs.index.with(|i| i.count == 0) { "Index some documents first…" } else { st.model.lang.get().ask }
                prop:value=move || st.search.query.get()
                on:input=on_input
                disabled=move || st.model.status.get() != ModelStatus::Ready
            />
            <label class="mode">"Rank by "
                <select data-testid="search-mode"
                    disabled=move || st.remote.url.with(Option::is_some)
                    title=move || if st.remote.url.with(Option::is_some) { "The search server ranks by meaning + keywords" } else { "" }
                    on:change=move |ev| {
                        st.search.mode.set(match event_target_value(&ev).as_str() {
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
                data-query=move || st.search.latency.get().map(|l| l.query).unwrap_or_default()
                data-total-ms=move || st.search.latency.get().map(|l| format!("{:.3}", l.total_ms)).unwrap_or_default()
                data-embed-ms=move || st.search.latency.get().map(|l| format!("{:.3}", l.embed_ms)).unwrap_or_default()
                data-search-ms=move || st.search.latency.get().map(|l| format!("{:.3}", l.search_ms)).unwrap_or_default()>
                {move || st.search.latency.get().map(|l| if st.remote.url.with(Option::is_some) {
                    format!(
                        "{} results from the search server in {:.1} ms (embed {:.1} ms here + request {:.1} ms)",
                        st.search.results.get().len(), l.total_ms, l.embed_ms, l.search_ms
                    )
                } else {
                    format!(
                        "{} results in {:.1} ms (embed {:.1} ms + search {:.2} ms in the worker)",
                        st.search.results.get().len(), l.total_ms, l.embed_ms, l.search_ms
                    )
                })}
            </p>
            // Remote mode: a refusal (§8: another model), a failure or no answer, in words.
            {move || st.remote.error.get().map(|e| view! {
                <p class="remote-error" data-testid="remote-error" role="alert">{e}</p>
            })}
            {move || st.remote.warnings.with(|w| (!w.is_empty()).then(|| view! {
                <p class="note" data-testid="remote-warnings">{format!("The search server notes: {}", w.join("; "))}</p>
            }))}
            // Hybrid mode ranks by meaning alone when no passage holds a word of the query (the
            // fused scores still start at 1): say so, rather than look as sure as a real match.
            // The keyword side decides (a word only in a title or heading is a match), not the
            // excerpts shown.
            <Show when=move || {
                st.search.mode.get() == SearchMode::Hybrid
                    && !st.search.keyword_match.get()
                    && st.search.results.with(|r| !r.is_empty())
            }>
                <p class="note" data-testid="no-keyword-match">
                    "No passage contains the words of your query: these are the closest by meaning alone."
                </p>
            </Show>
            <ol class="results">
                <For each=move || st.search.results.get() key=result_key let:h>
                    <li data-testid="result" data-score=format!("{:.4}", h.score) data-id=h.id.clone()>
                        <div class="title">
                            {if h.id.starts_with("user/") && st.remote.url.with_untracked(Option::is_none) {
                                // A person's own document: opened from the stored original (a PDF
                                // at its page), never by its URL (`#page=N` only).
                                let page = lightembed_ingest::pdf_page(&h.url);
                                let (id, title) = (h.id.clone(), h.title.clone());
                                view! {
                                    <button class="link open" data-testid="open" on:click=move |_| {
                                        library::open_passage(st, id.clone(), title.clone(), page)
                                    }><bdi>{h.title.clone()}</bdi></button>
                                    {page.map(|n| view! { <span class="page" data-testid="page" data-page=n>{format!(" · p. {n}")}</span> })}
                                }.into_any()
                            } else {
                                match lightembed_app::shared::protocol::safe_href(&h.url) {
                                    None => view! { <bdi>{h.title.clone()}</bdi> }.into_any(),
                                    Some(url) => view! { <a href=url.to_string() target="_blank" rel="noopener"><bdi>{h.title.clone()}</bdi></a> }.into_any(),
                                }
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
pub(super) fn result_key(h: &ShownHit) -> (String, u32, String, Vec<(usize, usize)>) {
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
pub(super) fn marked(text: &str, highlights: &[(usize, usize)]) -> Vec<AnyView> {
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
