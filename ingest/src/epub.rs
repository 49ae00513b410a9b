//! EPUB → title and sections: the package document (`META-INF/container.xml` names it) gives
//! the title (`dc:title`) and the reading order (the spine); each XHTML file of the spine is cut
//! by the HTML path ([`crate::html_sections_with_warning`]: a section at every heading). Anchors
//! say where in the book a section is: `chapter.xhtml` or `chapter.xhtml#heading-id` (what a link
//! inside the book would be). Read within the bounds of [`crate::zipped`].

use std::collections::HashMap;

use crate::zipped::{attr, walk_xml, Xml, Zipped};
use crate::{collapse_ws, html_sections_with_warning, DocumentError, Section};

/// `href` (relative, percent-encoded, as the package document writes it) resolved against the
/// folder `base` (`OEBPS/`), as a path inside the archive.
fn resolve(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or(href);
    let mut parts: Vec<String> = base
        .split('/')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    for p in href.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(percent_decode(p)),
        }
    }
    parts.join("/")
}

/// `%XX` escapes decoded (invalid ones kept as written).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if let Some(Ok(v)) = s.get(i + 1..i + 3).map(|h| u8::from_str_radix(h, 16)) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The title and sections of an EPUB book, with the first warning of the HTML path (markup
/// nested too deep), if any (see the module docs).
///
/// # Errors
/// [`DocumentError::Broken`] for a file that is not a zip archive with a container, a package
/// document and a spine, [`DocumentError::TooLarge`] past the bounds of [`crate::zipped`].
pub fn epub_sections(
    bytes: &[u8],
) -> Result<(Option<String>, Vec<Section>, Option<String>), DocumentError> {
    let mut zip = Zipped::open(bytes, "EPUB")?;
    let container = zip.text_part("META-INF/container.xml")?;
    let mut opf_path = None;
    walk_xml(&container, "EPUB", "META-INF/container.xml", |ev| {
        if let Xml::Start(b"rootfile", e) = ev {
            if opf_path.is_none() {
                opf_path = attr(e, b"full-path");
            }
        }
    })?;
    let opf_path =
        opf_path.ok_or_else(|| zip.broken("META-INF/container.xml names no package document"))?;
    let opf = zip.text_part(&opf_path)?;
    let base = opf_path
        .rsplit_once('/')
        .map_or("", |(dir, _)| dir)
        .to_string();
    let (mut title, mut in_title) = (String::new(), false);
    let mut items: HashMap<String, (String, String)> = HashMap::new();
    let mut spine: Vec<String> = Vec::new();
    walk_xml(&opf, "EPUB", &opf_path, |ev| match ev {
        Xml::Start(b"title", _) if title.is_empty() => in_title = true,
        Xml::End(b"title") => in_title = false,
        Xml::Text(t) if in_title => title.push_str(t),
        Xml::Start(b"item", e) => {
            if let (Some(id), Some(href)) = (attr(e, b"id"), attr(e, b"href")) {
                let media = attr(e, b"media-type").unwrap_or_default();
                items.insert(id, (href, media));
            }
        }
        Xml::Start(b"itemref", e) => {
            if let Some(id) = attr(e, b"idref") {
                spine.push(id);
            }
        }
        _ => {}
    })?;
    if spine.is_empty() {
        return Err(zip.broken(format!("{opf_path} has no spine (no reading order)")));
    }
    let mut sections = Vec::new();
    let mut warning = None;
    for id in &spine {
        let Some((href, media)) = items.get(id) else {
            continue;
        };
        if !(media.contains("html") || media.is_empty()) {
            continue;
        }
        let path = resolve(&base, href);
        let Some(page) = zip.part(&path)? else {
            continue;
        };
        let page = String::from_utf8_lossy(&page);
        let (_, page_sections, w) = html_sections_with_warning(&page, None);
        warning = warning.or(w);
        let href = href.split('#').next().unwrap_or(href);
        for mut s in page_sections {
            s.anchor = Some(match s.anchor {
                Some(a) => format!("{href}#{a}"),
                None => href.to_string(),
            });
            sections.push(s);
        }
    }
    let title = collapse_ws(&title);
    Ok(((!title.is_empty()).then_some(title), sections, warning))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_resolve_inside_the_archive() {
        assert_eq!(
            resolve("OEBPS", "text/ch%201.xhtml#x"),
            "OEBPS/text/ch 1.xhtml"
        );
        assert_eq!(resolve("OEBPS/a", "../b.xhtml"), "OEBPS/b.xhtml");
        assert_eq!(resolve("", "c.xhtml"), "c.xhtml");
        assert_eq!(percent_decode("a%zz%41"), "a%zzA");
    }
}
