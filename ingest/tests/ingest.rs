//! The shared ingestion pipeline (`lightembed_ingest`) natively and compiled to wasm32
//! (under Node with wasm-bindgen-test): the browser app's worker runs this code on dropped
//! files, so html5ever, pulldown-cmark and encoding_rs must work there exactly as natively.

use lightembed_ingest::{
    decode, page_passages, page_passages_with_warning, Format, Sizer, DEPTH_WARNING, MAX_DEPTH,
};
use std::collections::HashSet;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

const MODEL: &[u8] = include_bytes!("../../tests/fixtures/models/static_fp32_uncased.bin");

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn html_markdown_and_latin1_text_become_passages() {
    let model = lightembed::Model::from_bytes(MODEL).unwrap();
    let sizer = Sizer::new(&model);
    let mut seen = HashSet::new();
    let html = "<html><head><title>T</title><script>if (a < b) {}</script></head><body>\
        <nav><p>Menu</p></nav><h2 id=\"s\">Caf&eacute;</h2><p>Q&A über Größe</p>\
        <table><tr><td>Apple</td><td>1.20</td></tr></table></body></html>";
    let ps = page_passages(html, Format::Html, "p.html", &sizer, &mut seen);
    let got: Vec<(&str, &str, &str)> = ps
        .iter()
        .map(|p| (p.id.as_str(), p.title.as_str(), p.embed_text.as_str()))
        .collect();
    assert_eq!(
        got,
        [("p.html#s:1", "Café — T", "Café\nQ&A über Größe Apple 1.20")]
    );

    let md = "# Title\n\n```\n# code\n```\n\n## Part two\n\nTom & ジェリー\n";
    let ps = page_passages(md, Format::Markdown, "m.md", &sizer, &mut seen);
    let got: Vec<(&str, &str)> = ps
        .iter()
        .map(|p| (p.id.as_str(), p.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("m.md#title:1", "# code"),
            ("m.md#part-two:1", "Tom & ジェリー")
        ]
    );

    let (text, warning) = decode(b"caf\xe9", Format::Text);
    assert_eq!((text.as_str(), warning.is_some()), ("café", true));
    let (text, warning) = decode(
        b"<meta charset=windows-1252><p>\x93quoted\x94</p>",
        Format::Html,
    );
    assert_eq!(warning, None);
    let ps = page_passages(&text, Format::Html, "q.html", &sizer, &mut seen);
    assert_eq!(ps[0].text, "“quoted”");
}

/// The nesting limit, admonition titles and generated indexes, as natively (the app's worker reads
/// dropped pages with this code).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn deep_pages_boxes_and_index_pages_read_as_natively() {
    let model = lightembed::Model::from_bytes(MODEL).unwrap();
    let sizer = Sizer::new(&model);
    let n = 2 * MAX_DEPTH;
    let deep = format!(
        "<title>Deep</title>{}<p>Deep text.</p>{}",
        "<div>".repeat(n),
        "</div>".repeat(n)
    );
    let (ps, warning) = page_passages_with_warning(
        &deep,
        Format::Html,
        "d.html",
        &sizer,
        &mut HashSet::new(),
        None,
    );
    assert_eq!(ps[0].text, "Deep text.");
    assert_eq!(warning.as_deref(), Some(DEPTH_WARNING));

    let boxed = "<h2 id=\"s\">Setup</h2><p>Install.</p>\
        <div class=\"note\"><h3 class=\"title\">Note</h3><p>As root.</p></div><p>Then run.</p>";
    let ps = page_passages(boxed, Format::Html, "b.html", &sizer, &mut HashSet::new());
    let got: Vec<(&str, &str)> = ps
        .iter()
        .map(|p| (p.id.as_str(), p.text.as_str()))
        .collect();
    assert_eq!(got, [("b.html#s:1", "Install. Note As root. Then run.")]);

    let index = "<div class=\"index\"><div class=\"indexdiv\"><h3>A</h3><dl><dt>apt, \
        <a href=\"ch1.html\">Installing</a></dt></dl></div></div>";
    assert!(page_passages(
        index,
        Format::Html,
        "bookindex.html",
        &sizer,
        &mut HashSet::new()
    )
    .is_empty());
}
