//! Documents that are not text (issue 33) through the shared pipeline, natively and compiled to
//! wasm32: real PDFs from Debian's xorg-docs (a passage found at its page, headers and page
//! numbers dropped, the outline's titles as headings), the PDFs that cannot be read (each with
//! its message), real Word, OpenDocument and EPUB files from Debian packages and small handmade
//! ones for the cases the real ones do not show (`tests/fixtures/documents/`, written by
//! `make_documents.py` there); the bounds of the zipped formats.

use lightembed_ingest::{
    document_passages, document_sections, DocumentError, Format, Passage, Sizer,
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
        assert!(
            !p.text.contains("LBX X Consortium Algorithms"),
            "{}",
            p.text
        );
        assert!(!["2", "3", "4"].contains(&p.text.as_str()), "{}", p.text);
        assert!(!p.text.starts_with(&p.heading), "{}", p.text);
        assert_eq!(p.url, format!("lbxalg.pdf#page={}", p.page.unwrap()));
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn pdfs_that_cannot_be_read_say_why() {
    let err = |bytes: &[u8]| {
        passages(bytes, Format::Pdf, "x.pdf")
            .unwrap_err()
            .to_string()
    };
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

/// (heading, text) of each passage, and the passages' shared page title.
fn outline(ps: &[Passage]) -> (String, Vec<(String, String)>) {
    let title = ps[0].page_title.clone();
    assert!(ps.iter().all(|p| p.page_title == title && p.page.is_none()));
    (
        title,
        ps.iter()
            .map(|p| (p.heading.clone(), p.text.clone()))
            .collect(),
    )
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn word_opendocument_and_epub_headings_become_sections() {
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(h, t)| (h.to_string(), t.to_string()))
            .collect()
    };
    let ps = passages(fixture!("guide.docx"), Format::Docx, "guide.docx").unwrap();
    assert_eq!(
        outline(&ps),
        (
            "Greenhouse Guide (Word)".to_string(),
            pairs(&[
                (
                    "Why a greenhouse",
                    "A greenhouse keeps young plants warm through the cold spring nights. \
                     Tomatoes and peppers ripen two weeks earlier."
                ),
                (
                    "Watering",
                    "Water the beds early in the morning, never in the midday sun. Plant \
                     Litres a week Cucumber 12"
                ),
            ])
        )
    );
    assert_eq!(ps[0].id, "guide.docx:1");
    assert_eq!(ps[0].title, "Why a greenhouse — Greenhouse Guide (Word)");

    let ps = passages(fixture!("guide.odt"), Format::Odt, "guide.odt").unwrap();
    assert_eq!(
        outline(&ps),
        (
            "Allotment Notes".to_string(),
            pairs(&[
                ("", "Notes from the allotment, autumn."),
                (
                    "Compost",
                    "A fork works best. Turn the heap every three weeks; it should smell of \
                     forest floor. Greens: grass cuttings Browns: dry leaves"
                ),
                ("Leaf mould", "Pack wet leaves in sacks and wait two years."),
            ])
        )
    );

    let ps = passages(fixture!("guide.epub"), Format::Epub, "guide.epub").unwrap();
    assert_eq!(
        outline(&ps),
        (
            "The Beekeeper's Year".to_string(),
            pairs(&[
                (
                    "Spring",
                    "In spring the colony grows fast; add a super before the hive is crowded."
                ),
                (
                    "Swarms",
                    "A swarm hangs in a cluster on a branch for an hour or a day."
                ),
                (
                    "Autumn",
                    "Feed sugar syrup after the last harvest so the bees winter well."
                ),
            ])
        )
    );
    let urls: Vec<&str> = ps.iter().map(|p| p.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "guide.epub#text/ch%201.xhtml#spring",
            "guide.epub#text/ch%201.xhtml#swarms",
            "guide.epub#text/ch2.xhtml"
        ]
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn broken_zipped_documents_say_why() {
    let err = |bytes: &[u8], format| document_sections(bytes, format).unwrap_err().to_string();
    assert_eq!(
        err(b"just text", Format::Docx),
        "not a readable Word file: not a zip archive (invalid Zip archive: Could not find EOCD)"
    );
    // An EPUB is not a Word document: the part Word needs is missing.
    assert_eq!(
        err(fixture!("guide.epub"), Format::Docx),
        "not a readable Word file: no word/document.xml in the archive"
    );
    assert_eq!(
        err(fixture!("guide.docx"), Format::Epub),
        "not a readable EPUB file: no META-INF/container.xml in the archive"
    );
}

/// A zip archive of `parts` (name, bytes), deflated.
fn zip_of(parts: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in parts {
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn zip_bombs_entry_counts_and_deep_xml_are_refused() {
    // 65 MiB of one byte deflate to ~65 KB: past the per-part cap, found while inflating.
    let mut body = b"<w:document><w:body><w:p><w:r><w:t>".to_vec();
    body.resize(65 << 20, b'a');
    let bomb = zip_of(&[("word/document.xml", body)]);
    assert!(bomb.len() < 200_000, "{}", bomb.len());
    assert_eq!(
        document_sections(&bomb, Format::Docx).unwrap_err(),
        DocumentError::TooLarge {
            what: "word/document.xml inflates to more than 64 MiB".into(),
            limit: "per part".into()
        }
    );
    assert_eq!(
        document_sections(&bomb, Format::Docx)
            .unwrap_err()
            .to_string(),
        "word/document.xml inflates to more than 64 MiB (limit: per part); not read"
    );
    let names: Vec<String> = (0..10_001).map(|i| format!("f{i}")).collect();
    let many: Vec<(&str, Vec<u8>)> = names.iter().map(|n| (n.as_str(), Vec::new())).collect();
    assert_eq!(
        document_sections(&zip_of(&many), Format::Odt)
            .unwrap_err()
            .to_string(),
        "10001 entries in the archive (limit: 10000 entries); not read"
    );
    let deep = format!(
        "{}{}",
        "<text:span>".repeat(600),
        "</text:span>".repeat(600)
    );
    let deep = zip_of(&[("content.xml", deep.into_bytes())]);
    assert_eq!(
        document_sections(&deep, Format::Odt)
            .unwrap_err()
            .to_string(),
        "content.xml nests elements more than 512 deep (limit: XML depth); not read"
    );
}

/// The browser app reads a PDF in a worker of its own and, when that worker dies on a page (a
/// font pdf-extract cannot decode aborts the wasm), reads it again with the page left out:
/// `pdf_sections_skipping` names each page before reading it and leaves out the pages asked,
/// as `pdf_sections` leaves out a page the reader panics on natively.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_pdf_read_without_a_page_leaves_that_page_out() {
    let bytes = fixture!("lbxalg.pdf");
    let mut seen = Vec::new();
    let (title, all) =
        lightembed_ingest::pdf_sections_skipping(bytes, &[], &mut |n| seen.push(n)).unwrap();
    assert_eq!(seen, vec![1, 2, 3, 4]);
    assert_eq!(
        (title.clone(), all.clone()),
        lightembed_ingest::pdf_sections(bytes).unwrap()
    );
    let mut seen = Vec::new();
    let (_, without) =
        lightembed_ingest::pdf_sections_skipping(bytes, &[3], &mut |n| seen.push(n)).unwrap();
    assert_eq!(seen, vec![1, 2, 4]);
    assert!(all.iter().any(|s| s.page == Some(3)));
    assert!(without.iter().all(|s| s.page != Some(3)));
    let kept: Vec<_> = all.iter().filter(|s| s.page != Some(3)).collect();
    // Page 3 held the outline's "Bitmap Compression" entry: page 4's sections keep their text,
    // only a heading carried over from page 3 may differ.
    assert_eq!(
        without
            .iter()
            .map(|s| (&s.blocks, s.page))
            .collect::<Vec<_>>(),
        kept.iter().map(|s| (&s.blocks, s.page)).collect::<Vec<_>>()
    );
    // Every page left out: no text at all, said as the reader failing on the pages.
    let e =
        lightembed_ingest::pdf_sections_skipping(bytes, &[1, 2, 3, 4], &mut |_| {}).unwrap_err();
    assert_eq!(e.rule(), "broken", "{e}");
}

/// The distinct (url, heading) of `ps`, in order: the sections the document became.
fn sections(ps: &[Passage]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for p in ps {
        let s = (p.url.clone(), p.heading.clone());
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out
}

/// Real files as Debian ships them (`make_documents.py` names the packages): a known passage of
/// each is found in its section, at its URL.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn real_word_opendocument_and_epub_files_from_debian_are_read() {
    let find = |ps: &[Passage], text: &str| -> Passage {
        ps.iter()
            .find(|p| p.text.contains(text))
            .unwrap_or_else(|| panic!("no passage has {text:?}"))
            .clone()
    };

    // Word (python3-pattern's test corpus): chapter I of "Through the Looking-Glass", one
    // paragraph style and no title in docProps: one untitled section named after the file.
    let name = "carroll-lookingglass.docx";
    let ps = passages(fixture!("carroll-lookingglass.docx"), Format::Docx, name).unwrap();
    assert_eq!(sections(&ps), [(name.to_string(), String::new())]);
    assert!(ps.iter().all(|p| p.page_title == name && p.page.is_none()));
    assert_eq!(ps[0].text, "THROUGH THE LOOKING-GLASS By Lewis Carroll");
    assert_eq!(ps[2].text, "CHAPTER I. Looking-Glass house");
    let p = find(&ps, "hungry hyaena");
    assert_eq!(
        p.text,
        "Do let's pretend that I'm a hungry hyaena, and you're a bone.'"
    );
    assert_eq!(p.url, name);

    // OpenDocument (libsonic-dev): headings become sections; footnotes are read.
    let name = "sonic.odt";
    let ps = passages(fixture!("sonic.odt"), Format::Odt, name).unwrap();
    let headings: Vec<String> = sections(&ps).into_iter().map(|(_, h)| h).collect();
    assert_eq!(
        headings,
        [
            "The Sonic Speech Speedup Algorithm",
            "Abstract",
            "Algorithm",
            "Distortion",
            "Future Work"
        ]
    );
    assert_eq!(ps[0].text, "By Bill Cox August 11, 2011");
    let p = find(&ps, "Average Magnitude Difference Function");
    assert_eq!(p.heading, "Algorithm");
    assert_eq!(p.title, "Algorithm — sonic.odt");
    assert_eq!(find(&ps, "www.surina.net/soundtouch").heading, "Abstract");

    // EPUB (cxxtest's DocBook user guide): every DocBook section a section of its own, at its
    // chapter file and anchor, in spine order.
    let name = "cxxtest-guide.epub";
    let ps = passages(fixture!("cxxtest-guide.epub"), Format::Epub, name).unwrap();
    assert!(ps.iter().all(|p| p.page_title == "CxxTest User Guide"));
    let secs = sections(&ps);
    assert_eq!(secs.len(), 73);
    let sec = |url: &str, h: &str| (format!("{name}#{url}"), h.to_string());
    assert_eq!(
        secs[..4],
        [
            sec("index.html#idm1", "CxxTest User Guide"),
            sec("ar01s01.html#_overview", "1. Overview"),
            sec("ar01s02.html#gettingStarted", "2. Getting Started"),
            sec("ar01s02.html#_a_first_example", "2.1. A First Example"),
        ]
    );
    assert_eq!(
        secs.last().unwrap(),
        &sec("apd.html#appendix_D", "D. CxxTest Releases")
    );
    let p = find(&ps, "designed to be as portable as possible");
    assert_eq!(p.url, "cxxtest-guide.epub#ar01s01.html#_overview");
    assert_eq!(p.heading, "1. Overview");
    assert_eq!(p.title, "1. Overview — CxxTest User Guide");
}
