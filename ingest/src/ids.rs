//! Anchors, URLs and ids: percent-encoding of URL path segments, GitHub-style heading slugs,
//! names made unique within a set.

use std::collections::HashSet;

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
/// use lightembed_ingest::url_path_encode;
/// assert_eq!(url_path_encode("javascript:alert(1).html"), "javascript%3Aalert(1).html");
/// assert_eq!(url_path_encode("a b#c.html"), "a%20b%23c.html");
/// ```
pub fn url_path_encode(name: &str) -> String {
    url_encode(name).replace(':', "%3A")
}

/// Names unique within a set: `base` the first time, then `base{sep}{first}`,
/// `base{sep}{first + 1}`, … (a suffixed name that is itself taken is skipped). Heading anchors
/// use `-` from 1, GitHub style (`intro`, `intro-1`); `lightembed index` makes passage ids unique
/// across inputs with `~` from 2 (`page.html#intro~2`).
///
/// ```
/// use lightembed_ingest::Uniquer;
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
