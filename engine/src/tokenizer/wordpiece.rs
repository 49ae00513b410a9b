//! WordPiece model (HF `models::WordPiece`; step 6 of the tokenizer docs): the
//! vocabulary indexes the greedy longest-match-first search reads, built once per model.

use core::hash::{BuildHasherDefault, Hasher};
use std::collections::HashMap;

use hashbrown::HashTable;

/// A string → id map over (a suffix of) the vocabulary's strings. The keys' bytes sit back to
/// back in one arena owned by the index, and each table entry holds its key's place and length:
/// a lookup touches the table and one spot of the arena, not a `String` header and its own heap
/// block per candidate (two dependent cache misses that dominated WordPiece's time).
#[derive(Clone)]
pub(super) struct VocabIndex {
    table: HashTable<Key>,
    arena: String,
    skip: usize,
}

/// One key: `arena[start..start + len]` maps to `id`.
#[derive(Clone, Copy)]
struct Key {
    start: u32,
    len: u32,
    id: u32,
}

impl VocabIndex {
    pub(super) fn new(skip: usize) -> VocabIndex {
        VocabIndex {
            table: HashTable::new(),
            arena: String::new(),
            skip,
        }
    }

    #[inline]
    fn text(&self, k: Key) -> &str {
        &self.arena[k.start as usize..(k.start + k.len) as usize]
    }

    /// Maps `vocab[id][skip..]` to `id`; a later id replaces an earlier one with the same key.
    /// The vocabulary is bounded by the file it came from (§5.2), far below `u32::MAX` bytes.
    pub(super) fn insert(&mut self, vocab: &[String], id: u32) {
        let key = &vocab[id as usize][self.skip..];
        let hash = fx_hash(key);
        let (table, arena) = (&mut self.table, &mut self.arena);
        let text = |k: &Key| &arena[k.start as usize..(k.start + k.len) as usize];
        if let Some(slot) = table.find_mut(hash, |k| text(k) == key) {
            slot.id = id;
            return;
        }
        let k = Key {
            start: arena.len() as u32,
            len: key.len() as u32,
            id,
        };
        arena.push_str(key);
        let arena = &*arena;
        table.insert_unique(hash, k, |k| {
            fx_hash(&arena[k.start as usize..(k.start + k.len) as usize])
        });
    }

    #[inline]
    pub(super) fn get(&self, key: &str) -> Option<u32> {
        self.table
            .find(fx_hash(key), |&k| {
                k.len as usize == key.len() && self.text(k) == key
            })
            .map(|k| k.id)
    }
}

pub(super) type LongestKeys = HashMap<char, usize, BuildHasherDefault<FxHasher>>;

#[inline]
fn fx_hash(s: &str) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(s.as_bytes());
    hasher.finish()
}

/// The Fx hash (rustc's): fast on short keys. The maps are built from the model's vocabulary and
/// only read afterwards, so hash flooding is not a concern.
#[derive(Default, Clone, Copy)]
pub(super) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        while bytes.len() >= 8 {
            self.add(u64::from_le_bytes(bytes[..8].try_into().unwrap()));
            bytes = &bytes[8..];
        }
        if bytes.len() >= 4 {
            self.add(u32::from_le_bytes(bytes[..4].try_into().unwrap()) as u64);
            bytes = &bytes[4..];
        }
        for &b in bytes {
            self.add(b as u64);
        }
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits weak; hashbrown indexes buckets with them.
        self.hash.rotate_left(26)
    }
}

/// Largest char boundary of `s` that is `<= i` (clamped to `s.len()`).
#[inline]
pub(super) fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn vocab_index_keys_are_suffixes_of_the_vocabulary() {
        let vocab: Vec<String> = ["[UNK]", "ışık", "##lar", "##ışık", "ışık"]
            .map(String::from)
            .to_vec();
        let mut words = VocabIndex::new(0);
        let mut continuation = VocabIndex::new(2);
        for id in 0..vocab.len() as u32 {
            words.insert(&vocab, id);
            if vocab[id as usize].starts_with("##") {
                continuation.insert(&vocab, id);
            }
        }
        assert_eq!(
            words.get("ışık"),
            Some(4),
            "a repeated string maps to its last id"
        );
        assert_eq!(continuation.get("lar"), Some(2));
        assert_eq!(continuation.get("ışık"), Some(3));
        assert_eq!(words.get("lar"), None);
        assert_eq!(words.get("IŞIK"), None, "cased: no folding here");
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn floor_char_boundary_never_splits_a_character() {
        let s = "aış";
        assert_eq!(floor_char_boundary(s, 2), 1);
        assert_eq!(floor_char_boundary(s, 3), 3);
        assert_eq!(floor_char_boundary(s, 99), s.len());
    }
}
