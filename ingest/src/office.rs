//! Word (`.docx`, Office Open XML) and OpenDocument text (`.odt`) → title and sections: a new
//! section at every heading paragraph, the other paragraphs (table cells and list items are
//! paragraphs too) its blocks. Read within the bounds of [`crate::zipped`].
//!
//! * Word: `word/document.xml`; a paragraph is a heading when its style is one (a style named
//!   `heading N` in `word/styles.xml`, or with an outline level) or it has an outline level
//!   itself; text is what `w:t` runs hold (field codes and deleted text are not), tabs and breaks
//!   become spaces. Title: `dc:title` of `docProps/core.xml`, else the first paragraph in the
//!   `Title` style (such paragraphs are the title, not text).
//! * OpenDocument: `content.xml`; `text:h` is a heading, `text:p` a paragraph (`text:s`, tabs and
//!   line breaks become spaces; note citations and comments are left out, note bodies are
//!   paragraphs of their own). Title: `dc:title` of `meta.xml`.

use std::collections::HashMap;

use crate::zipped::{attr, walk_xml, Xml, Zipped};
use crate::{collapse_ws, DocumentError, Section};

/// Collects paragraphs into sections.
#[derive(Default)]
struct Sections {
    sections: Vec<Section>,
}

impl Sections {
    fn heading(&mut self, text: &str) {
        let heading = collapse_ws(text);
        if heading.is_empty() {
            return;
        }
        self.sections.push(Section {
            heading,
            ..Section::default()
        });
    }
    fn paragraph(&mut self, text: &str) {
        let block = collapse_ws(text);
        if block.is_empty() {
            return;
        }
        if self.sections.is_empty() {
            self.sections.push(Section::default());
        }
        self.sections
            .last_mut()
            .expect("one section")
            .blocks
            .push(block);
    }
}

/// `dc:title` of a metadata part (`docProps/core.xml`, `meta.xml`), when non-empty.
fn dc_title(xml: &str, format: &'static str, part: &str) -> Result<Option<String>, DocumentError> {
    let (mut inside, mut title) = (false, String::new());
    walk_xml(xml, format, part, |ev| match ev {
        Xml::Start(b"title", _) => inside = true,
        Xml::End(b"title") => inside = false,
        Xml::Text(t) if inside => title.push_str(t),
        _ => {}
    })?;
    let title = collapse_ws(&title);
    Ok((!title.is_empty()).then_some(title))
}

/// What a Word style makes of a paragraph.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Heading,
    Title,
}

/// The heading and title styles of `word/styles.xml`, by style id.
fn word_styles(xml: &str) -> Result<HashMap<String, Style>, DocumentError> {
    let mut styles = HashMap::new();
    let mut id: Option<String> = None;
    walk_xml(xml, "Word", "word/styles.xml", |ev| match ev {
        Xml::Start(b"style", e) => id = attr(e, b"styleId"),
        Xml::End(b"style") => id = None,
        Xml::Start(b"name", e) => {
            if let (Some(id), Some(name)) = (&id, attr(e, b"val")) {
                let name = name.to_lowercase();
                if name.starts_with("heading") {
                    styles.insert(id.clone(), Style::Heading);
                } else if name == "title" {
                    styles.insert(id.clone(), Style::Title);
                }
            }
        }
        Xml::Start(b"outlineLvl", _) => {
            if let Some(id) = &id {
                styles.entry(id.clone()).or_insert(Style::Heading);
            }
        }
        _ => {}
    })?;
    Ok(styles)
}

/// The title and sections of a Word (`.docx`) document (see the module docs).
///
/// # Errors
/// [`DocumentError::Broken`] for a file that is not a zip archive with a readable
/// `word/document.xml`, [`DocumentError::TooLarge`] past the bounds of [`crate::zipped`].
pub fn docx_sections(bytes: &[u8]) -> Result<(Option<String>, Vec<Section>), DocumentError> {
    let mut zip = Zipped::open(bytes, "Word")?;
    let body = zip.text_part("word/document.xml")?;
    let styles = match zip.part("word/styles.xml")? {
        Some(b) => word_styles(&String::from_utf8_lossy(&b))?,
        None => HashMap::new(),
    };
    let mut title = match zip.part("docProps/core.xml")? {
        Some(b) => dc_title(&String::from_utf8_lossy(&b), "Word", "docProps/core.xml")?,
        None => None,
    };
    let mut out = Sections::default();
    let (mut para, mut style, mut in_text, mut in_ppr) = (String::new(), None, false, false);
    let mut outline_level = false;
    walk_xml(&body, "Word", "word/document.xml", |ev| match ev {
        Xml::Start(b"p", _) => {
            para.clear();
            style = None;
            outline_level = false;
        }
        Xml::Start(b"pPr", _) => in_ppr = true,
        Xml::End(b"pPr") => in_ppr = false,
        Xml::Start(b"pStyle", e) if in_ppr => {
            style = attr(e, b"val").and_then(|v| styles.get(&v).copied());
        }
        Xml::Start(b"outlineLvl", _) if in_ppr => outline_level = true,
        Xml::Start(b"t", _) => in_text = true,
        Xml::End(b"t") => in_text = false,
        Xml::Text(t) if in_text => para.push_str(t),
        Xml::Start(b"tab" | b"br" | b"cr", _) if !in_ppr => para.push(' '),
        Xml::End(b"p") => {
            if style == Some(Style::Title) {
                // The document's title: the page title when the metadata has none, never text.
                let t = collapse_ws(&para);
                if title.is_none() && !t.is_empty() {
                    title = Some(t);
                }
            } else if style == Some(Style::Heading) || outline_level {
                out.heading(&para);
            } else {
                out.paragraph(&para);
            }
            para.clear();
        }
        _ => {}
    })?;
    Ok((title, out.sections))
}

/// The title and sections of an OpenDocument text (`.odt`) (see the module docs).
///
/// # Errors
/// [`DocumentError::Broken`] for a file that is not a zip archive with a readable
/// `content.xml`, [`DocumentError::TooLarge`] past the bounds of [`crate::zipped`].
pub fn odt_sections(bytes: &[u8]) -> Result<(Option<String>, Vec<Section>), DocumentError> {
    let mut zip = Zipped::open(bytes, "OpenDocument")?;
    let content = zip.text_part("content.xml")?;
    let title = match zip.part("meta.xml")? {
        Some(b) => dc_title(&String::from_utf8_lossy(&b), "OpenDocument", "meta.xml")?,
        None => None,
    };
    let mut out = Sections::default();
    // Paragraphs open inside one another (a note's body inside a paragraph): one buffer each.
    let mut open: Vec<(bool, String)> = Vec::new();
    // Inside a note citation or a comment: left out.
    let mut skip = 0usize;
    walk_xml(&content, "OpenDocument", "content.xml", |ev| match ev {
        Xml::Start(b"note-citation" | b"annotation", _) => skip += 1,
        Xml::End(b"note-citation" | b"annotation") => skip = skip.saturating_sub(1),
        _ if skip > 0 => {}
        Xml::Start(name @ (b"p" | b"h"), _) => open.push((name == b"h", String::new())),
        Xml::End(b"p" | b"h") => {
            if let Some((heading, text)) = open.pop() {
                if heading {
                    out.heading(&text);
                } else {
                    out.paragraph(&text);
                }
            }
        }
        Xml::Start(b"s", e) => {
            if let Some((_, t)) = open.last_mut() {
                let n = attr(e, b"c")
                    .and_then(|c| c.parse::<usize>().ok())
                    .unwrap_or(1);
                t.push_str(&" ".repeat(n.min(64)));
            }
        }
        Xml::Start(b"tab" | b"line-break", _) => {
            if let Some((_, t)) = open.last_mut() {
                t.push(' ');
            }
        }
        Xml::Text(s) => {
            if let Some((_, t)) = open.last_mut() {
                t.push_str(s);
            }
        }
        _ => {}
    })?;
    Ok((title, out.sections))
}
