//! Keyword (BM25) search: tokeniser, scores against hand-computed values, maintenance through
//! delete / compaction / save-load, and the keywords section of the byte layout.

mod common;

use std::collections::HashMap;

use common::{fields, Rng};
use lightembed_index::{
    highlight_spans, keywords, read_manifest_prefix, terms, terms_with, Document, Index,
    IndexError, Params,
};
use sha2::{Digest, Sha256};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

/// Replaces the trailer with the SHA-256 of `body` (so the parser, not the checksum, is tested).
fn rehash(mut body: Vec<u8>) -> Vec<u8> {
    let d = Sha256::digest(&body);
    body.extend_from_slice(&d);
    body
}

fn body(index: &Index) -> Vec<u8> {
    let mut b = index.to_bytes();
    b.truncate(b.len() - 32);
    b
}

/// An index of `texts` (ids `d0, d1, …`), stemming as given, all with one vector.
fn corpus(texts: &[&str], stem: bool) -> Index {
    let mut index = Index::new(
        fields(2),
        Params {
            compaction_threshold: 1.0,
            ..Params::default()
        },
    )
    .unwrap();
    index.set_keyword_stemming(stem).unwrap();
    for (i, t) in texts.iter().enumerate() {
        index
            .insert_with_text(
                Document::new(format!("d{i}"), format!("Doc {i}"), "/", "snippet"),
                &[1.0, 0.5],
                t,
            )
            .unwrap();
    }
    index
}

fn ids_scores(index: &Index, q: &str) -> Vec<(String, f32)> {
    index
        .keyword_search(q, 100)
        .into_iter()
        .map(|h| (h.id, h.score))
        .collect()
}

fn assert_close(got: f32, want: f64) {
    assert!(
        (got as f64 - want).abs() < 1e-5,
        "got {got}, expected {want}"
    );
}

const THREE: [&str; 3] = [
    "apple banana apple",
    "banana cherry",
    "cherry cherry cherry date",
];

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn tokeniser_examples() {
    assert_eq!(
        terms_with("Café naïve RÉSUMÉ", false),
        ["cafe", "naive", "resume"]
    );
    assert_eq!(terms_with("Größe", false), ["grosse"]);
    assert_eq!(
        terms_with("std::fs::read_to_string(p)", false),
        ["std", "fs", "read_to_string", "p"]
    );
    assert_eq!(
        terms_with("検索エンジン", false),
        ["検", "索", "エ", "ン", "ジ", "ン"]
    );
    assert_eq!(terms("running runs ran"), ["run", "run", "ran"]);
    assert_eq!(terms_with("running", false), ["running"]);
    assert_eq!(keywords::K1, 1.2);
    assert_eq!(keywords::B, 0.75);
    let text = "Running a café";
    let spans = highlight_spans(text, "run CAFE", true);
    assert_eq!(spans, [(0, 7), (10, 15)]);
    assert_eq!(&text[10..15], "café");
}

/// BM25 against numbers computed by hand from the formula (k1 = 1.2, b = 0.75):
///
/// corpus: d0 = "apple banana apple" (|d| 3), d1 = "banana cherry" (2), d2 = "cherry cherry cherry
/// date" (4); N = 3, avgdl = 9 / 3 = 3.
///
/// * `apple`: df 1, idf = ln(1 + 2.5/1.5) = ln(8/3) = 0.980829. d0: tf 2, K = 1.2·(0.25 + 0.75·3/3)
///   = 1.2, 2·2.2/(2 + 1.2) = 1.375 → **1.348640**.
/// * `banana cherry`: both df 2, idf = ln(1 + 1.5/2.5) = ln 1.6 = 0.470004.
///   d1: tf 1 each, K = 1.2·(0.25 + 0.75·2/3) = 0.9, 2.2/1.9 = 1.157895, twice → **1.088429**;
///   d2: cherry tf 3, K = 1.2·(0.25 + 0.75·4/3) = 1.5, 6.6/4.5 = 1.466667 → **0.689339**;
///   d0: banana tf 1, K = 1.2, 2.2/2.2 = 1 → **0.470004**.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn bm25_matches_hand_computed_scores() {
    let index = corpus(&THREE, false);
    let hits = ids_scores(&index, "apple");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0, "d0");
    assert_close(hits[0].1, 1.348640);

    let hits = ids_scores(&index, "banana cherry");
    let ids: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(ids, ["d1", "d2", "d0"]);
    assert_close(hits[0].1, 1.088429);
    assert_close(hits[1].1, 0.689339);
    assert_close(hits[2].1, 0.470004);
    // repeated query terms count once; unknown terms are ignored; case and accents fold
    assert_eq!(ids_scores(&index, "BANANA chérry banana zebra"), hits);
    // k truncates, best first
    let top = index.keyword_search("banana cherry", 2);
    assert_eq!(top.len(), 2);
    assert_eq!(top[0].id, "d1");
    assert_eq!(top[0].payload.title, "Doc 1");
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn empty_and_unknown_queries_return_nothing() {
    let index = corpus(&THREE, false);
    assert!(index.keyword_search("", 10).is_empty());
    assert!(index.keyword_search("  --- !!", 10).is_empty());
    assert!(index.keyword_search("zebra", 10).is_empty());
    assert!(index.keyword_search("apple", 0).is_empty());
    let empty = Index::new(fields(2), Params::default()).unwrap();
    assert!(empty.keyword_search("apple", 10).is_empty());
}

/// Equal scores come back in insertion order.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn ties_break_by_insertion_order() {
    let index = corpus(&["x common", "y common", "z common", "w other"], false);
    let hits = ids_scores(&index, "common");
    let ids: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(ids, ["d0", "d1", "d2"]);
    assert_eq!(hits[0].1, hits[2].1);
}

/// After deleting d1: N = 2, avgdl = (3 + 4) / 2 = 3.5, banana and cherry df 1,
/// idf = ln(1 + 1.5/1.5) = ln 2 = 0.693147.
/// d2: cherry tf 3, K = 1.2·(0.25 + 0.75·4/3.5) = 1.328571, 6.6/4.328571 = 1.524752 → **1.056878**;
/// d0: banana tf 1, K = 1.2·(0.25 + 0.75·3/3.5) = 1.071429, 2.2/2.071429 = 1.062069 → **0.736170**.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn delete_removes_the_document_and_updates_n_df_avgdl() {
    let mut index = corpus(&THREE, false);
    assert!(index.delete("d1"));
    assert_eq!(index.deleted_count(), 1, "tombstone kept (threshold 1.0)");
    let hits = ids_scores(&index, "banana cherry");
    let ids: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(ids, ["d2", "d0"]);
    assert_close(hits[0].1, 1.056878);
    assert_close(hits[1].1, 0.736170);
    // a term only the deleted document had finds nothing
    let mut index = corpus(&["alpha beta", "gamma"], false);
    index.delete("d1");
    assert!(index.keyword_search("gamma", 5).is_empty());
    // everything deleted
    index.delete("d0");
    assert!(index.keyword_search("alpha", 5).is_empty());
}

/// Compaction renumbers slots and drops dead vocabulary; keyword results do not change, and a
/// reload of the compacted index gives the same results too.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn compaction_keeps_keyword_results_identical() {
    let texts: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "passage {i} word{} word{} shared {}",
                i % 7,
                i % 3,
                if i % 5 == 0 {
                    "rare only-here"
                } else {
                    "common"
                }
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut index = corpus(&refs, true);
    for i in (0..40).step_by(3) {
        index.delete(&format!("d{i}"));
    }
    let queries = [
        "word1 shared",
        "rare",
        "passage 7 word2",
        "common word0",
        "here",
    ];
    let before: Vec<_> = queries.iter().map(|q| ids_scores(&index, q)).collect();
    let bytes_before = index.to_bytes();
    index.compact();
    assert_eq!(index.deleted_count(), 0);
    let after: Vec<_> = queries.iter().map(|q| ids_scores(&index, q)).collect();
    assert_eq!(after, before);
    assert!(index.to_bytes().len() < bytes_before.len());
    let loaded = Index::from_bytes(&index.to_bytes()).unwrap();
    let reloaded: Vec<_> = queries.iter().map(|q| ids_scores(&loaded, q)).collect();
    assert_eq!(reloaded, before);
}

/// Saving and loading keeps keyword search identical, with tombstones and with either stemming
/// setting (the flag travels with the bytes).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn round_trip_keeps_keyword_search() {
    for stem in [true, false] {
        let mut index = corpus(
            &[
                "Indexing documents quickly",
                "The indexes are rebuilt",
                "東京の検索",
                "read_to_string reads a file",
                "Größe und Café",
            ],
            stem,
        );
        index.delete("d1");
        let bytes = index.to_bytes();
        let loaded = Index::from_bytes(&bytes).unwrap();
        assert_eq!(loaded.keyword_stemming(), stem);
        assert_eq!(loaded.to_bytes(), bytes);
        for q in [
            "index",
            "indexes",
            "検索",
            "read_to_string",
            "grosse cafe",
            "file reads",
        ] {
            assert_eq!(ids_scores(&loaded, q), ids_scores(&index, q), "{q}");
        }
        assert_eq!(
            index.keyword_search("index", 5).len(),
            if stem { 1 } else { 0 }
        );
    }
}

/// `insert` indexes the title and the snippet; `insert_with_text` exactly the text given.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn insert_indexes_title_and_snippet() {
    let mut index = Index::new(fields(2), Params::default()).unwrap();
    index
        .insert(
            Document::new("a", "Ownership rules", "/a", "Borrowing explained"),
            &[1.0, 0.0],
        )
        .unwrap();
    index
        .insert_with_text(
            Document::new("b", "Title", "/b", "short…"),
            &[0.0, 1.0],
            "Lifetimes in full detail",
        )
        .unwrap();
    assert_eq!(index.keyword_search("ownership", 5)[0].id, "a");
    assert_eq!(index.keyword_search("borrowing", 5)[0].id, "a");
    assert_eq!(index.keyword_search("lifetime", 5)[0].id, "b");
    assert!(index.keyword_search("title", 5).is_empty());
    // a failed insert changes nothing
    let before = index.to_bytes();
    let err = index
        .insert_with_text(Document::new("a", "", "", ""), &[1.0, 1.0], "new words")
        .unwrap_err();
    assert_eq!(err, IndexError::DuplicateId("a".into()));
    assert!(index
        .insert_with_text(Document::new("c", "", "", ""), &[1.0], "new words")
        .is_err());
    assert_eq!(index.to_bytes(), before);
    assert!(index.keyword_search("new", 5).is_empty());
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn stemming_is_chosen_before_the_first_insert() {
    let mut index = Index::new(fields(2), Params::default()).unwrap();
    assert!(index.keyword_stemming(), "stemming is on by default");
    index.set_keyword_stemming(false).unwrap();
    index.set_keyword_stemming(true).unwrap();
    index
        .insert(Document::new("a", "Running", "/", ""), &[1.0, 0.0])
        .unwrap();
    index.set_keyword_stemming(true).unwrap();
    let err = index.set_keyword_stemming(false).unwrap_err();
    assert!(matches!(
        err,
        IndexError::InvalidArgument {
            what: "keyword stemming",
            ..
        }
    ));
    assert_eq!(index.keyword_search("runs", 5)[0].id, "a");
}

/// The keywords section, byte for byte: one slot with the text "b a b", no stemming.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn keywords_section_layout() {
    let index = corpus(&["b a b"], false);
    let b = body(&index);
    // flags 2 (bit 1: `ı` folds to `i`), V = 2, "b", "a" (first appearance), T = 2,
    // (id 0, tf 2), (delta 1, tf 1)
    let section = [2u8, 2, 1, b'b', 1, b'a', 2, 0, 2, 1, 1];
    assert_eq!(&b[b.len() - section.len()..], &section);
    let stemmed = corpus(&["b a b"], true);
    assert_eq!(body(&stemmed)[b.len() - section.len()], 3, "stemming flag");
}

/// Hand-made corruptions of the keywords section are refused with the field named.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn corrupt_keyword_sections_are_rejected() {
    let index = corpus(&["b a b"], false);
    let b = body(&index);
    let at = b.len() - 11; // start of the keywords section (see keywords_section_layout)
    let with = |section: &[u8]| {
        let mut x = b[..at].to_vec();
        x.extend_from_slice(section);
        Index::from_bytes(&rehash(x))
    };
    let what = |section: &[u8]| match with(section) {
        Err(IndexError::Malformed { what, .. }) => what,
        Err(IndexError::Truncated { what, .. }) => what,
        other => panic!("{section:?} → {other:?}"),
    };
    // sanity: the original section loads
    assert!(with(&[2, 2, 1, b'b', 1, b'a', 2, 0, 2, 1, 1]).is_ok());
    assert!(
        with(&[0, 2, 1, b'b', 1, b'a', 2, 0, 2, 1, 1]).is_ok(),
        "a legacy index"
    );
    assert_eq!(
        what(&[4, 2, 1, b'b', 1, b'a', 2, 0, 2, 1, 1]),
        "keyword flags"
    );
    assert_eq!(what(&[0, 2, 0, 1, b'a', 2, 0, 2, 1, 1]), "keyword term");
    assert_eq!(
        what(&[0, 2, 1, b'a', 1, b'a', 2, 0, 2, 1, 1]),
        "keyword term"
    );
    assert_eq!(
        what(&[0, 2, 1, 0xFF, 1, b'a', 2, 0, 2, 1, 1]),
        "keyword term"
    );
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 3, 0, 2, 1, 1, 1, 1]),
        "keyword term count"
    );
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 1, 2, 0, 1]),
        "keyword term id"
    );
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 0, 2, 2, 1]),
        "keyword term id"
    );
    assert_eq!(what(&[0, 2, 1, b'b', 1, b'a', 1, 2, 1]), "keyword term id");
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 0, 0, 1, 1]),
        "keyword term frequency"
    );
    // varints: not shortest, too long, above u32::MAX
    assert_eq!(
        what(&[0, 0x82, 0x00, 1, b'b', 1, b'a', 2, 0, 2, 1, 1]),
        "keyword vocabulary size"
    );
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 1, 1, 1]),
        "keyword term frequency"
    );
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 1, 1]),
        "keyword term frequency"
    );
    // Σ tf over u32::MAX
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1, 1]),
        "keyword term frequency"
    );
    // a huge vocabulary or term count is refused before allocating
    assert_eq!(
        what(&[0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        "keyword vocabulary"
    );
    assert_eq!(
        what(&[0, 2, 1, b'b', 1, b'a', 2, 0, 2]),
        "keyword term list"
    );
    assert_eq!(what(&[0, 2, 1, b'b', 1, b'a']), "keyword term lists");
    assert_eq!(what(&[0]), "keyword vocabulary size");
    assert_eq!(what(&[]), "keyword flags");
    // trailing bytes after the section
    assert_eq!(
        with(&[0, 2, 1, b'b', 1, b'a', 2, 0, 2, 1, 1, 9]).unwrap_err(),
        IndexError::TrailingBytes { count: 1 }
    );
    // an unused vocabulary term is allowed and survives a round trip unchanged
    let x = with(&[0, 3, 1, b'b', 1, b'a', 1, b'z', 2, 0, 2, 1, 1]).unwrap();
    assert!(x.keyword_search("z", 5).is_empty());
    assert_eq!(
        Index::from_bytes(&x.to_bytes()).unwrap().to_bytes(),
        x.to_bytes()
    );
}

/// A version-1 index (written before the keywords section existed) is refused with the
/// rebuild message, from the full bytes and from the manifest prefix alike.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn version_1_index_is_refused_with_the_rebuild_message() {
    // An empty v1 index is exactly an empty v2 index without its 2-byte keywords section
    // (flags 0, vocabulary size 0) and with version 1 in the header.
    let index = Index::new(fields(4), Params::default()).unwrap();
    let mut v1 = body(&index);
    assert_eq!(
        &v1[v1.len() - 2..],
        &[3, 0],
        "stemming on (and `ı` folded), empty vocabulary"
    );
    v1.truncate(v1.len() - 2);
    assert_eq!(&v1[..6], b"LEIX\x02\x00");
    v1[4..6].copy_from_slice(&1u16.to_le_bytes());
    let v1 = rehash(v1);
    let message = "Index was built with index format v1 but this lightembed reads index format \
                   v2. Re-run `lightembed index`.";
    let err = Index::from_bytes(&v1).unwrap_err();
    assert_eq!(
        err,
        IndexError::UnsupportedIndexVersion {
            found: 1,
            supported: 2
        }
    );
    assert_eq!(err.to_string(), message);
    assert_eq!(read_manifest_prefix(&v1).unwrap_err().to_string(), message);
    // a non-empty index's bytes with version 1 (anything after the header is never read)
    let mut b = corpus(&THREE, true).to_bytes();
    b[4..6].copy_from_slice(&1u16.to_le_bytes());
    assert_eq!(Index::from_bytes(&b).unwrap_err().to_string(), message);
    assert_eq!(Index::from_bytes(&b[..8]).unwrap_err().to_string(), message);
}

/// Keyword data follows the document slots through random inserts, deletes, compactions and
/// reloads: results always equal a brute-force BM25 over the live texts.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn random_operations_match_brute_force_bm25() {
    let words = [
        "alpha", "beta", "gamma", "delta", "runs", "running", "café", "東", "x_y", "42",
    ];
    let mut rng = Rng::new(7);
    let mut index = corpus(&[], true);
    let mut live: Vec<(usize, String)> = Vec::new(); // (doc number, text) in insertion order
    let mut next = 0usize;
    for step in 0..400 {
        match rng.below(10) {
            0..=5 => {
                let n = 1 + rng.below(8);
                let text: Vec<&str> = (0..n).map(|_| words[rng.below(words.len())]).collect();
                let text = text.join(" ");
                index
                    .insert_with_text(
                        Document::new(format!("d{next}"), "", "", ""),
                        &[1.0, rng.uniform()],
                        &text,
                    )
                    .unwrap();
                live.push((next, text));
                next += 1;
            }
            6..=7 if !live.is_empty() => {
                let (n, _) = live.remove(rng.below(live.len()));
                assert!(index.delete(&format!("d{n}")));
            }
            8 => index.compact(),
            _ => index = Index::from_bytes(&index.to_bytes()).unwrap(),
        }
        if step % 20 != 19 {
            continue;
        }
        for q in ["alpha", "run café", "東 42 x_y", "gamma delta beta", "zzz"] {
            let got = index.keyword_search(q, 1000);
            let want = brute_force(&live, q);
            assert_eq!(got.len(), want.len(), "step {step} {q}");
            for g in &got {
                let s = want[&g.id];
                assert!(
                    (g.score as f64 - s).abs() < 1e-4,
                    "{}: {} vs {s}",
                    g.id,
                    g.score
                );
            }
            // best first, equal scores in insertion order (doc numbers grow with insertion)
            let num = |id: &str| id[1..].parse::<usize>().unwrap();
            for w in got.windows(2) {
                assert!(
                    w[0].score > w[1].score
                        || (w[0].score == w[1].score && num(&w[0].id) < num(&w[1].id)),
                    "step {step} {q}: {w:?}"
                );
            }
        }
    }
}

/// BM25 over `docs` in f64, for the documents with a query term.
fn brute_force(docs: &[(usize, String)], query: &str) -> HashMap<String, f64> {
    let toks: Vec<Vec<String>> = docs.iter().map(|(_, t)| terms(t)).collect();
    let n = docs.len() as f64;
    if docs.is_empty() {
        return HashMap::new();
    }
    let avgdl = toks.iter().map(|t| t.len()).sum::<usize>() as f64 / n;
    let mut q: Vec<String> = Vec::new();
    for t in terms(query) {
        if !q.contains(&t) {
            q.push(t);
        }
    }
    let mut out = HashMap::new();
    for ((num, _), d) in docs.iter().zip(&toks) {
        let mut s = 0.0;
        for t in &q {
            let df = toks.iter().filter(|d| d.contains(t)).count() as f64;
            let tf = d.iter().filter(|x| *x == t).count() as f64;
            if tf > 0.0 {
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * d.len() as f64 / avgdl));
            }
        }
        if s > 0.0 {
            out.insert(format!("d{num}"), s);
        }
    }
    out
}

/// Not a timed assertion: prints keyword_search latency over 10k short passages
/// (`cargo test -p lightembed-index --release --test keywords -- --ignored --nocapture`).
#[test]
#[ignore]
#[cfg(not(target_arch = "wasm32"))]
fn measure_keyword_search_10k() {
    let vocab: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
    let common = [
        "the", "a", "of", "rust", "index", "search", "function", "error",
    ];
    let mut rng = Rng::new(1);
    let mut index = Index::new(
        fields(8),
        Params {
            ef_construction: 16,
            ..Params::default()
        },
    )
    .unwrap();
    let mut bare = index.clone(); // the same documents without keyword text, for the byte cost
    let t0 = std::time::Instant::now();
    for i in 0..10_000 {
        let mut text = String::new();
        for _ in 0..60 {
            // Zipf-ish: half common words, half a skewed draw from the long tail
            if rng.below(2) == 0 {
                text.push_str(common[rng.below(common.len())]);
            } else {
                let r = rng.uniform();
                text.push_str(&vocab[((r * r * r) * vocab.len() as f32) as usize]);
            }
            text.push(' ');
        }
        let v: Vec<f32> = (0..8).map(|_| rng.normal()).collect();
        index
            .insert_with_text(Document::new(format!("d{i}"), "", "", ""), &v, &text)
            .unwrap();
        bare.insert_with_text(Document::new(format!("d{i}"), "", "", ""), &v, "")
            .unwrap();
    }
    println!("build 10k (twice): {:?}", t0.elapsed());
    let queries: Vec<String> = (0..1000)
        .map(|i| {
            format!(
                "{} {} w{}",
                common[i % common.len()],
                common[(i / 8) % common.len()],
                rng.below(300)
            )
        })
        .collect();
    let mut times: Vec<f64> = Vec::new();
    for q in &queries {
        let t = std::time::Instant::now();
        let hits = index.keyword_search(q, 10);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!hits.is_empty());
    }
    println!("first query {:.3} ms", times[0]);
    times.sort_by(f64::total_cmp);
    println!(
        "keyword_search k=10, 3-term queries: p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms; \
         keywords section {} bytes",
        times[times.len() / 2],
        times[times.len() * 95 / 100],
        times[times.len() - 1],
        index.to_bytes().len() - bare.to_bytes().len()
    );
}

/// Turkish dotted and dotless i (issue 16): `I`, `ı`, `İ` and `i` fold alike, so a query in
/// capitals, in lower case or typed in ASCII finds the same words.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn turkish_i_folds_alike() {
    assert_eq!(
        terms_with("IŞIK ışık Işık isik İşık ıi", false),
        ["isik", "isik", "isik", "isik", "isik", "ii"]
    );
    let index = corpus(&["Işık kaynağının yönü", "Dosya menüsü"], false);
    for q in ["ışık", "IŞIK", "isik", "İŞİK"] {
        assert_eq!(ids_scores(&index, q)[0].0, "d0", "{q}");
    }
    let spans = highlight_spans("Işık kaynağı", "ışık", false);
    assert_eq!(spans, [(0, "Işık".len())]);
}

/// An index written before `ı` folded to `i` (keyword flags bit 1 clear, terms with `ı`) is read
/// with its terms re-folded: two old terms that now coincide are merged with their term
/// frequencies added, so it scores exactly like the same documents indexed today; written back,
/// it carries bit 1.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_legacy_index_is_read_with_dotless_i_folded() {
    let texts = ["isik isik kapi", "kapi"];
    let fresh = corpus(&texts, false);
    // The same index as an old writer made it from "ışık isik kapı" / "kapı": terms "ısık",
    // "isik", "kapı" (ids 0, 1, 2), flags 0.
    let b = body(&fresh);
    let new_kw = [
        0x02u8, 2, 4, b'i', b's', b'i', b'k', 4, b'k', b'a', b'p', b'i',
    ];
    let at = b
        .windows(new_kw.len())
        .rposition(|w| w == new_kw)
        .expect("the keywords section: flags, 2 terms");
    let mut old = b[..at].to_vec();
    old.extend_from_slice(&[0x00, 3]);
    for t in ["ısık", "isik", "kapı"] {
        old.push(t.len() as u8);
        old.extend_from_slice(t.as_bytes());
    }
    // slot 0: ısık×1, isik×1, kapı×1 ; slot 1: kapı×1 (ids delta-coded)
    old.extend_from_slice(&[3, 0, 1, 1, 1, 1, 1, 1, 2, 1]);
    let legacy = Index::from_bytes(&rehash(old)).unwrap();
    assert!(legacy.keywords_refolded() && !fresh.keywords_refolded());
    for q in ["ışık", "isik", "kapı", "KAPI", "isik kapi"] {
        assert_eq!(ids_scores(&legacy, q), ids_scores(&fresh, q), "{q}");
    }
    assert_eq!(legacy.to_bytes(), fresh.to_bytes());
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn keyword_text_weights_title_and_heading() {
    assert_eq!(
        lightembed_index::keywords::keyword_text("Ownership", "Moves", "a b"),
        "Ownership\nOwnership\nOwnership\nMoves\nMoves\na b"
    );
    assert_eq!(
        lightembed_index::keywords::keyword_text("Ownership", "", "a b"),
        "Ownership\nOwnership\nOwnership\na b"
    );
    // A heading equal to the page title is written once, as the heading.
    assert_eq!(
        lightembed_index::keywords::keyword_text("Ownership", "Ownership", "a b"),
        "Ownership\nOwnership\nOwnership\nOwnership\nOwnership\na b"
    );
    assert_eq!(
        lightembed_index::keywords::keyword_text("", "Moves", "a b"),
        "Moves\nMoves\na b"
    );
    assert_eq!(
        lightembed_index::keywords::keyword_text("", "", "a b"),
        "a b"
    );
}

/// A section whose heading is the page's title is the best keyword match for the title's words
/// (issue 29 #10): a page "Installation" with sections Installation / Windows / Linux, query
/// `installation`. By hand (BM25, k1 = 1.2, b = 0.75; each body 12 other words): the
/// Installation section holds the word 5 times (title ×3 + heading ×2) in 17 words, its
/// siblings 3 times in 17 words (title ×3, heading "Windows" ×2): same length, more
/// occurrences, so it must rank first. Before, the title was left out when it equalled the
/// heading (2 occurrences in 14 words) and the section ranked last.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_section_titled_like_its_page_ranks_first_for_the_title() {
    use lightembed_index::keywords::keyword_text;
    let body = "download the package run the setup program then restart the machine now";
    let mut ix = Index::new(common::fields(4), Params::default()).unwrap();
    for (i, h) in ["Installation", "Windows", "Linux"].into_iter().enumerate() {
        let text = keyword_text("Installation", h, body);
        assert_eq!(
            text.matches("Installation").count(),
            if h == "Installation" { 5 } else { 3 }
        );
        let mut v = [0.1f32; 4];
        v[i] = 1.0;
        ix.insert_with_text(
            Document::new(
                format!("install.html#{}", h.to_lowercase()),
                h,
                "install.html",
                body,
            ),
            &v,
            &text,
        )
        .unwrap();
    }
    let hits = ix.keyword_search("installation", 3);
    assert_eq!(hits[0].id, "install.html#installation");
    assert!(hits[0].score > hits[1].score, "{hits:?}");
}

/// Folding drops accents, never a script's own vowel signs (issue 29 #8): Devanagari `दिन`
/// ("day") and `दान` ("donation"), `काम` ("work") and `कम` ("less") stay apart, a virama does
/// not split a word, Thai tone marks and Tamil vowel signs are kept; Latin/Greek/Cyrillic
/// accents and Arabic/Hebrew optional vowel points still fold away.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn only_accents_fold_never_vowel_signs() {
    use lightembed_index::keywords::terms_with;
    let t = |s: &str| terms_with(s, false);
    assert_ne!(t("दिन"), t("दान"));
    assert_ne!(t("काम"), t("कम"));
    assert_eq!(t("दिन"), ["दिन"]);
    assert_eq!(t("क्या हाल"), ["क्या", "हाल"]);
    assert_ne!(t("ไก่"), t("ไก"));
    assert_ne!(t("கை"), t("க"));
    assert_eq!(t("café naïve Ἀθῆναι ёлка"), t("cafe naive Αθηναι елка"));
    assert_eq!(t("كَتَبَ"), t("كتب"));
    assert_eq!(t("שָׁלוֹם"), t("שלום"));
    // In an index: the query `दिन` finds the passage with `दिन`, not the one with `दान`.
    let mut ix = Index::new(common::fields(4), Params::default()).unwrap();
    for (i, text) in ["आज दान का दिन नहीं", "उसने दान दिया", "हर दिन काम"]
        .iter()
        .enumerate()
    {
        let mut v = [0.1f32; 4];
        v[i] = 1.0;
        ix.insert(Document::new(format!("d{i}"), "", "", *text), &v)
            .unwrap();
    }
    let ids: Vec<String> = ix
        .keyword_search("दिन", 3)
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(!ids.contains(&"d1".to_string()), "{ids:?}");
    let ids: Vec<String> = ix
        .keyword_search("कम", 3)
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert!(ids.is_empty(), "{ids:?}");
}
