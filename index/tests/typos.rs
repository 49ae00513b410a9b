//! Typo tolerance of fragmented indexes (`lightembed_index::fragments`, `typos`): a query term no
//! passage holds is corrected to the indexed term within one edit found in the most passages,
//! through typo shards fetched only then; a typo'd query ranks as the clean one.

use lightembed_index::fragments::{split, term_hash, FragmentedIndex, Fragments, SplitOptions};
use lightembed_index::typos::query_keys;
use lightembed_index::{terms, Document, Index, IndexError, Mode, Params, SearchOptions};

mod common;

const DIMS: usize = 16;

/// Words of the fixture: each passage holds a few, every word is in at least two passages
/// (`lifetime` in the most, so `lifetme` would pick it over a rarer neighbour).
const WORDS: &[&str] = &[
    "ownership",
    "borrowing",
    "lifetimes",
    "closures",
    "iterator",
    "threads",
    "channels",
    "pattern",
    "matching",
    "vectors",
    "strings",
    "word",
    "work",
    "slices",
    "traits",
    "generic",
    "macros",
    "modules",
    "crates",
    "errors",
    "panic",
    "result",
    "option",
    "testing",
];

fn build() -> Index {
    let mut rng = common::Rng::new(7);
    let mut ix = Index::new(common::fields(DIMS), Params::default()).unwrap();
    for i in 0..96 {
        let mut words: Vec<&str> = (0..4).map(|_| WORDS[rng.below(WORDS.len())]).collect();
        words.push(WORDS[i % WORDS.len()]);
        let text = words.join(" ");
        let mut v: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
        common::normalize(&mut v);
        ix.insert_with_text(
            Document::new(
                format!("p{i}"),
                format!("Page {}", i / 4),
                format!("page{}.html#s{i}", i / 4),
                text.clone(),
            ),
            &v,
            &text,
        )
        .unwrap();
    }
    ix
}

fn small() -> SplitOptions {
    SplitOptions {
        shard_bytes: 96,
        chunk_bytes: 300,
        ..SplitOptions::default()
    }
}

fn fragments() -> Fragments {
    split(&build(), &small()).unwrap()
}

/// The core with every term shard, vector partition, chunk and typo shard added.
fn load_all(f: &Fragments) -> FragmentedIndex {
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    for s in &f.shards {
        fx.add_shard(s).unwrap();
    }
    for v in &f.partitions {
        fx.add_partition(v).unwrap();
    }
    for c in &f.chunks {
        fx.add_chunk(c).unwrap();
    }
    for y in &f.typos {
        fx.add_typo_shard(y).unwrap();
    }
    fx
}

fn stem(word: &str) -> String {
    terms(word).remove(0)
}

fn keyword() -> SearchOptions {
    SearchOptions {
        mode: Mode::Keyword,
        ..SearchOptions::default()
    }
}

#[test]
fn each_edit_kind_is_corrected() {
    let f = fragments();
    assert!(f.typos.len() > 2, "{} typo shards", f.typos.len());
    let fx = load_all(&f);
    // (typo'd query, the word meant)
    for (typo, meant) in [
        ("ownrship", "ownership"),   // dropped
        ("ownnership", "ownership"), // doubled
        ("ownerzhip", "ownership"),  // wrong
        ("onwership", "ownership"),  // swapped
        ("xownership", "ownership"), // extra first letter
        ("ownershipp", "ownership"), // doubled last letter
        ("mcaros", "macros"),        // swap in the first two: found by the suffix key
        ("channles", "channels"),    // swap in the last two: found by the prefix key
        ("iteartor", "iterator"),
    ] {
        let fixes = fx.corrections(typo);
        assert_eq!(fixes.len(), 1, "{typo}: {fixes:?}");
        assert_eq!(fixes[0].1, stem(meant), "{typo}");
    }
    // Two edits, or nothing near: no correction.
    assert!(fx.corrections("onwreship").is_empty());
    assert!(fx.corrections("zzzzzz").is_empty());
    // Terms that occur are never corrected, nor are short ones.
    assert!(fx.corrections("ownership closures").is_empty());
    assert!(fx.corrections("wor").is_empty());
}

#[test]
fn four_character_words() {
    let fx = load_all(&fragments());
    // `wrod` → `word`: the middle swap changes both two-character keys.
    assert_eq!(fx.corrections("wrod"), [("wrod".into(), "word".into())]);
    assert_eq!(fx.corrections("wokr"), [("wokr".into(), "work".into())]);
    // `wor` has 3 characters: left as it is. `wotd` is one edit from `word` only.
    assert_eq!(fx.corrections("wotd"), [("wotd".into(), "word".into())]);
    assert_eq!(query_keys("wrod").len(), 3);
}

#[test]
fn the_most_frequent_neighbour_wins() {
    // `worf` is one edit from both `work` and `word`: the one in more passages is taken.
    let ix = build();
    let fx = load_all(&split(&ix, &small()).unwrap());
    let df = |t: &str| ix.keyword_search(t, 1000).len();
    let (word, work) = (df("word"), df("work"));
    assert_ne!(word, work, "the fixture gives them different counts");
    let want = if word > work { "word" } else { "work" };
    assert_eq!(fx.corrections("worf")[0].1, want);
}

#[test]
fn a_known_term_fetches_nothing_more() {
    let f = fragments();
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    for q in ["ownership borrowing", "wor", "ab cd"] {
        for s in fx.missing_shards(q) {
            fx.add_shard(&f.shards[s as usize]).unwrap();
        }
        assert!(fx.missing_shards(q).is_empty());
        assert!(fx.missing_typo_shards(q).is_empty(), "{q}");
    }
    // Before its term shard is in, an unknown term is not known to be unknown.
    assert!(
        fx.missing_typo_shards("borowing").is_empty() || {
            fx.missing_shards("borowing").is_empty()
        }
    );
}

#[test]
fn the_protocol_term_then_typo_then_correction_shards() {
    let f = fragments();
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    assert_eq!(fx.typo_shard_count() as usize, f.typos.len());
    let q = "ownership borowing";
    let n = fx.shard_count();
    let mut want = vec![term_hash("ownership") % n, term_hash("borow") % n];
    want.sort();
    want.dedup();
    assert_eq!(fx.missing_shards(q), want);
    for s in fx.missing_shards(q) {
        fx.add_shard(&f.shards[s as usize]).unwrap();
    }
    // Answerable now, without the correction.
    let before = fx.query(None, q, 10, &keyword()).unwrap();
    let y = fx.typo_shard_count();
    // The stem's keys and the typed word's (a stem of one of its one-edit variants may be there).
    let mut typos: Vec<u32> = query_keys("borow")
        .iter()
        .chain(&query_keys("borowing"))
        .map(|k| term_hash(k) % y)
        .collect();
    typos.sort();
    typos.dedup();
    assert_eq!(fx.missing_typo_shards(q), typos);
    for t in &typos {
        assert_eq!(fx.add_typo_shard(&f.typos[*t as usize]).unwrap(), *t);
    }
    assert!(fx.missing_typo_shards(q).is_empty());
    assert_eq!(fx.corrections(q), [("borow".into(), "borrow".into())]);
    // The correction's own term shard is asked for next (unless it is in already).
    let fix = term_hash("borrow") % n;
    let need = fx.missing_shards(q);
    assert!(need.is_empty() || need == [fix], "{need:?}");
    if !need.is_empty() {
        let err = fx.query(None, q, 10, &keyword()).unwrap_err();
        assert!(err.to_string().contains("is not loaded"), "{err}");
    }
    for s in need {
        fx.add_shard(&f.shards[s as usize]).unwrap();
    }
    let after = fx.query(None, q, 10, &keyword()).unwrap();
    let clean = fx
        .query(None, "ownership borrowing", 10, &keyword())
        .unwrap();
    assert_eq!(after, clean);
    assert_ne!(before, after);
}

#[test]
fn a_typo_ranks_as_the_clean_query() {
    let f = fragments();
    let fx = load_all(&f);
    let ix = build();
    let v = {
        let mut v: Vec<f32> = (0..DIMS).map(|i| (i as f32 * 0.7).sin()).collect();
        common::normalize(&mut v);
        v
    };
    for (typo, clean) in [
        ("ownrship and borowing", "ownership and borrowing"),
        ("closrues over iterators", "closures over iterators"),
        ("pattren matching", "pattern matching"),
        ("wrod work", "word work"),
    ] {
        let k = fx.query(None, typo, 10, &keyword()).unwrap();
        assert!(!k.is_empty());
        assert_eq!(k, fx.query(None, clean, 10, &keyword()).unwrap(), "{typo}");
        // The clean query ranks as the unsplit index does (no typo there to correct).
        let ids: Vec<u32> = ix
            .query(None, clean, 10, &keyword())
            .unwrap()
            .iter()
            .map(|h| h.id[1..].parse().unwrap())
            .collect();
        assert_eq!(
            k.iter().map(|h| h.passage).collect::<Vec<_>>(),
            ids,
            "{clean}"
        );
        let hybrid = SearchOptions::default();
        assert_eq!(
            fx.query(Some(&v), typo, 10, &hybrid).unwrap(),
            fx.query(Some(&v), clean, 10, &hybrid).unwrap(),
            "{typo}"
        );
    }
}

#[test]
fn excerpts_mark_the_corrected_word() {
    use lightembed_index::snippet::excerpt_with;
    use lightembed_index::Searcher;
    let fx = load_all(&fragments());
    let fixes = Searcher::corrections(&fx, "borowing");
    assert_eq!(fixes, ["borrow"]);
    let e = excerpt_with("Ownership and borrowing rules", "borowing", &fixes, true, 0);
    assert_eq!(e.highlights, [(14, 23)]);
}

#[test]
fn typo_shards_round_trip() {
    let ix = build();
    let f = split(&ix, &small()).unwrap();
    let fx = load_all(&f);
    // Every listed term (≥ 3 chars, df ≥ 2: here every word) is reachable from a one-letter
    // deletion of its last letter... and from a doubled first letter.
    for w in WORDS {
        let t = stem(w);
        if t.chars().count() < 4 {
            continue;
        }
        let mut doubled = String::new();
        doubled.push(t.chars().next().unwrap());
        doubled.push_str(&t);
        let fixes = fx.corrections(&doubled);
        assert_eq!(fixes.len(), 1, "{doubled}");
        assert!(
            lightembed_index::typos::within_one_edit(&doubled, &fixes[0].1),
            "{doubled} → {fixes:?}"
        );
    }
    // Splitting is deterministic and the typo shards are covered by the build id.
    let again = split(&ix, &small()).unwrap();
    assert_eq!(again.typos, f.typos);
    assert_eq!(again.build_id(), f.build_id());
    // A one-shard split lists the same corrections.
    let one = split(&ix, &SplitOptions::default()).unwrap();
    assert_eq!(one.typos.len(), 1);
    let fx1 = load_all(&one);
    for q in ["ownrship", "wrod", "mcaros", "channles", "worf"] {
        assert_eq!(fx1.corrections(q), fx.corrections(q), "{q}");
    }
}

/// Replaces the SHA-256 trailer so a mutated body reaches the field checks.
fn reseal(bytes: &mut [u8]) {
    use sha2::{Digest, Sha256};
    let body = bytes.len() - 32;
    let d = Sha256::digest(&bytes[..body]);
    bytes[body..].copy_from_slice(&d);
}

#[test]
fn corrupt_or_foreign_typo_shards_are_refused() {
    let f = fragments();
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    let mut bad = f.typos[0].clone();
    bad[30] ^= 1;
    assert_eq!(
        fx.add_typo_shard(&bad).unwrap_err(),
        IndexError::ChecksumMismatch
    );
    let e = fx.add_typo_shard(&f.shards[0]).unwrap_err();
    assert!(e.to_string().contains("expected magic \"LEFY\""), "{e}");
    assert!(fx.add_shard(&f.typos[0]).is_err());
    assert!(fx.add_chunk(&f.typos[0]).is_err());
    // Another build's typo shard.
    let mut other_ix = build();
    other_ix
        .insert_with_text(
            Document::new("x", "X", "x.html", "extra"),
            &[0.25; DIMS],
            "extra words",
        )
        .unwrap();
    let other = split(&other_ix, &small()).unwrap();
    let e = fx.add_typo_shard(&other.typos[0]).unwrap_err();
    assert!(e.to_string().contains("another build"), "{e}");
    // An older layout.
    let mut old = f.typos[0].clone();
    old[4] = 3;
    reseal(&mut old);
    let e = fx.add_typo_shard(&old).unwrap_err();
    assert!(e.to_string().contains("re-run `lightembed site`"), "{e}");
    // Truncated.
    assert!(fx.add_typo_shard(&f.typos[0][..20]).is_err());
    // Every resealed byte flip loads or errs, never panics; what loads still answers.
    for pos in 22..f.typos[1].len() - 32 {
        let mut b = f.typos[1].clone();
        b[pos] ^= 0x41;
        reseal(&mut b);
        let mut fx = load_all_but_typos(&f);
        let _ = fx.add_typo_shard(&b);
        let _ = fx.corrections("ownrship wrod mcaros");
        let _ = fx.missing_typo_shards("ownrship wrod mcaros");
    }
    // Nothing of a refused shard is kept.
    assert!(fx.corrections("ownrship").is_empty());
}

fn load_all_but_typos(f: &Fragments) -> FragmentedIndex {
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    for s in &f.shards {
        fx.add_shard(s).unwrap();
    }
    fx
}
