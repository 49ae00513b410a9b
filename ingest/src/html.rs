//! HTML → page title and sections: parsed with `scraper` (html5ever), site chrome skipped.

use std::collections::{HashMap, HashSet};

use crate::ids::url_encode;
use crate::{collapse_ws, Section};

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

/// Classes of navigation chrome in the documentation generators our users run: Sphinx
/// (`sphinxsidebar`, `related` bars, `headerlink` ¶ marks, `footer`, the link lists of tables of
/// contents `toctree-wrapper` and of the generated general and module indexes `indextable`,
/// `genindex-jumpbox`, `modindex-jumpbox`), mdBook (`menu-bar`,
/// `sidebar`, `nav-chapters`, `nav-wrapper`), rustdoc (`sidebar`, `search-form`, `out-of-band`,
/// `rightside`), and text for screen readers only (`sr-only`).
pub const CHROME_CLASSES: [&str; 18] = [
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
    // rustdoc's "source" links and stability versions beside every item ("1.22.0 · source"):
    // alone they made a passage per impl or method once repeated text under another heading
    // was kept.
    "rightside",
    // Text for screen readers only (Starlight's "Section titled …" anchor labels, Bootstrap).
    "sr-only",
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

/// Classes of admonition boxes: DocBook's `<div class="note">` (`tip`, `warning`, `caution`,
/// `important`), titled `<h3 class="title">Note</h3>`, and Sphinx's and MkDocs'
/// `<div class="admonition note">`. A heading element inside one is the box's title, not a
/// heading of the page's outline (see [`html_sections`]).
pub const ADMONITION_CLASSES: [&str; 6] = [
    "admonition",
    "note",
    "tip",
    "warning",
    "caution",
    "important",
];

fn is_admonition(n: ego_tree::NodeRef<scraper::Node>) -> bool {
    match n.value() {
        scraper::Node::Element(e) => e.classes().any(|c| ADMONITION_CLASSES.contains(&c)),
        _ => false,
    }
}

fn has_class(n: ego_tree::NodeRef<scraper::Node>, name: &str, classes: &[&str]) -> bool {
    match n.value() {
        scraper::Node::Element(e) => e.name() == name && e.classes().any(|c| classes.contains(&c)),
        _ => false,
    }
}

/// A generated back-of-book index, recognised by its markup (not by its file name): a list of
/// links to every topic, which would match every query.
///
/// * DocBook's index (`bookindex.html`): `<div class="index">` (`setindex`) holding its letter
///   groups `<div class="indexdiv">`, a nested `<div class="index">` or the entries' `<dl>`;
/// * the body of Sphinx's general and domain indexes (`genindex.html`, `genindex-*.html`,
///   `py-modindex.html`): the element holding the index table (`table.indextable`,
///   `genindextable`, `modindextable`) or its letter bar (`genindex-jumpbox`,
///   `modindex-jumpbox`), beside the `<h1 id="index">Index</h1>` (and, on the first page of a
///   split index, "Index pages by letter").
fn is_generated_index(n: ego_tree::NodeRef<scraper::Node>) -> bool {
    if has_class(n, "div", &["index", "setindex"]) {
        return n.children().any(|c| {
            has_class(c, "div", &["indexdiv", "index"])
                || matches!(c.value(), scraper::Node::Element(e) if e.name() == "dl")
        });
    }
    n.children().any(|c| {
        has_class(
            c,
            "table",
            &["indextable", "genindextable", "modindextable"],
        ) || has_class(c, "div", &["genindex-jumpbox", "modindex-jumpbox"])
    })
}

/// DocBook's divisions: a generated index inside one is part of a larger page (a one-page book).
fn is_division(n: ego_tree::NodeRef<scraper::Node>) -> bool {
    const DIVISIONS: [&str; 14] = [
        "set",
        "book",
        "part",
        "reference",
        "article",
        "chapter",
        "appendix",
        "preface",
        "section",
        "sect1",
        "sect2",
        "sect3",
        "sect4",
        "sect5",
    ];
    has_class(n, "div", &DIVISIONS)
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
///
/// A heading inside an admonition box ([`ADMONITION_CLASSES`]: DocBook's
/// `<div class="note"><h3 class="title">Note</h3>`) is the box's title, not a heading of the
/// page's outline: its text is a block of the current section, which goes on after the box.
///
/// A generated back-of-book index (DocBook's `<div class="index">`, the body of Sphinx's
/// `genindex.html` and `py-modindex.html`) is skipped: inside a larger document (a one-page book)
/// like chrome; otherwise the page is the index, and has no sections at all.
///
/// Elements nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) are read as text of the element at
/// that depth (see [`html_sections_with_warning`]), so reading is linear in the page size
/// whatever the nesting depth.
pub fn html_sections(html: &str) -> (Option<String>, Vec<Section>) {
    html_sections_in(html, None)
}

/// [`html_sections`] of only the elements `root` matches (outermost matches, in document order);
/// the whole page when it matches nothing or is `None`.
pub fn html_sections_in(html: &str, root: Option<&RootSelector>) -> (Option<String>, Vec<Section>) {
    let (title, sections, _) = html_sections_with_warning(html, root);
    (title, sections)
}

/// [`html_sections_in`], and a warning for the caller to print (`warning: PATH: TEXT`, as for
/// [`decode`](crate::decode)): [`DEPTH_WARNING`](crate::DEPTH_WARNING) when the page nests
/// elements deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) (the tags below that depth were ignored,
/// their text read as part of the element above them).
pub fn html_sections_with_warning(
    html: &str,
    root: Option<&RootSelector>,
) -> (Option<String>, Vec<Section>, Option<String>) {
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
    // The nesting limit (`depth.rs`): html5ever's cost grows with the square of the depth.
    let limited = crate::depth::limit_depth(html);
    let warning = limited
        .is_some()
        .then(|| crate::depth::DEPTH_WARNING.to_string());
    let doc = Html::parse_document(limited.as_deref().unwrap_or(html));
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
    // (node, end, in_box): `end` marks the close of a Sphinx API list (`dl` of `dt.sig` entries),
    // after which the enclosing section resumes; `in_box`: inside an admonition box (a box's
    // heading is its title, not a section: see below).
    let mut stack = vec![(doc.tree.root(), false, false)];
    // The page is a generated index (see `is_generated_index`).
    let mut index_page = false;
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
            stack = outermost
                .into_iter()
                .rev()
                .map(|n| (n, false, n.ancestors().any(is_admonition)))
                .collect();
        }
    }
    while let Some((node, end, in_box)) = stack.pop() {
        if end {
            if let Some((heading, anchor)) = resume.remove(&node.id()) {
                sections.push(Section {
                    heading,
                    anchor,
                    blocks: Vec::new(),
                    page: None,
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
                stack.extend(node.children().rev().map(|c| (c, false, false)));
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
                stack.extend(node.children().rev().map(|c| (c, false, false)));
            }
            continue;
        }
        // A generated index: inside a larger document (a one-page book's index) it is skipped
        // like chrome; otherwise the page is the index, and yields nothing.
        if is_generated_index(node) {
            if node.ancestors().any(is_division) {
                continue;
            }
            index_page = true;
            break;
        }
        // What this element's children are in: an admonition box when it is one.
        let children_in_box = in_box || is_admonition(node);
        // Sphinx API entries (`<dt class="sig …" id="json.dumps">signature</dt><dd>…</dd>`): each
        // is a section of its own, headed by its signature and linked to its id, as Sphinx lists
        // them in its own tables of contents; after the list the enclosing section resumes.
        if name == "dl" && node.children().any(|c| is_api_entry(c)) {
            let current = sections.last().expect("one section");
            resume.insert(node.id(), (current.heading.clone(), current.anchor.clone()));
            stack.push((node, true, in_box));
            stack.extend(node.children().rev().map(|c| (c, false, children_in_box)));
            continue;
        }
        if name == "dt" && is_api_entry(node) {
            let id = el.id().expect("is_api_entry checks the id");
            sections.push(Section {
                heading: text_of(node),
                anchor: Some(url_encode(id)),
                blocks: Vec::new(),
                page: None,
            });
            continue;
        }
        if HEADINGS.contains(&name) {
            let heading = text_of(node);
            // A box's title (DocBook's `<h3 class="title">Note</h3>`) is no heading of the
            // page's outline: a block of the current section, which goes on after the box.
            if in_box {
                if !heading.is_empty() {
                    sections
                        .last_mut()
                        .expect("one section")
                        .blocks
                        .push(heading);
                }
                continue;
            }
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
                page: None,
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
        stack.extend(node.children().rev().map(|c| (c, false, children_in_box)));
    }
    if index_page {
        sections.clear();
    }
    sections.retain(|s| !s.blocks.is_empty());
    (title.or(first_h1), sections, warning)
}
