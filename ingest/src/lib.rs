//! `lightembed-ingest`: pages → passages: the one ingestion pipeline of `lightembed index` / `lightembed passages`
//! (CLI), the browser app's worker (dropped and pasted documents) and the app's bundled corpus
//! (written by `lightembed passages`, `scripts/make_corpus.sh`).
//!
//! Strings in, passages out, no I/O: the callers read files (or receive them from the page) and
//! pass the text with its [`Format`] and URL.
//!
//! * [`decode`]: file bytes → text (UTF-8, else the charset an HTML page declares, else
//!   windows-1252 with a warning); its detection half, [`charset_label`], needs no decoder (the
//!   browser app decodes with `TextDecoder`, so `encoding_rs` stays out of its wasm);
//! * [`sections`] ([`html_sections`], [`markdown_sections`], [`text_sections`]): text → the page
//!   title and its sections (heading, anchor that exists in the page, paragraph-like blocks). HTML
//!   is parsed with `scraper` (html5ever, so entities, `<`, scripts and tables behave as in a
//!   browser) and site chrome is skipped ([`CHROME_CLASSES`]); Markdown with `pulldown-cmark`;
//! * [`Sizer`]: each section → passages sized in the model's own word pieces, so heading +
//!   passage fit its `max_seq_len` window ([`split_passages_in_tokens`]);
//! * [`page_passages`]: all of it for one page: ids `URL[#anchor]:N` numbered per URL, titles
//!   `Heading — Page title` ([`section_title`], the one title rule; [`Passage::new`] applies it
//!   and keeps the page title and heading apart), the text to embed ([`embed_text`]: heading,
//!   newline, text), and
//!   passages already seen under the same heading (`seen`, e.g. a book's `print.html`) skipped;
//!   [`page_passages_with_warning`] also returns what the caller should warn about (a page nested
//!   deeper than [`MAX_DEPTH`]).
//!
//! ```
//! use lightembed_ingest::{page_passages, Format, Sizer};
//! # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/models/static_fp32_uncased.bin")).unwrap();
//! let model = lightembed::Model::from_bytes(&bytes)?;
//! let sizer = Sizer::new(&model);
//! let mut seen = std::collections::HashSet::new();
//! let html = "<title>Guide</title><h2 id=\"setup\">Setup</h2><p>Run the installer.</p>";
//! let ps = page_passages(html, Format::Html, "guide.html", &sizer, &mut seen);
//! assert_eq!(ps[0].id, "guide.html#setup:1");
//! assert_eq!(ps[0].title, "Setup — Guide");
//! assert_eq!(ps[0].url, "guide.html#setup");
//! assert_eq!(ps[0].embed_text, "Setup\nRun the installer.");
//! # Ok::<(), lightembed::LoadError>(())
//! ```

//!
//! Documents that are not text — PDF, Word (`.docx`), OpenDocument text (`.odt`), EPUB — come in
//! as bytes through [`document_passages`] (also the one entry for text formats: it decodes them):
//! [`pdf`] (one section per page, cut again at outline entries; each passage keeps its page
//! number, [`Passage::page`]), [`office`] (Word and OpenDocument: headings become sections),
//! [`epub`] (the spine's XHTML through the HTML path), all bounded ([`zipped`]: zip bombs, entry
//! counts, XML depth). A file that cannot be read gives a [`DocumentError`] whose message says
//! why (encrypted, no text layer, broken, too large); the callers skip it and go on.
//!
//! Modules, one concern each: [`charset`] (bytes → text), [`html`] (with its nesting limit,
//! `depth.rs`), [`markdown`], [`text`] (text → sections), [`ids`] (anchors, URLs, unique ids),
//! [`sizing`] (sections → passages in the model's word pieces). What BM25 indexes for a passage
//! (the weighting of titles and headings) is a ranking rule and lives on the keyword side,
//! `lightembed_index::keywords`.

pub mod charset;
mod depth;
pub mod epub;
pub mod html;
pub mod ids;
pub mod markdown;
pub mod office;
pub mod pdf;
pub mod sizing;
pub mod text;
pub mod zipped;

pub use charset::{
    charset_label, decode, is_utf8_or_utf16_label, looks_binary, utf16_bom, Charset,
    FALLBACK_WARNING,
};
pub use depth::{DEPTH_WARNING, MAX_DEPTH};
pub use epub::epub_sections;
pub use html::{
    html_sections, html_sections_in, html_sections_with_warning, RootSelector, ADMONITION_CLASSES,
    CHROME_CLASSES,
};
pub use ids::{slug, url_encode, url_path_encode, Uniquer};
/// The page of a PDF a passage's URL points at (`file.pdf#page=12` → 12): how a result shows
/// "p. N" where only its URL was kept (an index's hits). From `lightembed-title`, shared with the
/// search side.
pub use lightembed_title::pdf_page;
/// The display title of a passage from its page title and heading: `Heading — Page title`, or
/// the page title alone when the heading is empty or starts the page title. Ingestion's one title
/// rule ([`Passage::title`]); it lives in the dependency-free `lightembed-title` crate so that the
/// search side (`lightembed_index::fragments`, which must not depend on this crate) titles a site
/// bundle's hits by the same rule.
pub use lightembed_title::section_title;
pub use markdown::markdown_sections;
pub use office::{docx_sections, odt_sections};
pub use pdf::{pdf_sections, pdf_sections_skipping};
pub use sizing::{split_passages_in_tokens, Sizer, PASSAGE_TOKENS};
pub use text::text_sections;

use std::collections::{HashMap, HashSet};

/// How a document is read. With the `serde` feature it (de)serialises as its variant's name
/// (`"Text"`, `"Markdown"`, `"Html"`, `"Pdf"`, `"Docx"`, `"Odt"`, `"Epub"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Format {
    /// Plain text: paragraphs separated by blank lines, no headings.
    Text,
    /// Markdown (CommonMark + tables + `{#id}` heading attributes).
    Markdown,
    /// HTML.
    Html,
    /// PDF: one section per page (cut again at outline entries), passages with page numbers.
    Pdf,
    /// Word (Office Open XML, `.docx`): headings become sections.
    Docx,
    /// OpenDocument text (`.odt`): headings become sections.
    Odt,
    /// EPUB: each chapter (XHTML) as HTML.
    Epub,
}

impl Format {
    /// The format of a file from its name: `.md`/`.markdown` → Markdown, `.html`/`.htm` → HTML,
    /// `.pdf`, `.docx`, `.odt`, `.epub` (any case), anything else → plain text.
    pub fn from_name(name: &str) -> Format {
        let lower = name.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
        match ext {
            "md" | "markdown" => Format::Markdown,
            "html" | "htm" => Format::Html,
            "pdf" => Format::Pdf,
            "docx" => Format::Docx,
            "odt" => Format::Odt,
            "epub" => Format::Epub,
            _ => Format::Text,
        }
    }

    /// True for the formats read from bytes, not text (PDF, Word, OpenDocument, EPUB): they go
    /// through [`document_passages`], never through a text decoder.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            Format::Pdf | Format::Docx | Format::Odt | Format::Epub
        )
    }
}

/// Why a document gave no passages: its message says what was found and what to do; the callers
/// skip the file and go on (`warning: skipping PATH: MESSAGE` in the CLI).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// A PDF that needs a password to open.
    #[error("the PDF is encrypted with a password; save a copy without the password and add that")]
    Encrypted,
    /// A PDF whose pages hold no text at all (scanned pages, images only).
    #[error(
        "the PDF has no text layer (its {pages} page(s) are images, e.g. a scan); run OCR on it \
         first (e.g. ocrmypdf) and add the result"
    )]
    NoText {
        /// Pages in the file.
        pages: u32,
    },
    /// A file that does not parse as its format.
    #[error("not a readable {format} file: {reason}")]
    Broken {
        /// `"PDF"`, `"Word"`, `"OpenDocument"`, `"EPUB"`.
        format: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A file past a bound of [`zipped`] (a zip bomb, too many entries, XML nested too deep).
    #[error("{what} (limit: {limit}); not read")]
    TooLarge {
        /// What was found.
        what: String,
        /// The limit it passes.
        limit: String,
    },
}

impl DocumentError {
    /// A stable name of the kind of error (`encrypted`, `no-text`, `broken`, `too-large`).
    pub fn rule(&self) -> &'static str {
        match self {
            DocumentError::Encrypted => "encrypted",
            DocumentError::NoText { .. } => "no-text",
            DocumentError::Broken { .. } => "broken",
            DocumentError::TooLarge { .. } => "too-large",
        }
    }
}

/// One passage of a page: what is embedded, indexed and shown. Made by [`Passage::new`], so its
/// display title and embedded text follow from its page title, heading and text. With the `serde`
/// feature it (de)serialises as an object of its fields (the browser app stores it so).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Passage {
    /// `URL:N`, or `URL#anchor:N` for a section with an anchor; N = 1, 2, … per URL (sections
    /// without an anchor share the page's URL and its numbering). Unique within a page.
    pub id: String,
    /// What a result shows: [`section_title`] of `page_title` and `heading` (`Heading — Page
    /// title`, or the page title alone when the section has no heading or the page title starts
    /// with it). Never split back into its parts: `page_title` and `heading` keep them.
    pub title: String,
    /// The page title: `<title>` (else the first `<h1>`) of HTML, the first `# heading` of
    /// Markdown; the page URL when the page has none.
    pub page_title: String,
    /// The heading of the passage's section (empty before the first heading and for plain text).
    pub heading: String,
    /// The page URL plus `#anchor` when the section has one.
    pub url: String,
    /// The passage text (whitespace collapsed; paragraphs joined by a space).
    pub text: String,
    /// What is embedded: [`embed_text`] of `heading` and `text`.
    pub embed_text: String,
    /// The page of a PDF the passage is on (1-based, the page tree's order); `None` for other
    /// formats. Also in `url` as `#page=N`, what PDF viewers open.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub page: Option<u32>,
}

impl Passage {
    /// A passage of page `page_title`, under `heading` (empty: none), at `url`, with `text`: its
    /// title is [`section_title`] of the two, its embedded text [`embed_text`] of `heading` and
    /// `text`. How every passage is made, by [`page_passages`] and by callers that cut passages
    /// elsewhere (the browser app's bundled corpus, written by `lightembed passages`).
    pub fn new(
        id: impl Into<String>,
        page_title: impl Into<String>,
        heading: impl Into<String>,
        url: impl Into<String>,
        text: impl Into<String>,
    ) -> Passage {
        let (page_title, heading, text) = (page_title.into(), heading.into(), text.into());
        Passage {
            id: id.into(),
            title: section_title(&page_title, &heading),
            embed_text: embed_text(&heading, &text),
            page_title,
            heading,
            url: url.into(),
            text,
            page: None,
        }
    }

    /// This passage, on page `page` of its document (see [`Passage::page`]).
    pub fn on_page(mut self, page: Option<u32>) -> Passage {
        self.page = page;
        self
    }
}

/// The text a passage is embedded from: its section heading, a newline, the passage text (the
/// text alone when there is no heading). The CLI and the app embed exactly this.
pub fn embed_text(heading: &str, text: &str) -> String {
    if heading.is_empty() {
        text.to_string()
    } else {
        format!("{heading}\n{text}")
    }
}

/// The page title and sections of `content` read as `format`. The binary formats
/// ([`Format::is_binary`]) are read from `content`'s bytes as [`document_sections`] reads them;
/// one that cannot be read gives no sections.
pub fn sections(content: &str, format: Format) -> (Option<String>, Vec<Section>) {
    match format {
        Format::Html => html_sections(content),
        Format::Markdown => markdown_sections(content),
        Format::Text => text_sections(content),
        _ => document_sections(content.as_bytes(), format)
            .map(|(t, s, _)| (t, s))
            .unwrap_or_default(),
    }
}

/// The title and sections of a document of a binary format ([`Format::is_binary`]) from its
/// bytes, with a warning of the HTML path (an EPUB chapter nested too deep). A text format is
/// decoded ([`decode`]) and read by [`sections`] (its charset note is the warning).
///
/// # Errors
/// [`DocumentError`]: the file cannot be read (see its variants).
pub fn document_sections(
    bytes: &[u8],
    format: Format,
) -> Result<(Option<String>, Vec<Section>, Option<String>), DocumentError> {
    match format {
        Format::Pdf => pdf_sections(bytes).map(|(t, s)| (t, s, None)),
        Format::Docx => docx_sections(bytes).map(|(t, s)| (t, s, None)),
        Format::Odt => odt_sections(bytes).map(|(t, s)| (t, s, None)),
        Format::Epub => epub_sections(bytes),
        Format::Text | Format::Markdown | Format::Html => {
            let (text, note) = decode(bytes, format);
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let (title, sections) = sections(text, format);
            Ok((title, sections, note))
        }
    }
}

/// The passages of one document from its bytes, in any [`Format`]: the binary formats through
/// [`document_sections`], the text formats decoded ([`decode`]) and cut as [`page_passages_in`]
/// cuts them (`root` applies to HTML). `url`, `seen` and ids as for [`page_passages`]; PDF
/// passages carry their page ([`Passage::page`]) and link to it (`URL#page=N`). Returns the
/// passages and a warning for the caller to print (a guessed charset, markup nested too deep).
///
/// # Errors
/// [`DocumentError`] for a document that cannot be read (encrypted, no text layer, broken, too
/// large): the caller reports it and goes on with the next file.
pub fn document_passages(
    bytes: &[u8],
    format: Format,
    url: &str,
    sizer: &Sizer,
    seen: &mut HashSet<String>,
    root: Option<&RootSelector>,
) -> Result<(Vec<Passage>, Option<String>), DocumentError> {
    if !format.is_binary() {
        let (content, charset_note) = decode(bytes, format);
        let (passages, depth_note) =
            page_passages_with_warning(&content, format, url, sizer, seen, root);
        let warning = match (charset_note, depth_note) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        return Ok((passages, warning));
    }
    let (title, sections, warning) = document_sections(bytes, format)?;
    let title = title.unwrap_or_else(|| url.to_string());
    Ok((
        section_passages(&title, sections, url, sizer, seen),
        warning,
    ))
}

/// The passages of one page. `url` is the page's URL (ids and URLs are built from it; it is also
/// the title of a page that has none). A leading byte-order mark is ignored.
///
/// Repeated passages are skipped through `seen`: pass one set for a whole site so that a page's
/// copy under another URL (an all-in-one `print.html` repeating every chapter under the same
/// headings) is indexed once, or a fresh set for a single document. A passage is keyed on its
/// heading and text ([`embed_text`]), so the same text under another heading (a "Linux" and a
/// "macOS" section sharing their steps) is kept: another place, another result. Each passage
/// returned adds its key and its bare text to `seen`; a passage without a heading is keyed on its
/// text alone, so it is skipped when that text was seen under any heading (it adds no place).
pub fn page_passages(
    content: &str,
    format: Format,
    url: &str,
    sizer: &Sizer,
    seen: &mut HashSet<String>,
) -> Vec<Passage> {
    page_passages_in(content, format, url, sizer, seen, None)
}

/// [`page_passages`] reading only the elements `root` matches in an HTML page (see
/// [`RootSelector`]); other formats ignore it.
pub fn page_passages_in(
    content: &str,
    format: Format,
    url: &str,
    sizer: &Sizer,
    seen: &mut HashSet<String>,
    root: Option<&RootSelector>,
) -> Vec<Passage> {
    page_passages_with_warning(content, format, url, sizer, seen, root).0
}

/// [`page_passages_in`], and a warning for the caller to print (`warning: PATH: TEXT`, as for
/// [`decode`]): [`DEPTH_WARNING`] for an HTML page nested deeper than [`MAX_DEPTH`] (see
/// [`html_sections_with_warning`]).
pub fn page_passages_with_warning(
    content: &str,
    format: Format,
    url: &str,
    sizer: &Sizer,
    seen: &mut HashSet<String>,
    root: Option<&RootSelector>,
) -> (Vec<Passage>, Option<String>) {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let (page_title, sections, warning) = match format {
        Format::Html => html_sections_with_warning(content, root),
        _ => {
            let (title, sections) = sections(content, format);
            (title, sections, None)
        }
    };
    let page_title = page_title.unwrap_or_else(|| url.to_string());
    (
        section_passages(&page_title, sections, url, sizer, seen),
        warning,
    )
}

/// The passages of a page's `sections` (title `page_title`, at `url`): what [`page_passages`]
/// and [`document_passages`] do once the page is cut into sections (ids, repeats through `seen`,
/// titles, the page number of a PDF's sections).
pub fn section_passages(
    page_title: &str,
    sections: Vec<Section>,
    url: &str,
    sizer: &Sizer,
    seen: &mut HashSet<String>,
) -> Vec<Passage> {
    let mut per_url: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for section in sections {
        let section_url = match &section.anchor {
            Some(a) => format!("{url}#{a}"),
            None => url.to_string(),
        };
        for text in sizer.passages(&section.heading, &section.blocks.join("\n\n")) {
            // Duplicates (see `page_passages`): keyed on heading and text, the embedded text
            // (passage text has no newline, so "heading\ntext" is never a bare text); every
            // passage also marks its bare text, the key of a passage without a heading.
            if !seen.insert(embed_text(&section.heading, &text)) {
                continue;
            }
            seen.insert(text.clone());
            // Passages are numbered per URL (sections without an anchor share the page's URL).
            let n = per_url.entry(section_url.clone()).or_insert(0usize);
            *n += 1;
            out.push(
                Passage::new(
                    format!("{section_url}:{n}"),
                    page_title,
                    section.heading.as_str(),
                    section_url.as_str(),
                    text,
                )
                .on_page(section.page),
            );
        }
    }
    out
}

/// A run of text under one heading. With the `serde` feature it (de)serialises as an object of
/// its fields (the browser app's PDF reader runs in a worker of its own and sends them back).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Section {
    /// The heading text (empty for text before the first heading, and for plain text).
    pub heading: String,
    /// The anchor of the heading in the page, percent-encoded (`None`: link to the page itself).
    pub anchor: Option<String>,
    /// Paragraph-like blocks, whitespace already collapsed.
    pub blocks: Vec<String>,
    /// The page of a PDF the section is on (1-based); `None` for other formats.
    pub page: Option<u32>,
}

/// Whitespace runs → one space, control characters dropped, trimmed.
pub fn collapse_ws(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
