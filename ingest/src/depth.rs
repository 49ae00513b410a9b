//! The nesting limit of the HTML reader ([`MAX_DEPTH`]).
//!
//! html5ever's tree builder walks its stack of open elements on every block start tag (a `<div>`,
//! `<p>`, `<ul>` … first closes an open `<p>` "in button scope", and a `<div>` is no scope
//! boundary, so the walk goes to the root), and its cost grows with the square of the nesting
//! depth: 100k nested `<div>`s (1.1 MB) took minutes to parse. Browsers bound the depth of the
//! tree their parser builds (Chromium and WebKit at 512) and so do we: before parsing, the start
//! and end tags of elements nested deeper than [`MAX_DEPTH`] are removed, so their text is read as
//! text of the element at that depth, in document order, and the caller warns
//! ([`DEPTH_WARNING`]). A page nested less deeply is parsed as it is, byte for byte.
//!
//! The depth is measured by a scan of the tags that follows the HTML tokenizer (comments, raw
//! text of `<script>`, `<style>`, `<textarea>`, …, quoted attributes) and the tree builder's
//! implied end tags for the elements pages commonly leave open (`<p>`, `<li>`, `<dt>`/`<dd>`,
//! `<option>`, table rows and cells, `<a>`), so that a long list or table without end tags is not
//! mistaken for deep nesting. One pass, linear in the page size.

use std::collections::HashMap;

/// The deepest element nesting the HTML reader builds (as Chromium's and WebKit's parsers); tags
/// below that depth are ignored and their text is read as part of the element above them.
pub const MAX_DEPTH: usize = 512;

/// The warning (callers prefix the file name: `warning: PATH: TEXT`) for a page nested deeper than
/// [`MAX_DEPTH`], whose deeper tags were ignored.
pub const DEPTH_WARNING: &str = "HTML nested more than 512 elements deep; the tags below that \
                                 depth were ignored (their text is read)";

/// Elements without content or end tag: never on the stack.
const VOID: [&str; 19] = [
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image", "img",
    "input", "keygen", "link", "meta", "param", "source", "track", "wbr",
];

/// Elements whose content is text up to their end tag (raw text, RCDATA, script data; `noscript`
/// too, as html5ever parses with scripting on): never on the stack, their text is not scanned.
const RAW: [&str; 10] = [
    "script",
    "style",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "textarea",
    "title",
    "plaintext",
];

/// Start tags that close an open `<p>` (unless a scope boundary, [`BUTTON_SCOPE`], is nearer).
const CLOSES_P: [&str; 40] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hgroup",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "search",
    "section",
    "summary",
    "ul",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "listing",
    "li",
    "dd",
    "dt",
    "plaintext",
    "table",
    "xmp",
];

const BUTTON_SCOPE: [&str; 10] = [
    "applet", "button", "caption", "html", "marquee", "object", "table", "td", "th", "template",
];

const HEADINGS: [&str; 6] = ["h1", "h2", "h3", "h4", "h5", "h6"];

/// Start tags that end foreign content (`<svg>`, `<math>`) and are read as HTML.
const BREAKOUT: [&str; 44] = [
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

/// Phrasing elements: a removed tag of one joins its neighbours; any other removed tag leaves a
/// space, so the words of two blocks do not run together.
const INLINE: [&str; 29] = [
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "mark", "nobr", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
    "tt", "u", "var",
];

/// The open elements as the tree builder would have them (approximately, see the module docs),
/// with the positions of each name for O(1) look-ups.
#[derive(Default)]
struct Stack {
    open: Vec<String>,
    at: HashMap<String, Vec<usize>>,
}

impl Stack {
    /// The position of the innermost open element named `name`.
    fn top(&self, name: &str) -> Option<usize> {
        self.at.get(name).and_then(|v| v.last().copied())
    }

    fn top_of(&self, names: &[&str]) -> Option<usize> {
        names.iter().filter_map(|n| self.top(n)).max()
    }

    fn current_is(&self, names: &[&str]) -> bool {
        self.open
            .last()
            .is_some_and(|n| names.contains(&n.as_str()))
    }

    /// Closes the elements at positions `i..`.
    fn pop_to(&mut self, i: usize) {
        while self.open.len() > i {
            let name = self.open.pop().expect("len > i");
            self.at.get_mut(&name).expect("pushed").pop();
        }
    }

    /// An implied end tag: closes the outermost open element named in `names` that is inside the
    /// innermost one named in `scope`, with everything inside it.
    fn close_in_scope(&mut self, names: &[&str], scope: &[&str]) {
        let Some(innermost) = self.top_of(names) else {
            return;
        };
        let floor = self.top_of(scope);
        if Some(innermost) > floor {
            let outermost = names
                .iter()
                .filter_map(|n| self.top(n))
                .filter(|&i| Some(i) > floor)
                .min();
            self.pop_to(outermost.expect("innermost is one"));
        }
    }

    /// Opens `name`; false when it is deeper than [`MAX_DEPTH`].
    fn push(&mut self, name: &str) -> bool {
        let i = self.open.len();
        match self.at.get_mut(name) {
            Some(v) => v.push(i),
            None => {
                self.at.insert(name.to_string(), vec![i]);
            }
        }
        self.open.push(name.to_string());
        i < MAX_DEPTH
    }

    /// Inside `<svg>` or `<math>` (that the parser sees).
    fn in_foreign(&self) -> bool {
        self.top_of(&["svg", "math"]).is_some_and(|i| i < MAX_DEPTH)
    }

    /// A start tag (`foreign`: inside `<svg>` or `<math>`); false when it is to be removed (deeper
    /// than [`MAX_DEPTH`]).
    fn start(&mut self, name: &str, self_closing: bool, foreign: bool) -> bool {
        if foreign {
            if !BREAKOUT.contains(&name) {
                return self_closing || self.push(name);
            }
            // The tree builder leaves the foreign content first.
            let i = self.top_of(&["svg", "math"]).expect("in foreign content");
            self.pop_to(i);
        }
        if matches!(name, "html" | "head" | "body" | "frameset") {
            return true;
        }
        // The tree builder's implied end tags.
        if CLOSES_P.contains(&name) {
            self.close_in_scope(&["p"], &BUTTON_SCOPE);
        }
        match name {
            "li" => self.close_in_scope(&["li"], &["ul", "ol", "menu", "dir", "table", "td", "th"]),
            "dt" | "dd" => self.close_in_scope(&["dt", "dd"], &["dl", "table", "td", "th"]),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if self.current_is(&HEADINGS) => {
                self.pop_to(self.open.len() - 1)
            }
            "option" | "optgroup" => {
                if self.current_is(&["option"]) {
                    self.pop_to(self.open.len() - 1);
                }
                if name == "optgroup" && self.current_is(&["optgroup"]) {
                    self.pop_to(self.open.len() - 1);
                }
            }
            "a" | "nobr" | "button" => self.close_in_scope(
                &[name],
                &[
                    "td", "th", "caption", "applet", "object", "marquee", "template",
                ],
            ),
            "tr" => self.close_in_scope(&["tr", "td", "th"], &["table"]),
            "td" | "th" => self.close_in_scope(&["td", "th"], &["table", "tr"]),
            "thead" | "tbody" | "tfoot" | "caption" | "colgroup" => self.close_in_scope(
                &[
                    "thead", "tbody", "tfoot", "caption", "colgroup", "tr", "td", "th",
                ],
                &["table"],
            ),
            "table" => self.close_in_scope(&["table"], &["td", "th", "caption"]),
            "rb" | "rt" | "rp" | "rtc" => {
                self.close_in_scope(&["rb", "rt", "rp", "rtc"], &["ruby"])
            }
            "select" => {
                // A <select> inside a <select> closes it and opens nothing.
                if let Some(i) = self.top("select") {
                    self.pop_to(i);
                    return true;
                }
            }
            // A <form> inside a <form> is ignored.
            "form" if self.top("form").is_some() => return true,
            _ => {}
        }
        if VOID.contains(&name)
            || RAW.contains(&name)
            || (self_closing && matches!(name, "svg" | "math"))
        {
            return true;
        }
        self.push(name)
    }

    /// An end tag; false when it closes an element deeper than [`MAX_DEPTH`] (to be removed).
    fn end(&mut self, name: &str) -> bool {
        match self.top(name) {
            Some(i) => {
                self.pop_to(i);
                i < MAX_DEPTH
            }
            None => true,
        }
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let hay = b.get(from..)?;
    let at = match needle {
        [c] => hay.iter().position(|x| x == c),
        _ => hay.windows(needle.len()).position(|w| w == needle),
    };
    at.map(|i| from + i)
}

/// Past the `>` at or after `from`, or the end of the page.
fn past_gt(b: &[u8], from: usize) -> usize {
    find(b, from, b">").map_or(b.len(), |i| i + 1)
}

/// Reads a tag whose name starts at `from` (after `<` or `</`): its name, lower case, into
/// `name`; returns the position after its `>` and whether it ends in `/>`, or `None` when the
/// page ends inside it (the tokenizer then drops it).
fn read_tag(html: &str, from: usize, name: &mut String) -> Option<(usize, bool)> {
    let b = html.as_bytes();
    let mut i = from;
    while i < b.len() && !is_space(b[i]) && b[i] != b'/' && b[i] != b'>' {
        i += 1;
    }
    name.clear();
    name.push_str(&html[from..i]);
    name.make_ascii_lowercase();
    // Attributes: names, `=`, quoted or unquoted values.
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        match b.get(i)? {
            b'>' => return Some((i + 1, false)),
            b'/' => {
                if b.get(i + 1) == Some(&b'>') {
                    return Some((i + 2, true));
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        // An attribute name (its first character may be `=`).
        i += 1;
        while i < b.len() && !is_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        match b.get(i)? {
            &q @ (b'"' | b'\'') => i = find(b, i + 1, &[q])? + 1,
            _ => {
                while i < b.len() && !is_space(b[i]) && b[i] != b'>' {
                    i += 1;
                }
            }
        }
    }
}

/// The position of the end tag `</name` (any case, then a space, `/` or `>`) that ends the text
/// of a raw-text element, or the end of the page.
fn raw_text_end(b: &[u8], from: usize, name: &str) -> usize {
    if name == "plaintext" {
        return b.len();
    }
    let mut i = from;
    while let Some(lt) = find(b, i, b"</") {
        let after = lt + 2 + name.len();
        if b.get(lt + 2..after)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
            && b.get(after)
                .is_none_or(|&c| is_space(c) || c == b'/' || c == b'>')
        {
            return lt;
        }
        i = lt + 2;
    }
    b.len()
}

/// `html` with the tags of elements nested deeper than [`MAX_DEPTH`] removed (see the module
/// docs), or `None` when no element is that deep: the page is then read as it is.
pub(crate) fn limit_depth(html: &str) -> Option<String> {
    let b = html.as_bytes();
    // Each open element needs a start tag.
    if b.iter().filter(|&&c| c == b'<').count() <= MAX_DEPTH {
        return None;
    }
    let mut stack = Stack::default();
    // Removed tags: byte range and what replaces it.
    let mut cuts: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut name = String::new();
    let mut i = 0;
    while let Some(lt) = find(b, i, b"<") {
        i = match b.get(lt + 1) {
            Some(b'!') if b[lt..].starts_with(b"<!--") => {
                // A comment; `<!-->` and `<!--->` end at once.
                let body = lt + 4;
                if b[body..].starts_with(b">") {
                    body + 1
                } else if b[body..].starts_with(b"->") {
                    body + 2
                } else {
                    let end = find(b, body, b"-->").map(|e| e + 3);
                    let bang = find(b, body, b"--!>").map(|e| e + 4);
                    match (end, bang) {
                        (Some(a), Some(c)) => a.min(c),
                        (a, c) => a.or(c).unwrap_or(b.len()),
                    }
                }
            }
            Some(b'!') if stack.in_foreign() && b[lt..].starts_with(b"<![CDATA[") => {
                find(b, lt, b"]]>").map_or(b.len(), |e| e + 3)
            }
            // A doctype or a bogus comment.
            Some(b'!' | b'?') => past_gt(b, lt),
            Some(b'/') => match b.get(lt + 2) {
                Some(c) if c.is_ascii_alphabetic() => {
                    let Some((end, _)) = read_tag(html, lt + 2, &mut name) else {
                        break;
                    };
                    if !stack.end(&name) {
                        cuts.push((lt, end, separator(&name)));
                    }
                    end
                }
                Some(b'>') => lt + 3,
                _ => past_gt(b, lt),
            },
            Some(c) if c.is_ascii_alphabetic() => {
                let Some((end, self_closing)) = read_tag(html, lt + 1, &mut name) else {
                    break;
                };
                let foreign = stack.in_foreign();
                if !stack.start(&name, self_closing, foreign) {
                    cuts.push((lt, end, separator(&name)));
                }
                if !foreign && RAW.contains(&name.as_str()) {
                    raw_text_end(b, end, &name)
                } else {
                    end
                }
            }
            _ => lt + 1,
        };
    }
    if cuts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(html.len());
    let mut at = 0;
    for (start, end, with) in cuts {
        out.push_str(&html[at..start]);
        out.push_str(with);
        at = end;
    }
    out.push_str(&html[at..]);
    Some(out)
}

fn separator(name: &str) -> &'static str {
    if INLINE.contains(&name) {
        ""
    } else {
        " "
    }
}
