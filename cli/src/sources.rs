//! Inputs of `lightembed index` → passages: JSONL records taken as they are; Markdown, plain-text
//! and HTML files cut into sections at their headings, each section split into passages of about
//! 150 words (at most 300, [`lightembed_index::passages`]) that keep the heading and a URL anchor.
//!
//! HTML is parsed with `scraper` (html5ever); Markdown with `pulldown-cmark`; folders are walked
//! recursively with `walkdir`, in sorted order, so the same inputs always give the same passages.

use anyhow::{anyhow, bail, Context, Result};
use lightembed_index::passages::split_passages;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One passage to embed and index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// Unique id: `URL:N` for cut files (N = 1, 2, … within a section), the record's id for JSONL.
    pub id: String,
    /// What a result shows as its title: `Section heading — Page title` (the page title alone when
    /// it starts with the heading or there is none).
    pub title: String,
    /// Page URL (the file's path relative to its input root, `/`-separated) plus `#anchor`.
    pub url: String,
    /// The passage text (whitespace collapsed).
    pub text: String,
    /// The text that is embedded: the section heading, then the passage text.
    pub embed_text: String,
}

/// A file format `lightembed index` reads, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.jsonl`: one `{"id","title","url","text"}` object per line.
    Jsonl,
    /// `.md`, `.markdown`.
    Markdown,
    /// `.html`, `.htm`.
    Html,
    /// `.txt` (and any file named explicitly with another extension).
    Text,
}

impl Kind {
    fn of(path: &Path) -> Option<Kind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "jsonl" => Kind::Jsonl,
            "md" | "markdown" => Kind::Markdown,
            "html" | "htm" => Kind::Html,
            "txt" => Kind::Text,
            _ => return None,
        })
    }
}

/// A file to read, with the URL base it gets in the index.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// Path on disk.
    pub path: PathBuf,
    /// URL of the page: the path relative to the folder given on the command line (or the file
    /// name for a file given directly), `/`-separated.
    pub url: String,
    /// How it is read.
    pub kind: Kind,
}

/// Expands the command-line inputs: files as given (format by extension, plain text when
/// unknown), folders walked recursively for `.html`, `.htm`, `.md`, `.markdown`, `.txt` and
/// `.jsonl` files, sorted by path. Errors on a missing input or an empty result.
pub fn collect_inputs(inputs: &[PathBuf]) -> Result<Vec<InputFile>> {
    let mut out = Vec::new();
    for input in inputs {
        let meta =
            std::fs::metadata(input).with_context(|| format!("cannot read {}", input.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            for entry in walkdir::WalkDir::new(input)
                .follow_links(true)
                .sort_by_file_name()
            {
                let entry = entry.with_context(|| format!("cannot walk {}", input.display()))?;
                if !entry.file_type().is_file() {
                    continue;
                }
                let Some(kind) = Kind::of(entry.path()) else {
                    continue;
                };
                let rel = entry.path().strip_prefix(input).unwrap_or(entry.path());
                let url = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                found.push(InputFile {
                    path: entry.path().to_path_buf(),
                    url,
                    kind,
                });
            }
            if found.is_empty() {
                bail!(
                    "{}: no .html, .htm, .md, .markdown, .txt or .jsonl files in this folder",
                    input.display()
                );
            }
            out.extend(found);
        } else {
            let url = input
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(InputFile {
                path: input.clone(),
                url,
                kind: Kind::of(input).unwrap_or(Kind::Text),
            });
        }
    }
    Ok(out)
}

/// A run of text under one heading.
#[derive(Debug, Default)]
struct Section {
    heading: String,
    anchor: Option<String>,
    /// Paragraph-like blocks, whitespace already collapsed.
    blocks: Vec<String>,
}

/// Adds a file's passages to `out`, skipping passages whose text was already indexed (`seen`,
/// e.g. a book's all-in-one `print.html` repeating every chapter). Returns how many were added.
pub fn read_file(
    file: &InputFile,
    seen: &mut HashSet<String>,
    ids: &mut HashSet<String>,
    out: &mut Vec<Passage>,
) -> Result<usize> {
    let bytes = std::fs::read(&file.path)
        .with_context(|| format!("cannot read {}", file.path.display()))?;
    let content = String::from_utf8_lossy(&bytes);
    let before = out.len();
    if file.kind == Kind::Jsonl {
        for (i, line) in content.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let p = jsonl_record(line, &file.url, i + 1)
                .map_err(|e| anyhow!("{}: line {}: {e}", file.path.display(), i + 1))?;
            if !ids.insert(p.id.clone()) {
                bail!(
                    "{}: line {}: duplicate id {:?}",
                    file.path.display(),
                    i + 1,
                    p.id
                );
            }
            out.push(p);
        }
        return Ok(out.len() - before);
    }
    let (page_title, sections) = match file.kind {
        Kind::Html => html_sections(&content),
        Kind::Markdown => markdown_sections(&content),
        _ => text_sections(&content),
    };
    let page_title = page_title.unwrap_or_else(|| file.url.clone());
    for section in sections {
        let url = match &section.anchor {
            Some(a) => format!("{}#{a}", file.url),
            None => file.url.clone(),
        };
        // "Heading — Page title", unless the page title already starts with the heading.
        let title = if section.heading.is_empty() || page_title.starts_with(&section.heading) {
            page_title.clone()
        } else {
            format!("{} — {page_title}", section.heading)
        };
        for (n, text) in split_passages(&section.blocks.join("\n\n"))
            .into_iter()
            .enumerate()
        {
            if !seen.insert(text.clone()) {
                continue;
            }
            let mut id = format!("{url}:{}", n + 1);
            while !ids.insert(id.clone()) {
                id.push('+');
            }
            let embed_text = if section.heading.is_empty() {
                text.clone()
            } else {
                format!("{}\n{text}", section.heading)
            };
            out.push(Passage {
                id,
                title: title.clone(),
                url: url.clone(),
                text,
                embed_text,
            });
        }
    }
    Ok(out.len() - before)
}

fn jsonl_record(line: &str, file_url: &str, line_no: usize) -> Result<Passage> {
    let value: Value = serde_json::from_str(line).map_err(|e| anyhow!("invalid JSON: {e}"))?;
    let Value::Object(obj) = value else {
        bail!("expected a JSON object with a \"text\" field")
    };
    let text = match obj.get("text") {
        Some(Value::String(s)) => collapse_ws(s),
        Some(_) => bail!("\"text\" must be a string"),
        None => bail!("missing \"text\" field"),
    };
    if text.is_empty() {
        bail!("\"text\" is empty");
    }
    let field = |name: &str| -> Result<Option<String>> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) if name == "id" => Ok(Some(n.to_string())),
            Some(_) => bail!("\"{name}\" must be a string"),
        }
    };
    let id = field("id")?.unwrap_or_else(|| format!("{file_url}:{line_no}"));
    let title = field("title")?.unwrap_or_default();
    let url = field("url")?.unwrap_or_default();
    let embed_text = if title.is_empty() {
        text.clone()
    } else {
        format!("{title}\n{text}")
    };
    Ok(Passage {
        id,
        title,
        url,
        text,
        embed_text,
    })
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Plain text: one section, paragraphs separated by blank lines.
fn text_sections(content: &str) -> (Option<String>, Vec<Section>) {
    let blocks = content
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

/// Markdown: a new section at every heading (anchor = `{#id}` attribute or the heading's slug);
/// paragraphs, list items, block quotes and fenced code are blocks. The first level-1 heading is
/// the page title.
fn markdown_sections(md: &str) -> (Option<String>, Vec<Section>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut title = None;
    let mut sections = vec![Section::default()];
    let mut heading: Option<(pulldown_cmark::HeadingLevel, Option<String>, String)> = None;
    let mut block = String::new();
    let mut used = HashSet::new();
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
                    let mut anchor = id.unwrap_or_else(|| slug(&text));
                    let base = anchor.clone();
                    let mut k = 1;
                    while !used.insert(anchor.clone()) {
                        anchor = format!("{base}-{k}");
                        k += 1;
                    }
                    sections.push(Section {
                        heading: text,
                        anchor: Some(anchor),
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

/// HTML: the `<title>` (else the first `<h1>`) is the page title; each `h1`–`h6` starts a section
/// whose anchor is the heading's `id` (or that of an `<a>` inside it); text in `p`, `li`, `pre`,
/// `dd`, `dt`, `td`, `th`, `blockquote`, `figcaption` and `caption` becomes blocks. `script`,
/// `style`, `nav`, `header`, `footer`, `noscript`, `svg`, `template`, `form`, `button` and
/// `aside` are skipped (site chrome, not content).
fn html_sections(html: &str) -> (Option<String>, Vec<Section>) {
    use scraper::{ElementRef, Html, Node};
    let doc = Html::parse_document(html);
    let text_of = |e: ElementRef| collapse_ws(&e.text().collect::<String>());
    let mut title = None;
    for node in doc.tree.nodes() {
        if let Some(e) = ElementRef::wrap(node) {
            if e.value().name() == "title" {
                let t = text_of(e);
                if !t.is_empty() {
                    title = Some(t);
                    break;
                }
            }
        }
    }
    const SKIP: [&str; 12] = [
        "script", "style", "nav", "header", "footer", "noscript", "svg", "template", "form",
        "button", "aside", "head",
    ];
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
    let mut sections = vec![Section::default()];
    let mut first_h1 = None;
    // Depth-first walk with an explicit stack (no recursion depth limit on deep pages).
    let mut stack = vec![doc.tree.root()];
    while let Some(node) = stack.pop() {
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
                stack.extend(node.children().collect::<Vec<_>>().into_iter().rev());
                continue;
            }
            _ => continue,
        };
        let name = el.name();
        if SKIP.contains(&name) {
            continue;
        }
        let e = ElementRef::wrap(node).expect("an element");
        if matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6") {
            let heading = text_of(e);
            if name == "h1" && first_h1.is_none() && !heading.is_empty() {
                first_h1 = Some(heading.clone());
            }
            let anchor = el.id().map(str::to_string).or_else(|| {
                e.descendants()
                    .filter_map(ElementRef::wrap)
                    .find_map(|a| a.value().id().map(str::to_string))
            });
            sections.push(Section {
                heading,
                anchor,
                blocks: Vec::new(),
            });
            continue;
        }
        let has_block_inside = e
            .descendants()
            .skip(1)
            .filter_map(ElementRef::wrap)
            .any(|d| {
                BLOCK.contains(&d.value().name())
                    || matches!(d.value().name(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
            });
        if BLOCK.contains(&name) && !has_block_inside {
            let t = text_of(e);
            if !t.is_empty() {
                sections.last_mut().expect("one section").blocks.push(t);
            }
            continue;
        }
        let children: Vec<_> = node.children().collect();
        stack.extend(children.into_iter().rev());
    }
    sections.retain(|s| !s.blocks.is_empty());
    (title.or(first_h1), sections)
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn markdown_sections_have_slugs_and_skip_empty_headings() {
        let md = "# Guide\n\nIntro *text*.\n\n## Install it\n\n- one\n- two\n\n## Empty\n\n## Install it\n\n```\ncargo build\n```\n";
        let (title, sections) = markdown_sections(md);
        assert_eq!(title.as_deref(), Some("Guide"));
        let got: Vec<(&str, Option<&str>, Vec<&str>)> = sections
            .iter()
            .map(|s| {
                (
                    s.heading.as_str(),
                    s.anchor.as_deref(),
                    s.blocks.iter().map(String::as_str).collect(),
                )
            })
            .collect();
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

    #[test]
    fn jsonl_records_are_validated() {
        let p = jsonl_record(
            r#"{"id":7,"title":"T","url":"/u","text":" a  b "}"#,
            "f.jsonl",
            1,
        )
        .unwrap();
        assert_eq!(
            (
                p.id.as_str(),
                p.title.as_str(),
                p.url.as_str(),
                p.text.as_str()
            ),
            ("7", "T", "/u", "a b")
        );
        assert_eq!(p.embed_text, "T\na b");
        let p = jsonl_record(r#"{"text":"x"}"#, "f.jsonl", 3).unwrap();
        assert_eq!(p.id, "f.jsonl:3");
        let err = |line| jsonl_record(line, "f", 1).unwrap_err().to_string();
        assert_eq!(err(r#"{"id":1}"#), "missing \"text\" field");
        assert_eq!(err(r#"{"text":""}"#), "\"text\" is empty");
        assert_eq!(
            err(r#"{"text":"a","title":3}"#),
            "\"title\" must be a string"
        );
        assert_eq!(err("[1]"), "expected a JSON object with a \"text\" field");
        assert!(err("{").starts_with("invalid JSON: "));
    }
}
