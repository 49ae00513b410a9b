//! Documents that are not text (issue 33) through the shared pipeline, natively and compiled to
//! wasm32: real PDFs from Debian's xorg-docs (a passage found at its page, headers and page
//! numbers dropped, the outline's titles as headings), the PDFs that cannot be read (each with
//! its message), and small Word, OpenDocument and EPUB files (`tests/fixtures/documents/`,
//! written by `make_documents.py` there); the bounds of the zipped formats.

use lightembed_ingest::{
    document_passages, document_sections, Format, Passage, Sizer, DocumentError,
};
use std::collections::HashSet;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

const MODEL: &[u8] = include_bytes!("../../tests/fixtures/models/static_fp32_uncased.bin");

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../tests/fixtures/documents/", $name)).as_slice()
    };
}

fn passages(bytes: &[u8], format: Format, url: &str) -> Result<Vec<Passage>, DocumentError> {
    let model = lightembed::Model::from_bytes(MODEL).unwrap();
    let sizer = Sizer::new(&model);
    document_passages(bytes, format, url, &sizer, &mut HashSet::new(), None).map(|(p, _)| p)
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_pdf_passage_is_found_at_its_page() {
    let ps = passages(fixture!("lbxalg.pdf"), Format::Pdf, "lbxalg.pdf").unwrap();
    let p = ps
        .iter()
        .find(|p| p.text.contains("CCITT Group 4 2D compression algorithm"))
        .unwrap();
    assert_eq!(p.page, Some(3));
    assert_eq!(p.url, "lbxalg.pdf#page=3");
    assert_eq!(p.heading, "Bitmap Compression");
    assert_eq!(p.page_title, "LBX X Consortium Algorithms");
    assert_eq!(p.title, "Bitmap Compression — LBX X Consortium Algorithms");
    assert_eq!(lightembed_ingest::pdf_page(&p.url), Some(3));
    let last = ps.last().unwrap();
    assert_eq!((last.page, last.heading.as_str()), (Some(4), "Extensions"));
    // Running headers (the title atop pages 2-4) and page numbers (the last line of each page)
    // are gone; the line that is an outline entry's title is its heading, not its text.
    for p in &ps {
        assert!(!p.text.contains("LBX X Consortium Algorithms"), "{}", p.text);
        assert!(!["2", "3", "4"].contains(&p.text.as_str()), "{}", p.text);
        assert!(!p.text.starts_with(&p.heading), "{}", p.text);
        assert_eq!(p.url, format!("lbxalg.pdf#page={}", p.page.unwrap()));
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn pdfs_that_cannot_be_read_say_why() {
    let err = |bytes: &[u8]| passages(bytes, Format::Pdf, "x.pdf").unwrap_err().to_string();
    assert_eq!(
        err(fixture!("encrypted.pdf")),
        "the PDF is encrypted with a password; save a copy without the password and add that"
    );
    assert_eq!(
        err(fixture!("scanned.pdf")),
        "the PDF has no text layer (its 1 page(s) are images, e.g. a scan); run OCR on it first \
         (e.g. ocrmypdf) and add the result"
    );
    assert_eq!(
        err(fixture!("broken.pdf")),
        "not a readable PDF file: failed parsing cross reference table: invalid start value"
    );
    assert_eq!(
        err(fixture!("not-a.pdf")),
        "not a readable PDF file: no %PDF- header"
    );
    // Encrypted with an empty user password ("owner password" only): read as any PDF.
    let ps = passages(fixture!("owner-only.pdf"), Format::Pdf, "dps.pdf").unwrap();
    let plain = passages(fixture!("dps.pdf"), Format::Pdf, "dps.pdf").unwrap();
    assert_eq!(ps, plain);
    assert!(ps.iter().any(|p| p.text.contains("DPS is now obsolete.")));
}
