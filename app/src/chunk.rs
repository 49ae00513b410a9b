//! User documents → passages: plain text from `.txt`, `.md` and `.html`, split into passages of
//! about [`TARGET_WORDS`] words (never more than [`MAX_WORDS`] unless one sentence is longer) on
//! paragraph, then sentence boundaries — the same shape as the bundled corpus
//! (`scripts/make_corpus.py`).

use crate::protocol::Passage;

pub use lightembed_index::passages::{split_passages, MAX_WORDS, TARGET_WORDS};

/// The format of a dropped file, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text.
    Text,
    /// Markdown (`.md`, `.markdown`).
    Markdown,
    /// HTML (`.html`, `.htm`).
    Html,
}

impl Format {
    /// Guesses the format from a file name's extension (plain text when unknown).
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

/// Visible text of an HTML document: tags removed, `<script>`/`<style>`/`<head>` content dropped,
/// block elements turned into paragraph breaks, the common entities decoded. Also returns the
/// `<title>` (or first `<h1>`) if any.
pub fn html_to_text(html: &str) -> (String, Option<String>) {
    const BLOCKS: [&str; 16] = [
        "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section",
        "article", "pre",
    ];
    let mut out = String::with_capacity(html.len() / 2);
    let mut title: Option<String> = None;
    let mut h1: Option<String> = None;
    let mut skip_until: Option<&'static str> = None;
    let mut capture: Option<(&'static str, String)> = None;
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        if skip_until.is_none() {
            let decoded = decode_entities(text);
            if let Some((_, buf)) = capture.as_mut() {
                buf.push_str(&decoded);
            }
            out.push_str(&decoded);
        }
        let after = &rest[lt + 1..];
        let Some(gt) = after.find('>') else {
            rest = "";
            break;
        };
        let tag = &after[..gt];
        rest = &after[gt + 1..];
        if tag.starts_with("!--") {
            // Comment: skip to its end.
            if let Some(end) = rest.find("-->").map(|i| i + 3) {
                if !tag.ends_with("--") {
                    rest = &rest[end..];
                }
            }
            continue;
        }
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(stop) = skip_until {
            if closing && name == stop {
                skip_until = None;
            }
            continue;
        }
        match (closing, name.as_str()) {
            (false, "script") => skip_until = Some("script"),
            (false, "style") => skip_until = Some("style"),
            (false, "title") => capture = Some(("title", String::new())),
            (false, "h1") if h1.is_none() => capture = Some(("h1", String::new())),
            (true, "title") | (true, "h1") => {
                if let Some((which, buf)) = capture.take() {
                    let t = collapse_ws(&buf);
                    if which == "title" && title.is_none() && !t.is_empty() {
                        title = Some(t);
                    } else if which == "h1" && h1.is_none() && !t.is_empty() {
                        h1 = Some(t);
                    }
                }
                if name == "title" {
                    // The title is not body text.
                    if let Some(pos) = out.rfind(title.as_deref().unwrap_or("\u{0}")) {
                        out.truncate(pos);
                    }
                }
                out.push_str("\n\n");
            }
            _ => {}
        }
        if BLOCKS.contains(&name.as_str()) {
            out.push_str("\n\n");
        }
    }
    if skip_until.is_none() {
        out.push_str(&decode_entities(rest));
    }
    (out, title.or(h1))
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let Some(semi) = after[..after.len().min(12)].find(';') else {
            out.push('&');
            rest = &after[1..];
            continue;
        };
        let ent = &after[1..semi];
        let ch = match ent {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" | "#39" => Some('\''),
            "nbsp" => Some(' '),
            _ if ent.starts_with("#x") || ent.starts_with("#X") => {
                u32::from_str_radix(&ent[2..], 16)
                    .ok()
                    .and_then(char::from_u32)
            }
            _ if ent.starts_with('#') => ent[1..].parse::<u32>().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Readable text of a Markdown document: heading markers, emphasis, inline code ticks, images and
/// link targets removed (`[text](url)` → `text`); fenced code kept as text. Also returns the first
/// `# heading` if any.
pub fn markdown_to_text(md: &str) -> (String, Option<String>) {
    let mut title = None;
    let mut out = String::with_capacity(md.len());
    for line in md.lines() {
        let trimmed = line.trim_start();
        let body = if trimmed.starts_with('#') {
            let h = trimmed.trim_start_matches('#').trim();
            if title.is_none() && trimmed.starts_with("# ") {
                title = Some(h.to_string());
            }
            // A heading is its own paragraph.
            out.push('\n');
            h.to_string()
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            String::new()
        } else {
            let t = trimmed
                .trim_start_matches(['>', ' '])
                .trim_start_matches("- ")
                .trim_start_matches("* ")
                .trim_start_matches("+ ");
            t.to_string()
        };
        out.push_str(&strip_inline_markdown(&body));
        out.push('\n');
    }
    (out, title)
}

fn strip_inline_markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '!' if chars.get(i + 1) == Some(&'[') => i += 1,
            '[' => {
                // [text](url) → text
                if let Some(close) = chars[i + 1..].iter().position(|&x| x == ']') {
                    let close = i + 1 + close;
                    if chars.get(close + 1) == Some(&'(') {
                        if let Some(end) = chars[close + 2..].iter().position(|&x| x == ')') {
                            out.extend(&chars[i + 1..close]);
                            i = close + 2 + end + 1;
                            continue;
                        }
                    }
                }
                out.push(c);
                i += 1;
            }
            '*' | '_' | '`' => i += 1,
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Makes a document id from a name: `user/` + the name with `#` and whitespace runs replaced.
pub fn user_doc_id(name: &str) -> String {
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
        .take(80)
        .collect();
    format!(
        "user/{}",
        if clean.is_empty() {
            "untitled".into()
        } else {
            clean
        }
    )
}

/// Passages of one user document. `name` is the file name (or a title for pasted text); the
/// format decides how `content` is turned into text.
pub fn document_passages(name: &str, content: &str, format: Format) -> Vec<Passage> {
    let (text, found_title) = match format {
        Format::Text => (content.to_string(), None),
        Format::Markdown => markdown_to_text(content),
        Format::Html => html_to_text(content),
    };
    let title = found_title.unwrap_or_else(|| name.to_string());
    let doc_id = user_doc_id(name);
    split_passages(&text)
        .into_iter()
        .enumerate()
        .map(|(i, t)| Passage {
            id: format!("{doc_id}#{i}"),
            doc_id: doc_id.clone(),
            title: title.clone(),
            heading: String::new(),
            url: String::new(),
            text: t,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text_drops_scripts_and_keeps_title() {
        let (t, title) = html_to_text(
            "<html><head><title>My Page</title><style>p{}</style></head><body><h1>Head</h1>\
             <p>Hello &amp; welcome&#33;</p><script>var x = 1;</script><p>Bye</p></body></html>",
        );
        assert_eq!(title.as_deref(), Some("My Page"));
        let flat = collapse_ws(&t);
        assert_eq!(flat, "Head Hello & welcome! Bye");
    }

    #[test]
    fn markdown_links_and_marks_are_stripped() {
        let (t, title) =
            markdown_to_text("# Title\n\nSome *bold* and [a link](http://x) `code`.\n");
        assert_eq!(title.as_deref(), Some("Title"));
        assert!(t.contains("Some bold and a link code."), "{t}");
    }

    #[test]
    fn document_passages_get_unique_ids() {
        let ps = document_passages("notes #1.txt", "a b c\n\nd e f", Format::Text);
        assert_eq!(ps.len(), 1);
        assert_eq!(ps[0].doc_id, "user/notes--1.txt");
        assert_eq!(ps[0].id, "user/notes--1.txt#0");
        assert_eq!(crate::protocol::doc_id_of(&ps[0].id), ps[0].doc_id);
        assert_eq!(Format::from_name("A.MD"), Format::Markdown);
        assert_eq!(Format::from_name("x.htm"), Format::Html);
    }
}
