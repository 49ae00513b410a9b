//! Fuzz the index loaders over arbitrary bytes (`index/src/layout.rs`: "any byte string either
//! loads into an index that searches safely or is rejected with an `IndexError`"):
//! `read_manifest_prefix` and `Index::from_bytes` return `Ok` or `Err`, never panic, never hang,
//! never allocate from a length the bytes cannot back (libFuzzer's `-rss_limit_mb` /
//! `-malloc_limit_mb` catch that). Each input is tried twice: as is, and with its trailing
//! SHA-256 recomputed — otherwise nearly every mutation stops at the checksum and the manifest,
//! graph, payload and keyword parsers behind it would go unexplored.
//!
//! When the bytes load:
//! * `read_manifest_prefix` agrees with the loaded manifest;
//! * `to_bytes()` gives back exactly the input ("every value has exactly one encoding, so
//!   `to_bytes(from_bytes(b)) == b` for every `b` that loads");
//! * `search`, `keyword_search` and `query` in the three modes (and with RRF fusion) return at most
//!   `k` live documents, for a query vector of the index dims and a query text taken from the
//!   input and from a stored document;
//! * `insert_with_text` of a new document, then `delete` of it and of one loaded document (which
//!   may compact), leave an index that still searches and re-serialises to bytes that load and
//!   re-serialise identically (`to_bytes` doc: `from_bytes(&x.to_bytes())?.to_bytes() ==
//!   x.to_bytes()`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use lightembed_index::{read_manifest_prefix, Document, Fusion, Hit, Index, Mode, SearchOptions};
use sha2::{Digest, Sha256};

/// Hits must be at most `k` documents that the index holds (live), without repeats.
fn check_hits(index: &Index, hits: &[Hit], k: usize, what: &str) {
    assert!(hits.len() <= k, "{what}: {} hits for k = {k}", hits.len());
    for (i, h) in hits.iter().enumerate() {
        assert!(
            index.contains(&h.id),
            "{what}: hit {:?} is not a live document",
            h.id
        );
        assert!(
            hits[..i].iter().all(|o| o.id != h.id),
            "{what}: {:?} returned twice",
            h.id
        );
    }
}

fn searches(index: &Index, vector: &[f32], text: &str, k: usize) {
    let hits = index
        .search(vector, k)
        .expect("finite vector of the index dims");
    check_hits(index, &hits, k, "search");
    let hits = index
        .exact_search(vector, k)
        .expect("finite vector of the index dims");
    check_hits(index, &hits, k, "exact_search");
    let hits = index.keyword_search(text, k);
    check_hits(index, &hits, k, "keyword_search");
    for mode in [Mode::Hybrid, Mode::Vector, Mode::Keyword] {
        for fusion in [Fusion::DEFAULT, Fusion::Rrf { k: 60.0 }] {
            for collapse_sections in [true, false] {
                let opts = SearchOptions {
                    mode,
                    fusion,
                    candidates: 8,
                    collapse_sections,
                    ..SearchOptions::default()
                };
                let hits = index
                    .query(Some(vector), text, k, &opts)
                    .unwrap_or_else(|e| panic!("query {mode:?} failed: {e}"));
                check_hits(index, &hits, k, mode.as_str());
            }
        }
    }
    // keyword mode needs no vector
    let opts = SearchOptions {
        mode: Mode::Keyword,
        ..SearchOptions::default()
    };
    let hits = index
        .query(None, text, k, &opts)
        .expect("keyword query without a vector");
    check_hits(index, &hits, k, "keyword without vector");
}

fn exercise(bytes: &[u8]) {
    let prefix = read_manifest_prefix(bytes);
    let Ok(mut index) = Index::from_bytes(bytes) else {
        return;
    };
    assert_eq!(
        prefix.as_ref().ok(),
        Some(index.manifest()),
        "read_manifest_prefix disagrees with from_bytes"
    );
    if index.keywords_refolded() {
        // Bytes from before `ı` folded to `i`: migrated on load; the current layout it writes
        // must then load and round-trip exactly.
        let again = index.to_bytes();
        let reloaded = Index::from_bytes(&again).expect("a migrated index re-loads");
        assert!(!reloaded.keywords_refolded());
        assert!(
            reloaded.to_bytes() == again,
            "a migrated index does not re-serialise to its bytes"
        );
    } else {
        assert!(
            index.to_bytes() == bytes,
            "a loaded index does not re-serialise to its bytes"
        );
    }

    // A small query vector of the index dims from the input (never all zero), a short query text
    // from the input and from the first stored document (so that BM25 finds something).
    let dims = index.dims();
    let mut vector: Vec<f32> = (0..dims)
        .map(|i| bytes[i % bytes.len()] as i8 as f32)
        .collect();
    vector[0] += 0.5;
    let tail = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(40)..bytes.len() - 32]);
    let doc_text = index
        .documents()
        .next()
        .map(|d| format!("{} {}", d.payload.title, d.payload.snippet))
        .unwrap_or_default();
    let doc_text: String = doc_text.chars().take(64).collect();
    let text = format!("{doc_text} {tail}");
    let k = 1 + bytes[bytes.len() / 2] as usize % 8;

    searches(&index, &vector, &text, k);

    // Insert a new document, delete it again and delete one loaded document.
    let mut id = String::from("fuzz-new");
    while index.contains(&id) {
        id.push('+');
    }
    let loaded_id = index.documents().next().map(|d| d.id.clone());
    let before = index.len();
    index
        .insert_with_text(
            Document::new(&id, "Fuzz title", "/fuzz", "snippet"),
            &vector,
            &text,
        )
        .unwrap_or_else(|e| panic!("insert into a loaded index failed: {e}"));
    assert_eq!(index.len(), before + 1);
    assert!(index.contains(&id));
    searches(&index, &vector, &text, k);
    assert!(
        index.delete(&id),
        "the inserted document is there to delete"
    );
    assert!(!index.contains(&id));
    if let Some(loaded_id) = loaded_id {
        assert!(
            index.delete(&loaded_id),
            "a loaded live document is there to delete"
        );
    }
    searches(&index, &vector, &text, k);

    let out = index.to_bytes();
    let reloaded = Index::from_bytes(&out)
        .unwrap_or_else(|e| panic!("bytes written after insert/delete do not load: {e}"));
    assert!(
        reloaded.to_bytes() == out,
        "round trip after insert/delete is not byte-identical"
    );
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    if data.len() >= 32 {
        let mut fixed = data.to_vec();
        let body = fixed.len() - 32;
        let hash = Sha256::digest(&fixed[..body]);
        if fixed[body..] != hash[..] {
            fixed[body..].copy_from_slice(&hash);
            exercise(&fixed);
        }
    }
});
