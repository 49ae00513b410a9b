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
