//! Result excerpts: the part of a passage that best shows why it matched, with the query's words
//! marked — as byte ranges into plain text. Nothing here is HTML: front ends wrap the ranges
//! themselves (`<mark>` elements built as DOM nodes in the browser, bold in a terminal).

use crate::keywords::highlight_spans_with;

/// A window of a passage with the query's words marked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Excerpt {
    /// The excerpt text, with `…` where the passage was cut.
    pub text: String,
    /// Byte ranges `(start, end)` in [`Excerpt::text`] of words matching the query's terms
    /// (same tokeniser as BM25, [`crate::keywords`]): on `char` boundaries, sorted, disjoint.
    pub highlights: Vec<(usize, usize)>,
}

/// The stored snippet of a passage: its first `max_chars` characters, cut at a space when one
/// falls in the second half, with `…` when cut (the text alone when it fits). What `lightembed
/// index` and the app store as a document's snippet, so both show the same text.
///
/// ```
/// use lightembed_index::snippet::head;
/// assert_eq!(head("Ownership rules apply here", 16), "Ownership rules…");
/// assert_eq!(head("short", 16), "short");
/// ```
pub fn head(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(max_chars).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max_chars / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end())
}

/// A search result as front ends show it: the hit's id, title, URL and score with the excerpt of
/// its stored snippet that holds the query's words ([`excerpt`]). The one result type of
/// `lightembed search --json` and the app's worker (with the `serde` feature it is their wire
/// form: `{"id", "title", "url", "snippet", "highlights": [[start, end], …], "score"}`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShownHit {
    /// The passage's id.
    pub id: String,
    /// Its title (page title, or `page › heading`).
    pub title: String,
    /// Its URL, with the section's anchor.
    pub url: String,
    /// The excerpt: plain text, `…` where cut.
    pub snippet: String,
    /// Byte ranges `(start, end)` of the query's words in `snippet` — to be marked as text
    /// (`<mark>` nodes built as DOM elements, never HTML).
    #[cfg_attr(feature = "serde", serde(default))]
    pub highlights: Vec<(usize, usize)>,
    /// The ranking score: fused (hybrid, `[0, 1]` plus page evidence), cosine (vector) or BM25
    /// (keyword).
    pub score: f32,
}

impl ShownHit {
    /// `hit` with the excerpt of its snippet for `query` (`stem`: the index's
    /// [`crate::Index::keyword_stemming`]; `max_chars` as [`excerpt`], 0 = the whole snippet).
    pub fn new(hit: crate::Hit, query: &str, stem: bool, max_chars: usize) -> ShownHit {
        let e = excerpt(&hit.payload.snippet, query, stem, max_chars);
        ShownHit {
            id: hit.id,
            title: hit.payload.title,
            url: hit.payload.url,
            snippet: e.text,
            highlights: e.highlights,
            score: hit.score,
        }
    }
}

/// The excerpt of `text` (at most `max_chars` characters of it, plus `…` marks) that holds the
/// most words of `query`, cut at spaces, with those words marked. Without any match it is the
/// start of `text`. `stem` must be the index's [`crate::Index::keyword_stemming`] so the marks
/// agree with the keyword ranking. `max_chars` 0 means no limit.
///
/// ```
/// use lightembed_index::snippet::excerpt;
/// let e = excerpt("Ownership rules. Each value has an owner. Borrowing lends it.", "borrow", true, 30);
/// assert_eq!(e.text, "… an owner. Borrowing lends it.");
/// assert_eq!(&e.text[e.highlights[0].0..e.highlights[0].1], "Borrowing");
/// ```
pub fn excerpt(text: &str, query: &str, stem: bool, max_chars: usize) -> Excerpt {
    excerpt_with(text, query, &[], stem, max_chars)
}

/// [`excerpt`] that also marks (and looks for) the words of the terms `extra`: the corrections of
/// the query's typos ([`crate::fragments::FragmentedIndex::corrections`], their second parts), so
/// a result found through a corrected word shows that word.
///
/// ```
/// use lightembed_index::snippet::excerpt_with;
/// let e = excerpt_with("Each value has an owner. Borrowing lends it.", "borowing", &["borrow".into()], true, 0);
/// assert_eq!(&e.text[e.highlights[0].0..e.highlights[0].1], "Borrowing");
/// ```
pub fn excerpt_with(
    text: &str,
    query: &str,
    extra: &[String],
    stem: bool,
    max_chars: usize,
) -> Excerpt {
    let spans = highlight_spans_with(text, query, extra, stem);
    let n_chars = text.chars().count();
    if max_chars == 0 || n_chars <= max_chars {
        return Excerpt {
            text: text.to_string(),
            highlights: spans,
        };
    }
    // Char index ↔ byte offset.
    let bytes: Vec<usize> = text
        .char_indices()
        .map(|(b, _)| b)
        .chain([text.len()])
        .collect();
    let char_at = |b: usize| bytes.partition_point(|&x| x < b);
    // Candidate windows start a little before each match; keep the one covering most matches.
    let lead = max_chars / 5;
    let mut best = (0usize, 0usize); // (matches covered, start char)
    for &(s, _) in &spans {
        let start = char_at(s).saturating_sub(lead).min(n_chars - max_chars);
        let end_byte = bytes[start + max_chars];
        let covered = spans
            .iter()
            .filter(|&&(a, b)| a >= bytes[start] && b <= end_byte)
            .count();
        if covered > best.0 {
            best = (covered, start);
        }
    }
    let (mut from, mut to) = (bytes[best.1], bytes[best.1 + max_chars]);
    // Cut at spaces (unless that would lose more than a third of the window).
    if from > 0 {
        if let Some(i) = text[from..to].find(' ') {
            if i < (to - from) / 3 {
                from += i + 1;
            }
        }
    }
    if to < text.len() {
        if let Some(i) = text[from..to].rfind(' ') {
            if from + i > from + (to - from) * 2 / 3 {
                to = from + i;
            }
        }
    }
    let prefix = if from > 0 { "… " } else { "" };
    let body = text[from..to].trim_end();
    let mut out = String::with_capacity(body.len() + 8);
    out.push_str(prefix);
    out.push_str(body);
    if to < text.len() {
        out.push_str(" …");
    }
    let shift = prefix.len();
    let highlights = spans
        .into_iter()
        .filter(|&(a, b)| a >= from && b <= from + body.len())
        .map(|(a, b)| (a - from + shift, b - from + shift))
        .collect();
    Excerpt {
        text: out,
        highlights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(e: &Excerpt) -> String {
        let mut s = String::new();
        let mut at = 0;
        for &(a, b) in &e.highlights {
            s.push_str(&e.text[at..a]);
            s.push('[');
            s.push_str(&e.text[a..b]);
            s.push(']');
            at = b;
        }
        s.push_str(&e.text[at..]);
        s
    }

    #[test]
    fn short_text_is_whole_with_marks() {
        let e = excerpt("Read a file line by line.", "reading files", true, 200);
        assert_eq!(marked(&e), "[Read] a [file] line by line.");
    }

    #[test]
    fn window_moves_to_the_matches() {
        let text = "Intro words that say nothing much at all here. Then the part about lifetimes: \
                    a lifetime annotation names a scope. More filler follows after this sentence.";
        let e = excerpt(text, "lifetime annotation", true, 60);
        assert_eq!(
            marked(&e),
            "… part about [lifetimes]: a [lifetime] [annotation] names a scope. …"
        );
        assert!(e.text.chars().count() <= 60 + 4);
    }

    #[test]
    fn no_match_gives_the_start() {
        let e = excerpt(
            "alpha beta gamma delta epsilon zeta eta theta",
            "zzz",
            true,
            20,
        );
        assert_eq!(e.text, "alpha beta gamma …");
        assert!(e.highlights.is_empty());
    }

    #[test]
    fn markup_in_the_text_stays_text() {
        let e = excerpt(
            "Use <b>bold</b> & <script>x</script> tags",
            "script",
            true,
            0,
        );
        assert_eq!(marked(&e), "Use <b>bold</b> & <[script]>x</[script]> tags");
    }

    #[test]
    fn multibyte_text_cuts_on_char_boundaries() {
        let text = "Größe über alles. ".repeat(20) + "Das Ziel ist die Größe der Suche.";
        let e = excerpt(&text, "ziel", true, 25);
        assert!(marked(&e).contains("[Ziel]"), "{}", marked(&e));
    }
}
