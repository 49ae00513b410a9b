//! Character classes of the BERT normaliser and pre-tokenizer, exactly as HF `tokenizers` 0.22.1
//! defines them.
//!
//! HF takes its general categories from the crate `unicode_categories` 0.1.1, whose tables are
//! Unicode 8.0 and will never change. We use the same crate on purpose: a newer table would
//! classify characters assigned since Unicode 8.0 differently (e.g. U+2E43, a Unicode 9.0 dash, is
//! *not* punctuation for HF; Unicode 9.0+ combining marks are *not* stripped by HF), and that would
//! break id parity with the models' training-time tokenizer. Whitespace and lowercasing come from
//! `std` (`char::is_whitespace`, `char::to_lowercase`), as in HF.
//!
//! Residual version differences, none of them reachable from the parity corpus: HF decomposes
//! with `unicode-normalization-alignments` (Unicode 9.0 data), we with `unicode-normalization`
//! (newer). Unicode's stability policy freezes the decomposition and combining class of every
//! assigned character, so the two differ only on characters assigned after 9.0 that decompose or
//! combine. Likewise `std`'s case tables follow the compiler's Unicode version, which differs
//! from the one HF's wheel was built with only on characters added since.

use std::sync::OnceLock;

use unicode_categories::UnicodeCategories;

/// General category Cc, Cf or Co (`unicode_categories`' `is_other`; not Cn, not Cs).
const OTHER: u8 = 1;
/// General category Mn.
const NONSPACING_MARK: u8 = 2;
/// BERT punctuation: ASCII punctuation or a P* category.
const PUNCTUATION: u8 = 4;
/// NFD leaves the character alone (no canonical decomposition, combining class 0) and it is not
/// Mn: `strip_accents` passes it through unchanged.
const STRIP_PASSES: u8 = 8;

/// Code points below this are classified by a table built once (the Latin, Greek, Cyrillic,
/// Armenian, Hebrew, Arabic, Indic, Thai, Georgian, Hangul Jamo, punctuation and symbol blocks, up
/// to CJK Extension A); the rest by the crates directly.
const TABLE_LEN: usize = 0x3400;

static TABLE: OnceLock<Box<[u8]>> = OnceLock::new();

/// Builds the classification table (about 13 KB, a few milliseconds). Called by
/// `Tokenizer::new` so that the first `encode` does not pay for it.
pub(super) fn init() {
    table();
}

#[inline]
fn table() -> &'static [u8] {
    TABLE.get_or_init(|| {
        (0..TABLE_LEN as u32)
            .map(|u| compute_flags(char::from_u32(u).unwrap_or('\0')))
            .collect()
    })
}

/// The flags of `c`, straight from the crates (slow: up to a dozen binary searches).
fn compute_flags(c: char) -> u8 {
    let mut flags = 0;
    if c.is_other() {
        flags |= OTHER;
    }
    if c.is_mark_nonspacing() {
        flags |= NONSPACING_MARK;
    }
    if c.is_ascii_punctuation() || c.is_punctuation() {
        flags |= PUNCTUATION;
    }
    // With `runtime-unicode` the decomposition data arrives after the table is built, so
    // `strip_passes` asks it each time instead.
    #[cfg(not(feature = "runtime-unicode"))]
    if flags & NONSPACING_MARK == 0 && nfd_passes(c) {
        flags |= STRIP_PASSES;
    }
    flags
}

/// No canonical decomposition and combining class 0 (`crate::unicode`).
fn nfd_passes(c: char) -> bool {
    let mut decomposes = false;
    crate::unicode::decompose_canonical(c, |d| decomposes |= d != c);
    !decomposes && crate::unicode::canonical_combining_class(c) == 0
}

#[inline]
fn flags(c: char) -> u8 {
    let u = c as u32;
    if (u as usize) < TABLE_LEN {
        table()[u as usize]
    } else if (0x4E00..=0x9FFF).contains(&u) {
        // CJK Unified Ideographs (Lo or, past Unicode 8.0, unassigned): nothing to do.
        STRIP_PASSES
    } else {
        compute_flags(c)
    }
}

/// BERT `clean_text` for one character: `None` drops it (U+0000, U+FFFD and every Cc/Cf/Co
/// character except `\t`, `\n`, `\r`), whitespace becomes `' '`, anything else is kept.
///
/// Order matters and follows HF: the drop filter runs before the whitespace mapping, so control
/// characters that are also `White_Space` (U+000B, U+000C, U+0085) are dropped, not turned into
/// spaces.
#[inline]
pub(super) fn clean(c: char) -> Option<char> {
    match c {
        '\t' | '\n' | '\r' => Some(' '),
        '\0' | '\u{FFFD}' => None,
        _ if c.is_ascii() => Some(if c.is_ascii_control() { return None } else { c }),
        _ if flags(c) & OTHER != 0 => None,
        _ if c.is_whitespace() => Some(' '),
        _ => Some(c),
    }
}

/// The "Chinese character" ranges of HF's `BertNormalizer` (which gets a space on each side).
/// Note HF's sixth range starts at U+2B920, not at U+2B820 as in the original BERT code.
#[inline]
pub(super) fn is_chinese(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// Nonspacing mark (Mn), the characters `strip_accents` removes after NFD.
#[inline]
pub(super) fn is_nonspacing_mark(c: char) -> bool {
    flags(c) & NONSPACING_MARK != 0
}

/// HF `BertPreTokenizer` punctuation: any ASCII punctuation (this includes the symbols
/// `$+<=>^`|~`) or any character of a Unicode P* category. Each one becomes its own word.
#[inline]
pub(super) fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_punctuation()
    } else {
        flags(c) & PUNCTUATION != 0
    }
}

/// True when `strip_accents` passes `c` through unchanged (no decomposition, combining class 0,
/// not Mn).
#[inline]
pub(super) fn strip_passes(c: char) -> bool {
    #[cfg(feature = "runtime-unicode")]
    return flags(c) & NONSPACING_MARK == 0 && nfd_passes(c);
    #[cfg(not(feature = "runtime-unicode"))]
    return flags(c) & STRIP_PASSES != 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table and the fast paths agree with the crates for every code point they cover (the
    /// others are computed by the crates directly).
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn flags_agree_with_the_crates() {
        for u in (0..TABLE_LEN as u32)
            .chain(0x4E00..=0x9FFF)
            .chain((0x9FFF..=0x10FFFF).step_by(7))
        {
            let Some(c) = char::from_u32(u) else { continue };
            let want = compute_flags(c);
            assert_eq!(flags(c), want, "U+{u:04X}");
            assert_eq!(
                clean(c).is_none(),
                c == '\0' || c == '\u{FFFD}' || (!matches!(c, '\t' | '\n' | '\r') && c.is_other()),
                "clean U+{u:04X}"
            );
            assert_eq!(
                is_punctuation(c),
                want & PUNCTUATION != 0,
                "punctuation U+{u:04X}"
            );
        }
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn unicode_8_tables() {
        // U+2E43 DASH WITH LEFT UPTURN (Unicode 9.0) is unassigned for HF, so not punctuation.
        assert!(!is_punctuation('\u{2E43}'));
        assert!(is_punctuation('\u{2E42}')); // Unicode 8.0
        assert!(is_punctuation('、'));
        assert!(is_nonspacing_mark('\u{0301}'));
        assert!(!is_nonspacing_mark('\u{1DF6}')); // Unicode 10.0 combining mark
        assert_eq!(clean('\u{200B}'), None); // Cf
        assert_eq!(clean('\u{FEFF}'), None);
        assert_eq!(clean('\u{E000}'), None); // Co
        assert_eq!(clean('\u{0085}'), None); // Cc and White_Space: dropped
        assert_eq!(clean('\u{000B}'), None);
        assert_eq!(clean('\u{00A0}'), Some(' '));
        assert_eq!(clean('\u{3000}'), Some(' '));
        assert_eq!(clean('\u{1F970}'), Some('\u{1F970}')); // Cn for HF, kept
        assert!(
            strip_passes('a')
                && strip_passes('ı')
                && !strip_passes('é')
                && !strip_passes('\u{0E31}')
        );
    }
}
