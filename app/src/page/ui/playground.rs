//! The playground: cosine of two texts, a text's word pieces, the PCA plot of the index.

use super::*;

#[component]
pub(super) fn Playground(st: St) -> impl IntoView {
    let a = RwSignal::new("How do I read a file in Rust?".to_string());
    let b = RwSignal::new("Reading the contents of a file with std::fs".to_string());
    let tok = RwSignal::new("Ownership rules: each value has an owner.".to_string());
    // Shown beside the button (the error banner is a page away from here).
    let cosine_note = RwSignal::new(None::<&'static str>);
    let ready = move || st.model.status.get() == ModelStatus::Ready;
    view! {
        // Folded: it is for trying the model, not for searching one's documents.
        <details class="panel playground" data-testid="playground">
            <summary><h2>"Playground: similarity, word pieces, the index in 2-D"</h2></summary>
            <div class="grid2">
                <div>
                    <h3>"Cosine similarity"</h3>
                    <textarea rows="2" prop:value=move || a.get() on:input=move |ev| a.set(event_target_value(&ev))></textarea>
                    <textarea rows="2" prop:value=move || b.get() on:input=move |ev| b.set(event_target_value(&ev))></textarea>
                    <button data-testid="cosine-run" disabled=move || !ready() on:click=move |_| {
                        // An empty text embeds as [CLS] [SEP] alone: its "similarity" means nothing.
                        if a.with_untracked(|t| t.trim().is_empty()) || b.with_untracked(|t| t.trim().is_empty()) {
                            st.play.cosine.set(None);
                            cosine_note.set(Some("Type two texts to compare."));
                        } else {
                            cosine_note.set(None);
                            conn::send(&Request::Cosine { a: a.get_untracked(), b: b.get_untracked(), dims: None });
                        }
                    }>"Compare"</button>
                    <span class="inline-error" data-testid="cosine-note" role="alert">{move || cosine_note.get()}</span>
                    <span data-testid="cosine">{move || st.play.cosine.get().map(|(v, d)| format!(" cosine = {v:.4} at {d} dims"))}</span>
                </div>
                <div>
                    <h3>"Tokenizer"</h3>
                    <textarea rows="2" prop:value=move || tok.get() on:input=move |ev| tok.set(event_target_value(&ev))></textarea>
                    <button data-testid="tokenize-run" disabled=move || !ready() on:click=move |_| conn::send(&Request::Tokenize { text: tok.get_untracked() })>"Tokenize"</button>
                    <div class="tokens" data-testid="tokens">
                        {move || st.play.tokens.get().into_iter().map(|t| view! {
                            <span class="tok" title=t.id.to_string()>{t.token}<sub>{t.id}</sub></span>
                        }).collect_view()}
                    </div>
                </div>
            </div>
            <h3>"Passages in 2-D (PCA)"</h3>
            <p>
            <button data-testid="pca-run" disabled=move || !ready() || st.docs.index.with(|i| i.count < 2) on:click=move |_| {
                let q = st.search.query.get_untracked();
                conn::send(&Request::Project { query: (!q.trim().is_empty()).then_some(q), max_points: PCA_POINTS });
            }>"Plot the index (and the current query)"</button>
            </p>
            {move || st.play.plot.get().map(|p| view! { <PcaPlot plot=p /> })}
        </details>
    }
}

#[component]
pub(super) fn PcaPlot(plot: Plot) -> impl IntoView {
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
        <p class="note">{format!("{} of the index (a sample when it holds more); the two components explain {:.0} % of the variance.", count_of(plot.points.len(), "passage"), plot.explained * 100.0)}</p>
    }
}
