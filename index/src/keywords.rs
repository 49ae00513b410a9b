//! Keyword search: the tokeniser and the BM25 (Okapi) scoring behind [`Index::keyword_search`],
//! the lexical half of hybrid search.
//!
//! # Tokeniser ([`terms`], [`terms_with`])
//!
//! Every character is folded, then split:
//!
//! 1. **Folding.** NFKD (compatibility decomposition: `ﬁ` → `fi`, fullwidth `Ａ` → `A`, `²` → `2`),
//!    accents dropped (`café` → `cafe`, `naïve` → `naive`; [`is_accent`]: the combining
//!    diacritics of Latin, Greek and Cyrillic, and the optional vowel points of Arabic and Hebrew —
//!    never a script's own vowel signs, viramas or tone marks: Devanagari `दिन` "day" and `दान`
//!    "donation" stay apart, as do Thai tone marks), lowercase, `ß` →
//!    `ss` (`Größe` → `grosse`) and the dotless `ı` → `i`, so Turkish `I`, `ı`, `İ` and `i` all
//!    fold alike (`IŞIK`, `ışık` and ASCII-typed `isik` match; the dot of `İ` is a combining mark
//!    after NFKD; since index layout keyword flag bit 1 and fragments layout v2 — an older index
//!    reads its terms through [`refold_legacy_term`]). Soft hyphens and zero-width characters
//!    (U+00AD, U+200B–U+200D, U+2060, U+FEFF) are ignored like combining marks, so they never
//!    split a word.
//! 2. **Splitting.** A token is a maximal run of alphanumeric characters or `_`, so
//!    `read_to_string` and `utf8` are single tokens; a run of `_` alone is no token. Everything
//!    else (spaces, punctuation, symbols) separates tokens. Each CJK ideograph, hiragana or
//!    katakana character and Hangul syllable or jamo is a token of its own (NFKC-normalised:
//!    halfwidth `ｶ` → `カ`), so text written without spaces still matches character by character.
//! 3. **Stemming** (optional, on by default in an [`Index`]). The English Snowball stemmer
//!    (`rust-stemmers`, Porter 2) is applied to tokens made only of ASCII letters `a`–`z` after
//!    folding: `running` → `run`, `indexes` → `index`. Tokens with digits, `_` or letters of
//!    other scripts are kept as they are (`read_to_string`, `utf8`, `москва`).
//!
//! The same function tokenises documents and queries; an index records whether it stems (a flag
//! in its bytes, [`Index::keyword_stemming`]) so its queries are tokenised like its documents.
//!
//! # Scoring
//!
//! BM25 (Robertson et al., Okapi at TREC-3) over the **live** documents (tombstoned slots are
//! excluded from `N`, from every `df`, from `avgdl` and from the results):
//!
//! ```text
//! score(q, d) = Σ_{t ∈ q}  idf(t) · tf(t,d)·(k1 + 1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//! idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//! ```
//!
//! with [`K1`] = 1.2 and [`B`] = 0.75, `|d|` the number of tokens of `d` (all of them: there is
//! no stop-word list — common words simply have a low `idf`), and `avgdl` the mean `|d|` over
//! live documents. `q` is the query's *distinct* terms that occur in the vocabulary; a term
//! repeated in the query counts once. Every `idf` is positive, so every document that contains a
//! query term scores above 0.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use lightembed::unicode::{decompose_compatible, is_combining_mark, nfkc_char};
use rust_stemmers::{Algorithm, Stemmer};

use crate::util::{sort_best_first, Scored};

#[cfg(doc)]
use crate::Index;

/// BM25 term-frequency saturation `k1` = **1.2**: a term's contribution approaches
/// `idf·(k1 + 1)` as its frequency in a document grows.
pub const K1: f32 = 1.2;

/// BM25 length normalisation `b` = **0.75**: `0` ignores document length, `1` fully normalises
/// term frequencies by `|d|/avgdl`.
pub const B: f32 = 0.75;

/// The terms of `text` with English stemming: [`terms_with`]`(text, true)`. See the module docs
/// for the rules.
///
/// ```
/// use lightembed_index::keywords::terms;
/// assert_eq!(terms("Running the café's read_to_string()"), ["run", "the", "cafe", "s", "read_to_string"]);
/// assert_eq!(terms("東京タワー"), ["東", "京", "タ", "ワ", "ー"]);
/// ```
pub fn terms(text: &str) -> Vec<String> {
    terms_with(text, true)
}

/// The terms of `text` in order of appearance (repeats kept): folded, split, and stemmed when
/// `stem` is `true` (see the module docs).
///
/// ```
/// use lightembed_index::keywords::terms_with;
/// assert_eq!(terms_with("Größe der Indexes", false), ["grosse", "der", "indexes"]);
/// assert_eq!(terms_with("Größe der Indexes", true), ["gross", "der", "index"]);
/// ```
pub fn terms_with(text: &str, stem: bool) -> Vec<String> {
    let mut out = Vec::new();
    tokenize(text, stem, &mut |t, _, _| out.push(t.to_owned()));
    out
}

/// The term a legacy index (written before `ı` folded to `i`) holds as `term`, as this
/// tokeniser makes it: the same word re-tokenised with `ı` → `i` (and then English-stemmed when
/// `stem` and the result is all `a`–`z`, as a new index would have it). Terms without `ı` are
/// unchanged.
///
/// ```
/// use lightembed_index::keywords::refold_legacy_term;
/// assert_eq!(refold_legacy_term("ısık", false), "isik");
/// assert_eq!(refold_legacy_term("café", true), "café");
/// ```
pub fn refold_legacy_term(term: &str, stem: bool) -> String {
    if !term.contains('ı') {
        return term.to_owned();
    }
    let folded = term.replace('ı', "i");
    let mut out = terms_with(&folded, stem);
    if out.len() == 1 {
        out.pop().unwrap_or(folded)
    } else {
        folded
    }
}

/// Whether an index for the model `model_id` should stem its keyword text by default: `true`
/// unless the id names a language other than English by the project's scheme
/// `lightembed-{lang}-{n}l` (docs/architecture.md, "Model identities"). The stemmer is English
/// Snowball, which would cut Turkish or German words by English rules (`lightembed-tr-0l` →
/// `false`); ids outside the scheme keep the historical default (`true`).
///
/// ```
/// use lightembed_index::keywords::default_stemming;
/// assert!(default_stemming("lightembed-en-0l"));
/// assert!(!default_stemming("lightembed-tr-0l"));
/// assert!(default_stemming("my-model"));
/// ```
pub fn default_stemming(model_id: &str) -> bool {
    match model_id.strip_prefix("lightembed-") {
        Some(rest) => rest.split('-').next() == Some("en"),
        None => true,
    }
}

/// Byte ranges in `text` of the words whose term (same tokeniser, same `stem`) is one of
/// `query`'s terms, for highlighting a snippet. Pass the index's [`Index::keyword_stemming`].
///
/// Ranges lie on `char` boundaries, are sorted and never overlap; a range covers the whole
/// source word, accents included (`"Café"` for the query `cafe`). Adjacent matches stay
/// separate ranges (each CJK character is its own word). The caller wraps them for display —
/// as text: nothing here is HTML.
///
/// ```
/// use lightembed_index::keywords::highlight_spans;
/// let text = "Indexing a Café";
/// let spans = highlight_spans(text, "index cafe", true);
/// assert_eq!(spans, [(0, 8), (11, 16)]);
/// assert_eq!(&text[11..16], "Café");
/// ```
pub fn highlight_spans(text: &str, query: &str, stem: bool) -> Vec<(usize, usize)> {
    highlight_spans_with(text, query, &[], stem)
}

/// [`highlight_spans`] marking also the words whose term is one of `extra` (terms as the index
/// holds them: folded, and stemmed when `stem`) — the corrections of a query's typos
/// ([`crate::fragments::FragmentedIndex::corrections`]).
///
/// ```
/// use lightembed_index::keywords::highlight_spans_with;
/// let text = "Borrowing rules";
/// assert_eq!(highlight_spans_with(text, "borowing", &["borrow".to_string()], true), [(0, 9)]);
/// ```
pub fn highlight_spans_with(
    text: &str,
    query: &str,
    extra: &[String],
    stem: bool,
) -> Vec<(usize, usize)> {
    let mut wanted: BTreeSet<String> = terms_with(query, stem).into_iter().collect();
    wanted.extend(extra.iter().cloned());
    // Function words carry no match worth showing ("the", "is" would be marked everywhere);
    // they still count in BM25, where their low idf keeps them weak.
    if wanted.len() > 1 {
        let stop: BTreeSet<String> = terms_with(HIGHLIGHT_STOP_WORDS, stem).into_iter().collect();
        if wanted.iter().any(|t| !stop.contains(t)) {
            wanted.retain(|t| !stop.contains(t));
        }
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    if wanted.is_empty() {
        return out;
    }
    tokenize(text, stem, &mut |t, start, end| {
        if !wanted.contains(t) {
            return;
        }
        // One source character can yield several terms (`½` → `1`, `2`): merge what overlaps.
        match out.last_mut() {
            Some(last) if start < last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    });
    out
}

/// English function words not marked by [`highlight_spans`] when the query has other words.
const HIGHLIGHT_STOP_WORDS: &str = "a an and are as at be by can do does for from how i in is it \
    of on or that the this to what when where which who why will with you";

/// CJK characters that are tokens on their own: Han ideographs (unified, extensions,
/// compatibility, `々〆〇`), hiragana, katakana (with the phonetic extensions and halfwidth
/// forms) and Hangul (syllables, jamo, compatibility and halfwidth jamo).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF       // Hangul Jamo
        | 0x3005..=0x3007     // 々 〆 〇
        | 0x3040..=0x309F     // Hiragana
        | 0x30A0..=0x30FF     // Katakana
        | 0x3130..=0x318F     // Hangul Compatibility Jamo
        | 0x31F0..=0x31FF     // Katakana Phonetic Extensions
        | 0x3400..=0x4DBF     // CJK Extension A
        | 0x4E00..=0x9FFF     // CJK Unified Ideographs
        | 0xA960..=0xA97F     // Hangul Jamo Extended-A
        | 0xAC00..=0xD7A3     // Hangul Syllables
        | 0xD7B0..=0xD7FF     // Hangul Jamo Extended-B
        | 0xF900..=0xFAFF     // CJK Compatibility Ideographs
        | 0xFF66..=0xFFDC     // Halfwidth Katakana and Hangul
        | 0x20000..=0x323AF   // CJK Extensions B–H, Compatibility Supplement
    )
}

/// True for a combining mark that folding drops: an accent in the sense of the scripts that
/// write them optionally — the Combining Diacritical Marks blocks (Latin, Greek, Cyrillic:
/// U+0300–U+036F, U+1AB0–U+1AFF, U+1DC0–U+1DFF, U+20D0–U+20FF, U+FE20–U+FE2F), Cyrillic's
/// combining titlo and friends (U+0483–U+0489), Arabic's tashkeel (U+064B–U+065F, U+0670) and
/// Hebrew's points and cantillation (U+0591–U+05C7), which writers mostly leave out. Every other
/// combining mark (Indic vowel signs and viramas, Thai vowels and tone marks, …) is part of the
/// letter it follows and is kept: removing it changes the word.
pub fn is_accent(c: char) -> bool {
    matches!(
        c,
        '\u{0300}'..='\u{036F}'
            | '\u{0483}'..='\u{0489}'
            | '\u{0591}'..='\u{05C7}'
            | '\u{064B}'..='\u{065F}'
            | '\u{0670}'
            | '\u{1AB0}'..='\u{1AFF}'
            | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}'
            | '\u{FE20}'..='\u{FE2F}'
    ) && is_combining_mark(c)
}

/// Format characters that never split a word (soft hyphen, zero-width space/joiners, word
/// joiner, BOM): ignored like combining marks.
fn is_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{AD}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// The token of one CJK character: its NFKC form, alphanumerics only (may be empty, e.g. for a
/// halfwidth voiced sound mark).
fn cjk_token(c: char) -> String {
    let mut token = String::new();
    nfkc_char(c, |d| {
        if d.is_alphanumeric() && !is_combining_mark(d) {
            token.push(d);
        }
    });
    token
}

/// Tokeniser state: the word being built and where it lies in the source text.
struct Tokens<'e> {
    stemmer: Option<Stemmer>,
    word: String,
    start: usize,
    end: usize,
    emit: &'e mut dyn FnMut(&str, usize, usize),
}

impl Tokens<'_> {
    fn push(&mut self, c: char, start: usize, end: usize) {
        if self.word.is_empty() {
            self.start = start;
        }
        self.word.push(c);
        self.end = end;
    }

    fn flush(&mut self) {
        let Tokens {
            stemmer,
            word,
            start,
            end,
            emit,
        } = self;
        if word.is_empty() {
            return;
        }
        if !word.bytes().all(|b| b == b'_') {
            let term = match stemmer {
                Some(s) if word.bytes().all(|b| b.is_ascii_lowercase()) => s.stem(word),
                _ => Cow::Borrowed(word.as_str()),
            };
            emit(&term, *start, *end);
        }
        word.clear();
    }

    fn single(&mut self, token: &str, start: usize, end: usize) {
        self.flush();
        if !token.is_empty() {
            (self.emit)(token, start, end);
        }
    }
}

/// Calls `emit(term, start, end)` for every term of `text` in order, with the byte range of the
/// source characters it came from.
fn tokenize(text: &str, stem: bool, emit: &mut dyn FnMut(&str, usize, usize)) {
    let mut t = Tokens {
        stemmer: stem.then(|| Stemmer::create(Algorithm::English)),
        word: String::new(),
        start: 0,
        end: 0,
        emit,
    };
    for (i, c) in text.char_indices() {
        let j = i + c.len_utf8();
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() || c == '_' {
                t.push(c.to_ascii_lowercase(), i, j);
            } else {
                t.flush();
            }
            continue;
        }
        if is_cjk(c) {
            t.single(&cjk_token(c), i, j);
            continue;
        }
        let mut only_marks = true;
        decompose_compatible(c, |d| {
            if is_accent(d) || is_ignorable(d) {
                return;
            }
            if is_combining_mark(d) {
                // A script's own mark (a vowel sign, virama, tone mark) belongs to the word it
                // follows; alone (no word open) it is no token.
                if !t.word.is_empty() {
                    t.push(d, i, j);
                }
                return;
            }
            only_marks = false;
            for l in d.to_lowercase() {
                if l == 'ß' {
                    t.push('s', i, j);
                    t.push('s', i, j);
                } else if l == 'ı' {
                    t.push('i', i, j);
                } else if is_accent(l) {
                    // lowercase mappings may add a mark (İ); folded away like any accent
                } else if is_cjk(l) {
                    t.single(&cjk_token(l), i, j);
                } else if l.is_alphanumeric() || l == '_' {
                    t.push(l, i, j);
                } else {
                    t.flush();
                }
            }
        });
        // a (decomposed) accent or format character continues the open word: highlights cover it
        if only_marks && !t.word.is_empty() {
            t.end = j;
        }
    }
    t.flush();
}

/// Per-query scratch for [`Keywords::top`]: a dense score per slot (0 = untouched) and the slots
/// touched, so clearing costs only what the query touched.
#[derive(Debug, Default)]
struct Accum {
    scores: Vec<f32>,
    touched: Vec<u32>,
}

/// The keyword side of an index: vocabulary, each slot's sorted `(term id, tf)` list, postings
/// and live statistics. Slot-aligned with the rest of the index and maintained by insert, delete
/// and compaction like the graph; deleted slots keep their terms (and postings) until compaction
/// but are left out of `df`, `live_len` and every result.
#[derive(Debug)]
pub(crate) struct Keywords {
    /// English stemming on (layout flag bit 0).
    pub(crate) stem: bool,
    /// Term id → term, in order of first appearance.
    pub(crate) vocab: Vec<String>,
    /// Term → term id.
    ids: HashMap<String, u32>,
    /// Slot `s`'s terms are `pairs[off[s]..off[s + 1]]`.
    off: Vec<usize>,
    /// `(term id, tf)` per slot, term ids strictly increasing within a slot, `tf ≥ 1`.
    pairs: Vec<(u32, u32)>,
    /// `|d|` per slot: Σ tf.
    len: Vec<u32>,
    /// Term id → `(slot, tf)` in slot order, deleted slots included.
    postings: Vec<Vec<(u32, u32)>>,
    /// Term id → number of live slots containing it.
    df: Vec<u32>,
    /// Σ `|d|` over live slots.
    live_len: u64,
    /// Reusable [`Accum`]s (`top` takes `&self`).
    scratch: Mutex<Vec<Accum>>,
    /// Read from bytes written before `ı` folded to `i` (layout keyword flag bit 1 clear); the
    /// terms were re-folded on load and [`crate::Index::to_bytes`] writes the current layout.
    pub(crate) refolded: bool,
}

impl Clone for Keywords {
    fn clone(&self) -> Self {
        Keywords {
            stem: self.stem,
            vocab: self.vocab.clone(),
            ids: self.ids.clone(),
            off: self.off.clone(),
            pairs: self.pairs.clone(),
            len: self.len.clone(),
            postings: self.postings.clone(),
            df: self.df.clone(),
            live_len: self.live_len,
            scratch: Mutex::new(Vec::new()),
            refolded: self.refolded,
        }
    }
}

impl Keywords {
    pub(crate) fn new(stem: bool) -> Keywords {
        Keywords {
            stem,
            vocab: Vec::new(),
            ids: HashMap::new(),
            off: vec![0],
            pairs: Vec::new(),
            len: Vec::new(),
            postings: Vec::new(),
            df: Vec::new(),
            live_len: 0,
            scratch: Mutex::new(Vec::new()),
            refolded: false,
        }
    }

    /// Number of slots (live + deleted).
    pub(crate) fn slots(&self) -> usize {
        self.len.len()
    }

    /// Slot `slot`'s `(term id, tf)` list, term ids increasing.
    pub(crate) fn terms_of(&self, slot: u32) -> &[(u32, u32)] {
        let s = slot as usize;
        &self.pairs[self.off[s]..self.off[s + 1]]
    }

    /// Adds the next slot (live) with the terms of `text`. Stops counting at `u32::MAX` tokens.
    pub(crate) fn push_text(&mut self, text: &str) {
        let mut ids: Vec<u32> = Vec::new();
        let Keywords {
            stem,
            vocab,
            ids: map,
            postings,
            df,
            ..
        } = self;
        tokenize(text, *stem, &mut |term, _, _| {
            if ids.len() >= u32::MAX as usize {
                return;
            }
            let id = match map.get(term) {
                Some(&id) => id,
                None => {
                    let id = vocab.len() as u32;
                    vocab.push(term.to_owned());
                    map.insert(term.to_owned(), id);
                    postings.push(Vec::new());
                    df.push(0);
                    id
                }
            };
            ids.push(id);
        });
        ids.sort_unstable();
        let mut list: Vec<(u32, u32)> = Vec::new();
        for id in ids {
            match list.last_mut() {
                Some((last, tf)) if *last == id => *tf += 1,
                _ => list.push((id, 1)),
            }
        }
        self.push_slot(&list, false);
    }

    /// Appends a slot with a sorted `(term id, tf)` list: term ids strictly increasing and
    /// `< vocab.len()`, every `tf ≥ 1` (the loader checks this before calling).
    pub(crate) fn push_slot(&mut self, list: &[(u32, u32)], deleted: bool) {
        let slot = self.len.len() as u32;
        let mut total = 0u32;
        for &(id, tf) in list {
            self.postings[id as usize].push((slot, tf));
            if !deleted {
                self.df[id as usize] += 1;
            }
            total = total.saturating_add(tf);
        }
        self.pairs.extend_from_slice(list);
        self.off.push(self.pairs.len());
        self.len.push(total);
        if !deleted {
            self.live_len += total as u64;
        }
    }

    /// Takes a live slot out of the statistics (its terms and postings stay until compaction).
    pub(crate) fn delete(&mut self, slot: u32) {
        let s = slot as usize;
        for &(id, _) in &self.pairs[self.off[s]..self.off[s + 1]] {
            self.df[id as usize] -= 1;
        }
        self.live_len -= self.len[s] as u64;
    }

    /// A keyword side holding only the slots not `deleted`, renumbered in order; the vocabulary
    /// keeps the terms still used by a live slot, in their previous order.
    pub(crate) fn compacted(&self, deleted: &[bool]) -> Keywords {
        let mut remap = vec![u32::MAX; self.vocab.len()];
        let mut vocab = Vec::new();
        for (id, term) in self.vocab.iter().enumerate() {
            if self.df[id] > 0 {
                remap[id] = vocab.len() as u32;
                vocab.push(term.clone());
            }
        }
        let mut out = Keywords::with_vocab(self.stem, vocab);
        out.refolded = self.refolded;
        let mut list = Vec::new();
        for (slot, _) in deleted.iter().enumerate().filter(|(_, &d)| !d) {
            list.clear();
            // remap is increasing on used terms, so the list stays sorted
            list.extend(
                self.terms_of(slot as u32)
                    .iter()
                    .map(|&(id, tf)| (remap[id as usize], tf)),
            );
            out.push_slot(&list, false);
        }
        out
    }

    /// An empty keyword side over a known, duplicate-free vocabulary.
    pub(crate) fn with_vocab(stem: bool, vocab: Vec<String>) -> Keywords {
        let ids = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        Keywords {
            postings: vec![Vec::new(); vocab.len()],
            df: vec![0; vocab.len()],
            ids,
            vocab,
            ..Keywords::new(stem)
        }
    }

    /// The query's distinct known term ids, in order of first appearance in `query`.
    pub(crate) fn query_terms(&self, query: &str) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        tokenize(query, self.stem, &mut |term, _, _| {
            if let Some(&id) = self.ids.get(term) {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        });
        out
    }

    /// `idf` per query term (0 for an unknown id or a term no live slot contains) and `avgdl`,
    /// for `n_live` live slots. `idf` is computed in `f64` and rounded once, so it is the same
    /// `f32` on every target.
    fn weights(&self, terms: &[u32], n_live: usize) -> (Vec<f32>, f32) {
        let idf = terms
            .iter()
            .map(|&t| idf(n_live, self.df.get(t as usize).copied().unwrap_or(0)))
            .collect();
        (idf, avgdl(self.live_len, n_live))
    }

    /// One term's BM25 contribution: [`term_score`].
    #[inline]
    fn term_score(idf: f32, tf: u32, dl: u32, avgdl: f32) -> f32 {
        term_score(idf, tf, dl, avgdl)
    }

    /// The `n` best live slots for `terms` by BM25, best first, ties by slot (insertion order).
    /// Slots scoring 0 (no query term) are never returned.
    pub(crate) fn top(
        &self,
        terms: &[u32],
        n: usize,
        deleted: &[bool],
        n_live: usize,
    ) -> Vec<Scored> {
        if n == 0 || n_live == 0 || terms.is_empty() {
            return Vec::new();
        }
        let (idf, avgdl) = self.weights(terms, n_live);
        let mut acc = {
            let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            pool.pop().unwrap_or_default()
        };
        if acc.scores.len() < self.slots() {
            acc.scores.resize(self.slots(), 0.0);
        }
        // accumulate term by term, in query order (the order `score` sums in)
        for (&t, &w) in terms.iter().zip(&idf) {
            if w == 0.0 {
                continue;
            }
            for &(slot, tf) in &self.postings[t as usize] {
                if deleted[slot as usize] {
                    continue;
                }
                let x = Self::term_score(w, tf, self.len[slot as usize], avgdl);
                if x <= 0.0 {
                    continue; // never in practice (idf, tf > 0); keeps "score 0 = untouched" true
                }
                let s = &mut acc.scores[slot as usize];
                if *s == 0.0 {
                    acc.touched.push(slot);
                }
                *s += x;
            }
        }
        let mut found: Vec<Scored> = acc
            .touched
            .iter()
            .map(|&slot| Scored {
                score: acc.scores[slot as usize],
                id: slot,
            })
            .collect();
        for &slot in &acc.touched {
            acc.scores[slot as usize] = 0.0;
        }
        acc.touched.clear();
        {
            let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            if pool.len() < 64 {
                pool.push(acc);
            }
        }
        if found.len() > n {
            found.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
            found.truncate(n);
        }
        sort_best_first(&mut found);
        found
    }

    /// BM25 of one slot for `terms` (0 for a deleted or unknown slot): the same value
    /// [`Keywords::top`] gives that slot.
    pub(crate) fn score(&self, terms: &[u32], slot: u32, deleted: &[bool], n_live: usize) -> f32 {
        let s = slot as usize;
        if s >= self.slots() || deleted[s] || n_live == 0 || terms.is_empty() {
            return 0.0;
        }
        let (idf, avgdl) = self.weights(terms, n_live);
        let list = self.terms_of(slot);
        let dl = self.len[s];
        let mut score = 0.0f32;
        for (&t, &w) in terms.iter().zip(&idf) {
            if w == 0.0 {
                continue;
            }
            if let Ok(i) = list.binary_search_by_key(&t, |&(id, _)| id) {
                let x = Self::term_score(w, list[i].1, dl, avgdl);
                if x > 0.0 {
                    score += x;
                }
            }
        }
        score
    }

    /// Live statistics for tests: `(Σ |d| over live slots, df per term id)`.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> (u64, &[u32]) {
        (self.live_len, &self.df)
    }
}

/// BM25 `idf` of a term found in `df` of `n` documents (0 when `df` is 0), computed in `f64` and
/// rounded once, so it is the same `f32` on every target. Shared by [`crate::Index`] and
/// [`crate::fragments`], so both score alike.
pub(crate) fn idf(n: usize, df: u32) -> f32 {
    if df == 0 {
        return 0.0;
    }
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// Mean document length `Σ|d| / n` (1 for an empty collection).
pub(crate) fn avgdl(total_len: u64, n: usize) -> f32 {
    if n == 0 {
        1.0
    } else {
        ((total_len as f64 / n as f64) as f32).max(f32::MIN_POSITIVE)
    }
}

/// One term's BM25 contribution for a document of `dl` tokens where it occurs `tf` times (the
/// single formula every BM25 score here uses, so scores agree bit for bit).
#[inline]
pub(crate) fn term_score(idf: f32, tf: u32, dl: u32, avgdl: f32) -> f32 {
    let tf = tf as f32;
    idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * (dl as f32 / avgdl)))
}

/// Tokenises `query` like documents (see the module docs) and calls `emit` with each token.
pub(crate) fn for_each_term(query: &str, stem: bool, emit: &mut dyn FnMut(&str)) {
    tokenize(query, stem, &mut |t, _, _| emit(t));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Vec<String> {
        terms_with(text, false)
    }

    #[test]
    fn folds_accents_case_and_compatibility_forms() {
        assert_eq!(t("Café NAÏVE résumé"), ["cafe", "naive", "resume"]);
        assert_eq!(t("Größe STRASSE"), ["grosse", "strasse"]);
        assert_eq!(t("ＡＢＣ ﬁle x²"), ["abc", "file", "x2"]);
        // a decomposed accent does not split the word
        assert_eq!(t("cafe\u{301} co\u{AD}operate"), ["cafe", "cooperate"]);
        assert_eq!(t("İstanbul"), ["istanbul"]);
    }

    #[test]
    fn identifiers_and_punctuation() {
        assert_eq!(
            t("fs::read_to_string(path)?; utf8 __init__ ___ a-b"),
            ["fs", "read_to_string", "path", "utf8", "__init__", "a", "b"]
        );
        assert_eq!(t("don't 3.14"), ["don", "t", "3", "14"]);
        assert!(t("  ... !! ").is_empty());
        assert!(t("").is_empty());
    }

    #[test]
    fn cjk_characters_are_tokens_of_their_own() {
        assert_eq!(
            t("東京タワーへ行く"),
            ["東", "京", "タ", "ワ", "ー", "へ", "行", "く"]
        );
        assert_eq!(t("한국어abc中"), ["한", "국", "어", "abc", "中"]);
        // halfwidth katakana is NFKC-normalised to fullwidth
        assert_eq!(t("ｶﾀ"), ["カ", "タ"]);
        // ideographic punctuation separates
        assert_eq!(t("東京、大阪。"), ["東", "京", "大", "阪"]);
    }

    #[test]
    fn english_stemming() {
        assert_eq!(terms("running"), ["run"]);
        assert_eq!(
            terms("Indexes indexed indexing connection"),
            ["index", "index", "index", "connect"]
        );
        // only pure a–z tokens are stemmed
        assert_eq!(
            terms("read_to_string utf8 strings"),
            ["read_to_string", "utf8", "string"]
        );
        assert_eq!(terms_with("running", false), ["running"]);
    }

    #[test]
    fn highlight_spans_cover_source_words() {
        let text = "The Café serves RUNNING coffee; cafe\u{301}!";
        let spans = highlight_spans(text, "cafe run", true);
        let words: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(words, ["Café", "RUNNING", "cafe\u{301}"]);
        // without stemming, "run" does not match "running"
        let spans = highlight_spans(text, "cafe run", false);
        assert_eq!(spans.len(), 2);
        // CJK: each matching character is its own range
        let text = "東京タワー";
        assert_eq!(highlight_spans(text, "京タ", true), [(3, 6), (6, 9)]);
        // one character yielding two matching terms gives one range
        assert_eq!(highlight_spans("a ½ b", "1 2", false), [(2, 4)]);
        assert!(highlight_spans("anything", "", true).is_empty());
        assert!(highlight_spans("anything", "...", true).is_empty());
    }

    fn index(texts: &[&str]) -> crate::Index {
        let fields = crate::ManifestFields {
            model_id: "t".into(),
            model_version: crate::ModelVersion::new(1, 0, 0),
            dims: 2,
            metric: crate::Metric::Cosine,
            model_sha256: [0; 32],
        };
        let params = crate::Params {
            compaction_threshold: 1.0,
            ..crate::Params::default()
        };
        let mut index = crate::Index::new(fields, params).unwrap();
        for (i, t) in texts.iter().enumerate() {
            let doc = crate::Document::new(format!("d{i}"), "", "", "");
            index.insert_with_text(doc, &[1.0, i as f32], t).unwrap();
        }
        index
    }

    #[test]
    fn query_terms_are_known_distinct_and_in_query_order() {
        let index = index(&["apple banana", "cherry running"]);
        // vocabulary of stems, in order of first appearance
        assert_eq!(index.keywords.vocab, ["appl", "banana", "cherri", "run"]);
        assert_eq!(
            index.query_terms("Runs CHERRY zebra apple cherry"),
            [3, 2, 0]
        );
        assert!(index.query_terms("zebra").is_empty());
        assert!(index.query_terms("").is_empty());
    }

    /// `bm25_score` gives every slot exactly (bit for bit) the score `bm25_top` gives it, and 0
    /// to slots without query terms, deleted slots and slots out of range.
    #[test]
    fn bm25_score_agrees_with_bm25_top() {
        let texts: Vec<String> = (0..60)
            .map(|i| format!("w{} w{} w{} common{} x", i % 7, i % 11, i % 13, i % 2))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut index = index(&refs);
        index.delete("d5");
        for q in ["w1 w2 common0", "x", "w3 w3 w6", "common1 zebra"] {
            let terms = index.query_terms(q);
            let top = index.bm25_top(&terms, usize::MAX);
            assert!(!top.is_empty());
            assert!(top
                .windows(2)
                .all(|w| w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0)));
            for &(slot, score) in &top {
                assert_eq!(index.bm25_score(&terms, slot).to_bits(), score.to_bits());
            }
            let listed: Vec<u32> = top.iter().map(|&(s, _)| s).collect();
            for slot in 0..62u32 {
                if !listed.contains(&slot) {
                    assert_eq!(index.bm25_score(&terms, slot), 0.0, "{q} slot {slot}");
                }
            }
            assert!(!listed.contains(&5), "deleted slot 5 returned");
            // top-n is the prefix of the full ranking
            assert_eq!(index.bm25_top(&terms, 3), top[..3.min(top.len())]);
        }
        assert!(index.bm25_top(&[], 10).is_empty());
        assert!(index.bm25_top(&index.query_terms("x"), 0).is_empty());
    }

    #[test]
    fn delete_and_compact_update_statistics() {
        let mut index = index(&["a b b", "b c", "c c c d"]);
        let (len, df) = index.keywords.stats();
        assert_eq!((len, df), (9, &[1, 2, 2, 1][..]));
        assert!(index.is_live(1));
        index.delete("d1");
        assert!(!index.is_live(1) && !index.is_live(3));
        let (len, df) = index.keywords.stats();
        assert_eq!((len, df), (7, &[1, 1, 1, 1][..]));
        index.delete("d0");
        index.compact();
        // "a" and "b" only occurred in deleted slots: dropped from the vocabulary
        assert_eq!(index.keywords.vocab, ["c", "d"]);
        let (len, df) = index.keywords.stats();
        assert_eq!((len, df), (4, &[1, 1][..]));
        assert_eq!(index.keywords.terms_of(0), [(0, 3), (1, 1)]);
    }

    #[test]
    fn cosine_is_the_search_score() {
        let index = index(&["a", "b", "c"]);
        let q = index.checked_query(&[0.3, 0.7]).unwrap();
        let hits = index.exact_search(&[0.3, 0.7], 3).unwrap();
        for h in hits {
            let slot = h.id[1..].parse::<u32>().unwrap();
            assert_eq!(index.cosine(&q, slot), h.score);
        }
    }

    #[test]
    fn function_words_are_not_marked_unless_alone() {
        let text = "What is the stack and the heap";
        let marked = |q: &str| -> Vec<&str> {
            highlight_spans(text, q, true)
                .into_iter()
                .map(|(a, b)| &text[a..b])
                .collect()
        };
        assert_eq!(marked("what is the heap"), ["heap"]);
        assert_eq!(marked("the"), ["the", "the"]);
        assert_eq!(marked("the is"), ["is", "the", "the"]);
    }

    #[test]
    fn highlight_spans_are_sorted_disjoint_and_on_char_boundaries() {
        let text = "ﬁle ½ Größe ＡＢ 東京 éé x_y ﬁ";
        let all: String = terms_with(text, false).join(" ");
        let spans = highlight_spans(text, &all, false);
        assert!(!spans.is_empty());
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "{spans:?}");
        }
        for &(a, b) in &spans {
            assert!(a < b && text.is_char_boundary(a) && text.is_char_boundary(b));
        }
    }
}

/// How many times [`keyword_text`] repeats the page title and the section heading: BM25 over
/// the result weights title words ×3 and heading words ×2 against body words (a simple BM25F, as
/// site search engines weight titles and headings). Chosen on the Git manual set of
/// `bench/search/pagefind_vs.mjs` (MRR@10 0.682 at 1/1, 0.696 at 3/2, flat up to 5/2); figures in
/// `bench/RESULTS.md`.
pub const TITLE_WEIGHT: usize = 3;
/// See [`TITLE_WEIGHT`].
pub const HEADING_WEIGHT: usize = 2;

/// What BM25 indexes for a passage: the page title [`TITLE_WEIGHT`] times, the section heading
/// [`HEADING_WEIGHT`] times, then the text, one per line. A section whose heading is the page
/// title (a page "Installation" opening with the section "Installation") gets both, so it is the
/// strongest match for the title's words — not weaker than its sibling sections, which carry the
/// title ×3 too. The CLI and the app index exactly this; what is embedded is
/// `lightembed_ingest::embed_text`.
pub fn keyword_text(page_title: &str, heading: &str, text: &str) -> String {
    let mut out = String::with_capacity(
        TITLE_WEIGHT * (page_title.len() + 1) + HEADING_WEIGHT * (heading.len() + 1) + text.len(),
    );
    if !page_title.is_empty() {
        for _ in 0..TITLE_WEIGHT {
            out.push_str(page_title);
            out.push('\n');
        }
    }
    if !heading.is_empty() {
        for _ in 0..HEADING_WEIGHT {
            out.push_str(heading);
            out.push('\n');
        }
    }
    out.push_str(text);
    out
}

/// The PostgreSQL `tsvector` input text of a passage's keyword side: each distinct term of
/// `terms` (in [`terms_with`]'s order) as a quoted lexeme with its 1-based positions,
/// `'own':1,4 'move':2` — so the term's frequency in the passage is its number of positions.
/// `lightembed serve`'s loader stores this: the terms are tokenised here, never by PostgreSQL's
/// parsers, so `serve`'s BM25 sees the index's terms.
///
/// PostgreSQL's limits apply: positions past 16,383 are dropped (a term first seen past it gets
/// that last position), at most 256 positions are kept per term (a frequency above 256 counts as
/// 256), and terms longer than 2,046 bytes (a run of base64) are left out.
///
/// ```
/// use lightembed_index::keywords::tsvector_literal;
/// let t = ["it's".to_string(), "a".to_string(), "it's".to_string()];
/// assert_eq!(tsvector_literal(&t), "'it''s':1,3 'a':2");
/// ```
pub fn tsvector_literal(terms: &[String]) -> String {
    const MAX_POS: usize = 16_383;
    let mut order: Vec<&str> = Vec::new();
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, t) in terms.iter().enumerate() {
        if t.len() > PG_MAX_LEXEME {
            continue;
        }
        let pos = (i + 1).min(MAX_POS);
        let e = positions.entry(t.as_str()).or_insert_with(|| {
            order.push(t.as_str());
            Vec::new()
        });
        if e.last() != Some(&pos) && e.len() < 256 {
            e.push(pos);
        }
    }
    let mut out = String::new();
    for t in order {
        if !out.is_empty() {
            out.push(' ');
        }
        push_pg_lexeme(&mut out, t);
        out.push(':');
        let ps: Vec<String> = positions[t].iter().map(|p| p.to_string()).collect();
        out.push_str(&ps.join(","));
    }
    out
}

/// PostgreSQL's longest lexeme, in bytes (2 KiB − 2): longer terms (a run of base64) are left out
/// of [`tsvector_literal`]. Also at most 256 positions are kept per term.
const PG_MAX_LEXEME: usize = 2046;

/// `'lexeme'` as PostgreSQL's tsvector/tsquery input reads it: `'` doubled, `\` escaped.
fn push_pg_lexeme(out: &mut String, t: &str) {
    out.push('\'');
    for c in t.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}
