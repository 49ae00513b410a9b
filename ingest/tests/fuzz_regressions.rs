//! Regression tests for what the fuzz targets in `fuzz/` found (one test per finding, the input
//! minimised). See the README's `fuzz/` row for the targets.

use lightembed_ingest::{markdown_sections, page_passages, Format, Sizer};
use std::collections::HashSet;

const MODEL: &[u8] = include_bytes!("../../tests/fixtures/models/static_fp32_uncased.bin");

/// `ingest` target: a Markdown `{#id}` heading attribute became the anchor as written, so
/// `# H {#a?b}` linked to `page.md#a?b` (and `{#a%b}`, `{#x#y"z}` likewise), although
/// `Section::anchor` is percent-encoded, as HTML ids already were.
#[test]
fn markdown_heading_id_attributes_are_percent_encoded() {
    let md = "# H {#a?b}\n\ntext\n\n## I {#a%b}\n\nmore\n\n## J {#x#y\"z}\n\nlast\n\n## K {#a?b}\n\nagain\n";
    let (_, sections) = markdown_sections(md);
    let anchors: Vec<Option<&str>> = sections.iter().map(|s| s.anchor.as_deref()).collect();
    assert_eq!(
        anchors,
        [
            Some("a%3Fb"),
            Some("a%25b"),
            Some("x%23y%22z"),
            Some("a%3Fb-1")
        ]
    );
    let model = lightembed::Model::from_bytes(MODEL).unwrap();
    let ps = page_passages(
        md,
        Format::Markdown,
        "m.md",
        &Sizer::new(&model),
        &mut HashSet::new(),
    );
    assert_eq!(ps[0].url, "m.md#a%3Fb");
    assert_eq!(ps[0].id, "m.md#a%3Fb:1");
}
