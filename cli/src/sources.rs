//! Inputs of `lightembed index` → passages: JSONL records taken as they are; Markdown, plain-text
//! and HTML files cut into sections at their headings, each section split into passages of about
//! 150 words (at most 300, [`lightembed_index::passages`]) that keep the heading and a URL anchor.
//!
//! HTML is parsed with `scraper` (html5ever); Markdown with `pulldown-cmark`; folders are walked
//! recursively with `walkdir`, in sorted order, so the same inputs always give the same passages.

use anyhow::{anyhow, bail, Context, Result};
use lightembed_index::passages::split_passages_in_tokens;
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

/// Which files `collect_inputs` leaves out.
pub struct Excludes {
    /// `--exclude GLOB` patterns, matched against the path relative to the folder given on the
    /// command line (`/`-separated; for a file given directly, the path as given).
    globs: globset::GlobSet,
    /// The default rules (off with `--no-default-excludes`): a folder named `_sources` (Sphinx
    /// copies every page's source there), and a `.txt` file with an `.html`/`.htm` page of the
    /// same name beside it (`git-add.txt` next to `git-add.html`: the AsciiDoc source of that
    /// page). Both would index every page twice, once as raw markup.
    defaults: bool,
}

impl Excludes {
    /// Compiles the `--exclude` globs (`*` does not cross `/`; `**` does).
    pub fn new(globs: &[String], defaults: bool) -> Result<Excludes> {
        let mut b = globset::GlobSetBuilder::new();
        for g in globs {
            let glob = globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .with_context(|| format!("--exclude {g:?}: not a valid glob"))?;
            b.add(glob);
        }
        Ok(Excludes {
            globs: b.build().context("--exclude")?,
            defaults,
        })
    }

    /// True when the file at `path` (`rel` relative to its input root) is left out.
    fn excludes(&self, path: &Path, rel: &Path) -> bool {
        if self.globs.is_match(rel) {
            return true;
        }
        if !self.defaults {
            return false;
        }
        if rel.components().any(|c| c.as_os_str() == "_sources") {
            return true;
        }
        let is_txt = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("txt"));
        is_txt
            && ["html", "htm"]
                .iter()
                .any(|e| path.with_extension(e).is_file())
    }
}

/// Expands the command-line inputs: files as given (format by extension, plain text when
/// unknown), folders walked recursively for `.html`, `.htm`, `.md`, `.markdown`, `.txt` and
/// `.jsonl` files, sorted by path, skipping hidden entries (`.git/`, `.cache`, …). A file reached
/// twice is read once. Unreadable entries inside a folder (a dangling symlink, a loop) are
/// skipped with a warning on stderr and counted in `skipped`; files left out by `excludes` are
/// counted in `excluded`. Errors on a missing input or a folder with nothing to read.
pub fn collect_inputs(
    inputs: &[PathBuf],
    excludes: &Excludes,
    skipped: &mut usize,
    excluded: &mut usize,
) -> Result<Vec<InputFile>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |file: InputFile, out: &mut Vec<InputFile>| {
        let key = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
        if seen.insert(key) {
            out.push(file);
        }
    };
    for input in inputs {
        let meta =
            std::fs::metadata(input).with_context(|| format!("cannot read {}", input.display()))?;
        if meta.is_dir() {
            let before = out.len();
            let walk = walkdir::WalkDir::new(input)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.')
                });
            for entry in walk {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        let path = e
                            .path()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default();
                        let why = e
                            .io_error()
                            .map(|io| io.to_string())
                            .unwrap_or_else(|| e.to_string());
                        crate::warn(&format!("warning: skipping {path}: {why}"));
                        *skipped += 1;
                        continue;
                    }
                };
                if !entry.file_type().is_file() {
                    continue;
                }
                let Some(kind) = Kind::of(entry.path()) else {
                    continue;
                };
                let rel = entry.path().strip_prefix(input).unwrap_or(entry.path());
                if excludes.excludes(entry.path(), rel) {
                    *excluded += 1;
                    continue;
                }
                let url = rel
                    .components()
                    .map(|c| url_encode(&c.as_os_str().to_string_lossy()))
                    .collect::<Vec<_>>()
                    .join("/");
                push(
                    InputFile {
                        path: entry.path().to_path_buf(),
                        url,
                        kind,
                    },
                    &mut out,
                );
            }
            if out.len() == before && walk_was_empty(input) {
                bail!(
                    "{}: no .html, .htm, .md, .markdown, .txt or .jsonl files in this folder",
                    input.display()
                );
            }
        } else {
            if excludes.excludes(input, input) {
                *excluded += 1;
                continue;
            }
            let url = input
                .file_name()
                .map(|n| url_encode(&n.to_string_lossy()))
                .unwrap_or_default();
            push(
                InputFile {
                    path: input.clone(),
                    url,
                    kind: Kind::of(input).unwrap_or(Kind::Text),
                },
                &mut out,
            );
        }
    }
    Ok(out)
}

/// True when `dir` holds no readable file of a kind `index` reads (hidden entries excluded).
fn walk_was_empty(dir: &Path) -> bool {
    !walkdir::WalkDir::new(dir)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| e.ok())
        .any(|e| e.file_type().is_file() && Kind::of(e.path()).is_some())
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

/// Unique ids in amortised O(1): `base`, then `base~2`, `base~3`, … for repeats.
#[derive(Default)]
pub struct IdSet {
    used: HashSet<String>,
    next: std::collections::HashMap<String, usize>,
}

impl IdSet {
    /// Claims exactly `id`; false if it is taken.
    pub fn claim(&mut self, id: &str) -> bool {
        self.used.insert(id.to_string())
    }

    /// Claims `base` or the first free `base~N` (N ≥ 2) and returns it.
    pub fn unique(&mut self, base: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        let n = self.next.entry(base.to_string()).or_insert(2);
        loop {
            let id = format!("{base}~{n}");
            *n += 1;
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// What reading one file added.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Documents: a page with text, or a JSONL record.
    pub documents: usize,
    /// Passages added (after dropping repeats of already-indexed text).
    pub passages: usize,
    /// Files skipped because they could not be read (each named in a warning on stderr).
    pub skipped: usize,
}

/// Sizes passages in the model's own word pieces: each passage plus its heading fits the
/// model's window (`max_seq_len`, including `[CLS]` and `[SEP]`), so no passage text is
/// invisible to the vector side.
pub struct Sizer<'m> {
    tokenizer: &'m lightembed::tokenizer::Tokenizer,
    /// Word pieces a passage and its heading may use: `max_seq_len − 2`.
    window: usize,
}

impl<'m> Sizer<'m> {
    /// The sizer for `model`'s tokenizer and window.
    pub fn new(model: &'m lightembed::Model) -> Sizer<'m> {
        Sizer {
            tokenizer: model.tokenizer(),
            window: (model.header().max_seq_len as usize)
                .saturating_sub(2)
                .max(1),
        }
    }

    /// Passages of `text` under `heading`: the heading's pieces come off the budget, but a
    /// heading never leaves less than half the window to the text.
    fn passages(&self, heading: &str, text: &str) -> Vec<String> {
        let count = |t: &str| self.tokenizer.count_pieces(t);
        let budget = self
            .window
            .saturating_sub(count(heading))
            .max(self.window / 2);
        split_passages_in_tokens(text, budget, &count)
    }
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
/// e.g. a book's all-in-one `print.html` repeating every chapter). A leading byte-order mark is
/// ignored; a binary file (a NUL byte in its first 8 KiB) is skipped with a warning, and so is a
/// file that cannot be read (counted in [`Added::skipped`]: the run goes on, like for an
/// unreadable folder).
pub fn read_file(
    file: &InputFile,
    sizer: &Sizer,
    seen: &mut HashSet<String>,
    ids: &mut IdSet,
    out: &mut Vec<Passage>,
) -> Result<Added> {
    let bytes = match std::fs::read(&file.path) {
        Ok(bytes) => bytes,
        Err(e) => {
            crate::warn(&format!(
                "warning: skipping {}: cannot read: {e}",
                file.path.display()
            ));
            return Ok(Added {
                skipped: 1,
                ..Added::default()
            });
        }
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        crate::warn(&format!(
            "warning: skipping {}: binary file",
            file.path.display()
        ));
        return Ok(Added::default());
    }
    let content = String::from_utf8_lossy(&bytes);
    let content = content.strip_prefix('\u{feff}').unwrap_or(&content);
    let mut added = Added::default();
    if file.kind == Kind::Jsonl {
        for (i, line) in content.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let p = jsonl_record(line, &file.url, i + 1)
                .map_err(|e| anyhow!("{}: line {}: {e}", file.path.display(), i + 1))?;
            if !ids.claim(&p.id) {
                bail!(
                    "{}: line {}: duplicate id {:?}",
                    file.path.display(),
                    i + 1,
                    p.id
                );
            }
            out.push(p);
            added.documents += 1;
            added.passages += 1;
        }
        return Ok(added);
    }
    let (page_title, sections) = match file.kind {
        Kind::Html => html_sections(content),
        Kind::Markdown => markdown_sections(content),
        _ => text_sections(content),
    };
    let page_title = page_title.unwrap_or_else(|| file.url.clone());
    let mut per_url: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
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
        for text in sizer.passages(&section.heading, &section.blocks.join("\n\n")) {
            if !seen.insert(text.clone()) {
                continue;
            }
            // Passages are numbered per URL (sections without an anchor share the page's URL).
            let n = per_url.entry(url.clone()).or_insert(0usize);
            *n += 1;
            let id = ids.unique(&format!("{url}:{n}"));
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
            added.passages += 1;
        }
    }
    if added.passages > 0 {
        added.documents = 1;
    }
    Ok(added)
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

/// Whitespace runs → one space, control characters dropped, trimmed.
fn collapse_ws(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Plain text: one section, paragraphs separated by blank lines (`\n` or `\r\n` line ends).
fn text_sections(content: &str) -> (Option<String>, Vec<Section>) {
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

/// Heading anchors unique within a page, GitHub style: `intro`, then `intro-1`, `intro-2`, …
#[derive(Default)]
struct Anchors {
    used: HashSet<String>,
    next: std::collections::HashMap<String, usize>,
}

impl Anchors {
    fn unique(&mut self, base: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        let n = self.next.entry(base.to_string()).or_insert(1);
        loop {
            let a = format!("{base}-{n}");
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

/// Markdown: a new section at every heading (anchor = `{#id}` attribute or the heading's slug);
/// paragraphs, list items, block quotes and fenced code are blocks. The first level-1 heading is
/// the page title.
fn markdown_sections(md: &str) -> (Option<String>, Vec<Section>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut title = None;
    let mut sections = vec![Section::default()];
    let mut heading: Option<(pulldown_cmark::HeadingLevel, Option<String>, String)> = None;
    let mut block = String::new();
    let mut anchors = Anchors::default();
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
                    let base = id.unwrap_or_else(|| slug(&text));
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

/// HTML: the `<title>` (else the first `<h1>`) is the page title; each `h1`–`h6` starts a section
/// whose anchor is the heading's `id` (or that of an element inside it, else the heading's slug);
/// text in `p`, `li`, `pre`, `dd`, `dt`, `td`, `th`, `blockquote`, `figcaption` and `caption`
/// becomes blocks (`<br>` and nested blocks separate words). Site chrome is skipped (see
/// [`is_chrome`]): `script`, `style`, `nav`, `header`, `footer`, `noscript`, `svg`, `template`,
/// `form`, `button`, `aside`, `head`, ARIA landmarks that are not content (`role="navigation"`,
/// `search`, `banner`, `contentinfo`, `complementary`), hidden elements, and the navigation
/// chrome of Sphinx, mdBook and rustdoc by class. Anchors link only to ids that exist in the
/// page (the heading's own id, an id inside it, or the nearest enclosing element's id such as
/// Sphinx's `<section id>`), percent-encoded; otherwise the section links to the page itself.
/// Linear in the page size, whatever the nesting depth.
/// Classes of navigation chrome in the documentation generators our users run: Sphinx
/// (`sphinxsidebar`, `related` bars, `headerlink` ¶ marks, `footer`), mdBook (`menu-bar`,
/// `sidebar`, `nav-chapters`, `nav-wrapper`), rustdoc (`sidebar`, `search-form`, `out-of-band`).
const CHROME_CLASSES: [&str; 12] = [
    "sphinxsidebar",
    "related",
    "headerlink",
    "footer",
    "menu-bar",
    "sidebar",
    "nav-chapters",
    "nav-wrapper",
    "mobile-nav-chapters",
    "search-form",
    "out-of-band",
    "skip-link",
];

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

fn html_sections(html: &str) -> (Option<String>, Vec<Section>) {
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
                stack.extend(node.children().rev());
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
                stack.extend(node.children().rev());
            }
            continue;
        }
        if HEADINGS.contains(&name) {
            let heading = text_of(node);
            if name == "h1" && first_h1.is_none() && !heading.is_empty() {
                first_h1 = Some(heading.clone());
            }
            // An id that exists in the page: the heading's, one inside it, or the nearest
            // enclosing element's (Sphinx wraps each section in <section id=…>).
            let id_of = |n: ego_tree::NodeRef<Node>| match n.value() {
                Node::Element(e) => e.id().filter(|i| !i.is_empty()).map(str::to_string),
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
        stack.extend(node.children().rev());
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
            ]
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
        let window = model.header().max_seq_len as usize - 2;
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
