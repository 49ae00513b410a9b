//! Fuzz the ingestion pipeline (`lightembed_ingest`) over arbitrary file bytes, read as
//! each `Format` (plain text, Markdown, HTML): `decode` → `sections` → `page_passages` with a
//! real `Sizer` (the shipped `public/models/lightembed-en-static.bin`, max_seq_len 128, and the
//! tiny-window fixture `static_int8_maxlen5_maxchars7.bin`, window 3) and an empty `seen` set.
//! Never panics or hangs, and every passage keeps the promises of `Sizer::passages` /
//! `page_passages`:
//! * its text fits the budget the heading leaves, in the model's own pieces:
//!   `count_pieces(text) ≤ max(window − count_pieces(heading), window / 2)` where
//!   `window = max_seq_len − 2`; so `heading + "\n" + text` fits the window
//!   (`count_pieces(embed_text) ≤ window`) unless the heading alone takes more than half of it;
//! * `embed_text == embed_text(heading, text)`, its text was not seen before on the page;
//! * ids are unique within the page, each is its URL + `:N`, and every URL is the page URL or
//!   the page URL + `#anchor`;
//! * every section anchor (`sections`) is percent-encoded: none of the characters `url_encode`
//!   escapes appears raw, and `%` only starts a `%XX` escape.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lightembed::Model;
use lightembed_ingest::{decode, embed_text, page_passages, sections, Format, Sizer};
use std::collections::HashSet;
use std::sync::OnceLock;

const PAGE_URL: &str = "docs/page.html";

fn models() -> &'static [Model; 2] {
    static M: OnceLock<[Model; 2]> = OnceLock::new();
    M.get_or_init(|| {
        let load = |rel: &str| {
            let path = format!("{}/../{rel}", env!("CARGO_MANIFEST_DIR"));
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        [
            load("public/models/lightembed-en-static.bin"),
            load("tests/fixtures/models/static_int8_maxlen5_maxchars7.bin"),
        ]
    })
}

/// No character that `url_encode` escapes appears raw; `%` only as `%XX`.
fn is_percent_encoded(anchor: &str) -> bool {
    let b = anchor.as_bytes();
    anchor.char_indices().all(|(i, c)| match c {
        '%' => b.len() >= i + 3 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit(),
        '#' | '?' | ' ' | '"' | '<' | '>' | '\\' => false,
        c => !c.is_control(),
    })
}

fn check_page(text: &str, format: Format, model: &Model) {
    let sizer = Sizer::new(model);
    let tok = model.tokenizer();
    let window = (model.header().max_seq_len as usize)
        .saturating_sub(2)
        .max(1);
    let mut seen = HashSet::new();
    let passages = page_passages(text, format, PAGE_URL, &sizer, &mut seen);
    let mut ids = HashSet::new();
    let mut texts = HashSet::new();
    for p in &passages {
        assert!(ids.insert(p.id.as_str()), "id {:?} twice", p.id);
        assert!(texts.insert(p.text.as_str()), "text {:?} twice", p.text);
        assert!(
            p.url == PAGE_URL || p.url.starts_with(&format!("{PAGE_URL}#")),
            "url {:?} is not the page's",
            p.url
        );
        let n =
            p.id.strip_prefix(p.url.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .unwrap_or_else(|| panic!("id {:?} is not url {:?} + ':N'", p.id, p.url));
        assert!(
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
            "id {:?}",
            p.id
        );
        assert_eq!(p.embed_text, embed_text(&p.heading, &p.text));
        assert!(seen.contains(&p.text), "returned text not added to seen");

        let h = tok.count_pieces(&p.heading);
        let t = tok.count_pieces(&p.text);
        let budget = window.saturating_sub(h).max(window / 2);
        assert!(
            t <= budget,
            "passage of {t} pieces > budget {budget} (window {window}, heading {h} pieces)\n\
             heading: {:?}\ntext: {:?}",
            p.heading,
            p.text
        );
        if h <= window - window / 2 {
            let e = tok.count_pieces(&p.embed_text);
            assert!(
                e <= window,
                "heading + text = {e} pieces > window {window} (heading {h}, text {t})\n\
                 embed_text: {:?}",
                p.embed_text
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    for format in [Format::Text, Format::Markdown, Format::Html] {
        let (text, warning) = decode(data, format);
        if std::str::from_utf8(data).is_ok() {
            assert_eq!(warning, None, "valid UTF-8 decoded with a warning");
            let plain = std::str::from_utf8(data).unwrap();
            assert_eq!(text, plain.strip_prefix('\u{feff}').unwrap_or(plain));
        }
        let (_, secs) = sections(&text, format);
        for s in &secs {
            if let Some(a) = &s.anchor {
                assert!(
                    is_percent_encoded(a),
                    "anchor {a:?} of {:?} is not percent-encoded",
                    s.heading
                );
            }
        }
        for model in models() {
            check_page(&text, format, model);
        }
    }
});
