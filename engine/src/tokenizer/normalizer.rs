//! Normalizer (HF `BertNormalizer`; steps 1–4 of the tokenizer docs): `clean_text`,
//! a space around each Chinese character, `strip_accents` (NFD without Mn) and `lowercase`
//! (per character, never locale-aware: spec §3's Turkish caveat is why `lightembed-tr` keeps
//! `do_lower_case` 0). Each step is a [`CharSink`] feeding the next, so no intermediate string is
//! built and truncation can stop the stream early.

use super::chars;

/// A stage of the normalisation pipeline: receives characters one at a time.
pub(super) trait CharSink {
    fn push(&mut self, c: char);

    /// True once the consumer wants no more input (truncation reached).
    fn done(&self) -> bool {
        false
    }
}

impl CharSink for String {
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

impl<S: CharSink + ?Sized> CharSink for &mut S {
    #[inline]
    fn push(&mut self, c: char) {
        (**self).push(c);
    }

    #[inline]
    fn done(&self) -> bool {
        (**self).done()
    }
}

/// Steps 1 and 2: BERT `clean_text`, then a space on each side of every Chinese character.
pub(super) fn clean_and_space_chinese(text: &str, next: &mut impl CharSink) {
    for c in text.chars() {
        if next.done() {
            return;
        }
        match chars::clean(c) {
            None => {}
            Some(c) if chars::is_chinese(c) => {
                next.push(' ');
                next.push(c);
                next.push(' ');
            }
            Some(c) => next.push(c),
        }
    }
}

/// Step 3, `strip_accents`: canonical decomposition (NFD) with the nonspacing marks (Mn) removed.
///
/// Equal to NFD followed by a filter, without materialising NFD: Mn characters are dropped as
/// they are decomposed, and only the remaining non-starters (spacing marks with a non-zero
/// combining class, which are rare) are buffered for the canonical reordering. An Mn character
/// of class 0 still ends a reordering run, as it does in NFD.
pub(super) struct StripAccents<'a, S: CharSink> {
    /// Non-starters since the last starter, with their combining class.
    pub(super) pending: Vec<(u8, char)>,
    pub(super) next: &'a mut S,
}

impl<S: CharSink> StripAccents<'_, S> {
    /// Emits the pending non-starters in canonical order (stable sort by combining class).
    #[inline]
    pub(super) fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.flush_pending();
        }
    }

    #[cold]
    fn flush_pending(&mut self) {
        self.pending.sort_by_key(|&(ccc, _)| ccc);
        for &(_, c) in &self.pending {
            self.next.push(c);
        }
        self.pending.clear();
    }

    #[inline]
    fn accept(&mut self, c: char) {
        let ccc = unicode_normalization::char::canonical_combining_class(c);
        if ccc == 0 {
            self.flush();
            if !chars::is_nonspacing_mark(c) {
                self.next.push(c);
            }
        } else if !chars::is_nonspacing_mark(c) {
            self.pending.push((ccc, c));
        }
    }
}

impl<S: CharSink> CharSink for StripAccents<'_, S> {
    #[inline]
    fn push(&mut self, c: char) {
        if c.is_ascii() || chars::strip_passes(c) {
            self.flush();
            self.next.push(c);
        } else {
            unicode_normalization::char::decompose_canonical(c, |d| self.accept(d));
        }
    }

    #[inline]
    fn done(&self) -> bool {
        self.next.done()
    }
}

/// Step 4: Unicode default lowercasing, one character at a time (as HF does; no final-sigma or
/// locale rules).
pub(super) struct Lowercase<'a, S: CharSink> {
    pub(super) on: bool,
    pub(super) next: &'a mut S,
}

impl<S: CharSink> CharSink for Lowercase<'_, S> {
    #[inline]
    fn push(&mut self, c: char) {
        if !self.on {
            self.next.push(c);
        } else if c.is_ascii() {
            self.next.push(c.to_ascii_lowercase());
        } else {
            for l in c.to_lowercase() {
                self.next.push(l);
            }
        }
    }

    #[inline]
    fn done(&self) -> bool {
        self.next.done()
    }
}
