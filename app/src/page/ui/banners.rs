//! The page-wide banners: worker and model errors, storage warnings.

use super::*;

/// How many of the latest messages the error banner lists (the rest are counted above them).
pub(super) const SHOWN_ERRORS: usize = 6;

#[component]
pub(super) fn ErrorBanner(st: St) -> impl IntoView {
    let visible = move || {
        st.model.model_error.with(Option::is_some)
            || st.docs.mismatch.with(Option::is_some)
            || st.errors.with(|e| !e.is_empty())
            || st.crash.with(Option::is_some)
    };
    view! {
        <Show when=visible>
            <div class="banner error" data-testid="error" role="alert">
                <Show when=move || st.errors.with(|e| !e.is_empty()) || st.crash.with(Option::is_some)>
                    <button class="dismiss" on:click=move |_| { st.errors.set(Vec::new()); st.crash.set(None); }>"Dismiss"</button>
                </Show>
                {move || st.model.model_error.get().map(|reason| view! {
                    <div class="msg">
                        <strong>"Model not loaded. "</strong>
                        <span data-testid="model-error">{reason}</span>
                        " "
                        <button data-testid="retry" on:click=move |_| st.load_selected()>"Retry"</button>
                    </div>
                })}
                {move || st.docs.mismatch.get().map(|(message, stored)| view! {
                    <div class="msg">
                        <span data-testid="mismatch">{message}</span>
                        " "
                        <button data-testid="reindex" on:click=move |_| {
                            st.docs.mismatch.set(None);
                            conn::send(&Request::Reindex { dims: st.index_dims() });
                        }>{format!("Re-index {stored} passages with this model")}</button>
                    </div>
                })}
                {move || st.crash.get().map(|m| view! {
                    <div class="msg"><span data-testid="crash-notice">{m}</span></div>
                })}
                {move || st.errors.with(|e| {
                    let earlier = e.len().saturating_sub(SHOWN_ERRORS);
                    (earlier > 0).then(|| view! {
                        <div class="msg note" data-testid="earlier-errors">
                            {format!("… {earlier} earlier message{}", if earlier == 1 { "" } else { "s" })}
                        </div>
                    })
                })}
                <For
                    each=move || st.errors.with(|e| e[e.len().saturating_sub(SHOWN_ERRORS)..].to_vec())
                    key=|(n, _)| *n
                    let:e
                >
                    <div class="msg">{e.1}</div>
                </For>
            </div>
        </Show>
    }
}

/// The storage banner: the reason (from the worker: why IndexedDB is not used; it never says
/// what follows) and, once, the consequence.
#[component]
pub(super) fn StorageBanner(st: St) -> impl IntoView {
    view! {
        {move || match st.docs.storage.get() {
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
