//! BERT BasicTokenizer + WordPiece (spec §5.2, decisions 1, 7, 11).
//!
//! Produces exactly the ids of HF `tokenizers` 0.22.1 configured with
//! `BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=<flag>,
//! lowercase=<flag>)`, `BertPreTokenizer` and `WordPiece(vocab, unk_token,
//! max_input_chars_per_word, continuing_subword_prefix)`, then `[CLS]` … `[SEP]` with the word
//! pieces truncated to `max_seq_len − 2`. `engine/tests/tokenizer_parity.rs` checks this against
//! ids HF produced for a corpus of a few thousand lines (`tests/fixtures/tokenizer/`).
//!
//! The pipeline, in HF's order:
//!
//! 1. **clean**: drop U+0000, U+FFFD and Cc/Cf/Co characters except `\t\n\r`; whitespace → `' '`;
//! 2. **Chinese characters** (HF's CJK ranges) get a space on each side;
//! 3. **strip accents** (flag bit 2, independent of lowercasing): NFD, then drop Mn;
//! 4. **lowercase** (flag bit 1): `char::to_lowercase` per character — Unicode's default mapping,
//!    never locale-aware and without the final-sigma rule (decision 7);
//! 5. **pre-tokenize**: split on whitespace (removed) and around punctuation (each punctuation
//!    character is a word of its own);
//! 6. **WordPiece** per word: a word of more than `max_input_chars_per_word` chars is `[UNK]`;
//!    otherwise greedy longest-match-first, continuation pieces carry the prefix (`##`); a word
//!    with no complete segmentation is one `[UNK]`.
//!
//! Typed special-token strings (`"[CLS]"`, `"[SEP]"`, …) are plain text (decision 11): only
//! [`Tokenizer::encode`] adds the special ids.
//!
//! Character classes (see `chars.rs`) use the same Unicode 8.0 general-category tables as HF.
//!
//! Files follow HF's stages: `normalizer.rs` (steps 1–4), `pre_tokenizer.rs` (step 5),
//! `wordpiece.rs` (step 6); this module holds [`Tokenizer`] and its tests.

mod chars;
mod normalizer;
mod pre_tokenizer;
mod wordpiece;

use core::ops::ControlFlow;

use normalizer::{clean_and_space_chinese, CharSink, Lowercase, StripAccents};
use pre_tokenizer::WordSplitter;
use wordpiece::{floor_char_boundary, LongestKeys, VocabIndex};

/// Tokenizer settings read from the header flags and the `TOKENIZER_CONFIG` section (§5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenizerConfig {
    /// Id of `[UNK]`: a word with no complete segmentation, or longer than
    /// `max_input_chars_per_word`.
    pub unk_token_id: u32,
    /// Id of `[CLS]`, put first in every sequence.
    pub cls_token_id: u32,
    /// Id of `[SEP]`, put last in every sequence.
    pub sep_token_id: u32,
    /// Id of `[PAD]` (never produced by [`Tokenizer::encode`]; batches pad with it).
    pub pad_token_id: u32,
    /// Id of `[MASK]` (kept for completeness; never produced).
    pub mask_token_id: u32,
    /// Words longer than this many chars become `[UNK]` (BERT default 100).
    pub max_input_chars_per_word: usize,
    /// Continuing-subword prefix, typically `"##"`.
    pub continuing_subword_prefix: String,
    /// Header flag bit 1.
    pub do_lower_case: bool,
    /// Header flag bit 2.
    pub strip_accents: bool,
    /// Header `max_seq_len`; output (with `[CLS]`/`[SEP]`) is never longer. Must be ≥ 2.
    pub max_seq_len: usize,
}

/// A WordPiece tokenizer over a vocabulary in token-id order.
#[derive(Clone)]
pub struct Tokenizer {
    vocab: Vec<String>,
    config: TokenizerConfig,
    /// Every token string → id (pieces that start a word).
    word_start: VocabIndex,
    /// For every token that begins with the continuing-subword prefix: the rest → id. Looking up
    /// `s` here is looking up `prefix + s` in the vocabulary, without building that string.
    continuation: VocabIndex,
    /// For every first character of a `word_start` / `continuation` key, the longest such key in
    /// bytes: no longer candidate can match, and a piece starting with any other character has
    /// no match at all.
    word_start_longest: LongestKeys,
    continuation_longest: LongestKeys,
}

impl core::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab.len())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Tokenizer {
    /// Builds the tokenizer. `vocab[i]` is the string of token id `i`. The caller (the loader) has
    /// already checked that every special id is `< vocab.len()`.
    ///
    /// If a string occurs twice in `vocab`, it maps to its last id (as HF's vocab loading does).
    pub fn new(vocab: Vec<String>, config: TokenizerConfig) -> Tokenizer {
        chars::init();
        let prefix = config.continuing_subword_prefix.as_str();
        let mut word_start = VocabIndex::new(0);
        let mut continuation = VocabIndex::new(prefix.len());
        let mut word_start_longest = LongestKeys::default();
        let mut continuation_longest = LongestKeys::default();
        fn note_longest(longest: &mut LongestKeys, key: &str) {
            if let Some(first) = key.chars().next() {
                let entry = longest.entry(first).or_insert(0);
                *entry = (*entry).max(key.len());
            }
        }
        for (id, token) in vocab.iter().enumerate() {
            let id = id as u32;
            word_start.insert(&vocab, id);
            note_longest(&mut word_start_longest, token);
            if let Some(rest) = token.strip_prefix(prefix) {
                continuation.insert(&vocab, id);
                note_longest(&mut continuation_longest, rest);
            }
        }
        Tokenizer {
            vocab,
            config,
            word_start,
            continuation,
            word_start_longest,
            continuation_longest,
        }
    }

    /// Token ids for `text`: `[CLS]`, word pieces truncated to `max_seq_len - 2`, `[SEP]`.
    ///
    /// Never panics. A `max_seq_len` below 2 (which the loader rejects) behaves as 2.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.encode_into(text, &mut ids);
        ids
    }

    /// [`encode`](Self::encode) into a caller-owned buffer (cleared first), to reuse its
    /// allocation across calls.
    pub fn encode_into(&self, text: &str, ids: &mut Vec<u32>) {
        ids.clear();
        let budget = self.config.max_seq_len.max(2) - 2;
        ids.reserve(budget.min(text.len() + 1) + 2);
        ids.push(self.config.cls_token_id);
        if budget > 0 {
            self.for_each_word(text, |word, n_chars| {
                self.word_piece(word, n_chars, ids);
                if ids.len() > budget {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
        }
        ids.truncate(1 + budget);
        ids.push(self.config.sep_token_id);
    }

    /// Number of word pieces `text` becomes, **without** truncation and without `[CLS]`/`[SEP]`
    /// (so `min(count_pieces(t), max_seq_len − 2) + 2 == encode(t).len()`). WordPiece splits on
    /// whitespace and punctuation first, so counts add up over whitespace-joined texts:
    /// `count_pieces(a + " " + b) == count_pieces(a) + count_pieces(b)`. Used to size passages
    /// to the model's window (see `lightembed_index::passages`).
    pub fn count_pieces(&self, text: &str) -> usize {
        let mut ids = Vec::new();
        let mut n = 0usize;
        self.for_each_word(text, |word, n_chars| {
            ids.clear();
            self.word_piece(word, n_chars, &mut ids);
            n += ids.len();
            ControlFlow::Continue(())
        });
        n
    }

    /// [`encode`](Self::encode) with each id's token string, e.g. for a tokenizer playground:
    /// `[("[CLS]", 101), ("hello", 7592), ("!", 999), ("[SEP]", 102)]`.
    pub fn encode_with_tokens(&self, text: &str) -> Vec<(&str, u32)> {
        self.encode(text)
            .into_iter()
            .map(|id| (self.id_to_token(id).unwrap_or(""), id))
            .collect()
    }

    /// The text after normalisation (clean, Chinese-character spacing, accent stripping,
    /// lowercasing, as configured) — what HF's `normalizer.normalize_str` returns.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.normalize_into(text, &mut out);
        out
    }

    /// The words WordPiece sees: the normalised text split on whitespace and around punctuation.
    /// Not truncated.
    pub fn words(&self, text: &str) -> Vec<String> {
        let mut words = Vec::new();
        self.for_each_word(text, |word, _| {
            words.push(word.to_owned());
            ControlFlow::Continue(())
        });
        words
    }

    /// The string of token `id`, if it exists.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.vocab.get(id as usize).map(String::as_str)
    }

    /// The id of token string `token`, if it is in the vocabulary.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.word_start.get(token)
    }

    /// The configuration this tokenizer was built with.
    pub fn config(&self) -> &TokenizerConfig {
        &self.config
    }

    /// Number of tokens in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// Pushes the normalised character stream of `text` (steps 1–4 of the module docs) into
    /// `sink`, until the sink says it is done.
    fn normalize_into(&self, text: &str, sink: &mut impl CharSink) {
        let mut lower = Lowercase {
            on: self.config.do_lower_case,
            next: sink,
        };
        // ASCII has no decompositions and no marks: strip_accents would be the identity.
        if self.config.strip_accents && !text.is_ascii() {
            let mut strip = StripAccents {
                pending: Vec::new(),
                next: &mut lower,
            };
            clean_and_space_chinese(text, &mut strip);
            strip.flush();
        } else {
            clean_and_space_chinese(text, &mut lower);
        }
    }

    /// Calls `f(word, word_len_in_chars)` for each pre-tokenized word of `text`, in order, until
    /// it breaks.
    fn for_each_word(&self, text: &str, f: impl FnMut(&str, usize) -> ControlFlow<()>) {
        if text.is_ascii() {
            self.for_each_ascii_word(text, f);
        } else {
            self.for_each_word_general(text, f);
        }
    }

    /// [`Self::for_each_word`] for ASCII text, byte by byte with one table lookup each: the same
    /// words as the character pipeline (steps 1–5), which it is tested against on every ASCII
    /// byte. ASCII has no Chinese characters and no accents; lowercasing is
    /// `to_ascii_lowercase`. A word is a slice of `text` unless it holds an upper-case letter
    /// (lowercased) or a dropped control character (joined), then it is built in a buffer.
    #[allow(unused_assignments)] // the last `emit!` resets state nobody reads again
    fn for_each_ascii_word(&self, text: &str, mut f: impl FnMut(&str, usize) -> ControlFlow<()>) {
        let bytes = text.as_bytes();
        let lower = self.config.do_lower_case;
        let mut buf = String::new();
        // The current word: bytes[start..i], copied into `buf` once `copied`.
        let (mut start, mut copied) = (0usize, false);
        let mut i = 0;
        macro_rules! emit {
            ($end:expr) => {
                if copied {
                    if !buf.is_empty() && f(&buf, buf.len()).is_break() {
                        return;
                    }
                    buf.clear();
                    copied = false;
                } else if $end > start && f(&text[start..$end], $end - start).is_break() {
                    return;
                }
            };
        }
        while i < bytes.len() {
            let b = bytes[i];
            match ASCII_CLASS[b as usize] {
                AsciiClass::Word if !(lower && b.is_ascii_uppercase()) => {
                    if copied {
                        buf.push(b as char);
                    }
                }
                AsciiClass::Word => {
                    if !copied {
                        buf.push_str(&text[start..i]);
                        copied = true;
                    }
                    buf.push(b.to_ascii_lowercase() as char);
                }
                AsciiClass::Drop => {
                    if !copied {
                        buf.push_str(&text[start..i]);
                        copied = true;
                    }
                }
                AsciiClass::Space => {
                    emit!(i);
                    start = i + 1;
                }
                AsciiClass::Punct => {
                    emit!(i);
                    if f(&text[i..i + 1], 1).is_break() {
                        return;
                    }
                    start = i + 1;
                }
            }
            i += 1;
        }
        emit!(bytes.len());
    }

    /// [`Self::for_each_word`] through the character pipeline (any text).
    fn for_each_word_general(&self, text: &str, f: impl FnMut(&str, usize) -> ControlFlow<()>) {
        let mut words = WordSplitter {
            word: String::new(),
            n_chars: 0,
            f,
            stopped: false,
        };
        self.normalize_into(text, &mut words);
        words.finish();
    }

    /// WordPiece for one non-empty word of `n_chars` chars, appending its ids to `ids`.
    fn word_piece(&self, word: &str, n_chars: usize, ids: &mut Vec<u32>) {
        if n_chars > self.config.max_input_chars_per_word {
            ids.push(self.config.unk_token_id);
            return;
        }
        let first_piece = ids.len();
        let mut start = 0;
        while start < word.len() {
            let (map, longest) = if start == 0 {
                (&self.word_start, &self.word_start_longest)
            } else {
                (&self.continuation, &self.continuation_longest)
            };
            // Longest candidate first; anything longer than the longest key cannot match.
            let first = word[start..].chars().next().unwrap_or_default();
            let max_bytes = longest.get(&first).copied().unwrap_or(0);
            let mut end = floor_char_boundary(word, start.saturating_add(max_bytes));
            let mut found = None;
            while end > start {
                if let Some(id) = map.get(&word[start..end]) {
                    found = Some(id);
                    break;
                }
                end = floor_char_boundary(word, end - 1);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(first_piece);
                    ids.push(self.config.unk_token_id);
                    return;
                }
            }
        }
    }
}

/// What the normaliser and pre-tokenizer (steps 1–5) do with an ASCII byte.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AsciiClass {
    /// Part of a word.
    Word,
    /// Removed by cleaning (control characters, NUL).
    Drop,
    /// Ends a word (whitespace).
    Space,
    /// A word of its own.
    Punct,
}

/// [`AsciiClass`] of every ASCII byte, as `chars::clean` and the pre-tokenizer's whitespace and
/// punctuation rules classify it (a test checks every entry against them).
const ASCII_CLASS: [AsciiClass; 128] = {
    let mut t = [AsciiClass::Word; 128];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'\t' | b'\n' | b'\r' | b' ' => AsciiClass::Space,
            0..=0x1F | 0x7F => AsciiClass::Drop,
            b'!'..=b'/' | b':'..=b'@' | b'['..=b'`' | b'{'..=b'~' => AsciiClass::Punct,
            _ => AsciiClass::Word,
        };
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny vocabulary in the bert-base-uncased layout for the special tokens.
    const VOCAB: &[&str] = &[
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "hello",
        "world",
        "!",
        "un",
        "##aff",
        "##able",
        "[",
        "]",
        "cl",
        "##s",
        "sep",
        "i",
        "istanbul",
        "is",
        "##tan",
        "##bul",
        "a",
        "##a",
        "##b",
        "b",
        "中",
        "国",
        "e",
        "##e",
        ",",
        "İ",
        "ı",
        "I",
        "\u{307}",
        "##\u{307}",
        "cafe",
        "café",
        "##\u{301}",
        "σ",
        "##σ",
        "ς",
        "##ς",
        "ο",
        "##δ",
        "##υ",
        "##ε",
    ];

    fn tokenizer(lower: bool, max_seq_len: usize) -> Tokenizer {
        Tokenizer::new(
            VOCAB.iter().map(|s| s.to_string()).collect(),
            TokenizerConfig {
                unk_token_id: 1,
                cls_token_id: 2,
                sep_token_id: 3,
                pad_token_id: 0,
                mask_token_id: 4,
                max_input_chars_per_word: 100,
                continuing_subword_prefix: "##".into(),
                do_lower_case: lower,
                strip_accents: lower,
                max_seq_len,
            },
        )
    }

    fn tokens(t: &Tokenizer, text: &str) -> Vec<String> {
        t.encode_with_tokens(text)
            .into_iter()
            .map(|(s, _)| s.to_string())
            .collect()
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn basic_word_pieces() {
        let t = tokenizer(true, 512);
        assert_eq!(
            tokens(&t, "Hello, WORLD!"),
            ["[CLS]", "hello", ",", "world", "!", "[SEP]"]
        );
        assert_eq!(
            tokens(&t, "unaffable"),
            ["[CLS]", "un", "##aff", "##able", "[SEP]"]
        );
        assert_eq!(t.encode("unaffable"), [2, 8, 9, 10, 3]);
        // No segmentation for the whole word → one [UNK], even if a prefix matched.
        assert_eq!(
            tokens(&t, "unaffablex hello"),
            ["[CLS]", "[UNK]", "hello", "[SEP]"]
        );
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn empty_and_blank_text() {
        for lower in [false, true] {
            let t = tokenizer(lower, 512);
            assert_eq!(t.encode(""), [2, 3]);
            assert_eq!(t.encode(" \t\u{3000}\u{200B}\u{0}\u{FEFF} "), [2, 3]);
        }
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn truncation_keeps_cls_and_sep() {
        let t = tokenizer(true, 5);
        assert_eq!(
            tokens(&t, "hello world hello world"),
            ["[CLS]", "hello", "world", "hello", "[SEP]"]
        );
        // Truncation may cut inside a word's pieces, as HF does.
        assert_eq!(
            tokens(&t, "hello unaffable"),
            ["[CLS]", "hello", "un", "##aff", "[SEP]"]
        );
        assert_eq!(t.encode("hello world hello").len(), 5);
        let t = tokenizer(true, 3);
        assert_eq!(tokens(&t, "hello world"), ["[CLS]", "hello", "[SEP]"]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn max_seq_len_two_is_cls_sep() {
        let t = tokenizer(true, 2);
        assert_eq!(t.encode("hello world"), [2, 3]);
        // Below 2 (rejected by the loader) behaves as 2 rather than panicking.
        assert_eq!(tokenizer(true, 0).encode("hello"), [2, 3]);
        assert_eq!(tokenizer(true, 1).encode("hello"), [2, 3]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn long_word_is_unk() {
        let t = tokenizer(true, 512);
        let w100 = "a".repeat(100);
        let w101 = "a".repeat(101);
        assert_eq!(t.encode(&w100).len(), 102);
        assert_eq!(t.encode(&w101), [2, 1, 3]);
        // The limit counts chars of the normalised word, not bytes: 100 × "ı" (2 bytes) is fine.
        assert_eq!(t.encode(&"ı".repeat(100)).len(), 2 + 1); // "ı" then no "##ı" → one [UNK]
        assert_eq!(t.encode(&format!("{w100} hello")), {
            let mut v = vec![2, 21];
            v.extend([22; 99]);
            v.extend([5, 3]);
            v
        });
        // Accents stripped before counting: 100 × "a" + U+0301 is 100 chars uncased, 200 cased.
        let accented = "a\u{301}".repeat(100);
        assert_eq!(t.encode(&accented).len(), 102);
        assert_eq!(tokenizer(false, 512).encode(&accented), [2, 1, 3]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn typed_special_tokens_are_plain_text() {
        let t = tokenizer(true, 512);
        assert_eq!(tokens(&t, "[SEP]"), ["[CLS]", "[", "sep", "]", "[SEP]"]);
        assert_eq!(
            tokens(&t, "[CLS]hello"),
            ["[CLS]", "[", "cl", "##s", "]", "hello", "[SEP]"]
        );
        let t = tokenizer(false, 512);
        assert_eq!(tokens(&t, "[SEP]"), ["[CLS]", "[", "[UNK]", "]", "[SEP]"]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn turkish_dotted_capital_i() {
        // Uncased: NFD splits İ into I + U+0307, the mark is stripped, then I → i (HF: "istanbul").
        let t = tokenizer(true, 512);
        assert_eq!(t.normalize("İstanbul"), "istanbul");
        assert_eq!(tokens(&t, "İstanbul"), ["[CLS]", "istanbul", "[SEP]"]);
        // Dotless ı is not an accent and has no case change.
        assert_eq!(t.normalize("IĞDIR ılık"), "igdir ılık");
        // Cased: untouched.
        let t = tokenizer(false, 512);
        assert_eq!(t.normalize("İstanbul"), "İstanbul");
        assert_eq!(tokens(&t, "İ ı I"), ["[CLS]", "İ", "ı", "I", "[SEP]"]);
        // Lowercasing without stripping gives Unicode's default "i̇" (i + U+0307): locale-naive.
        let mut config = t.config().clone();
        config.do_lower_case = true;
        let t = Tokenizer::new(VOCAB.iter().map(|s| s.to_string()).collect(), config);
        assert_eq!(t.normalize("İ"), "i\u{307}");
        assert_eq!(tokens(&t, "İ"), ["[CLS]", "i", "##\u{307}", "[SEP]"]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn greek_sigma_is_lowercased_per_char() {
        // HF lowercases char by char: no final-sigma rule (ΟΔΥΣ → οδυσ, not οδυς).
        let t = tokenizer(true, 512);
        assert_eq!(t.normalize("ΟΔΥΣ"), "οδυσ");
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn chinese_chars_are_words() {
        let t = tokenizer(true, 512);
        assert_eq!(t.normalize("a中国b"), "a 中  国 b");
        assert_eq!(
            tokens(&t, "a中国b"),
            ["[CLS]", "a", "中", "国", "b", "[SEP]"]
        );
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn accents_and_decomposed_forms() {
        let t = tokenizer(true, 512);
        assert_eq!(t.normalize("Café"), "cafe");
        assert_eq!(t.normalize("Cafe\u{301}"), "cafe");
        let t = tokenizer(false, 512);
        assert_eq!(tokens(&t, "café"), ["[CLS]", "café", "[SEP]"]);
        // Cased mode does not normalise: decomposed stays decomposed.
        assert_eq!(
            tokens(&t, "cafe\u{301}"),
            ["[CLS]", "cafe", "##\u{301}", "[SEP]"]
        );
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn control_and_zero_width_characters() {
        let t = tokenizer(true, 512);
        assert_eq!(
            t.normalize("a\u{0}b\u{FFFD}c\u{200B}d\u{200D}e\u{7F}f\u{1}g\u{85}h"),
            "abcdefgh"
        );
        assert_eq!(t.normalize("a\tb\nc\rd\u{A0}e\u{2028}f"), "a b c d e f");
        assert_eq!(t.words("hello\u{200B}world"), ["helloworld"]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn punctuation_split() {
        let t = tokenizer(true, 512);
        assert_eq!(
            t.words("a+b=c $5 «x» a—b ¿y?"),
            ["a", "+", "b", "=", "c", "$", "5", "«", "x", "»", "a", "—", "b", "¿", "y", "?"]
        );
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn vocab_lookups() {
        let t = tokenizer(true, 512);
        assert_eq!(t.token_to_id("##aff"), Some(9));
        assert_eq!(t.token_to_id("aff"), None);
        assert_eq!(t.id_to_token(9), Some("##aff"));
        assert_eq!(t.id_to_token(10_000), None);
        assert_eq!(t.vocab_size(), VOCAB.len());
        assert_eq!(t.config().max_seq_len, 512);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn duplicate_vocab_entries_map_to_last_id() {
        let vocab = ["[UNK]", "[CLS]", "[SEP]", "x", "x"]
            .map(String::from)
            .to_vec();
        let mut config = tokenizer(true, 512).config().clone();
        (
            config.unk_token_id,
            config.cls_token_id,
            config.sep_token_id,
        ) = (0, 1, 2);
        let t = Tokenizer::new(vocab, config);
        assert_eq!(t.encode("x"), [1, 4, 2]);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn other_prefixes() {
        let vocab = ["[UNK]", "[CLS]", "[SEP]", "ab", "@@cd", "cd"]
            .map(String::from)
            .to_vec();
        let mut config = tokenizer(true, 512).config().clone();
        (
            config.unk_token_id,
            config.cls_token_id,
            config.sep_token_id,
        ) = (0, 1, 2);
        config.continuing_subword_prefix = "@@".into();
        let t = Tokenizer::new(vocab.clone(), config.clone());
        assert_eq!(t.encode("abcd"), [1, 3, 4, 2]);
        config.continuing_subword_prefix = String::new();
        let t = Tokenizer::new(vocab, config);
        assert_eq!(t.encode("abcd cdab"), [1, 3, 5, 5, 3, 2]);
    }

    /// The streaming `StripAccents` equals NFD (the crate's iterator, with canonical reordering)
    /// followed by removing Mn, also for spacing marks with non-zero combining classes and Mn
    /// characters of class 0 between them.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn never_panics_on_odd_input() {
        let t = tokenizer(true, 16);
        let t2 = tokenizer(false, 512);
        let mut s = String::new();
        for u in (0..0x11_0000u32).step_by(97) {
            if let Some(c) = char::from_u32(u) {
                s.push(c);
            }
        }
        for text in [
            s.as_str(),
            "\u{10FFFF}",
            "##",
            "#",
            "\u{301}\u{301}",
            "ǅ ß ﬃ İ",
        ] {
            let ids = t.encode(text);
            assert!(ids.len() <= 16 && ids[0] == 2 && *ids.last().unwrap() == 3);
            t2.encode(text);
        }
    }

    /// Every word (and char count) `f` sees, stopping after `limit` words.
    fn words_of(t: &Tokenizer, text: &str, limit: usize, ascii: bool) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let f = |w: &str, n: usize| {
            out.push((w.to_string(), n));
            if out.len() == limit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        if ascii {
            t.for_each_ascii_word(text, f);
        } else {
            t.for_each_word_general(text, f);
        }
        out
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn ascii_fast_path_equals_the_character_pipeline() {
        // Every ASCII byte alone, between letters, and doubled; then seeded random ASCII strings
        // (biased towards letters, so words are long enough to split), cased and uncased, with
        // and without an early stop.
        let mut texts: Vec<String> = (0u8..128)
            .flat_map(|b| {
                let c = b as char;
                [format!("{c}"), format!("Ab{c}cD"), format!("{c}{c}x{c}")]
            })
            .collect();
        let mut rng = crate::rng::SplitMix64::new(35);
        for _ in 0..2000 {
            let len = (rng.next_u64() % 40) as usize;
            let text: String = (0..len)
                .map(|_| {
                    let r = rng.next_u64();
                    if r % 4 == 0 {
                        (r % 128) as u8 as char
                    } else {
                        (b"abcdefghijklmnopqrstuvwxyzUNAFF !,."[(r >> 8) as usize % 35]) as char
                    }
                })
                .collect();
            texts.push(text);
        }
        for lower in [true, false] {
            let t = tokenizer(lower, 512);
            for text in &texts {
                for limit in [usize::MAX, 2] {
                    assert_eq!(
                        words_of(&t, text, limit, true),
                        words_of(&t, text, limit, false),
                        "{text:?}, lower {lower}, limit {limit}"
                    );
                }
            }
        }
        // The table agrees with the rules it stands for.
        for b in 0u8..128 {
            let want = match chars::clean(b as char) {
                None => AsciiClass::Drop,
                Some(c) if c.is_whitespace() => AsciiClass::Space,
                Some(c) if chars::is_punctuation(c) => AsciiClass::Punct,
                Some(_) => AsciiClass::Word,
            };
            assert_eq!(ASCII_CLASS[b as usize], want, "byte {b:#04x}");
        }
    }
}
