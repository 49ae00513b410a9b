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
        let ccc = crate::unicode::canonical_combining_class(c);
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
            crate::unicode::decompose_canonical(c, |d| self.accept(d));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps 1–3 (clean, Chinese spacing, strip accents) without lowercasing, into a string.
    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut s = StripAccents {
            pending: Vec::new(),
            next: &mut out,
        };
        clean_and_space_chinese(text, &mut s);
        s.flush();
        out
    }

    /// Step 4 alone: per-character Unicode lowercase, never locale-aware (decision 7): `İ`
    /// becomes `i` + U+0307 — why spec §3 makes `lightembed-tr` cased.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn lowercase_is_per_character_and_locale_blind() {
        let lower = |text: &str, on: bool| {
            let mut out = String::new();
            let mut l = Lowercase { on, next: &mut out };
            text.chars().for_each(|c| l.push(c));
            out
        };
        assert_eq!(lower("İI ΣΑΣ", true), "i\u{307}i σασ");
        assert_eq!(lower("İI ΣΑΣ", false), "İI ΣΑΣ");
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn strip_accents_equals_nfd_then_filter() {
        use unicode_normalization::UnicodeNormalization;
        let pool: Vec<char> = [
            'a',
            'Z',
            ' ',
            'é',
            'İ',
            'ı',
            'ǅ',
            'ᾂ',
            'Ệ',
            '한',
            '글',
            '\u{F900}',
            '\u{2F800}',
            '\u{0301}',
            '\u{0316}',
            '\u{0345}',
            '\u{05B0}',
            '\u{0E31}',
            '\u{0E49}',
            '\u{093C}',
            '\u{094D}',
            '\u{1D165}',
            '\u{1D16D}',
            '\u{1D16E}',
            '\u{0F71}',
            '\u{0F72}',
            '\u{302A}',
            '\u{3099}',
            'が',
            '\u{0BCD}',
            '\u{1B44}',
            '\u{A953}',
            '\u{0CC2}',
            '\u{0CCA}',
            'ǰ',
            '\u{1E0A}',
            'Å',
        ]
        .into();
        // Spacing marks of classes 226 then 216 are reordered; an Mn of class 0 between them
        // (U+0E31) is a starter, so it blocks the reordering even though it is removed.
        assert_eq!(strip("x\u{1D16D}\u{1D165}"), "x\u{1D165}\u{1D16D}");
        assert_eq!(strip("x\u{1D16D}\u{301}\u{1D165}"), "x\u{1D165}\u{1D16D}");
        assert_eq!(strip("x\u{1D16D}\u{E31}\u{1D165}"), "x\u{1D16D}\u{1D165}");
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..2000 {
            let text: String = (0..len % 12)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    pool[(state % pool.len() as u64) as usize]
                })
                .collect();
            let spaced: String = text
                .chars()
                .flat_map(|c| {
                    if chars::is_chinese(c) {
                        vec![' ', c, ' ']
                    } else {
                        vec![c]
                    }
                })
                .collect();
            let want: String = spaced
                .nfd()
                .filter(|&c| !chars::is_nonspacing_mark(c))
                .collect();
            assert_eq!(strip(&text), want, "{text:?}");
        }
    }
}
