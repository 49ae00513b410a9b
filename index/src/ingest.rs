//! Pages → passages: the one ingestion pipeline of `lightembed index` / `lightembed passages`
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
//!   passage fit its `max_seq_len` window ([`crate::passages::split_passages_in_tokens`]);
//! * [`page_passages`]: all of it for one page: ids `URL[#anchor]:N` numbered per URL, titles
//!   `Heading — Page title`, the text to embed ([`embed_text`]: heading, newline, text), and
//!   passages whose text was already seen (`seen`, e.g. a book's `print.html`) skipped.
//!
//! ```
//! use lightembed_index::ingest::{page_passages, Format, Sizer};
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

use std::collections::{HashMap, HashSet};

use crate::passages::split_passages_in_tokens;

/// How a page's text is read. With the `serde` feature it (de)serialises as `"Text"`,
/// `"Markdown"`, `"Html"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Format {
    /// Plain text: paragraphs separated by blank lines, no headings.
    Text,
    /// Markdown (CommonMark + tables + `{#id}` heading attributes).
    Markdown,
    /// HTML.
    Html,
}

impl Format {
    /// The format of a file from its name: `.md`/`.markdown` → Markdown, `.html`/`.htm` → HTML
    /// (any case), anything else → plain text.
    pub fn from_name(name: &str) -> Format {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".md") || lower.ends_with(".markdown") {
            Format::Markdown
        } else if lower.ends_with(".html") || lower.ends_with(".htm") {
            Format::Html
        } else {
            Format::Text
        }
    }
}

/// One passage of a page: what is embedded, indexed and shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// `URL:N`, or `URL#anchor:N` for a section with an anchor; N = 1, 2, … per URL (sections
    /// without an anchor share the page's URL and its numbering). Unique within a page.
    pub id: String,
    /// What a result shows: `Heading — Page title`, or the page title alone when the section has
    /// no heading or the page title starts with it.
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
}

impl Passage {
    /// What BM25 indexes: [`keyword_text`] of the passage.
    pub fn keyword_text(&self) -> String {
        keyword_text(&self.page_title, &self.heading, &self.text)
    }
}

/// How many times [`keyword_text`] repeats the page title and the section heading: BM25 over
/// the result weights title words ×3 and heading words ×2 against body words (a simple BM25F, as
/// site search engines weight titles and headings). Chosen on the Git manual set of
/// `bench/search/pagefind_vs.mjs` (MRR@10 0.682 at 1/1, 0.696 at 3/2, flat up to 5/2); figures in
/// `bench/RESULTS.md`.
pub const TITLE_WEIGHT: usize = 3;
/// See [`TITLE_WEIGHT`].
pub const HEADING_WEIGHT: usize = 2;

/// What BM25 indexes for a passage: the page title [`TITLE_WEIGHT`] times, the section heading
/// [`HEADING_WEIGHT`] times, then the text, one per line (the page title only when it differs
/// from the heading). The CLI and the app index exactly this; what is embedded is
/// [`embed_text`].
pub fn keyword_text(page_title: &str, heading: &str, text: &str) -> String {
    let mut out = String::with_capacity(
        TITLE_WEIGHT * (page_title.len() + 1) + HEADING_WEIGHT * (heading.len() + 1) + text.len(),
    );
    if !page_title.is_empty() && page_title != heading {
        for _ in 0..TITLE_WEIGHT {
            out.push_str(page_title);
            out.push('\n');
        }
    }
    if !heading.is_empty() {
        for _ in 0..HEADING_WEIGHT {
            out.push_str(heading);
            out.push('\n');
        }
    }
    out.push_str(text);
    out
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

/// A CSS selector naming the element(s) that hold a page's content (`main`, `article.doc`,
/// `[data-search-root]`), like Pagefind's `--root-selector`: when it matches, only the matched
/// elements are read (chrome inside them is still skipped); a page where it matches nothing is
/// read whole. The page title still comes from `<title>`.
#[derive(Debug, Clone)]
pub struct RootSelector(scraper::Selector);

impl RootSelector {
    /// Parses a CSS selector. Errors: a human-readable reason (`invalid CSS selector "…": …`).
    pub fn parse(css: &str) -> Result<RootSelector, String> {
        scraper::Selector::parse(css)
            .map(RootSelector)
            .map_err(|e| {
                let why = match e {
                    // scraper's text for these is "Unexpected error occurred. Please report this to
                    // the developer" and a debug dump; the kind's name says what is wrong.
                    scraper::error::SelectorErrorKind::UnexpectedSelectorParseError(k) => {
                        words_of(&format!("{k:?}"))
                    }
                    kind => kind.to_string(),
                };
                format!("invalid CSS selector {css:?}: {why}")
            })
    }
}

/// `EmptySelector(…)` → `empty selector`: a Rust variant name as words.
fn words_of(debug: &str) -> String {
    let name = debug.split(['(', ' ', '{']).next().unwrap_or(debug);
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() && !out.is_empty() {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The page title and sections of `content` read as `format`.
pub fn sections(content: &str, format: Format) -> (Option<String>, Vec<Section>) {
    match format {
        Format::Html => html_sections(content),
        Format::Markdown => markdown_sections(content),
        Format::Text => text_sections(content),
    }
}

/// The passages of one page. `url` is the page's URL (ids and URLs are built from it; it is also
/// the title of a page that has none). A leading byte-order mark is ignored. Passages whose text
/// is in `seen` are skipped, and the text of every passage returned is added to it: pass one set
/// for a whole site so that repeated text (an all-in-one `print.html`) is indexed once, or a
/// fresh set for a single document.
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
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let (page_title, sections) = match (format, root) {
        (Format::Html, Some(root)) => html_sections_in(content, Some(root)),
        _ => sections(content, format),
    };
    let page_title = page_title.unwrap_or_else(|| url.to_string());
    let mut per_url: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for section in sections {
        let section_url = match &section.anchor {
            Some(a) => format!("{url}#{a}"),
            None => url.to_string(),
        };
        // "Heading — Page title", unless the page title already starts with the heading.
        let title = if section.heading.is_empty() || page_title.starts_with(&section.heading) {
            page_title.clone()
        } else {
            format!("{} — {page_title}", section.heading)
        };
        for text in sizer.passages(&section.heading, &section.blocks.join("\n\n")) {
            if !seen.insert(text.clone()) {
                continue;
            }
            // Passages are numbered per URL (sections without an anchor share the page's URL).
            let n = per_url.entry(section_url.clone()).or_insert(0usize);
            *n += 1;
            out.push(Passage {
                id: format!("{section_url}:{n}"),
                title: title.clone(),
                page_title: page_title.clone(),
                heading: section.heading.clone(),
                url: section_url.clone(),
                embed_text: embed_text(&section.heading, &text),
                text,
            });
        }
    }
    out
}

/// The warning [`decode`] gives (callers prefix the file name) when it had to guess
/// windows-1252 ([`Charset::Fallback`]).
pub const FALLBACK_WARNING: &str = "not UTF-8; decoded as windows-1252";

/// How a file's bytes are to be read, as [`charset_label`] detects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Charset {
    /// Valid UTF-8 (after a UTF-8 byte-order mark, which the decoder drops).
    Utf8,
    /// An HTML page that is not UTF-8 and declares this charset label (as written in its
    /// `<meta>`, ASCII lower case, e.g. `windows-1252`, `iso-8859-1`, `koi8-r`): decode with the
    /// encoding of that WHATWG label.
    Declared(String),
    /// Neither: decode as windows-1252 (every byte is a character, so nothing is lost), with the
    /// warning [`FALLBACK_WARNING`].
    Fallback,
}

/// Which charset a file's bytes are in: the detection half of [`decode`], without a decoder, so
/// a caller that has one (the browser app: `TextDecoder`) decodes without linking `encoding_rs`.
///
/// * A leading UTF-8 byte-order mark is skipped (the caller drops it before decoding); valid
///   UTF-8 → [`Charset::Utf8`].
/// * [`Format::Html`] only: the first `<meta>` in the first 1024 bytes whose `charset=` label
///   `is_known` accepts (`<meta charset="…">` or
///   `<meta http-equiv="Content-Type" content="text/html; charset=…">`; unknown labels are
///   skipped, as browsers do) → [`Charset::Declared`] with that label — unless it is a UTF-8 or
///   UTF-16 label ([`is_utf8_or_utf16_label`]): the bytes are not UTF-8, so that declaration is
///   ignored → [`Charset::Fallback`].
/// * Anything else → [`Charset::Fallback`].
///
/// `is_known(label)` says whether the caller's decoder has an encoding for the label (WHATWG
/// labels: `encoding_rs::Encoding::for_label(label).is_some()` in [`decode`],
/// `TextDecoder::new_with_label(label).is_ok()` in the browser).
///
/// ```
/// use lightembed_index::ingest::{charset_label, Charset, Format};
/// let known = |l: &str| ["windows-1252", "koi8-r"].contains(&l);
/// assert_eq!(charset_label(b"caf\xe9", Format::Text, known), Charset::Fallback);
/// assert_eq!(charset_label("café".as_bytes(), Format::Text, known), Charset::Utf8);
/// assert_eq!(
///     charset_label(b"<meta charset=\"Windows-1252\"><p>caf\xe9", Format::Html, known),
///     Charset::Declared("windows-1252".into())
/// );
/// ```
pub fn charset_label(bytes: &[u8], format: Format, is_known: impl Fn(&str) -> bool) -> Charset {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if std::str::from_utf8(bytes).is_ok() {
        return Charset::Utf8;
    }
    if format == Format::Html {
        if let Some(label) = declared_label(bytes, is_known) {
            if !is_utf8_or_utf16_label(&label) {
                return Charset::Declared(label);
            }
        }
    }
    Charset::Fallback
}

/// Whether a (lower-case, trimmed) WHATWG encoding label names UTF-8, UTF-16LE or UTF-16BE
/// (the Encoding Standard's complete label lists for those three encodings).
pub fn is_utf8_or_utf16_label(label: &str) -> bool {
    matches!(
        label,
        // UTF-8
        "unicode-1-1-utf-8"
            | "unicode11utf8"
            | "unicode20utf8"
            | "utf-8"
            | "utf8"
            | "x-unicode20utf8"
            // UTF-16BE
            | "unicodefffe"
            | "utf-16be"
            // UTF-16LE
            | "csunicode"
            | "iso-10646-ucs-2"
            | "ucs-2"
            | "unicode"
            | "unicodefeff"
            | "utf-16"
            | "utf-16le"
    )
}

/// File bytes → text, and a warning when the charset had to be guessed.
///
/// * A UTF-8 byte-order mark is dropped; valid UTF-8 is taken as it is.
/// * A UTF-16 byte-order mark (`FF FE` little-endian, `FE FF` big-endian) decides, as in browsers:
///   the rest is decoded as UTF-16 (what Windows tools write as "Unicode").
/// * HTML that declares its charset in the first 1024 bytes (`<meta charset="…">` or
///   `<meta http-equiv="Content-Type" content="text/html; charset=…">`) is decoded with that
///   encoding (WHATWG labels: `iso-8859-1`, `latin1` and `us-ascii` mean windows-1252, as in
///   browsers). A declaration of UTF-8 or UTF-16 on bytes that are not UTF-8 is ignored.
/// * Anything else is decoded as windows-1252 (every byte is a character, so nothing is lost),
///   with the warning `not UTF-8; decoded as windows-1252` ([`FALLBACK_WARNING`]; callers prefix
///   the file name).
///
/// A declared encoding that cannot decode some bytes replaces them with U+FFFD and warns
/// `not valid <encoding>; undecodable bytes replaced`.
///
/// The detection is [`charset_label`]; this adds the decoders (`encoding_rs`).
pub fn decode(bytes: &[u8], format: Format) -> (String, Option<String>) {
    if let Some(enc) = utf16_bom(bytes).and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
    {
        let (text, had_errors) = enc.decode_without_bom_handling(&bytes[2..]);
        let warning =
            had_errors.then(|| format!("not valid {}; undecodable bytes replaced", enc.name()));
        return (text.into_owned(), warning);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let for_label = |label: &str| encoding_rs::Encoding::for_label(label.as_bytes());
    let declared = match charset_label(bytes, format, |label| for_label(label).is_some()) {
        // Already validated: nothing is replaced.
        Charset::Utf8 => return (String::from_utf8_lossy(bytes).into_owned(), None),
        Charset::Declared(label) => for_label(&label),
        Charset::Fallback => None,
    };
    if let Some(enc) = declared {
        let (text, had_errors) = enc.decode_without_bom_handling(bytes);
        let warning =
            had_errors.then(|| format!("not valid {}; undecodable bytes replaced", enc.name()));
        return (text.into_owned(), warning);
    }
    let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes);
    (text.into_owned(), Some(FALLBACK_WARNING.to_string()))
}

/// The WHATWG label (`utf-16le`, `utf-16be`) of the UTF-16 encoding a 2-byte byte-order mark at
/// the start of `bytes` names (`FF FE`, `FE FF`), for `decode` here and the app's `TextDecoder`.
pub fn utf16_bom(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, ..] => Some("utf-16le"),
        [0xFE, 0xFF, ..] => Some("utf-16be"),
        _ => None,
    }
}

/// Whether `bytes` look binary: a NUL byte in the first 8 KiB, unless a UTF-16 byte-order mark
/// says the NULs are the high bytes of UTF-16 text ([`decode`] reads that). The CLI skips such
/// files; the app refuses such a dropped file.
pub fn looks_binary(bytes: &[u8]) -> bool {
    utf16_bom(bytes).is_none() && bytes[..bytes.len().min(8192)].contains(&0)
}

/// The first charset label that `is_known` accepts in a `<meta>` tag within the first 1024 bytes
/// of an HTML page (ASCII lower case).
fn declared_label(bytes: &[u8], is_known: impl Fn(&str) -> bool) -> Option<String> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], b"<meta") {
        let start = from + i + 5;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        // `charset=…` covers both `<meta charset=…>` and `content="text/html; charset=…"`.
        if let Some(c) = find(tag, b"charset") {
            let mut rest = &tag[c + 7..];
            rest = trim_ascii_start(rest);
            if let Some(r) = rest.strip_prefix(b"=") {
                let r = trim_ascii_start(r);
                let r = r
                    .strip_prefix(b"\"")
                    .or_else(|| r.strip_prefix(b"'"))
                    .unwrap_or(r);
                let label_end = r
                    .iter()
                    .position(|&b| {
                        matches!(b, b'"' | b'\'' | b';' | b'/' | b'>') || b.is_ascii_whitespace()
                    })
                    .unwrap_or(r.len());
                // Labels are ASCII; other bytes never name an encoding.
                if let Ok(label) = std::str::from_utf8(&r[..label_end]) {
                    if label.is_ascii() && !label.is_empty() && is_known(label) {
                        return Some(label.to_string());
                    }
                }
            }
        }
        from = end.min(lower.len());
        if from >= lower.len() {
            break;
        }
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_ascii_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// Percent-encodes the characters that would break a URL path segment (`#`, `?`, `%`, spaces,
/// quotes, angle brackets, backslashes, control characters).
pub fn url_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for c in segment.chars() {
        if matches!(c, '#' | '?' | '%' | ' ' | '"' | '<' | '>' | '\\') || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Percent-encodes a file or folder name for a page URL's path: [`url_encode`], and `:` too, so a
/// URL made of names stays a relative path — `javascript:x.html` or `Help:Contents.html` would
/// otherwise read as a scheme (`javascript:`, `help:`) where a browser resolves it. Static servers
/// decode `%3A` back to the file's name.
///
/// ```
/// use lightembed_index::ingest::url_path_encode;
/// assert_eq!(url_path_encode("javascript:alert(1).html"), "javascript%3Aalert(1).html");
/// assert_eq!(url_path_encode("a b#c.html"), "a%20b%23c.html");
/// ```
pub fn url_path_encode(name: &str) -> String {
    url_encode(name).replace(':', "%3A")
}

/// The passage size of the pipeline, in the model's word pieces including `[CLS]` and `[SEP]`:
/// a passage and its heading take at most this many, or the model's window (`max_seq_len`) when
/// that is smaller. 128: the size both shipped models were trained and measured at (a passage is
/// the unit a result points to; longer ones make coarser results and excerpts). A model whose
/// window is larger (the static model has no position table, so its window costs nothing) never
/// truncates a passage.
pub const PASSAGE_TOKENS: usize = 128;

/// Sizes passages in the model's own word pieces: each passage plus its heading fits
/// `min(PASSAGE_TOKENS, max_seq_len)` (including `[CLS]` and `[SEP]`), so no passage text is
/// invisible to the vector side.
pub struct Sizer<'m> {
    tokenizer: &'m lightembed::tokenizer::Tokenizer,
    /// Word pieces a passage and its heading may use: `min(PASSAGE_TOKENS, max_seq_len) − 2`.
    window: usize,
}

impl<'m> Sizer<'m> {
    /// The sizer for `model`'s tokenizer, passages of [`PASSAGE_TOKENS`] (or the model's window
    /// when smaller).
    pub fn new(model: &'m lightembed::Model) -> Sizer<'m> {
        Sizer::with_tokens(model, PASSAGE_TOKENS)
    }

    /// The sizer for passages of `tokens` word pieces (including `[CLS]` and `[SEP]`), capped at
    /// the model's window.
    pub fn with_tokens(model: &'m lightembed::Model, tokens: usize) -> Sizer<'m> {
        Sizer {
            tokenizer: model.tokenizer(),
            window: tokens
                .min(model.header().max_seq_len as usize)
                .saturating_sub(2)
                .max(1),
        }
    }

    /// Passages of `text` under `heading`: the heading's pieces come off the budget, but a
    /// heading never leaves less than half the window to the text.
    pub fn passages(&self, heading: &str, text: &str) -> Vec<String> {
        let count = |t: &str| self.tokenizer.count_pieces(t);
        let budget = self
            .window
            .saturating_sub(count(heading))
            .max(self.window / 2);
        split_passages_in_tokens(text, budget, &count)
    }
}

/// A run of text under one heading.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading text (empty for text before the first heading, and for plain text).
    pub heading: String,
    /// The anchor of the heading in the page, percent-encoded (`None`: link to the page itself).
    pub anchor: Option<String>,
    /// Paragraph-like blocks, whitespace already collapsed.
    pub blocks: Vec<String>,
}

/// Whitespace runs → one space, control characters dropped, trimmed.
pub fn collapse_ws(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Plain text: one section, paragraphs separated by blank lines (`\n` or `\r\n` line ends).
pub fn text_sections(content: &str) -> (Option<String>, Vec<Section>) {
    let blocks = content
        .replace("\r\n", "\n")
        .split("\n\n")
        .map(collapse_ws)
        .filter(|b| !b.is_empty())
        .collect();
    (
        None,
        vec![Section {
            blocks,
            ..Section::default()
        }],
    )
}

/// Names unique within a set: `base` the first time, then `base{sep}{first}`,
/// `base{sep}{first + 1}`, … (a suffixed name that is itself taken is skipped). Heading anchors
/// use `-` from 1, GitHub style (`intro`, `intro-1`); `lightembed index` makes passage ids unique
/// across inputs with `~` from 2 (`page.html#intro~2`).
///
/// ```
/// use lightembed_index::ingest::Uniquer;
/// let mut a = Uniquer::new('-', 1);
/// assert_eq!([a.unique("intro"), a.unique("intro"), a.unique("intro-1")], ["intro", "intro-1", "intro-1-1"]);
/// ```
#[derive(Debug, Clone)]
pub struct Uniquer {
    sep: char,
    first: usize,
    used: HashSet<String>,
    next: std::collections::HashMap<String, usize>,
}

impl Uniquer {
    /// An empty set whose suffixes are `{sep}{first}`, `{sep}{first + 1}`, …
    pub fn new(sep: char, first: usize) -> Uniquer {
        Uniquer {
            sep,
            first,
            used: HashSet::new(),
            next: std::collections::HashMap::new(),
        }
    }

    /// Claims exactly `name`; `false` if it is taken.
    pub fn claim(&mut self, name: &str) -> bool {
        self.used.insert(name.to_string())
    }

    /// Claims `base`, or the first free suffixed form, and returns it.
    pub fn unique(&mut self, base: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        let n = self.next.entry(base.to_string()).or_insert(self.first);
        loop {
            let a = format!("{base}{}{n}", self.sep);
            *n += 1;
            if self.used.insert(a.clone()) {
                return a;
            }
        }
    }
}

/// GitHub-style heading anchor: lower case, alphanumerics kept, spaces and `-` → `-`, other
/// punctuation dropped.
pub fn slug(heading: &str) -> String {
    let mut s = String::new();
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '_' {
            s.extend(c.to_lowercase());
        } else if c == ' ' || c == '-' {
            s.push('-');
        }
    }
    s
}

/// Markdown: a new section at every heading (anchor = `{#id}` attribute, percent-encoded, or the
/// heading's slug); paragraphs, list items, block quotes and fenced code are blocks. The first
/// level-1 heading is the page title.
pub fn markdown_sections(md: &str) -> (Option<String>, Vec<Section>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut title = None;
    let mut sections = vec![Section::default()];
    let mut heading: Option<(pulldown_cmark::HeadingLevel, Option<String>, String)> = None;
    let mut block = String::new();
    let mut anchors = Uniquer::new('-', 1);
    let flush = |block: &mut String, sections: &mut Vec<Section>| {
        let b = collapse_ws(block);
        if !b.is_empty() {
            sections.last_mut().expect("one section").blocks.push(b);
        }
        block.clear();
    };
    for event in Parser::new_ext(
        md,
        Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_TABLES,
    ) {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                flush(&mut block, &mut sections);
                heading = Some((level, id.map(|s| s.to_string()), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, id, text)) = heading.take() {
                    let text = collapse_ws(&text);
                    if level == pulldown_cmark::HeadingLevel::H1
                        && title.is_none()
                        && !text.is_empty()
                    {
                        title = Some(text.clone());
                    }
                    // `{#id}` is used as written in the page; percent-encoded like HTML ids.
                    let base = id.map_or_else(|| slug(&text), |id| url_encode(&id));
                    let anchor = (!base.is_empty()).then(|| anchors.unique(&base));
                    sections.push(Section {
                        heading: text,
                        anchor,
                        blocks: Vec::new(),
                    });
                }
            }
            Event::Text(t) | Event::Code(t) => match heading.as_mut() {
                Some((_, _, h)) => h.push_str(&t),
                None => block.push_str(&t),
            },
            Event::SoftBreak | Event::HardBreak => match heading.as_mut() {
                Some((_, _, h)) => h.push(' '),
                None => block.push(' '),
            },
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableCell
                | TagEnd::BlockQuote(_),
            ) => {
                if matches!(event, Event::End(TagEnd::TableCell)) {
                    block.push(' ');
                } else {
                    flush(&mut block, &mut sections);
                }
            }
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => flush(&mut block, &mut sections),
            _ => {}
        }
    }
    flush(&mut block, &mut sections);
    sections.retain(|s| !s.blocks.is_empty());
    (title, sections)
}

/// Classes of navigation chrome in the documentation generators our users run: Sphinx
/// (`sphinxsidebar`, `related` bars, `headerlink` ¶ marks, `footer`, the link lists of tables of
/// contents `toctree-wrapper` and of the generated general and module indexes `indextable`,
/// `genindex-jumpbox`, `modindex-jumpbox`), mdBook (`menu-bar`,
/// `sidebar`, `nav-chapters`, `nav-wrapper`), rustdoc (`sidebar`, `search-form`, `out-of-band`).
pub const CHROME_CLASSES: [&str; 16] = [
    "sphinxsidebar",
    "related",
    "headerlink",
    "footer",
    "toctree-wrapper",
    "indextable",
    "genindex-jumpbox",
    "modindex-jumpbox",
    "menu-bar",
    "sidebar",
    "nav-chapters",
    "nav-wrapper",
    "mobile-nav-chapters",
    "search-form",
    "out-of-band",
    "skip-link",
];

/// A Sphinx API entry: a `<dt>` with an `id` and the `sig` class (`<dt class="sig sig-object py"
/// id="json.dumps">`), the signature of a documented function, class or attribute.
fn is_api_entry(n: ego_tree::NodeRef<scraper::Node>) -> bool {
    match n.value() {
        scraper::Node::Element(e) => {
            e.name() == "dt"
                && e.id().is_some_and(|i| !i.is_empty())
                && e.classes().any(|c| c == "sig")
        }
        _ => false,
    }
}

/// True for an element that is site chrome rather than page content (see [`html_sections`]).
fn is_chrome(el: &scraper::node::Element) -> bool {
    const SKIP: [&str; 12] = [
        "script", "style", "nav", "header", "footer", "noscript", "svg", "template", "form",
        "button", "aside", "head",
    ];
    if SKIP.contains(&el.name()) {
        return true;
    }
    if let Some(role) = el.attr("role") {
        if matches!(
            role.trim().to_ascii_lowercase().as_str(),
            "navigation" | "search" | "banner" | "contentinfo" | "complementary"
        ) {
            return true;
        }
    }
    if el.attr("hidden").is_some() || el.attr("aria-hidden") == Some("true") {
        return true;
    }
    el.classes().any(|c| CHROME_CLASSES.contains(&c))
}

/// HTML: the `<title>` (else the first `<h1>`) is the page title; each `h1`–`h6` starts a section
/// (anchors: see below); text in `p`, `li`, `pre`, `dd`, `dt`, `td`, `th`, `blockquote`,
/// `figcaption` and `caption` becomes blocks (`<br>` and nested blocks separate words; each
/// table cell is a block). html5ever parses it as a browser would: entities decoded, script and
/// style content is raw text. Site chrome is skipped: `script`, `style`, `nav`, `header`, `footer`, `noscript`, `svg`, `template`,
/// `form`, `button`, `aside`, `head`, ARIA landmarks that are not content (`role="navigation"`,
/// `search`, `banner`, `contentinfo`, `complementary`), hidden elements, and the navigation
/// chrome of Sphinx, mdBook and rustdoc by class ([`CHROME_CLASSES`]). Anchors link only to ids that exist in the
/// page (the heading's own id, an id inside it, or the nearest enclosing element's id such as
/// Sphinx's `<section id>`), percent-encoded; otherwise the section links to the page itself.
/// A Sphinx API entry (`<dt class="sig …" id="json.dumps">`) starts a section of its own, headed
/// by its signature and linked to its id; after its `<dl>` the enclosing section resumes.
/// Linear in the page size, whatever the nesting depth.
pub fn html_sections(html: &str) -> (Option<String>, Vec<Section>) {
    html_sections_in(html, None)
}

/// [`html_sections`] of only the elements `root` matches (outermost matches, in document order);
/// the whole page when it matches nothing or is `None`.
pub fn html_sections_in(html: &str, root: Option<&RootSelector>) -> (Option<String>, Vec<Section>) {
    use ego_tree::NodeId;
    use scraper::{Html, Node};
    const BLOCK: [&str; 10] = [
        "p",
        "li",
        "pre",
        "dd",
        "dt",
        "td",
        "th",
        "blockquote",
        "figcaption",
        "caption",
    ];
    const HEADINGS: [&str; 6] = ["h1", "h2", "h3", "h4", "h5", "h6"];
    // Elements whose text gets a space around it so words do not run together.
    const BREAKS: [&str; 16] = [
        "br",
        "p",
        "div",
        "li",
        "td",
        "th",
        "tr",
        "dd",
        "dt",
        "pre",
        "blockquote",
        "section",
        "article",
        "h1",
        "h2",
        "h3",
    ];
    let doc = Html::parse_document(html);
    fn name_of<'a>(n: ego_tree::NodeRef<'a, Node>) -> Option<&'a str> {
        match n.value() {
            Node::Element(e) => Some(e.name()),
            _ => None,
        }
    }

    // Post-order pass: which nodes contain a block or heading element below them.
    let mut contains_block: HashSet<NodeId> = HashSet::new();
    let mut stack = vec![(doc.tree.root(), false)];
    while let Some((node, children_done)) = stack.pop() {
        if !children_done {
            stack.push((node, true));
            stack.extend(node.children().map(|c| (c, false)));
            continue;
        }
        let below = node.children().any(|c| {
            contains_block.contains(&c.id())
                || name_of(c).is_some_and(|n| BLOCK.contains(&n) || HEADINGS.contains(&n))
        });
        if below {
            contains_block.insert(node.id());
        }
    }

    // Text of a subtree, iteratively, with spaces at <br> and block boundaries.
    let text_of = |root: ego_tree::NodeRef<Node>| -> String {
        let mut out = String::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            match n.value() {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) => {
                    if is_chrome(e) {
                        continue;
                    }
                    if BREAKS.contains(&e.name()) {
                        out.push(' ');
                    }
                    stack.extend(n.children().rev());
                }
                _ => stack.extend(n.children().rev()),
            }
        }
        collapse_ws(&out)
    };

    let mut title = None;
    let mut first_h1 = None;
    let mut sections = vec![Section::default()];
    // (node, end): `end` marks the close of a Sphinx API list (`dl` of `dt.sig` entries), after
    // which the enclosing section resumes.
    let mut stack = vec![(doc.tree.root(), false)];
    let mut resume: HashMap<NodeId, (String, Option<String>)> = HashMap::new();
    if let Some(RootSelector(sel)) = root {
        let matched: Vec<ego_tree::NodeRef<Node>> = doc.select(sel).map(|e| *e).collect();
        let ids: HashSet<NodeId> = matched.iter().map(|n| n.id()).collect();
        let outermost: Vec<_> = matched
            .into_iter()
            .filter(|n| !n.ancestors().any(|a| ids.contains(&a.id())))
            .collect();
        if !outermost.is_empty() {
            // The title is outside the content: take it from <title> first.
            let title_sel = scraper::Selector::parse("title").expect("valid selector");
            if let Some(t) = doc.select(&title_sel).next() {
                let t = text_of(*t);
                title = (!t.is_empty()).then_some(t);
            }
            stack = outermost.into_iter().rev().map(|n| (n, false)).collect();
        }
    }
    while let Some((node, end)) = stack.pop() {
        if end {
            if let Some((heading, anchor)) = resume.remove(&node.id()) {
                sections.push(Section {
                    heading,
                    anchor,
                    blocks: Vec::new(),
                });
            }
            continue;
        }
        let el = match node.value() {
            Node::Element(el) => el,
            Node::Text(t) => {
                // Loose text directly inside a container (not in a block element).
                let t = collapse_ws(t);
                if !t.is_empty() {
                    sections.last_mut().expect("one section").blocks.push(t);
                }
                continue;
            }
            Node::Document | Node::Fragment => {
                stack.extend(node.children().rev().map(|c| (c, false)));
                continue;
            }
            _ => continue,
        };
        let name = el.name();
        if name == "title" && title.is_none() {
            let t = text_of(node);
            title = (!t.is_empty()).then_some(t);
            continue;
        }
        if is_chrome(el) {
            if name == "head" {
                // Only the title matters in <head>.
                stack.extend(node.children().rev().map(|c| (c, false)));
            }
            continue;
        }
        // Sphinx API entries (`<dt class="sig …" id="json.dumps">signature</dt><dd>…</dd>`): each
        // is a section of its own, headed by its signature and linked to its id, as Sphinx lists
        // them in its own tables of contents; after the list the enclosing section resumes.
        if name == "dl" && node.children().any(|c| is_api_entry(c)) {
            let current = sections.last().expect("one section");
            resume.insert(node.id(), (current.heading.clone(), current.anchor.clone()));
            stack.push((node, true));
            stack.extend(node.children().rev().map(|c| (c, false)));
            continue;
        }
        if name == "dt" && is_api_entry(node) {
            let id = el.id().expect("is_api_entry checks the id");
            sections.push(Section {
                heading: text_of(node),
                anchor: Some(url_encode(id)),
                blocks: Vec::new(),
            });
            continue;
        }
        if HEADINGS.contains(&name) {
            let heading = text_of(node);
            if name == "h1" && first_h1.is_none() && !heading.is_empty() {
                first_h1 = Some(heading.clone());
            }
            // An id that exists in the page: the heading's, one inside it, or the nearest
            // enclosing element's (Sphinx wraps each section in <section id=…>).
            // `<a name="…">` is a fragment target too (DocBook, old AsciiDoc output).
            let id_of = |n: ego_tree::NodeRef<Node>| match n.value() {
                Node::Element(e) => e
                    .id()
                    .or_else(|| (e.name() == "a").then(|| e.attr("name")).flatten())
                    .filter(|i| !i.is_empty())
                    .map(str::to_string),
                _ => None,
            };
            let anchor = el
                .id()
                .filter(|i| !i.is_empty())
                .map(str::to_string)
                .or_else(|| node.descendants().skip(1).find_map(id_of))
                .or_else(|| node.ancestors().find_map(id_of))
                .map(|id| url_encode(&id));
            sections.push(Section {
                heading,
                anchor,
                blocks: Vec::new(),
            });
            continue;
        }
        if BLOCK.contains(&name) && !contains_block.contains(&node.id()) {
            let t = text_of(node);
            if !t.is_empty() {
                sections.last_mut().expect("one section").blocks.push(t);
            }
            continue;
        }
        stack.extend(node.children().rev().map(|c| (c, false)));
    }
    sections.retain(|s| !s.blocks.is_empty());
    (title.or(first_h1), sections)
}

#[cfg(test)]
mod tests {
    /// Issue 12 known failures: anchors only to ids that exist (`id="setup"` stays `#setup`, a
    /// Sphinx `<section id>` is used, no invented slugs), percent-encoded; Sphinx/mdBook chrome
    /// (`role="navigation"` sidebars, `related` bars, `headerlink` ¶) is not indexed.
    #[test]
    fn html_anchors_exist_in_the_page_and_chrome_is_skipped() {
        let html = r##"<html><head><title>Guide</title></head><body>
            <div class="related" role="navigation"><h3>Navigation</h3><ul><li>index</li><li>next</li></ul></div>
            <h2>Setup</h2><p>No id here.</p>
            <h2 id="setup">Setup again</h2><p>Has its own id.</p>
            <section id="my-sec"><h2>Inside a section<a class="headerlink" href="#my-sec">¶</a></h2><p>Sphinx style.</p></section>
            <h2 id="a b%c">Odd id</h2><p>Encoded.</p>
            <h2><a name="undoing-a-merge"></a>Undoing a merge</h2><p>DocBook target.</p>
            <div class="sphinxsidebar" role="navigation"><h3>Next topic</h3><p>Other page</p></div>
            <div class="menu-bar"><p>mdBook bar</p></div>
            </body></html>"##;
        let (title, sections) = html_sections(html);
        assert_eq!(title.as_deref(), Some("Guide"));
        let got: Vec<(String, Option<String>, String)> = sections
            .iter()
            .map(|s| (s.heading.clone(), s.anchor.clone(), s.blocks.join(" | ")))
            .collect();
        assert_eq!(
            got,
            [
                ("Setup".into(), None, "No id here.".into()),
                (
                    "Setup again".into(),
                    Some("setup".into()),
                    "Has its own id.".into()
                ),
                (
                    "Inside a section".into(),
                    Some("my-sec".into()),
                    "Sphinx style.".into()
                ),
                ("Odd id".into(), Some("a%20b%25c".into()), "Encoded.".into()),
                (
                    "Undoing a merge".into(),
                    Some("undoing-a-merge".into()),
                    "DocBook target.".into()
                ),
            ]
        );
    }

    /// `--root-selector`: only the matched element is read (its chrome still skipped), the title
    /// from `<title>`; a selector that matches nothing reads the whole page.
    #[test]
    fn root_selector_reads_only_the_content_element() {
        let html = r##"<html><head><title>Doc page</title></head><body>
            <div class="topbar"><p>Site menu text</p></div>
            <div id="content"><h1 id="intro">Intro</h1><p>Real content.</p>
              <nav><p>Inner nav</p></nav>
              <div id="content-inner"><p>Nested match is read once.</p></div></div>
            <div class="legal"><p>Legal footer text</p></div></body></html>"##;
        let root = RootSelector::parse("#content, #content-inner").unwrap();
        let (title, sections) = html_sections_in(html, Some(&root));
        assert_eq!(title.as_deref(), Some("Doc page"));
        let text: Vec<String> = sections.iter().flat_map(|s| s.blocks.clone()).collect();
        assert_eq!(text, ["Real content.", "Nested match is read once."]);
        assert_eq!(sections[0].anchor.as_deref(), Some("intro"));
        let nothing = RootSelector::parse("article.missing").unwrap();
        let (_, all) = html_sections_in(html, Some(&nothing));
        let all: Vec<String> = all.iter().flat_map(|s| s.blocks.clone()).collect();
        assert!(
            all.contains(&"Site menu text".to_string())
                && all.contains(&"Legal footer text".to_string())
        );
        assert!(RootSelector::parse("main[")
            .unwrap_err()
            .starts_with("invalid CSS selector \"main[\": "));
        assert_eq!(
            RootSelector::parse("###").unwrap_err(),
            "invalid CSS selector \"###\": empty selector"
        );
        assert_eq!(
            RootSelector::parse("main >").unwrap_err(),
            "invalid CSS selector \"main >\": dangling combinator"
        );
    }

    /// Issue 12 (passages fit the model): with the shipped static model (window 128), every
    /// passage and its heading fit in `max_seq_len − 2` word pieces — the key sentence at piece
    /// ~170 of a section is no longer cut off — and nothing is lost.
    #[test]
    fn passages_and_their_heading_fit_the_model_window() {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/models/lightembed-en-static.bin"
        ))
        .unwrap();
        let model = lightembed::Model::from_bytes(&bytes).unwrap();
        let sizer = Sizer::new(&model);
        let tok = model.tokenizer();
        let heading = "Reading a file line by line in a loop";
        let text: String = (0..60)
            .map(|i| format!("Sentence number {i} explains one more detail of the file reader. "))
            .collect();
        let ps = sizer.passages(heading, &text);
        assert!(ps.len() >= 5, "{}", ps.len());
        let window = PASSAGE_TOKENS.min(model.header().max_seq_len as usize) - 2;
        for p in &ps {
            let n = tok.count_pieces(&format!("{heading}\n{p}"));
            assert!(n <= window, "{n} pieces > {window}: {p}");
            assert!(p.ends_with("file reader."), "cut at a sentence end: {p}");
        }
        for i in 0..60 {
            let s = format!("Sentence number {i} explains");
            assert!(ps.iter().any(|p| p.contains(&s)), "lost: {s}");
        }
    }

    use super::*;

    #[test]
    fn html_sections_follow_headings_and_skip_chrome() {
        let html = r##"<html><head><title>Structs - The Book</title><script>x()</script></head><body>
            <nav><p>Chapter list</p></nav>
            <h1 id="structs"><a href="#structs">Structs</a></h1>
            <p>A struct groups   values.</p>
            <h2><a class="header" href="#defining" id="defining">Defining</a></h2>
            <ul><li>first <code>item</code></li><li><p>second</p></li></ul>
            <pre><code>let x = 1;</code></pre>
            <footer><p>Copyright</p></footer></body></html>"##;
        let (title, sections) = html_sections(html);
        assert_eq!(title.as_deref(), Some("Structs - The Book"));
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].heading, "Structs");
        assert_eq!(sections[0].anchor.as_deref(), Some("structs"));
        assert_eq!(sections[0].blocks, vec!["A struct groups values."]);
        assert_eq!(sections[1].anchor.as_deref(), Some("defining"));
        assert_eq!(
            sections[1].blocks,
            vec!["first item", "second", "let x = 1;"]
        );
    }

    /// `(heading, anchor, blocks)` of each section, for comparing with a literal.
    fn outline(sections: &[Section]) -> Vec<(&str, Option<&str>, Vec<&str>)> {
        sections
            .iter()
            .map(|s| {
                (
                    s.heading.as_str(),
                    s.anchor.as_deref(),
                    s.blocks.iter().map(String::as_str).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn markdown_sections_have_slugs_and_skip_empty_headings() {
        let md = "# Guide\n\nIntro *text*.\n\n## Install it\n\n- one\n- two\n\n## Empty\n\n## Install it\n\n```\ncargo build\n```\n";
        let (title, sections) = markdown_sections(md);
        assert_eq!(title.as_deref(), Some("Guide"));
        let got = outline(&sections);
        assert_eq!(
            got,
            vec![
                ("Guide", Some("guide"), vec!["Intro text."]),
                ("Install it", Some("install-it"), vec!["one", "two"]),
                ("Install it", Some("install-it-1"), vec!["cargo build"]),
            ]
        );
        assert_eq!(slug("Hello, World! (2)"), "hello-world-2");
    }

    // ---------------------------------------------------------------------------------------
    // Whole pages through `page_passages`, with the shipped static model (window 128).

    fn static_model() -> &'static lightembed::Model {
        static MODEL: std::sync::OnceLock<lightembed::Model> = std::sync::OnceLock::new();
        MODEL.get_or_init(|| {
            let bytes = std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../public/models/lightembed-en-static.bin"
            ))
            .expect("public/models/lightembed-en-static.bin");
            lightembed::Model::from_bytes(&bytes).expect("the shipped model loads")
        })
    }

    fn passages_of(content: &str, format: Format) -> Vec<Passage> {
        let sizer = Sizer::new(static_model());
        page_passages(content, format, "page", &sizer, &mut HashSet::new())
    }

    fn texts(ps: &[Passage]) -> Vec<&str> {
        ps.iter().map(|p| p.text.as_str()).collect()
    }

    /// Old app extractor failure: `&` followed by non-ASCII text panicked (a byte index inside a
    /// character) or was cut; entities beyond the five XML ones were left as they were.
    #[test]
    fn entities_and_non_ascii_text_survive() {
        let ps = passages_of("<p>Q&A über Größe</p>", Format::Html);
        assert_eq!(texts(&ps), ["Q&A über Größe"]);
        let ps = passages_of(
            "<p>Tom & ジェリー</p><p>Salt & pepper 🌶</p><p>Don&rsquo;t</p><p>caf&eacute;</p>",
            Format::Html,
        );
        assert_eq!(texts(&ps), ["Tom & ジェリー Salt & pepper 🌶 Don’t café"]);
        for format in [Format::Markdown, Format::Text] {
            let ps = passages_of(
                "Tom & ジェリー\n\nSalt & pepper 🌶\n\nQ&A über Größe\n",
                format,
            );
            assert_eq!(
                texts(&ps),
                ["Tom & ジェリー Salt & pepper 🌶 Q&A über Größe"],
                "{format:?}"
            );
        }
    }

    /// Old app extractor failure: a `<` inside an inline script was taken for a tag and the rest
    /// of the page was lost.
    #[test]
    fn a_less_than_sign_in_an_inline_script_does_not_drop_the_rest() {
        let ps = passages_of(
            "<script>for (i = 0; i < n; i++) {}</script><p>After</p>",
            Format::Html,
        );
        assert_eq!(texts(&ps), ["After"]);
        let ps = passages_of(
            "<html><head><script>if (a < b && c > d) x()</script></head><body><h1>T</h1><p>Before</p><script>y < 2</script><p>After</p></body></html>",
            Format::Html,
        );
        assert_eq!(texts(&ps), ["Before After"]);
    }

    /// Old app extractor failure: table cells were glued together (`NamePrice`, `Apple1.20`).
    #[test]
    fn table_cells_do_not_fuse() {
        let ps = passages_of(
            "<table><tr><th>Name</th><th>Price</th></tr><tr><td>Apple</td><td>1.20</td></tr></table>",
            Format::Html,
        );
        assert_eq!(texts(&ps), ["Name Price Apple 1.20"]);
        let ps = passages_of(
            "| Name | Price |\n|---|---|\n| Apple | 1.20 |\n",
            Format::Markdown,
        );
        assert_eq!(texts(&ps), ["Name Price Apple 1.20"]);
    }

    /// Old app extractor failure: a `# comment` line inside fenced code became a heading (and
    /// the page title when it came first).
    #[test]
    fn a_hash_line_in_fenced_code_is_neither_a_heading_nor_the_title() {
        let md = "```sh\n# comment\nls -l\n```\n\n# Real title\n\nIntro.\n\n~~~\n# another\n~~~\n";
        let ps = passages_of(md, Format::Markdown);
        let got: Vec<(&str, &str, &str, &str)> = ps
            .iter()
            .map(|p| {
                (
                    p.heading.as_str(),
                    p.page_title.as_str(),
                    p.url.as_str(),
                    p.text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("", "Real title", "page", "# comment ls -l"),
                (
                    "Real title",
                    "Real title",
                    "page#real-title",
                    "Intro. # another"
                ),
            ]
        );
        // Only code: no title at all (the page URL stands in).
        let ps = passages_of("```\n# comment\n```\n", Format::Markdown);
        assert_eq!((ps[0].heading.as_str(), ps[0].title.as_str()), ("", "page"));
    }

    /// Ids are numbered per URL, titles follow "Heading — Page title", the embedded text is
    /// heading + newline + text, and text already seen on another page is skipped.
    #[test]
    fn sphinx_api_entries_are_sections_and_the_enclosing_section_resumes() {
        let html = r##"<html><head><title>json — Python docs</title></head><body>
            <section id="module-json"><h1>json — JSON encoder</h1><p>Intro text.</p>
            <dl class="py function"><dt class="sig sig-object py" id="json.dumps">json.dumps(obj, indent=None)</dt>
            <dd><p>Serialize obj.</p></dd>
            <dt class="sig sig-object py" id="json.loads">json.loads(s)</dt><dd><p>Deserialize s.</p></dd></dl>
            <dl><dt>plain term</dt><dd>plain definition</dd></dl>
            <p>After the list.</p></section></body></html>"##;
        let (_, sections) = html_sections(html);
        let got = outline(&sections);
        assert_eq!(
            got,
            vec![
                (
                    "json — JSON encoder",
                    Some("module-json"),
                    vec!["Intro text."]
                ),
                (
                    "json.dumps(obj, indent=None)",
                    Some("json.dumps"),
                    vec!["Serialize obj."]
                ),
                ("json.loads(s)", Some("json.loads"), vec!["Deserialize s."]),
                (
                    "json — JSON encoder",
                    Some("module-json"),
                    vec!["plain term", "plain definition", "After the list."]
                ),
            ]
        );
    }

    #[test]
    fn keyword_text_weights_title_and_heading() {
        assert_eq!(
            keyword_text("Ownership", "Moves", "a b"),
            "Ownership\nOwnership\nOwnership\nMoves\nMoves\na b"
        );
        assert_eq!(
            keyword_text("Ownership", "", "a b"),
            "Ownership\nOwnership\nOwnership\na b"
        );
        // A heading equal to the page title is written once, as the heading.
        assert_eq!(
            keyword_text("Ownership", "Ownership", "a b"),
            "Ownership\nOwnership\na b"
        );
        assert_eq!(keyword_text("", "Moves", "a b"), "Moves\nMoves\na b");
        assert_eq!(keyword_text("", "", "a b"), "a b");
    }

    #[test]
    fn page_passages_ids_titles_embed_text_and_dedup() {
        let sizer = Sizer::new(static_model());
        let mut seen = HashSet::new();
        let html = "<html><head><title>Intro - Book</title></head><body>\
            <p>Loose text first.</p>\
            <h1 id=\"intro\">Intro</h1><p>About the book.</p>\
            <h2>No id</h2><p>One.</p><h2>No id either</h2><p>Two.</p>\
            <h2 id=\"x\">Shared</h2><p>Seen text.</p></body></html>";
        let ps = page_passages(html, Format::Html, "ch1.html", &sizer, &mut seen);
        let got: Vec<(&str, &str, &str, &str)> = ps
            .iter()
            .map(|p| {
                (
                    p.id.as_str(),
                    p.title.as_str(),
                    p.url.as_str(),
                    p.embed_text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "ch1.html:1",
                    "Intro - Book",
                    "ch1.html",
                    "Loose text first."
                ),
                (
                    "ch1.html#intro:1",
                    "Intro - Book",
                    "ch1.html#intro",
                    "Intro\nAbout the book."
                ),
                (
                    "ch1.html:2",
                    "No id — Intro - Book",
                    "ch1.html",
                    "No id\nOne."
                ),
                (
                    "ch1.html:3",
                    "No id either — Intro - Book",
                    "ch1.html",
                    "No id either\nTwo."
                ),
                (
                    "ch1.html#x:1",
                    "Shared — Intro - Book",
                    "ch1.html#x",
                    "Shared\nSeen text."
                ),
            ]
        );
        assert!(ps
            .iter()
            .all(|p| p.page_title == "Intro - Book"
                && p.embed_text == embed_text(&p.heading, &p.text)));
        // The same text on another page (a book's print.html) is not indexed twice.
        let again = page_passages(
            "<h1>All</h1><p>Seen text.</p><p>New text.</p><p>One.</p>",
            Format::Html,
            "print.html",
            &sizer,
            &mut seen,
        );
        assert_eq!(texts(&again), ["Seen text. New text. One."]);
        let again = page_passages("<p>Two.</p>", Format::Html, "p2.html", &sizer, &mut seen);
        assert!(again.is_empty());
        // A byte-order mark is not text; plain text has no headings and the URL as title.
        let ps = passages_of("\u{feff}one\r\n\r\ntwo", Format::Text);
        assert_eq!(
            (ps[0].id.as_str(), ps[0].title.as_str(), ps[0].text.as_str()),
            ("page:1", "page", "one two")
        );
        assert_eq!(Format::from_name("A.MD"), Format::Markdown);
        assert_eq!(Format::from_name("x.Htm"), Format::Html);
        assert_eq!(Format::from_name("notes"), Format::Text);
    }

    /// Detection alone ([`charset_label`], what the browser app uses with `TextDecoder`).
    #[test]
    fn charset_label_detects_utf8_declared_and_fallback() {
        let known = |l: &str| encoding_rs::Encoding::for_label(l.as_bytes()).is_some();
        // Latin-1 text: a guess.
        assert_eq!(
            charset_label(b"caf\xe9 cr\xe8me", Format::Text, known),
            Charset::Fallback
        );
        // A page declaring windows-1252 (double quotes, any case).
        let html = b"<html><head><META Charset=\"Windows-1252\"><title>Q</title></head><body><p>\x93quoted\x94 caf\xe9</p></body></html>";
        assert_eq!(
            charset_label(html, Format::Html, known),
            Charset::Declared("windows-1252".into())
        );
        // http-equiv form; the label as written (the decoder maps it: latin1 → windows-1252).
        assert_eq!(
            charset_label(
                b"<meta http-equiv=Content-Type content='text/html; charset=latin1'>\xe9",
                Format::Html,
                known
            ),
            Charset::Declared("latin1".into())
        );
        // UTF-8, with or without a BOM (also for HTML declaring something else).
        assert_eq!(
            charset_label("\u{feff}Größe".as_bytes(), Format::Text, known),
            Charset::Utf8
        );
        assert_eq!(
            charset_label("<meta charset=koi8-r>é".as_bytes(), Format::Html, known),
            Charset::Utf8
        );
        assert_eq!(charset_label(b"", Format::Text, known), Charset::Utf8);
        // Unknown labels are skipped for the next <meta>; what the caller's decoder knows counts.
        let two = b"<meta charset=bogus><meta charset=koi8-r><p>\xf0";
        assert_eq!(
            charset_label(two, Format::Html, known),
            Charset::Declared("koi8-r".into())
        );
        assert_eq!(
            charset_label(two, Format::Html, |_| false),
            Charset::Fallback
        );
        // UTF-8/UTF-16 declared on bytes that are not UTF-8, text and Markdown, a declaration
        // after 1024 bytes: a guess.
        for l in ["utf-8", "utf8", "utf-16", "unicode"] {
            let page = format!("<meta charset={l}><p>");
            let mut page = page.into_bytes();
            page.push(0xe9);
            assert_eq!(
                charset_label(&page, Format::Html, known),
                Charset::Fallback,
                "{l}"
            );
        }
        let md = b"<meta charset=koi8-r>\xe9";
        assert_eq!(
            charset_label(md, Format::Markdown, known),
            Charset::Fallback
        );
        assert_eq!(charset_label(md, Format::Text, known), Charset::Fallback);
        let mut late = vec![b' '; 1100];
        late.extend_from_slice(md);
        assert_eq!(charset_label(&late, Format::Html, known), Charset::Fallback);
    }

    /// [`is_utf8_or_utf16_label`] lists exactly the labels `encoding_rs` maps to UTF-8/UTF-16.
    #[test]
    fn utf8_and_utf16_labels_agree_with_encoding_rs() {
        let utf = [
            encoding_rs::UTF_8,
            encoding_rs::UTF_16LE,
            encoding_rs::UTF_16BE,
        ];
        for l in [
            "unicode-1-1-utf-8",
            "unicode11utf8",
            "unicode20utf8",
            "utf-8",
            "utf8",
            "x-unicode20utf8",
            "unicodefffe",
            "utf-16be",
            "csunicode",
            "iso-10646-ucs-2",
            "ucs-2",
            "unicode",
            "unicodefeff",
            "utf-16",
            "utf-16le",
        ] {
            assert!(is_utf8_or_utf16_label(l), "{l}");
            let enc = encoding_rs::Encoding::for_label(l.as_bytes());
            assert!(enc.is_some_and(|e| utf.contains(&e)), "{l}");
        }
        for l in [
            "windows-1252",
            "latin1",
            "iso-8859-1",
            "koi8-r",
            "shift_jis",
            "utf-7",
            "x-user-defined",
        ] {
            assert!(!is_utf8_or_utf16_label(l), "{l}");
            assert!(
                !encoding_rs::Encoding::for_label(l.as_bytes()).is_some_and(|e| utf.contains(&e)),
                "{l}"
            );
        }
    }

    /// Charsets: Latin-1 text and a page declaring windows-1252 decode to the right characters
    /// (no U+FFFD); only the undeclared guess warns.
    #[test]
    fn decode_latin1_text_and_declared_charsets() {
        let (t, w) = decode(b"caf\xe9", Format::Text);
        assert_eq!(t, "café");
        assert_eq!(w.as_deref(), Some("not UTF-8; decoded as windows-1252"));

        let html = b"<html><head><meta charset=\"windows-1252\"><title>Q</title></head><body><p>\x93quoted\x94 caf\xe9</p></body></html>";
        let (t, w) = decode(html, Format::Html);
        assert!(t.contains("\u{201c}quoted\u{201d} café"), "{t}");
        assert!(!t.contains('\u{fffd}'));
        assert_eq!(w, None);
        let ps = passages_of(&t, Format::Html);
        assert_eq!(texts(&ps), ["“quoted” café"]);

        // http-equiv, single quotes, upper case, ISO-8859-1 (= windows-1252 in browsers).
        let html = b"<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=ISO-8859-1'><p>\x93x\x94 \xfcber</p>";
        let (t, w) = decode(html, Format::Html);
        assert!(t.contains("“x” über"), "{t}");
        assert_eq!(w, None);
        // Another declared charset.
        let (t, _) = decode(
            b"<meta charset=koi8-r><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>",
            Format::Html,
        );
        assert!(t.contains("Привет"), "{t}");
        // A declaration of UTF-8 on bytes that are not: the windows-1252 guess, with the warning.
        let (t, w) = decode(b"<meta charset=utf-8><p>caf\xe9</p>", Format::Html);
        assert!(t.contains("café"));
        assert!(w.is_some());
        // A declaration past the first 1024 bytes is not seen (as in browsers): a guess.
        let mut late = vec![b' '; 1100];
        late.extend_from_slice(b"<meta charset=koi8-r><p>\xe9</p>");
        assert!(decode(&late, Format::Html).1.is_some());
        // UTF-16 with a byte-order mark, either order ("Unicode" from Windows tools): decoded,
        // no warning, and not binary although it is full of NULs.
        let text = "# Giraffes\n\nTall café 🦒\n";
        for (bom, le) in [(&b"\xFF\xFE"[..], true), (&b"\xFE\xFF"[..], false)] {
            let mut bytes = bom.to_vec();
            for u in text.encode_utf16() {
                bytes.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
            }
            assert!(!looks_binary(&bytes));
            assert_eq!(decode(&bytes, Format::Markdown), (text.into(), None));
        }
        assert!(looks_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(!looks_binary("plain café".as_bytes()));
        // UTF-8 (with or without a BOM) as it is; Markdown/text never read <meta>.
        assert_eq!(
            decode("\u{feff}Größe 🌶".as_bytes(), Format::Text),
            ("Größe 🌶".into(), None)
        );
        assert_eq!(
            decode(b"<meta charset=koi8-r> ok", Format::Html).0,
            "<meta charset=koi8-r> ok"
        );
        assert!(decode(b"<meta charset=koi8-r>\xe9", Format::Markdown)
            .1
            .is_some());
    }
}
