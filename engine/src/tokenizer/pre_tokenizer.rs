//! Pre-tokenizer (HF `BertPreTokenizer`; step 5 of the tokenizer docs): whitespace
//! ends a word and is dropped, each punctuation character is a word of its own.

use core::ops::ControlFlow;

use super::chars;
use super::normalizer::CharSink;

/// Step 5, BERT pre-tokenization: whitespace ends a word and is dropped; each punctuation
/// character is a word of its own. Feeds each word and its length in chars to the callback.
pub(super) struct WordSplitter<F> {
    pub(super) word: String,
    pub(super) n_chars: usize,
    pub(super) f: F,
    pub(super) stopped: bool,
}

impl<F: FnMut(&str, usize) -> ControlFlow<()>> WordSplitter<F> {
    fn emit_word(&mut self) {
        if self.n_chars > 0 && !self.stopped {
            self.stopped = (self.f)(&self.word, self.n_chars).is_break();
        }
        self.word.clear();
        self.n_chars = 0;
    }

    pub(super) fn finish(mut self) {
        self.emit_word();
    }
}

impl<F: FnMut(&str, usize) -> ControlFlow<()>> CharSink for WordSplitter<F> {
    #[inline]
    fn push(&mut self, c: char) {
        if c.is_whitespace() {
            self.emit_word();
        } else if chars::is_punctuation(c) {
            self.emit_word();
            if !self.stopped {
                let mut buf = [0u8; 4];
                self.stopped = (self.f)(c.encode_utf8(&mut buf), 1).is_break();
            }
        } else {
            self.word.push(c);
            self.n_chars += 1;
        }
    }

    #[inline]
    fn done(&self) -> bool {
        self.stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words (with their char counts) of `text` as pushed character by character, stopping
    /// after `limit` words.
    fn words(text: &str, limit: usize) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut s = WordSplitter {
            word: String::new(),
            n_chars: 0,
            f: |w: &str, n: usize| {
                out.push((w.to_string(), n));
                if out.len() == limit {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
            stopped: false,
        };
        for c in text.chars() {
            if s.done() {
                break;
            }
            s.push(c);
        }
        s.finish();
        out
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn whitespace_ends_words_and_punctuation_is_a_word() {
        let w = words("İstanbul'da  ışık, çok!", usize::MAX);
        let text: Vec<&str> = w.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(text, ["İstanbul", "'", "da", "ışık", ",", "çok", "!"]);
        assert_eq!(w[0].1, 8, "length in chars, not bytes");
        assert!(words(" \t\n ", usize::MAX).is_empty());
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn a_break_stops_the_stream() {
        assert_eq!(words("a b c d", 2).len(), 2);
        assert_eq!(words("a,b", 2), [("a".into(), 1), (",".into(), 1)]);
    }
}
