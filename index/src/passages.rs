//! Text → passages for indexing: the one splitting rule shared by the browser app and
//! `lightembed index`, so a site-build index and an in-browser index cut text the same way.
//!
//! Pure string functions, no dependencies.

/// A passage is closed once it reaches this many words.
pub const TARGET_WORDS: usize = 150;
/// A passage never grows past this many words by adding another paragraph or sentence.
pub const MAX_WORDS: usize = 300;

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits text into passages of about [`TARGET_WORDS`] words. Paragraphs (blank-line separated;
/// `\r\n` line ends are accepted) are kept together when they fit; a paragraph longer than
/// [`MAX_WORDS`] is split on sentence ends, and a sentence longer than [`MAX_WORDS`] (code, lists
/// without punctuation, CJK) into runs of [`TARGET_WORDS`] words, so no passage exceeds
/// [`MAX_WORDS`]. Whitespace inside a passage is collapsed. Empty text → no passages.
pub fn split_passages(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n");
    let mut units: Vec<String> = Vec::new();
    for para in text
        .split("\n\n")
        .map(collapse_ws)
        .filter(|p| !p.is_empty())
    {
        if para.split_whitespace().count() <= MAX_WORDS {
            units.push(para);
            continue;
        }
        for sentence in split_sentences(&para) {
            let words: Vec<&str> = sentence.split_whitespace().collect();
            if words.len() <= MAX_WORDS {
                units.push(sentence);
            } else {
                units.extend(words.chunks(TARGET_WORDS).map(|c| c.join(" ")));
            }
        }
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut n = 0;
    for u in units {
        let w = u.split_whitespace().count();
        if n > 0 && (n + w > MAX_WORDS || n >= TARGET_WORDS) {
            out.push(std::mem::take(&mut cur));
            n = 0;
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&u);
        n += w;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn split_sentences(para: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = para.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
            out.push(para[start..=i].trim().to_string());
            start = i + 1;
        }
    }
    let tail = para[start..].trim();
    if !tail.is_empty() {
        out.push(tail.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_respect_word_budget() {
        let para = "word ".repeat(120);
        let text = format!("{para}\n\n{para}\n\n{para}");
        let ps = split_passages(&text);
        // 120 < TARGET: the second paragraph joins the first (240 ≤ MAX); the third starts anew.
        let sizes: Vec<usize> = ps.iter().map(|p| p.split_whitespace().count()).collect();
        assert_eq!(sizes, vec![240, 120]);
        let long = "This is a sentence. ".repeat(200);
        let ps = split_passages(&long);
        assert_eq!(ps.len(), 6);
        assert!(ps.iter().all(|p| p.split_whitespace().count() <= MAX_WORDS));
        assert_eq!(ps[0], "This is a sentence. ".repeat(38).trim_end());
        assert!(split_passages("  \n\n ").is_empty());
    }

    #[test]
    fn no_passage_exceeds_max_words() {
        // 1,000 words without a sentence end (code, CJK with spaces, word lists).
        let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        let ps = split_passages(&words.join(" "));
        let sizes: Vec<usize> = ps.iter().map(|p| p.split_whitespace().count()).collect();
        assert_eq!(sizes, vec![150, 150, 150, 150, 150, 150, 100]);
        assert_eq!(ps.join(" "), words.join(" "));
    }

    #[test]
    fn crlf_paragraphs_split_like_lf() {
        let para = "word ".repeat(120);
        let lf = format!("{para}\n\n{para}\n\n{para}");
        assert_eq!(
            split_passages(&lf.replace('\n', "\r\n")),
            split_passages(&lf)
        );
        assert_eq!(split_passages(&lf).len(), 2);
    }

    #[test]
    fn sentences_split_on_terminal_punctuation() {
        assert_eq!(
            split_sentences("One. Two? Three! Four"),
            vec!["One.", "Two?", "Three!", "Four"]
        );
        assert_eq!(split_sentences("v1.2 stays"), vec!["v1.2 stays"]);
    }
}
