//! PDF → page title and sections, one per page (cut again where an outline entry starts on the
//! page), each with its page number.
//!
//! Text comes from `pdf-extract` (over `lopdf`; pure Rust, so the app's wasm worker runs the same
//! code): it decodes the fonts and hands over every glyph with its position ([`OutputDev`]).
//! From the glyphs this module builds the text itself:
//!
//! * **lines** in the order the page draws them (TeX, FOP, LibreOffice and most producers draw in
//!   reading order, one column after the other): a new line where the baseline moves by more
//!   than half a glyph's height or the pen jumps back; a space where the gap between two glyphs
//!   is wider than [`SPACE_GAP`] of the font size (many producers draw no space characters);
//! * **blocks** (paragraph-like) where the gap between two lines is wider than a line and a half,
//!   the text goes back up the page (a new column) or the font size changes (a heading);
//! * **hyphenation** at line ends joined (`exam-` + `ple` → `example`, when the next line starts
//!   with a lowercase letter; a soft hyphen always);
//! * **running headers and footers** dropped: a page's first or last two lines whose text, with
//!   digits taken as one, is also at the top (bottom) of at least [`REPEATED_PAGES`] pages (so
//!   `Chapter 2: Installing R 5` / `… 7` / `… 9`), and lines that are a bare page number;
//! * **outline**: the title of the outline entry a page falls under is the heading of its
//!   section; where an entry starts on a page, at the line that reads as its title, the page's
//!   section is cut there.
//!
//! Errors ([`DocumentError`]): a PDF that does not parse, that is encrypted with a password (one
//! readable with the empty password — "owner password" only — is read), or that has pages but no
//! text at all (a scan without OCR).

use std::collections::HashMap;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use crate::{collapse_ws, DocumentError, Section};

/// A gap between two glyphs of a line wider than this share of the font size is a space.
pub const SPACE_GAP: f64 = 0.15;
/// A line at the top (bottom) of at least this many pages, digits aside, is a running header
/// (footer) and dropped.
pub const REPEATED_PAGES: usize = 3;

/// One glyph as drawn: baseline position, advance, size (all in page space).
#[derive(Debug, Clone)]
struct Glyph {
    x: f64,
    y: f64,
    advance: f64,
    size: f64,
    text: String,
}

/// A line of a page: its text and where it sits.
#[derive(Debug, Clone)]
struct Line {
    text: String,
    /// Baseline y (page space: larger is higher).
    y: f64,
    /// Largest glyph size on the line.
    size: f64,
}

/// Collects each page's glyphs (`pdf-extract` calls it while it runs the page's content).
#[derive(Default)]
struct Collector {
    glyphs: Vec<Glyph>,
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        _page_num: u32,
        _media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.glyphs.clear();
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        // Trm maps text space (the font size not applied) to the page: its columns' lengths are
        // the horizontal and vertical scales of a glyph.
        let sx = (trm.m11 * trm.m11 + trm.m12 * trm.m12).sqrt();
        let sy = (trm.m21 * trm.m21 + trm.m22 * trm.m22).sqrt();
        let size = (font_size * sy).abs();
        if !size.is_finite() || !trm.m31.is_finite() || !trm.m32.is_finite() {
            return Ok(());
        }
        self.glyphs.push(Glyph {
            x: trm.m31,
            y: trm.m32,
            advance: (width * font_size * sx).abs(),
            size: if size > 0.0 { size } else { 1.0 },
            text: text.to_string(),
        });
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// The glyphs of a page as lines, in the order drawn.
fn lines_of(glyphs: &[Glyph]) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut cur = String::new();
    let (mut y, mut size, mut end_x) = (0.0f64, 0.0f64, 0.0f64);
    let flush = |cur: &mut String, y: f64, size: f64, lines: &mut Vec<Line>| {
        let text = collapse_ws(cur);
        if !text.is_empty() {
            lines.push(Line { text, y, size });
        }
        cur.clear();
    };
    for g in glyphs {
        let started = !cur.is_empty();
        let h = g.size.max(size).max(1.0);
        // A new line: the baseline moved by more than half a glyph, or the pen went back left
        // by more than two glyphs on the same baseline (a new column drawn at the same height).
        if started && ((g.y - y).abs() > 0.5 * h || g.x < end_x - 2.0 * h) {
            flush(&mut cur, y, size, &mut lines);
        }
        if cur.is_empty() {
            y = g.y;
            size = g.size;
        } else {
            if g.x - end_x > SPACE_GAP * g.size.max(1.0) && !cur.ends_with(' ') {
                cur.push(' ');
            }
            size = size.max(g.size);
        }
        cur.push_str(&g.text);
        end_x = g.x + g.advance;
    }
    flush(&mut cur, y, size, &mut lines);
    lines
}

/// A line's text with digit runs and roman page numbers taken as one `#`, lowercase: what
/// repeats from page to page in a running header or footer.
fn header_key(text: &str) -> String {
    let mut out = String::new();
    for word in text.split(' ') {
        if !out.is_empty() {
            out.push(' ');
        }
        let lower = word.to_lowercase();
        if !lower.is_empty() && lower.chars().all(|c| "ivxlc".contains(c)) && lower.len() <= 6 {
            out.push('#');
            continue;
        }
        let mut digits = false;
        for c in lower.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    out.push('#');
                }
                digits = true;
            } else {
                digits = false;
                out.push(c);
            }
        }
    }
    out
}

/// Drops running headers and footers (see the module docs) from every page.
fn drop_running_lines(pages: &mut [Vec<Line>]) {
    const EDGE: usize = 2;
    let mut top: HashMap<String, usize> = HashMap::new();
    let mut bottom: HashMap<String, usize> = HashMap::new();
    for lines in pages.iter() {
        let mut keys: Vec<String> = lines
            .iter()
            .take(EDGE)
            .map(|l| header_key(&l.text))
            .collect();
        keys.dedup();
        for k in keys {
            *top.entry(k).or_default() += 1;
        }
        let mut keys: Vec<String> = lines
            .iter()
            .rev()
            .take(EDGE)
            .map(|l| header_key(&l.text))
            .collect();
        keys.dedup();
        for k in keys {
            *bottom.entry(k).or_default() += 1;
        }
    }
    let running = |key: &str, counts: &HashMap<String, usize>| {
        key == "#" || counts.get(key).copied().unwrap_or(0) >= REPEATED_PAGES
    };
    for lines in pages.iter_mut() {
        let mut start = 0;
        while start < EDGE.min(lines.len()) && running(&header_key(&lines[start].text), &top) {
            start += 1;
        }
        let mut end = lines.len();
        while end > start
            && lines.len() - end < EDGE
            && running(&header_key(&lines[end - 1].text), &bottom)
        {
            end -= 1;
        }
        lines.truncate(end);
        lines.drain(..start);
    }
}

/// Joins a page's lines into blocks (see the module docs), hyphenation at line ends joined.
fn blocks_of(lines: &[Line]) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block = String::new();
    let mut prev: Option<&Line> = None;
    for line in lines {
        if let Some(p) = prev {
            let gap = p.y - line.y;
            let new_block = gap > 1.5 * 1.2 * p.size.max(line.size)
                || gap < -0.5 * p.size
                || (line.size - p.size).abs() > 0.15 * p.size.max(line.size);
            if new_block {
                blocks.push(std::mem::take(&mut block));
            }
        }
        join_line(&mut block, &line.text);
        prev = Some(line);
    }
    blocks.push(block);
    blocks.retain(|b| !b.is_empty());
    blocks
}

/// Appends `line` to `block`: after a space, or, where `block` ends in a hyphen after a letter and
/// `line` starts with a lowercase letter (or `block` ends in a soft hyphen), without the hyphen.
fn join_line(block: &mut String, line: &str) {
    let line = &without_leaders(line);
    if line.is_empty() {
        return;
    }
    if block.is_empty() {
        block.push_str(line);
        return;
    }
    if block.ends_with('\u{ad}') {
        block.pop();
        block.push_str(line);
        return;
    }
    let mut tail = block.chars().rev();
    let hyphen = tail.next() == Some('-') && tail.next().is_some_and(char::is_alphabetic);
    if hyphen && line.chars().next().is_some_and(char::is_lowercase) {
        block.pop();
        block.push_str(line);
    } else {
        block.push(' ');
        block.push_str(line);
    }
}

/// `line` without dot leaders (a table of contents' `Introduction ........ 3`): runs of four or
/// more dots (spaced or not) become one space.
fn without_leaders(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut dots = String::new();
    let flush = |dots: &mut String, out: &mut String| {
        if dots.chars().filter(|&c| c == '.').count() >= 4 {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
        } else {
            out.push_str(dots);
        }
        dots.clear();
    };
    for c in line.chars() {
        if c == '.' || (c == ' ' && !dots.is_empty()) {
            dots.push(c);
        } else {
            flush(&mut dots, &mut out);
            out.push(c);
        }
    }
    flush(&mut dots, &mut out);
    collapse_ws(&out)
}

/// Lowercase letters and digits only: how an outline title is matched against a line.
fn match_key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A PDF text string (`/Title`, outline titles): UTF-16BE after its byte-order mark, UTF-8 after
/// its BOM, else PDFDocEncoding (read as Latin-1, which it equals for letters).
fn text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else if let Some(rest) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        bytes.iter().map(|&b| b as char).collect()
    }
}

/// The document's `/Title` from its information dictionary, when it has a non-empty one.
fn info_title(doc: &lopdf::Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = match info {
        lopdf::Object::Reference(id) => doc.get_dictionary(*id).ok()?,
        lopdf::Object::Dictionary(d) => d,
        _ => return None,
    };
    let title = match info.get(b"Title").ok()? {
        lopdf::Object::String(s, _) => collapse_ws(&text_string(s)),
        lopdf::Object::Reference(id) => match doc.get_object(*id).ok()? {
            lopdf::Object::String(s, _) => collapse_ws(&text_string(s)),
            _ => return None,
        },
        _ => return None,
    };
    (!title.is_empty()).then_some(title)
}

/// The outline (bookmarks) as (page number, title), in document order; empty without one.
fn outline(doc: &lopdf::Document) -> Vec<(u32, String)> {
    let Ok(toc) = doc.get_toc() else {
        return Vec::new();
    };
    toc.toc
        .into_iter()
        .filter_map(|e| {
            let title = collapse_ws(&e.title);
            let page = u32::try_from(e.page).ok()?;
            (!title.is_empty() && page > 0).then_some((page, title))
        })
        .collect()
}

/// True when `pdf-extract` can run the page without tripping over a missing piece (it unwraps
/// the page dictionary, its inherited `/MediaBox` and its content): such a page is skipped.
fn page_is_sound(doc: &lopdf::Document, id: lopdf::ObjectId) -> bool {
    let Ok(mut dict) = doc.get_dictionary(id) else {
        return false;
    };
    if doc.get_page_content(id).is_err() {
        return false;
    }
    // `/MediaBox` is inherited through `/Parent`; a page tree deeper than this is broken.
    for _ in 0..64 {
        if let Ok(b) = dict.get(b"MediaBox") {
            let b = match b {
                lopdf::Object::Reference(r) => match doc.get_object(*r) {
                    Ok(o) => o,
                    Err(_) => return false,
                },
                o => o,
            };
            return b.as_array().is_ok_and(|a| {
                a.len() == 4
                    && a.iter()
                        .all(|n| matches!(n, lopdf::Object::Integer(_) | lopdf::Object::Real(_)))
            });
        }
        match dict.get(b"Parent").and_then(lopdf::Object::as_reference) {
            Ok(parent) => match doc.get_dictionary(parent) {
                Ok(d) => dict = d,
                Err(_) => return false,
            },
            Err(_) => return false,
        }
    }
    false
}

/// The text of a PDF: its title (`/Title`, when set) and its sections, one per page (and one more
/// wherever an outline entry starts inside a page), each with its page number, the anchor
/// `page=N` (a PDF viewer opens `file.pdf#page=N` at that page) and the outline title it falls
/// under as heading. Pages are numbered from 1 in the order of the page tree.
///
/// # Errors
/// [`DocumentError::Broken`] when the file does not parse as a PDF (or the reader fails on it),
/// [`DocumentError::Encrypted`] when it needs a password, [`DocumentError::NoText`] when none of
/// its pages has any text.
pub fn pdf_sections(bytes: &[u8]) -> Result<(Option<String>, Vec<Section>), DocumentError> {
    pdf_sections_skipping(bytes, &[], &mut |_| {})
}

/// [`pdf_sections`], with the pages in `skip` left out as pages the reader failed on (no text),
/// and `on_page(n)` called before page `n` is read. For a caller where a panic cannot be caught
/// (wasm32 aborts): the browser app reads a PDF in a worker of its own, hears which page it
/// is on, and when that worker dies on a page runs it again with the page in `skip` — the same
/// pages left out as [`pdf_sections`] leaves out natively, so the passages are the CLI's.
///
/// # Errors
/// As [`pdf_sections`].
pub fn pdf_sections_skipping(
    bytes: &[u8],
    skip: &[u32],
    on_page: &mut dyn FnMut(u32),
) -> Result<(Option<String>, Vec<Section>), DocumentError> {
    // The reader unwraps in places on malformed files: a panic is this file's error, not the
    // caller's crash (natively; on wasm32 a panic aborts: see above).
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        read_pdf(bytes, skip, on_page)
    }))
    .unwrap_or_else(|_| {
        Err(DocumentError::Broken {
            format: "PDF",
            reason: "the PDF reader failed on this file".into(),
        })
    })
}

/// Installs a panic hook that stays quiet about panics inside the PDF reader (`pdf-extract`,
/// `lopdf`): [`pdf_sections`] turns them into the file's [`DocumentError`] (or leaves the page
/// out), so the default hook's "panicked at" message on stderr would only alarm. Other panics go
/// to the hook that was installed before. For programs (the CLI); a library leaves hooks alone.
pub fn quiet_reader_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let file = info.location().map(|l| l.file()).unwrap_or("");
        if !(file.contains("pdf-extract") || file.contains("lopdf")) {
            previous(info);
        }
    }));
}

fn broken(e: impl std::fmt::Display) -> DocumentError {
    DocumentError::Broken {
        format: "PDF",
        reason: e.to_string(),
    }
}

fn read_pdf(
    bytes: &[u8],
    skip: &[u32],
    on_page: &mut dyn FnMut(u32),
) -> Result<(Option<String>, Vec<Section>), DocumentError> {
    if !bytes.starts_with(b"%PDF-")
        && !bytes[..bytes.len().min(1024)]
            .windows(5)
            .any(|w| w == b"%PDF-")
    {
        return Err(broken("no %PDF- header"));
    }
    let mut doc = lopdf::Document::load_mem(bytes).map_err(|e| match e {
        lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword => DocumentError::Encrypted,
        e => broken(e),
    })?;
    // `lopdf` decrypts a file whose user password is empty as it loads it; one that needs a
    // password is left encrypted.
    if doc.is_encrypted() && doc.encryption_state.is_none() && doc.decrypt("").is_err() {
        return Err(DocumentError::Encrypted);
    }
    let title = info_title(&doc);
    let page_ids = doc.get_pages();
    if page_ids.is_empty() {
        return Err(broken("no pages"));
    }
    let mut pages: Vec<(u32, Vec<Line>)> = Vec::with_capacity(page_ids.len());
    let mut collector = Collector::default();
    let mut glyphs = 0usize;
    let mut failed = 0usize;
    for (&n, &id) in &page_ids {
        if !page_is_sound(&doc, id) {
            pages.push((n, Vec::new()));
            continue;
        }
        if skip.contains(&n) {
            failed += 1;
            pages.push((n, Vec::new()));
            continue;
        }
        on_page(n);
        collector.glyphs.clear();
        // A page the reader cannot run (an error, or a panic on a font it cannot decode) is left
        // out; the others are read.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pdf_extract::output_doc_page(&doc, &mut collector, n)
        }));
        if !matches!(ran, Ok(Ok(()))) {
            failed += 1;
            pages.push((n, Vec::new()));
            continue;
        }
        glyphs += collector
            .glyphs
            .iter()
            .filter(|g| !g.text.trim().is_empty())
            .count();
        pages.push((n, lines_of(&collector.glyphs)));
    }
    if glyphs == 0 && failed > 0 {
        return Err(broken(format!(
            "the PDF reader failed on {failed} of its {} pages (fonts it cannot decode)",
            page_ids.len()
        )));
    }
    if glyphs == 0 {
        return Err(DocumentError::NoText {
            pages: page_ids.len() as u32,
        });
    }
    let mut lines: Vec<Vec<Line>> = pages.iter_mut().map(|(_, l)| std::mem::take(l)).collect();
    drop_running_lines(&mut lines);

    // Outline entries by page, in order.
    let mut starts: HashMap<u32, Vec<String>> = HashMap::new();
    for (page, t) in outline(&doc) {
        starts.entry(page).or_default().push(t);
    }
    let mut heading = String::new();
    let mut sections = Vec::new();
    for ((n, _), lines) in pages.iter().zip(&lines) {
        let n = *n;
        let mut cut = 0;
        let emit = |from: usize, to: usize, heading: &str, sections: &mut Vec<Section>| {
            let blocks = blocks_of(&lines[from..to]);
            if !blocks.is_empty() {
                sections.push(Section {
                    heading: heading.to_string(),
                    anchor: Some(format!("page={n}")),
                    blocks,
                    page: Some(n),
                });
            }
        };
        for entry in starts.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
            let key = match_key(entry);
            let found = (cut..lines.len()).find(|&i| {
                let line = match_key(&lines[i].text);
                line.len() >= 3 && (line.starts_with(&key) || key.starts_with(&line))
            });
            if let Some(i) = found {
                emit(cut, i, &heading, &mut sections);
                // The line that is the title itself is the section's heading, not its text.
                let line = match_key(&lines[i].text);
                cut = if key.starts_with(&line) { i + 1 } else { i };
            }
            heading = entry.clone();
        }
        emit(cut, lines.len(), &heading, &mut sections);
    }
    Ok((title, sections))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        Line {
            text: text.into(),
            y: 0.0,
            size: 10.0,
        }
    }

    #[test]
    fn running_headers_and_page_numbers_are_dropped() {
        let mut pages: Vec<Vec<Line>> = (1..=4)
            .map(|n| {
                vec![
                    line(&format!("Chapter 2: Installing R {n}")),
                    line(["Alpha body.", "Beta body.", "Gamma body.", "Delta body."][n - 1]),
                    line(&format!("{}", n + 10)),
                ]
            })
            .collect();
        pages[0].insert(1, line("Only once at the top"));
        drop_running_lines(&mut pages);
        assert_eq!(pages[0].len(), 2);
        assert_eq!(pages[0][0].text, "Only once at the top");
        assert!(pages[1..]
            .iter()
            .all(|p| p.len() == 1 && p[0].text.ends_with(" body.")));
        assert_eq!(header_key("Chapter 12: Setup iv"), "chapter #: setup #");
    }

    #[test]
    fn hyphens_at_line_ends_are_joined() {
        let mut b = String::new();
        for l in [
            "An exam-",
            "ple of hy\u{ad}",
            "phenation; Jean-",
            "Paul stays.",
        ] {
            join_line(&mut b, l);
        }
        assert_eq!(b, "An example of hyphenation; Jean- Paul stays.");
        assert_eq!(without_leaders("Introduction ........ 3"), "Introduction 3");
        assert_eq!(
            without_leaders("Intro . . . . . 3 and 1.2... end."),
            "Intro 3 and 1.2... end."
        );
    }

    #[test]
    fn text_strings_decode() {
        assert_eq!(text_string(b"\xfe\xff\x00G\x00\xfc"), "Gü");
        assert_eq!(text_string(b"Caf\xe9"), "Café");
    }
}
