//! Typo tolerance of the keyword side of a fragmented index ([`crate::fragments`]): which indexed
//! terms lie within one edit of a query term no passage holds, found through small *typo shards*
//! instead of a whole dictionary.
//!
//! **One edit** is the Damerau kind (optimal string alignment with one operation): a wrong
//! character (substitution), a dropped one (deletion), a doubled or extra one (insertion) or two
//! adjacent ones swapped (transposition) — [`within_one_edit`], over `char`s.
//!
//! **Keys.** An indexed term is listed under two keys, `^` + its first two characters and its
//! last two characters + `$` ([`term_keys`]). One edit of a word of at least 5 characters leaves
//! at least one of the two intact (the edited positions are adjacent, and a prefix and a suffix
//! of two are at least one position apart) and so does any edit between a 4- and a 3- or
//! 5-character word; between two 4-character words the one edit that breaks both is the swap of
//! the middle two (`wrod` ↔ `word`), so a 4-character query term also looks under the prefix
//! key of itself with its middle two swapped ([`query_keys`]). A query term of fewer than
//! [`MIN_TYPO_CHARS`] characters is never corrected (too many words lie within one edit of a
//! short one).

/// Query terms of fewer characters are taken as they are.
pub const MIN_TYPO_CHARS: usize = 4;

/// Indexed terms of fewer characters are not listed in typo shards (no query term of
/// [`MIN_TYPO_CHARS`] characters lies within one edit of them).
pub const MIN_LISTED_CHARS: usize = MIN_TYPO_CHARS - 1;

/// A corrected term's BM25 contribution is its own times this (below an exact match of the same
/// term: the correction may be wrong).
pub const TYPO_WEIGHT: f32 = 1.0;

/// Indexed terms found in fewer passages are not listed (one-off tokens — identifiers, numbers
/// glued to words — would only add wrong corrections and bytes).
pub const MIN_LISTED_DF: u32 = 2;

/// Whether an indexed term (with `df` passages) is listed in the typo shards: at least
/// [`MIN_LISTED_CHARS`] characters, a letter among them, found in at least [`MIN_LISTED_DF`]
/// passages.
pub fn listed(term: &str, df: u32) -> bool {
    df >= MIN_LISTED_DF
        && term.chars().count() >= MIN_LISTED_CHARS
        && term.chars().any(char::is_alphabetic)
}

/// The two keys an indexed term is listed under: `^` + its first two characters, its last two
/// + `$` (`"borrow"` → `["^bo", "ow$"]`). `None` for a term of fewer than 2 characters.
pub fn term_keys(term: &str) -> Option<[String; 2]> {
    let chars: Vec<char> = term.chars().collect();
    if chars.len() < 2 {
        return None;
    }
    let n = chars.len();
    Some([
        format!("^{}{}", chars[0], chars[1]),
        format!("{}{}$", chars[n - 2], chars[n - 1]),
    ])
}

/// The keys whose lists hold every listed term within one edit of the query term `term`:
/// its two [`term_keys`], and for a 4-character term the prefix key of it with its middle two
/// characters swapped. Empty for a term of fewer than [`MIN_TYPO_CHARS`] characters.
pub fn query_keys(term: &str) -> Vec<String> {
    let chars: Vec<char> = term.chars().collect();
    if chars.len() < MIN_TYPO_CHARS {
        return Vec::new();
    }
    let mut keys: Vec<String> = term_keys(term).map(Vec::from).unwrap_or_default();
    if chars.len() == 4 {
        let swapped = format!("^{}{}", chars[0], chars[2]);
        if !keys.contains(&swapped) {
            keys.push(swapped);
        }
    }
    keys
}

/// The words one edit from `word` (letters `a`–`z` substituted or inserted): what a typo'd word
/// may have been meant as. Used when the index stems, where a typo can change the stem by more
/// than one edit (`iteartor` stems to itself, `iterator` to `iter`): a listed term that is the stem
/// of one of these is a candidate too.
pub fn one_edit_variants(word: &str) -> Vec<String> {
    let w: Vec<char> = word.chars().collect();
    let mut out = Vec::with_capacity(54 * w.len() + 26);
    let letters = 'a'..='z';
    for i in 0..=w.len() {
        for c in letters.clone() {
            let mut v = w.clone();
            v.insert(i, c);
            out.push(v.into_iter().collect());
        }
    }
    for i in 0..w.len() {
        let mut v = w.clone();
        v.remove(i);
        out.push(v.into_iter().collect());
        for c in letters.clone() {
            if c != w[i] {
                let mut v = w.clone();
                v[i] = c;
                out.push(v.into_iter().collect());
            }
        }
        if i + 1 < w.len() && w[i] != w[i + 1] {
            let mut v = w.clone();
            v.swap(i, i + 1);
            out.push(v.into_iter().collect());
        }
    }
    out
}

/// Whether `a` and `b` differ by exactly one edit: one character substituted, inserted or
/// deleted, or two adjacent characters swapped (`false` for equal strings).
///
/// ```
/// use lightembed_index::typos::within_one_edit;
/// assert!(within_one_edit("borow", "borrow")); // dropped
/// assert!(within_one_edit("borrrow", "borrow")); // doubled
/// assert!(within_one_edit("barrow", "borrow")); // wrong
/// assert!(within_one_edit("brorow", "borrow")); // swapped
/// assert!(!within_one_edit("borrow", "borrow"));
/// assert!(!within_one_edit("brorwo", "borrow"));
/// ```
pub fn within_one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    let start = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    match long.len() - short.len() {
        0 => {
            if start == short.len() {
                return false; // equal
            }
            // The rest after the first difference: one substitution, or one adjacent swap.
            let i = start;
            short[i + 1..] == long[i + 1..]
                || (i + 1 < short.len()
                    && short[i] == long[i + 1]
                    && short[i + 1] == long[i]
                    && short[i + 2..] == long[i + 2..])
        }
        1 => short[start..] == long[start + 1..],
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed term within one edit of `q` is under one of `q`'s query keys.
    fn reachable(q: &str, t: &str) -> bool {
        let keys = query_keys(q);
        term_keys(t).is_some_and(|k| k.iter().any(|x| keys.contains(x)))
    }

    #[test]
    fn each_edit_kind() {
        assert!(within_one_edit("closure", "closure_"));
        assert!(within_one_edit("clsure", "closure"));
        assert!(within_one_edit("closuure", "closure"));
        assert!(within_one_edit("clozure", "closure"));
        assert!(within_one_edit("colsure", "closure"));
        assert!(within_one_edit("closuer", "closure"));
        assert!(within_one_edit("losure", "closure"));
        assert!(within_one_edit("closur", "closure"));
        assert!(within_one_edit("xclosure", "closure"));
        assert!(!within_one_edit("closure", "closure"));
        assert!(!within_one_edit("clsoure", "closure_"));
        assert!(!within_one_edit("cluser", "closure"));
        assert!(!within_one_edit("ab", "ba_"));
        assert!(within_one_edit("café", "cafe"));
    }

    #[test]
    fn keys_reach_every_one_edit_neighbour() {
        // Every one-edit variant (over a small alphabet) of words of 3 to 7 characters: the
        // variant as the query reaches the word through its keys when it has ≥ 4 characters.
        let alphabet = ['a', 'b', 'c', 'x'];
        for word in ["abc", "abca", "abcab", "aabbc", "abcabca", "xaxb"] {
            let w: Vec<char> = word.chars().collect();
            let mut variants: Vec<String> = Vec::new();
            for i in 0..=w.len() {
                for &c in &alphabet {
                    let mut v = w.clone();
                    v.insert(i, c);
                    variants.push(v.into_iter().collect());
                }
            }
            for i in 0..w.len() {
                let mut v = w.clone();
                v.remove(i);
                variants.push(v.into_iter().collect());
                for &c in &alphabet {
                    let mut v = w.clone();
                    v[i] = c;
                    variants.push(v.into_iter().collect());
                }
                if i + 1 < w.len() {
                    let mut v = w.clone();
                    v.swap(i, i + 1);
                    variants.push(v.into_iter().collect());
                }
            }
            for v in variants {
                if v == word {
                    continue;
                }
                assert!(within_one_edit(&v, word), "{v} {word}");
                if v.chars().count() >= MIN_TYPO_CHARS {
                    assert!(reachable(&v, word), "{v} does not reach {word}");
                }
            }
        }
    }

    #[test]
    fn the_four_character_edge() {
        // `wrod` → `word`: both two-character keys change; the swapped prefix key finds it.
        assert_eq!(query_keys("wrod"), ["^wr", "od$", "^wo"]);
        assert!(reachable("wrod", "word"));
        assert!(query_keys("wor").is_empty());
        assert_eq!(query_keys("words").len(), 2);
    }
}
