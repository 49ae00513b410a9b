//! Documents → passages, in the worker (which has the model): dropped files and pasted text go
//! through [`lightembed_ingest::page_passages`] — the pipeline `lightembed index` runs —
//! so they are cut, sized in the model's word pieces, titled and embedded exactly as the CLI does:
//! the app's [`Passage`] is the pipeline's passage and its document id. The bundled corpus is written by `lightembed passages`
//! (`scripts/make_corpus.sh`), one [`CorpusRecord`] per line.
//!
//! Ids: `{doc_id}#{local}`, where `local` is the CLI id without its page URL (`anchor:N`, or `N`
//! for a section without an anchor), so [`crate::shared::protocol::doc_id_of`] gives the document back.

use std::collections::HashSet;

use lightembed::Model;
use lightembed_ingest::{page_passages, Sizer};
use serde::Deserialize;

use crate::shared::protocol::Passage;

/// The format of a user document (sent with [`crate::shared::protocol::Request::IndexDocument`]): the
/// pipeline's own type, chosen from a file name as the CLI chooses it ([`Format::from_name`]).
pub use lightembed_ingest::Format;

/// Makes a document id from a name: `user/` + the name with `#` and whitespace replaced by `-`.
/// A name of more than 80 characters keeps its first 71 and gains `~` and 8 hex digits of a hash
/// of the whole name (FNV-1a, 80 characters in all), so two long names that share their first 80 characters stay two
/// documents (they were one: the second replaced the first).
pub fn user_doc_id(name: &str) -> String {
    const MAX: usize = 80;
    let clean: String = name
        .trim()
        .chars()
        .map(|c| {
            if c == '#' || c.is_whitespace() {
                '-'
            } else {
                c
            }
        })
        .collect();
    let clean = if clean.chars().count() > MAX {
        // FNV-1a (64-bit): stable across builds and platforms, unlike std's hasher.
        let h = clean.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let head: String = clean.chars().take(MAX - 9).collect();
        format!("{head}~{:08x}", h >> 32)
    } else {
        clean
    };
    format!(
        "user/{}",
        if clean.is_empty() {
            "untitled".into()
        } else {
            clean
        }
    )
}

/// The name of a pasted text given no title: its first six words (`…` if there are more) and
/// `time` (the time of day it was added, so two pastes that start alike stay two documents), e.g.
/// `"How do I read a file… (14:02:31)"`; `"pasted text (14:02:31)"` for a text with no words.
pub fn pasted_name(text: &str, time: &str) -> String {
    const WORDS: usize = 6;
    const MAX_CHARS: usize = 60;
    let mut words = text.split_whitespace();
    let head: Vec<&str> = words.by_ref().take(WORDS).collect();
    let mut name: String = head.join(" ").chars().take(MAX_CHARS).collect();
    if name.is_empty() {
        name = "pasted text".into();
    } else if words.next().is_some() || name.chars().count() < head.join(" ").chars().count() {
        name.push('…');
    }
    format!("{name} ({time})")
}

/// The app id of a passage the pipeline gave the id `id` on page `page`: `{doc_id}#{local}`,
/// `local` being `id` without the page URL and the `#` or `:` after it (`anchor:N` or `N`).
fn app_id(doc_id: &str, page: &str, id: &str) -> String {
    let local = match id.strip_prefix(page) {
        Some(rest) => rest
            .strip_prefix('#')
            .or_else(|| rest.strip_prefix(':'))
            .unwrap_or(rest),
        None => id,
    };
    format!("{doc_id}#{local}")
}

/// Passages of one user document: `name` is the file name (or the title given to pasted text;
/// it is also the title of a document that has none), `format` how `content` is read. Cut by
/// [`lightembed_ingest::page_passages`] with `model`'s tokenizer and window, exactly as
/// `lightembed index` cuts a file of that name (text repeated inside the document is kept once).
/// The passages are the pipeline's own, each under the app's id ([`app_id`]) and without a URL
/// (a user document is not served anywhere): titles, page titles, headings, texts and embedded
/// texts are the CLI's.
pub fn document_passages(name: &str, content: &str, format: Format, model: &Model) -> Vec<Passage> {
    let sizer = Sizer::new(model);
    as_app_passages(
        name,
        page_passages(content, format, name, &sizer, &mut HashSet::new()),
    )
}

/// Passages of one user document from its bytes, in any format — PDF, Word, OpenDocument and
/// EPUB too — cut by [`lightembed_ingest::document_passages`] exactly as `lightembed index` cuts a
/// file of that name, under the app's ids ([`document_passages`]' rules; a PDF's passages keep
/// their page, [`lightembed_ingest::Passage::page`], and the URL `#page=N`). The worker reads
/// these formats in a worker of their own ([`sections_passages`]); this is the same path in one
/// call. Errors: the document cannot be read (its message says why).
pub fn document_file_passages(
    name: &str,
    bytes: &[u8],
    format: Format,
    model: &Model,
) -> Result<Vec<Passage>, lightembed_ingest::DocumentError> {
    let sizer = Sizer::new(model);
    let (ps, _) = lightembed_ingest::document_passages(
        bytes,
        format,
        name,
        &sizer,
        &mut HashSet::new(),
        None,
    )?;
    Ok(as_app_passages(name, ps))
}

/// The passages of document `name` from the sections a reader gave (`title`, `sections`: what
/// [`lightembed_ingest::document_sections`] returns for it; the app reads binary formats in a
/// worker of their own, [`crate::worker::extract`]): exactly [`document_file_passages`]' passages
/// for the same file.
pub fn sections_passages(
    name: &str,
    title: Option<String>,
    sections: Vec<lightembed_ingest::Section>,
    model: &Model,
) -> Vec<Passage> {
    let sizer = Sizer::new(model);
    let title = title.unwrap_or_else(|| name.to_string());
    as_app_passages(
        name,
        lightembed_ingest::section_passages(&title, sections, name, &sizer, &mut HashSet::new()),
    )
}

/// The URL the app keeps for a passage of a user document: `#page=N` for a passage on page N of
/// a PDF (what the browser's viewer opens the stored file at, and what the result shows as
/// "p. N", [`lightembed_ingest::pdf_page`]), else empty (the document is not served anywhere).
pub fn app_url(page: Option<u32>) -> String {
    page.map(|n| format!("#page={n}")).unwrap_or_default()
}

/// The pipeline's passages of document `name` under the app's ids and URLs ([`app_url`]).
fn as_app_passages(name: &str, passages: Vec<lightembed_ingest::Passage>) -> Vec<Passage> {
    let doc_id = user_doc_id(name);
    passages
        .into_iter()
        .map(|mut p| {
            p.id = app_id(&doc_id, name, &p.id);
            p.url = app_url(p.page);
            Passage::new(doc_id.clone(), p)
        })
        .collect()
}

/// Document id prefix of the English bundled corpus (`corpus/rust-book.jsonl`).
pub const CORPUS_DOC_PREFIX: &str = "rust-book/";

/// The document id prefix of a bundled corpus: its file name without the extension, then `/`
/// (`corpus/rust-book.jsonl` → `rust-book/`, `corpus/libreoffice-help-tr.jsonl` →
/// `libreoffice-help-tr/`), so documents of different corpora never share an id.
pub fn corpus_doc_prefix(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split_once('.').map_or(file, |(stem, _)| stem);
    format!("{}/", if stem.is_empty() { "corpus" } else { stem })
}

/// One line of the bundled corpus, as `lightembed passages` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CorpusRecord {
    /// The CLI's passage id (`page#anchor:N` or `page:N`).
    pub id: String,
    /// The page's URL relative to the book (`ch04-01-what-is-ownership.html`).
    pub page: String,
    /// The page title.
    pub page_title: String,
    /// The section heading.
    #[serde(default)]
    pub heading: String,
    /// Absolute URL with anchor.
    #[serde(default)]
    pub url: String,
    /// Passage text.
    pub text: String,
}

impl CorpusRecord {
    /// The passage of the English corpus: document `rust-book/{page}`, id
    /// `rust-book/{page}#{anchor:N or N}`.
    pub fn into_passage(self) -> Passage {
        self.into_passage_in(CORPUS_DOC_PREFIX)
    }

    /// The passage of a corpus whose documents are `{prefix}{page}` ([`corpus_doc_prefix`]):
    /// id `{prefix}{page}#{anchor:N or N}`, made by [`lightembed_ingest::Passage::new`] (the
    /// title rule and embedded text of `lightembed passages`' own passages).
    pub fn into_passage_in(self, prefix: &str) -> Passage {
        let doc_id = format!("{prefix}{}", self.page);
        let id = app_id(&doc_id, &self.page, &self.id);
        Passage::new(
            doc_id,
            lightembed_ingest::Passage::new(id, self.page_title, self.heading, self.url, self.text),
        )
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn pasted_texts_are_named_by_their_first_words() {
        assert_eq!(
            pasted_name("How do I read a file in Rust?", "14:02:31"),
            "How do I read a file… (14:02:31)"
        );
        assert_eq!(
            pasted_name("  Two\nwords ", "09:00:00"),
            "Two words (09:00:00)"
        );
        assert_eq!(pasted_name(" \n\t", "09:00:00"), "pasted text (09:00:00)");
        let long = "x".repeat(100);
        assert_eq!(pasted_name(&long, "1"), format!("{}… (1)", "x".repeat(60)));
    }

    use super::*;
    use crate::shared::protocol::doc_id_of;

    fn model() -> Model {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/models/lightembed-en-static.bin"
        ))
        .unwrap();
        Model::from_bytes(&bytes).unwrap()
    }

    /// Ids of user documents: short names as they are; long names that share their first 80
    /// characters stay apart (a hash of the whole name), and keep to 80 characters.
    #[test]
    fn user_doc_ids_keep_long_names_apart() {
        assert_eq!(user_doc_id(" my notes #2.md "), "user/my-notes--2.md");
        assert_eq!(user_doc_id(""), "user/untitled");
        let a80 = "a".repeat(80);
        assert_eq!(user_doc_id(&a80), format!("user/{a80}"));
        let one = user_doc_id(&format!("{}-one.md", "a".repeat(85)));
        let two = user_doc_id(&format!("{}-two.md", "a".repeat(85)));
        assert_ne!(one, two);
        for id in [&one, &two] {
            let name = id.strip_prefix("user/").unwrap();
            assert_eq!(name.chars().count(), 80, "{id}");
            assert!(
                name.starts_with(&"a".repeat(71)) && name[71..].starts_with('~'),
                "{id}"
            );
        }
        assert_eq!(one, user_doc_id(&format!("{}-one.md", "a".repeat(85))));
    }

    /// The worker's path for a dropped file is the CLI's pipeline: same texts, headings, titles
    /// and embedded text as `ingest::page_passages` for the same content (the CLI test
    /// `cli/tests/passages.rs` checks `lightembed passages` against that same function).
    #[test]
    fn document_passages_are_the_cli_pipeline_output() {
        let model = model();
        let html = "<html><head><title>Pots - Kitchen</title><script>if (a < b) {}</script></head><body>\
            <p>Loose text.</p><h1 id=\"pots\">Pots</h1><p>Cast iron keeps heat. Don&rsquo;t soak it.</p>\
            <table><tr><th>Name</th><th>Price</th></tr><tr><td>Skillet</td><td>24.50</td></tr></table>\
            <h2>No id</h2><p>Café &amp; crème.</p></body></html>";
        let long = format!(
            "# Notes\n\n{}\n\n```\n# not a heading\n```\n\n## Salt & pepper 🌶\n\nTom & ジェリー\n",
            "A sentence about the garden and its many plants. ".repeat(40)
        );
        for (name, content, format) in [
            ("kitchen.html", html.to_string(), Format::Html),
            ("my notes #2.md", long, Format::Markdown),
            ("pasted", "one\n\ntwo".to_string(), Format::Text),
        ] {
            let app = document_passages(name, &content, format, &model);
            let sizer = Sizer::new(&model);
            let cli = page_passages(&content, format, name, &sizer, &mut HashSet::new());
            assert_eq!(app.len(), cli.len(), "{name}");
            assert!(!app.is_empty());
            let doc_id = user_doc_id(name);
            let mut ids = HashSet::new();
            for (a, c) in app.iter().zip(&cli) {
                // The CLI's passage itself, under the app's id and without a URL.
                let cli_shape = lightembed_ingest::Passage {
                    id: a.id().to_string(),
                    url: String::new(),
                    ..c.clone()
                };
                assert_eq!(a.passage, cli_shape, "the app stores what the CLI cuts");
                assert_eq!(a.doc_id, doc_id);
                assert_eq!(doc_id_of(a.id()), doc_id);
                assert!(ids.insert(a.id().to_string()), "unique id {}", a.id());
            }
        }
        // Documents from their bytes (PDF, Word, OpenDocument, EPUB): the CLI's passages too.
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/documents/");
        // Real files from Debian packages and the handmade ones (make_documents.py there).
        let names = [
            "lbxalg.pdf",
            "carroll-lookingglass.docx",
            "sonic.odt",
            "cxxtest-guide.epub",
            "guide.docx",
            "guide.odt",
            "guide.epub",
        ];
        for name in names {
            let bytes = std::fs::read(format!("{fixtures}{name}")).unwrap();
            let format = Format::from_name(name);
            let app = document_file_passages(name, &bytes, format, &model).unwrap();
            let sizer = Sizer::new(&model);
            let (cli, _) = lightembed_ingest::document_passages(
                &bytes,
                format,
                name,
                &sizer,
                &mut HashSet::new(),
                None,
            )
            .unwrap();
            assert_eq!(app.len(), cli.len(), "{name}");
            assert!(!app.is_empty(), "{name}");
            // The sections read elsewhere (the app's reader worker) give the same passages.
            let (title, sections, _) =
                lightembed_ingest::document_sections(&bytes, format).unwrap();
            assert_eq!(
                sections_passages(name, title, sections, &model),
                app,
                "{name}"
            );
            for (a, c) in app.iter().zip(&cli) {
                let cli_shape = lightembed_ingest::Passage {
                    id: a.id().to_string(),
                    url: app_url(c.page),
                    ..c.clone()
                };
                assert_eq!(
                    a.passage, cli_shape,
                    "{name}: the app stores what the CLI cuts"
                );
                assert_eq!(doc_id_of(a.id()), user_doc_id(name));
            }
            if name.ends_with(".pdf") {
                let p = app
                    .iter()
                    .find(|p| {
                        p.passage
                            .text
                            .contains("CCITT Group 4 2D compression algorithm")
                    })
                    .unwrap();
                assert_eq!(
                    (p.passage.page, p.passage.url.as_str()),
                    (Some(3), "#page=3")
                );
                assert_eq!(lightembed_ingest::pdf_page(&p.passage.url), Some(3));
            } else {
                assert!(app
                    .iter()
                    .all(|p| p.passage.url.is_empty() && p.passage.page.is_none()));
            }
        }
        let bytes = std::fs::read(format!("{fixtures}encrypted.pdf")).unwrap();
        assert_eq!(
            document_file_passages("e.pdf", &bytes, Format::Pdf, &model)
                .unwrap_err()
                .rule(),
            "encrypted"
        );

        let ps = document_passages("kitchen.html", html, Format::Html, &model);
        let got: Vec<(&str, &str, &str, &str, &str)> = ps
            .iter()
            .map(|p| {
                let i = &p.passage;
                (
                    p.id(),
                    i.title.as_str(),
                    i.page_title.as_str(),
                    i.heading.as_str(),
                    i.text.as_str(),
                )
            })
            .collect();
        let page = "Pots - Kitchen";
        assert_eq!(
            got,
            [
                ("user/kitchen.html#1", page, page, "", "Loose text."),
                (
                    "user/kitchen.html#pots:1",
                    page,
                    page,
                    "Pots",
                    "Cast iron keeps heat. Don’t soak it. Name Price Skillet 24.50"
                ),
                (
                    "user/kitchen.html#2",
                    "No id — Pots - Kitchen",
                    page,
                    "No id",
                    "Café & crème."
                ),
            ]
        );
        assert_eq!(
            ps[1].embed_text(),
            "Pots\nCast iron keeps heat. Don’t soak it. Name Price Skillet 24.50"
        );
        // Plain text: the name is the title; no heading, so the text alone is embedded.
        let ps = document_passages("notes #1.txt", "a b c\n\nd e f", Format::Text, &model);
        assert_eq!(ps.len(), 1);
        assert_eq!(
            (
                ps[0].id(),
                ps[0].doc_id.as_str(),
                ps[0].passage.title.as_str(),
                ps[0].passage.page_title.as_str()
            ),
            (
                "user/notes--1.txt#1",
                "user/notes--1.txt",
                "notes #1.txt",
                "notes #1.txt"
            )
        );
        assert_eq!(ps[0].embed_text(), "a b c d e f");
        assert!(document_passages("empty.html", "<p> </p>", Format::Html, &model).is_empty());
        assert_eq!(Format::from_name("A.MD"), Format::Markdown);
        assert_eq!(Format::from_name("x.htm"), Format::Html);
        assert_eq!(Format::from_name("x.csv"), Format::Text);
        assert_eq!(Format::from_name("Report.PDF"), Format::Pdf);
        assert_eq!(Format::from_name("a.docx"), Format::Docx);
    }

    /// Each bundled corpus has its own document prefix (its file name), English the one it
    /// always had, so the corpora never share a document id.
    #[test]
    fn corpus_documents_are_named_by_the_corpus_file() {
        assert_eq!(
            corpus_doc_prefix("corpus/rust-book.jsonl"),
            CORPUS_DOC_PREFIX
        );
        assert_eq!(
            corpus_doc_prefix(crate::shared::lang::TURKISH.corpus_url),
            "libreoffice-help-tr/"
        );
        assert_eq!(corpus_doc_prefix("https://x.invalid/a/b.jsonl?v=2#x"), "b/");
        assert_eq!(corpus_doc_prefix("plain"), "plain/");
        let prefixes: HashSet<String> = crate::shared::lang::LANGUAGES
            .iter()
            .map(|l| corpus_doc_prefix(l.corpus_url))
            .collect();
        assert_eq!(prefixes.len(), crate::shared::lang::LANGUAGES.len());
        let r = CorpusRecord {
            id: "autotext.html#hd_id3155521:1".into(),
            page: "autotext.html".into(),
            page_title: "Otomatik Metin Kullanımı".into(),
            heading: "Otomatik Metin Kullanımı".into(),
            url: String::new(),
            text: "Metin".into(),
        };
        let p = r.clone().into_passage_in("libreoffice-help-tr/");
        assert_eq!(
            (p.id(), p.doc_id.as_str()),
            (
                "libreoffice-help-tr/autotext.html#hd_id3155521:1",
                "libreoffice-help-tr/autotext.html"
            )
        );
        assert_eq!(r.into_passage().doc_id, "rust-book/autotext.html");
    }

    /// The Turkish corpus (`scripts/make_corpus_tr.sh`): every line a passage of a LibreOffice
    /// help guide page with its URL on help.libreoffice.org, ids unique under
    /// `libreoffice-help-tr/`, no chrome of the help pages (header, index side bar, debug
    /// footer), Turkish text, and small enough to ship (under 1 MB). Not re-cut here: the
    /// passages are sized by the Turkish model's vocabulary, which a retrained model may change.
    #[test]
    fn turkish_corpus_lines_are_passages_of_help_pages() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/corpus/libreoffice-help-tr.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.len() < 1 << 20, "{} bytes", text.len());
        let records: Vec<CorpusRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(records.len() >= 200, "{}", records.len());
        let prefix = corpus_doc_prefix(crate::shared::lang::TURKISH.corpus_url);
        let mut ids = HashSet::new();
        let mut turkish = 0;
        for r in &records {
            assert!(
                r.page.starts_with("swriter/guide/") || r.page.starts_with("shared/guide/"),
                "{}",
                r.page
            );
            assert!(
                r.url.starts_with(&format!(
                    "https://help.libreoffice.org/latest/tr/text/{}",
                    r.page
                )),
                "{}",
                r.url
            );
            for chrome in [
                "LibreOffice 7.4 Yardım",
                "Seçilen modülde ara",
                "Help content debug info",
                "This page is:",
                "İlgili Konular",
            ] {
                assert!(!r.text.contains(chrome), "{}: {chrome}", r.id);
            }
            if r.text.chars().any(|c| "çğıöşüÇĞİÖŞÜ".contains(c)) {
                turkish += 1;
            }
            let p = r.clone().into_passage_in(&prefix);
            assert_eq!(p.doc_id, format!("libreoffice-help-tr/{}", r.page));
            assert_eq!(doc_id_of(p.id()), p.doc_id);
            assert!(ids.insert(p.id().to_string()), "duplicate {}", p.id());
        }
        assert!(
            turkish * 10 >= records.len() * 9,
            "{turkish} of {} passages have Turkish letters",
            records.len()
        );
        assert!(records
            .iter()
            .any(|r| r.page == "swriter/guide/table_cellmerge.html"
                && r.heading == "Hücreleri Birleştirmek ve Bölmek"));
    }

    /// Every line of the bundled corpus reads as a passage of its page, with an id unique in the
    /// corpus, and is what `lightembed passages` gives for that page today (the first pages are
    /// re-cut from Debian's rust-doc when it is installed).
    #[test]
    fn bundled_corpus_lines_are_passages_of_their_pages() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/corpus/rust-book.jsonl"
        ))
        .unwrap();
        let records: Vec<CorpusRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(records.len() > 1000, "{}", records.len());
        let mut ids = HashSet::new();
        for r in &records {
            let p = r.clone().into_passage();
            assert_eq!(doc_id_of(p.id()), p.doc_id);
            assert_eq!(p.doc_id, format!("rust-book/{}", r.page));
            assert!(
                p.passage.url.starts_with("https://doc.rust-lang.org/book/"),
                "{}",
                p.passage.url
            );
            assert!(ids.insert(p.id().to_string()), "duplicate {}", p.id());
        }
        let r = records
            .iter()
            .find(|r| r.heading == "The Stack and the Heap")
            .unwrap()
            .clone();
        assert_eq!(
            r.clone().into_passage().id(),
            format!("rust-book/{}", r.id),
            "with an anchor, the app id is the CLI id under rust-book/"
        );

        let book = std::path::Path::new("/usr/share/doc/rust-doc/html/book");
        if !book.is_dir() {
            eprintln!("rust-doc not installed: corpus not re-cut");
            return;
        }
        let model = model();
        let sizer = Sizer::new(&model);
        let mut seen = HashSet::new();
        let pages: Vec<&str> = {
            let mut v: Vec<&str> = records.iter().map(|r| r.page.as_str()).collect();
            v.dedup();
            v
        };
        let mut at = 0;
        for page in pages.iter().take(12) {
            let html = std::fs::read(book.join(page)).unwrap();
            let (html, _) = lightembed_ingest::decode(&html, Format::Html);
            for c in page_passages(&html, Format::Html, page, &sizer, &mut seen) {
                let r = &records[at];
                at += 1;
                assert_eq!((&r.id, &r.heading, &r.text), (&c.id, &c.heading, &c.text));
                assert_eq!(
                    r.clone().into_passage().embed_text(),
                    c.embed_text,
                    "the app embeds the corpus as the CLI does"
                );
            }
        }
    }
}
